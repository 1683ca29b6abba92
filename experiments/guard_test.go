package experiments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// TestGuardRefuses: a run far beyond the machine is refused before any
// worker starts, in one line with the prediction and the memory available;
// --force lets it through the guard.
func TestGuardRefuses(t *testing.T) {
	log := countWorkers(t)
	cfg := config.Config{Layouts: []string{"packed", "hashed"}, Rows: 1_000_000_000_000}
	_, err := Run(context.Background(), cfg, RunOptions{})
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("Run = %v, want a *MemoryError", err)
	}
	if n := len(log.started()); n != 0 {
		t.Errorf("a refused run started %d workers", n)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("refusal is more than one line: %q", msg)
	}
	// hashed, the larger: 2^41 cells of 16 bytes after the load, 2^40
	// before, held beside them only where slabs are copied.
	tib := "32"
	before := int64(0)
	if !core.SlabsGrowInPlace {
		tib, before = "48", int64(1<<40)*16
	}
	re := regexp.MustCompile(`^not enough memory: hashed at 1T rows needs about ` + tib + `\.0 TiB at its peak \(tables ` + tib + `\.0 TiB \+ loader [0-9.]+ MiB \+ read 0 B \+ runtime [0-9.]+ MiB\), but [0-9.]+ [KMGT]iB of [0-9.]+ [KMGT]iB is available, bounded by (MemAvailable in /proc/meminfo|the cgroup limit of .+ less what the cgroup uses) \(use force to run anyway\)$`)
	if !re.MatchString(msg) {
		t.Errorf("refusal\n got %q\nwant match %s", msg, re)
	}
	c := me.Verdict
	if c.Largest != "hashed" || c.Fits || c.NeedBytes != c.Estimates[1].PeakBytes+c.RuntimeBytes {
		t.Errorf("check %+v", c)
	}
	if want := int64(1<<41)*16 + before; c.Estimates[1].TablePeakBytes-want > 1024 || c.Estimates[1].TablePeakBytes < want {
		t.Errorf("hashed table peak %d, want %d plus a header", c.Estimates[1].TablePeakBytes, want)
	}
	if c.AvailableBytes > 0 && !strings.Contains(msg, text.Bytes(c.AvailableBytes)+" of "+text.Bytes(c.TotalBytes)) {
		t.Errorf("refusal does not show the available %s of %s", text.Bytes(c.AvailableBytes), text.Bytes(c.TotalBytes))
	}

	// --force passes the guard (the runs are prepared, not executed here).
	cfg.Force = true
	runs, err := prepare(context.Background(), []config.Config{cfg}, nil)
	if err != nil || len(runs) != 2 {
		t.Fatalf("prepare with force: %d runs, %v", len(runs), err)
	}
}

func TestEstimateParts(t *testing.T) {
	k, v := core.MustType("UInt64"), core.MustType("UInt16")
	runs, err := config.Resolve(config.Config{Layouts: []string{"hashed", "sparse"}, Rows: 1_000_000, Shards: 4})
	if err != nil {
		t.Fatal(err)
	}
	c, err := checkMemory(runs, runs[0].Config.Rows)
	if err != nil {
		t.Fatal(err)
	}
	pr, _ := core.Predict(core.LayoutHashed, k, v, 1_000_000, core.Options{}, 4)
	e := c.Estimates[0]
	// 4 shards x (backlog+2) sub-blocks of 16384 rows (at most a shard's
	// 250,000 rows and one sub-block) x 10 bytes, plus the 65536-row source
	// block being split.
	if wantLoader := int64(4*min((core.DefaultBacklog+2)*16384, 250_000+16384)*10 + 65536*10); e.LoaderBytes != wantLoader {
		t.Errorf("loader bytes %d, want %d", e.LoaderBytes, wantLoader)
	}
	if e.TablePeakBytes != pr.PeakBytes || e.FinalBytes != pr.FinalBytes || e.BucketCount != pr.BucketCount || e.ReadBytes != 0 {
		t.Errorf("hashed estimate %+v, want core.Predict's %+v and no read list", e, pr)
	}
	if e.PeakBytes != e.TablePeakBytes+e.LoaderBytes {
		t.Errorf("peak %d, want tables + loader %d", e.PeakBytes, e.TablePeakBytes+e.LoaderBytes)
	}
	ps, _ := core.Predict(core.LayoutSparse, k, v, 1_000_000, core.Options{}, 4)
	if s := c.Estimates[1]; s.TablePeakBytes != int64(float64(ps.PeakBytes)*dict.AllocatorFactor(core.LayoutSparse)) || !s.Estimated {
		t.Errorf("sparse estimate %+v: want core's peak x the measured allocator factor, estimated", s)
	}
}

