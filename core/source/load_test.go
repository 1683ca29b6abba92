package source

// The sources feeding core's loader: each kind loads into a table that holds
// the first value of every key of its rows, and Read finds every row again
// through Row. core's own loader tests (core/loader_test.go) use sources of
// their own, since core cannot import this package.

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
)

// loaderSynth opens a synthetic source of UInt64 keys and UInt16 values.
func loaderSynth(t *testing.T, kind string, param float64, rows int64) core.Source[uint64, uint16] {
	t.Helper()
	src, err := Open[uint64, uint16](Spec{Kind: kind, Param: param, Rows: rows, Seed: 42, Values: ValuesRandom},
		core.MustType("UInt64"), core.MustType("UInt16"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// checkLoaded compares a loaded map and its report with the builtin map
// where each key keeps its first value in rows (want). The per-worker
// figures are the loader's own business, checked by core's tests; Load has
// already checked that they add up.
func checkLoaded(t *testing.T, m *core.Sharded[uint64, uint16], r core.LoadReport, want map[uint64]uint16, rows int) {
	t.Helper()
	var sum uint64
	for k, v := range want {
		sum += core.PairChecksum(k, v)
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get(%d) = %d, %v; want %d, true (the first value loaded)", k, got, ok, v)
		}
	}
	if m.Len() != len(want) || r.Rows != int64(rows) || r.Elements != int64(len(want)) || r.Duplicates != int64(rows-len(want)) || r.Checksum != sum {
		t.Fatalf("Len() %d; report rows %d, elements %d, duplicates %d, checksum %#x; want %d, %d, %d, %d, %#x",
			m.Len(), r.Rows, r.Elements, r.Duplicates, r.Checksum, len(want), rows, len(want), rows-len(want), sum)
	}
	if err := m.Verify(r); err != nil { // All() yields the elements and the checksum the report counts
		t.Fatal(err)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// firstValues is the oracle of checkLoaded.
func firstValues(rows []row[uint64, uint16]) map[uint64]uint16 {
	m := map[uint64]uint16{}
	for _, r := range rows {
		if _, ok := m[r.k]; !ok {
			m[r.k] = r.v
		}
	}
	return m
}

// TestLoadSyntheticSources loads each synthetic source kind and compares
// with the builtin map fed the same rows, then reads every row back.
func TestLoadSyntheticSources(t *testing.T) {
	rows := int64(60_000)
	if testing.Short() {
		rows = 15_000
	}
	for _, c := range []struct {
		kind  string
		param float64
	}{{Sequential, 0}, {Random, 0}, {Range, 1000}, {Zipf, 1.1}} {
		t.Run(c.kind, func(t *testing.T) {
			all := drain(t, loaderSynth(t, c.kind, c.param, rows), 1000)
			src := loaderSynth(t, c.kind, c.param, rows)
			m, r, err := core.Load[uint64, uint16](context.Background(), src, core.LoadConfig{Layout: core.LayoutPacked, Shards: 5, BlockRows: 4096})
			if err != nil {
				t.Fatal(err)
			}
			checkLoaded(t, m, r, firstValues(all), len(all))
			rr, err := core.Read(context.Background(), m, src, core.ReadOptions{Seed: 9, MissRate: 0.1})
			if err != nil {
				t.Fatal(err)
			}
			if want := rows + int64(math.Round(0.1*float64(rows))); rr.Lookups != want || rr.Found != rows {
				t.Errorf("read: %+v; want %d lookups, %d found", rr, want, rows)
			}
		})
	}
}

// TestZipfSkewIsVisible: a zipf source piles rows onto the shard of its
// most frequent keys, and the per-worker report shows it.
func TestZipfSkewIsVisible(t *testing.T) {
	_, r, err := core.Load[uint64, uint16](context.Background(), loaderSynth(t, Zipf, 1.1, 100_000), core.LoadConfig{Layout: core.LayoutHashed, Shards: 16})
	if err != nil {
		t.Fatal(err)
	}
	var most int64
	for _, w := range r.Workers {
		most = max(most, w.Rows)
	}
	if mean := float64(r.Rows) / 16; float64(most) < 1.5*mean {
		t.Errorf("zipf:1.1 over 16 shards: busiest worker got %d rows, mean %.0f; want the skew visible (> 1.5x)", most, mean)
	}
}

// TestLoadFileSource loads a TSV file through the file source, and a file
// with a bad field fails the load with the file's own error.
func TestLoadFileSource(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	text.WriteString("id\tvalue\n")
	oracle := map[uint64]uint16{}
	for i := range 5000 {
		k, v := uint64(i*i%7919), uint16(i)
		fmt.Fprintf(&text, "%d\t%d\n", k, v)
		if _, ok := oracle[k]; !ok {
			oracle[k] = v
		}
	}
	good := dir + "/good.tsv"
	if err := os.WriteFile(good, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	open := func(path string) core.Source[uint64, uint16] {
		spec, err := Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		src, err := Open[uint64, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { src.Close() })
		return src
	}
	m, r, err := core.Load[uint64, uint16](context.Background(), open(good), core.LoadConfig{Layout: core.LayoutSparse, Shards: 3, BlockRows: 700})
	if err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, m, r, oracle, 5000)

	bad := dir + "/bad.tsv"
	if err := os.WriteFile(bad, []byte(text.String()+"12\t70000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	m, _, err = core.Load[uint64, uint16](context.Background(), open(bad), core.LoadConfig{Layout: core.LayoutSparse, Shards: 3, BlockRows: 700})
	if m != nil || err == nil || !strings.Contains(err.Error(), "bad.tsv") || !strings.Contains(err.Error(), "5002") || !strings.Contains(err.Error(), "70000") {
		t.Errorf("a UInt16 value of 70000 on line 5002: got %v, %v; want an error naming the file, the line and the value", m, err)
	}
	t.Log(err)
	// The failed load's goroutines end (within 2 s, as core's noLeaks).
	for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines before the failed load, %d after it:\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
	}
}
