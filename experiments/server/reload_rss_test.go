//go:build !js

package server

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/server/servertest"
)

// reloadRowsEnv, when set to a row count, runs TestReloadPeaksAgainstRSS:
// a measurement of a few minutes (8 at 1e7 rows on 2 busy cores), not a
// part of make test. docs/clickhouse-server.md has its figures.
const reloadRowsEnv = "PACKLAB_MEASURE_RELOAD_ROWS"

// TestReloadPeaksAgainstRSS measures what the kernel saw of a test
// server's reloads (VmHWM after a reset through /proc/PID/clear_refs: the
// exact peak of resident memory, where sampling MemoryTracking can miss a
// moment's peak) for the ten dictionaries of docs/clickhouse-server.md's
// table, and logs each beside inspect's reload_peak_bytes. It fails
// where the model is under 0.8x the peak: a guard may be cautious, not
// blind.
func TestReloadPeaksAgainstRSS(t *testing.T) {
	rows := os.Getenv(reloadRowsEnv)
	if rows == "" {
		t.Skip("a measurement: set " + reloadRowsEnv + " to a row count (1000000) to run it")
	}
	node := servertest.Start(t)
	ctx := context.Background()
	node.Exec(t, "CREATE TABLE big (id UInt64, v UInt16, s String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO big SELECT sipHash64(number), number, repeat('y', 4 + number % 29) FROM numbers("+rows+")")
	pid := node.PID()
	resetPeak := func() {
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			t.Fatal(err)
		}
	}
	settle := func(statements ...string) {
		node.Exec(t, append(statements, "SYSTEM JEMALLOC PURGE")...)
		time.Sleep(300 * time.Millisecond)
	}
	for i, tc := range []struct{ cols, layout string }{
		{"v UInt16", "HASHED()"}, {"s String", "HASHED()"},
		{"v UInt16", "SPARSE_HASHED()"}, {"s String", "SPARSE_HASHED()"},
		{"v UInt16", "HASHED(SHARDS 4)"}, {"s String", "HASHED(SHARDS 4)"},
		{"v UInt16", "HASHED_ARRAY()"}, {"s String", "HASHED_ARRAY()"},
		{"v UInt16", "HASHED_ARRAY(SHARDS 4)"}, {"s String", "HASHED_ARRAY(SHARDS 4)"},
	} {
		// The source's read in a load of this layout, alone: the same
		// rows through the same source and loader into a table of 4 keys.
		col := strings.Fields(tc.cols)[0]
		settle("CREATE DICTIONARY r" + strconv.Itoa(i) + " (id UInt64, " + tc.cols + ") PRIMARY KEY id SOURCE(CLICKHOUSE(QUERY 'SELECT id % 4 AS id, " +
			col + " FROM big')) LIFETIME(0) LAYOUT(" + tc.layout + ")")
		base := procBytes(t, pid, "VmRSS")
		resetPeak()
		node.Exec(t, "SYSTEM RELOAD DICTIONARY r"+strconv.Itoa(i))
		read := procBytes(t, pid, "VmHWM") - base
		settle("DROP DICTIONARY r" + strconv.Itoa(i))
		name := fmt.Sprintf("d%d", i)
		settle("CREATE DICTIONARY " + name + " (id UInt64, " + tc.cols + ") PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'big')) LIFETIME(0) LAYOUT(" + tc.layout + ")")
		base = procBytes(t, pid, "VmRSS")
		resetPeak()
		node.Exec(t, "SYSTEM RELOAD DICTIONARY "+name)
		first := procBytes(t, pid, "VmHWM") - base
		settle()
		steady := procBytes(t, pid, "VmRSS") - base
		resetPeak()
		node.Exec(t, "SYSTEM RELOAD DICTIONARY "+name)
		reload := procBytes(t, pid, "VmHWM") - base
		ins, err := Inspect(ctx, Settings{URL: node.NativeURL()}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var d Dictionary
		for _, x := range ins.Dictionaries {
			if x.Name == name {
				d = x
			}
		}
		r := float64(d.ReloadPeakBytes) / float64(reload)
		t.Logf("| %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |", tc.layout, strings.Fields(tc.cols)[1],
			mb(d.RealBytes), mb(steady), mb(read), mb(first), mb(d.ReloadPeakBytes), mb(reload), r)
		if r < 0.8 {
			t.Errorf("%s with a %s: reload_peak_bytes %d, the server's resident peak %d: %.2fx (a guard allows no less than 0.8x)", tc.layout, tc.cols, d.ReloadPeakBytes, reload, r)
		}
		settle("DROP DICTIONARY " + name)
	}
}

// procBytes is a field of /proc/PID/status (VmRSS, VmHWM) in bytes.
func procBytes(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v << 10 // kB
		}
	}
	t.Fatalf("/proc/%d/status has no %s", pid, field)
	return 0
}

func mb(b int64) float64 { return float64(b) / 1e6 }

// trackerSlack is how far MemoryTracking may stand from what was allocated
// on its own account: a thread adds its allocations to it in steps of up to
// max_untracked_memory (4 MiB on 26.7's test server), and a reload's read,
// its load and the samplers' queries run on several threads. Two threads'
// steps are 8 MiB: 15 % of SPARSE_HASHED's 54 MiB peak at 1e6 rows (sampled
// 56.8 to 61.1 MiB against the model's 53.6), under 1 % of its 804 at 1e7.
const trackerSlack = trackerStep