func TestExpectedDistinct(t *testing.T) {
	u8, u64 := core.MustType("UInt8"), core.MustType("UInt64")
	spec := func(s string) source.Spec {
		sp, err := source.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}
	for _, c := range []struct {
		spec  string
		key   core.Type
		rows  int64
		want  int64
		bound bool
	}{
		{"random", u64, 1e6, 1e6, false},
		{"random", u8, 1e6, 256, false},
		{"random", core.MustType("UInt32"), 2e5, 2e5, false}, // distinct, not 199,995 by the birthday rule
		{"sequential", u8, 1000, 256, false},
		{"sequential", u64, 1000, 1000, false},
		{"range:1000", u64, 1e6, 1000, false},
		{"range:1000000", u64, 1e6, 632_121, false}, // 1e6 * (1 - 1/e)
		{"zipf:1.1", u64, 1e6, 1e6, true},
	} {
		got, bound := source.ExpectedDistinct(spec(c.spec), c.key, c.rows)
		if math.Abs(float64(got-c.want)) > 1 || bound != c.bound {
			t.Errorf("ExpectedDistinct(%s, %s, %d) = %d, %v; want %d, %v", c.spec, c.key.Name, c.rows, got, bound, c.want, c.bound)
		}
	}
}

// TestPredictedPeakMatchesMeasured is the guard's promise: for rows >= 1e6
// the predicted peak is within 10 % of the peak RSS a worker measures.
func TestPredictedPeakMatchesMeasured(t *testing.T) {
	if testing.Short() || raceEnabled || !machine.MemoryMeasurable {
		t.Skip("measures memory at 2e6 rows; not under -short, -race or without /proc")
	}
	res, err := Run(context.Background(), config.Config{Layouts: []string{"hashed", "packed", "hashed_array"}, Rows: 2_000_000, NoRead: true}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkPeaks(t, res, 15)
}

// checkPeaks holds each result's measured peak (peak_rss_bytes) within
// percent of the guard's prediction.
func checkPeaks(t *testing.T, res []result.Result, percent float64) {
	t.Helper()
	for _, r := range res {
		ratio := float64(r.PeakRSSBytes) / float64(r.PredictedPeak)
		t.Logf("%s: peak_rss_bytes %d predicted %d ratio %.3f", r.Layout, r.PeakRSSBytes, r.PredictedPeak, ratio)
		if ratio < 1-percent/100 || ratio > 1+percent/100 {
			t.Errorf("%s: measured peak %s is %.3fx the predicted %s, want within %v%%", r.Layout, text.Bytes(r.PeakRSSBytes), ratio, text.Bytes(r.PredictedPeak), percent)
		}
	}
}

// TestRSSMatchesBytesAllocated is issue 4's honesty target: at 1e7 rows,
// isolated, hashed and packed hold within 10 % of what they compute.
func TestRSSMatchesBytesAllocated(t *testing.T) {
	if testing.Short() || raceEnabled || !machine.MemoryMeasurable {
		t.Skip("loads 1e7 rows twice; not under -short, -race or without /proc")
	}
	res, err := Run(context.Background(), config.Config{Layouts: []string{"hashed", "packed"}, Rows: 10_000_000, NoRead: true}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		ratio := float64(r.RSSBytes) / float64(r.BytesAllocated)
		t.Logf("%s: rss_bytes %d bytes_allocated %d ratio %.3f; peak %.3fx predicted", r.Layout, r.RSSBytes, r.BytesAllocated, ratio, float64(r.PeakRSSBytes)/float64(r.PredictedPeak))
		if ratio < 0.9 || ratio > 1.1 {
			t.Errorf("%s: rss_bytes %s is %.3fx bytes_allocated %s, want within 10%%", r.Layout, text.Bytes(r.RSSBytes), ratio, text.Bytes(r.BytesAllocated))
		}
	}
}

// TestGuardCountsTheReservation: with --preallocate the guard predicts the
// tables reserved for every row, not for the distinct keys, and its refusal
// says so: 1e12 rows of keys drawn from 1000 values fill a hashed table
// reserved for 1e12 (ClickHouse's issue #41985 in packlab's words; 32 TiB,
// beyond any machine this runs on).
func TestGuardCountsTheReservation(t *testing.T) {
	cfg := config.Config{Layouts: []string{"hashed"}, Keys: "range:1000", Rows: 1_000_000_000_000, Preallocate: true}
	_, err := Run(context.Background(), cfg, RunOptions{})
	var me *MemoryError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "reserved for 1T rows by preallocate, about 1K distinct keys") {
		t.Fatalf("Run = %v; want a refusal naming the reservation", err)
	}
	cfg.Preallocate = false
	if c, err := Check(context.Background(), cfg); err != nil || !c.Fits {
		t.Errorf("the same keys unreserved: %+v, %v; want them to fit (1000 keys)", c, err)
	}
}