// reloadPeakOff says how a modelled reload peak is off from a measured
// one, if by more than the 10 % and more than trackerSlack.
func reloadPeakOff(model, measured int64) string {
	r := float64(model) / float64(measured)
	if (r >= 0.9 && r <= 1.1) || max(model-measured, measured-model) <= trackerSlack {
		return ""
	}
	return fmt.Sprintf("the model's reload peak %d, MemoryTracking's %d: %.2fx (allowed 0.9x to 1.1x, or 8 MiB apart: trackerSlack)", model, measured, r)
}

// TestReloadPeaksTracked measures what the server's memory tracker saw of
// reloads of the ten dictionaries of docs/clickhouse-server.md's table:
// MemoryTracking sampled by three connections at once during three
// reloads each, beside inspect's reload_peak_bytes; a measurement, set
// PACKLAB_MEASURE_RELOAD_ROWS to run it (1 min at 1e6 rows, 10 at 1e7).
// It fails where the model is outside 0.9x to 1.1x of the highest peak
// and more than trackerSlack from it.
func TestReloadPeaksTracked(t *testing.T) {
	rows := os.Getenv(reloadRowsEnv)
	if rows == "" {
		t.Skip("a measurement: set " + reloadRowsEnv + " to a row count (1000000) to run it")
	}
	node := servertest.Start(t)
	bigTable(t, node, rows)
	s := newSamplers(t, node, 3)
	for i, tc := range reloadCases {
		name := fmt.Sprintf("d%d", i)
		node.Exec(t, "CREATE DICTIONARY "+name+" (id UInt64, "+tc.cols+") PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'big')) LIFETIME(0) LAYOUT("+tc.layout+")",
			"SYSTEM JEMALLOC PURGE")
		time.Sleep(300 * time.Millisecond)
		before := s.tracked()
		node.Exec(t, "SYSTEM RELOAD DICTIONARY "+name)
		var peak int64
		var peaks []string
		for range 3 {
			p := s.during(func() { node.Exec(t, "SYSTEM RELOAD DICTIONARY "+name) }) - before
			peak = max(peak, p)
			peaks = append(peaks, fmt.Sprintf("%.1f", mb(p)))
		}
		d := inspected(t, node, name)
		r := float64(d.ReloadPeakBytes) / float64(peak)
		t.Logf("| %s | %s | %.1f | %.1f | %s | %.2f |", tc.layout, strings.Fields(tc.cols)[1], mb(d.RealBytes), mb(d.ReloadPeakBytes), strings.Join(peaks, ", "), r)
		if off := reloadPeakOff(d.ReloadPeakBytes, peak); off != "" {
			t.Errorf("%s with a %s: %s", tc.layout, tc.cols, off)
		}
		node.Exec(t, "DROP DICTIONARY "+name, "SYSTEM JEMALLOC PURGE")
	}
}

// reloadCases are docs/clickhouse-server.md's ten dictionaries.
var reloadCases = []struct{ cols, layout string }{
	{"v UInt16", "HASHED()"}, {"s String", "HASHED()"},
	{"v UInt16", "SPARSE_HASHED()"}, {"s String", "SPARSE_HASHED()"},
	{"v UInt16", "HASHED(SHARDS 4)"}, {"s String", "HASHED(SHARDS 4)"},
	{"v UInt16", "HASHED_ARRAY()"}, {"s String", "HASHED_ARRAY()"},
	{"v UInt16", "HASHED_ARRAY(SHARDS 4)"}, {"s String", "HASHED_ARRAY(SHARDS 4)"},
}

// inspected is the node's dictionary name as inspect models it.
func inspected(t *testing.T, node *servertest.Node, name string) Dictionary {
	t.Helper()
	ins, err := Inspect(context.Background(), Settings{URL: node.NativeURL()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ins.Dictionaries {
		if d.Name == name {
			return d
		}
	}
	t.Fatalf("%s not inspected", name)
	return Dictionary{}
}

// samplers read a node's MemoryTracking on connections of their own: one
// query misses a realloc's moment now and then, several at once less often.
type samplers struct {
	t     *testing.T
	conns []*Conn
}

func newSamplers(t *testing.T, node *servertest.Node, n int) *samplers {
	s := &samplers{t: t}
	for range n {
		s.conns = append(s.conns, connect(t, Settings{URL: node.NativeURL()}))
	}
	return s
}

func (s *samplers) read(c *Conn) int64 {
	var v int64
	if err := c.Query(context.Background(), "SELECT toInt64(value) FROM system.metrics WHERE metric = 'MemoryTracking'", func(r Rows) error { return r.Scan(&v) }); err != nil {
		s.t.Error(err)
	}
	return v
}

// tracked is MemoryTracking now.
func (s *samplers) tracked() int64 { return s.read(s.conns[0]) }

// during is the highest MemoryTracking sampled while f runs.
func (s *samplers) during(f func()) int64 {
	var mu sync.Mutex
	var peak int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range s.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				v := s.read(c)
				mu.Lock()
				peak = max(peak, v)
				mu.Unlock()
			}
		}()
	}
	f()
	close(stop)
	wg.Wait()
	return peak
}