// TestGuardRefusesWhatCannotFit is the guard's promise over every layout,
// every key and value type and shard counts up to 128, at row counts up to
// 2^62: a run whose values alone need more than this machine has is
// refused, a refusal never turns back into "fits" at more rows (no figure
// wraps around), and the refusal's one line carries the need and what is
// available, never "unknown".
func TestGuardRefusesWhatCannotFit(t *testing.T) {
	var rows []int64
	step := 1
	if testing.Short() {
		step = 5 // every layout and type pair still, at fewer row counts
	}
	for k := 0; k <= 62; k += step {
		rows = append(rows, int64(1)<<k)
	}
	rows = append(rows, 8e16, 3e17, 1e18, 2e18, 4e18)
	slices.Sort(rows)
	for _, l := range core.Layouts() {
		for _, key := range core.Types() {
			for _, value := range core.Types() {
				for _, shards := range []int{1, 2, 3, 128} {
					runs, err := config.Resolve(config.Config{Layouts: []string{string(l)}, Key: key.Name, Value: value.Name, Rows: 1, Shards: shards})
					if err != nil {
						t.Fatal(err)
					}
					c, err := checkMemory(runs, 1)
					if err != nil {
						t.Fatal(err)
					}
					avail := c.AvailableBytes
					if avail < 0 {
						t.Skip("this platform does not tell its memory")
					}
					refusedAt := int64(0)
					for _, n := range rows {
						e, err := estimate(runs[0], n)
						if err != nil {
							t.Fatalf("%s <%s,%s> shards %d rows %d: %v", l, key.Name, value.Name, shards, n, err)
						}
						need := core.SaturatingAdd(e.PeakBytes, c.RuntimeBytes)
						// Independent of the guard: random keys of D possible
						// values give at least (1-1/e)*min(rows, D) distinct
						// ones, and each keeps its value.
						domain := math.Ldexp(1, 8*min(key.Size, 8))
						values := (1 - 1/math.E) * min(float64(n), domain) * float64(value.Size)
						where := fmt.Sprintf("%s <%s,%s> shards %d rows %d (need %d, available %d)", l, key.Name, value.Name, shards, n, need, avail)
						switch {
						case need < 0:
							t.Fatalf("%s: negative need", where)
						case values > float64(avail) && need <= avail:
							t.Fatalf("%s: the values alone need %.0f bytes, yet the guard lets it run", where, values)
						case refusedAt > 0 && need <= avail:
							t.Fatalf("%s: refused at %d rows but not at %d", where, refusedAt, n)
						}
						if need > avail && refusedAt == 0 {
							refusedAt = n
						}
					}
					// The guard itself, at the first refused row count and at 2^62
					// (small keys repeat, so some runs fit at any row count).
					for _, n := range []int64{refusedAt, source.MaxRows} {
						if refusedAt == 0 {
							break
						}
						runs[0].Config.Rows = n
						runs[0].Spec.Rows = n
						c, err := checkMemory(runs, n)
						if err != nil {
							t.Fatal(err)
						}
						// The memory available moves while the test runs (other
						// processes): judge by the figures of this check.
						if c.Fits != (c.NeedBytes <= c.AvailableBytes) || (n == source.MaxRows && c.Fits) {
							t.Fatalf("%s <%s,%s> shards %d rows %d: the guard says fits=%v with %d bytes available and %d needed", l, key.Name, value.Name, shards, n, c.Fits, c.AvailableBytes, c.NeedBytes)
						}
						if c.Fits {
							continue
						}
						msg := (&MemoryError{Verdict: c}).Error()
						if strings.Contains(msg, "unknown") || strings.Contains(msg, "\n") ||
							!strings.Contains(msg, " "+text.Bytes(c.NeedBytes)+" at its peak") || !strings.Contains(msg, text.Bytes(c.AvailableBytes)+" of ") {
							t.Fatalf("%s <%s,%s> shards %d rows %d: refusal %q lacks the need %s or the available %s", l, key.Name, value.Name, shards, n, msg, text.Bytes(c.NeedBytes), text.Bytes(c.AvailableBytes))
						}
					}
				}
			}
		}
	}
}

// TestPredictedPeakLongStrings is issue 48's target for the guard's String
// model: a file of 2-6 KB Strings (20,000 rows, 80 MB) loaded by the row
// layouts peaks within 15 % of the guard's prediction. The worker held the
// file's cells 65,536 rows at a time and peaked at 2.5x the prediction (206
// MiB against 83); its blocks of 16 MB of cells are in the model now. While
// the source's cells grew by appends, the peak hung on when the collector
// ran: 0.94x-1.10x over 12 runs beside two busy loops (once 1.162x); with
// the cells in chunks kept from block to block, 1.006x-1.013x. The bound
// stays 15 %: the model counts the last block's cells again at the read
// (released at the end of the pass, no collection has run by then, so the
// read's copy takes fresh pages); were a collection to end in between, the
// copy would reuse them: 0.89x with a collection forced there, inside 15 %.
func TestPredictedPeakLongStrings(t *testing.T) {
	if testing.Short() || raceEnabled || !machine.MemoryMeasurable {
		t.Skip("measures memory over an 80 MB file; not under -short, -race or without /proc")
	}
	path := longStringsTSV(t)
	res, err := Run(context.Background(), config.Config{Layouts: []string{"packed_row", "compact_row"}, Source: path, Attributes: []string{"UInt16", "note:String"}}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkPeaks(t, res, 15)
}

// TestEstimateNamesTheRowLayout: a row layout's estimate, and a refusal of
// it, name the layout asked for (packed_row), not the table that holds its
// rows (packed): "--layout packed_row" was refused as "packed at 1M rows".
func TestEstimateNamesTheRowLayout(t *testing.T) {
	for _, c := range []struct {
		layouts []string
		want    []string
	}{
		{[]string{"packed_row"}, []string{"packed_row"}},
		{[]string{"compact_row", "packed"}, []string{"compact_row", "packed"}},
		{[]string{"hashed", "packed_row", "compact_row"}, []string{"hashed", "packed_row", "compact_row"}},
	} {
		runs, err := config.Resolve(config.Config{Layouts: c.layouts, Rows: 1_000_000_000_000})
		if err != nil {
			t.Fatal(err)
		}
		mc, err := checkMemory(runs, runs[0].Config.Rows)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range mc.Estimates {
			got = append(got, e.Layout)
		}
		if !slices.Equal(got, c.want) || !slices.Contains(c.want, mc.Largest) {
			t.Errorf("%v: estimates of %v, largest %q; want %v", c.layouts, got, mc.Largest, c.want)
		}
		if msg := (&MemoryError{Verdict: mc}).Error(); !strings.HasPrefix(msg, "not enough memory: "+mc.Largest+" at 1T rows") {
			t.Errorf("%v: refusal %q, want it to name %s", c.layouts, msg, mc.Largest)
		}
	}
}
