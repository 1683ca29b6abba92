package planner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/planner/speed"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// machine24 is a 24 GiB, 2-core machine: this lab's.
var machine24 = PlanMachine{AvailableBytes: 24 << 30, TotalBytes: 24 << 30, Cores: 2}

func candidateOf(t *testing.T, plan Plan, layout string, shards int, mlf float64) Candidate {
	t.Helper()
	for _, c := range plan.Candidates {
		if c.Layout == layout && c.Shards == shards && (mlf == 0 || c.MaxLoadFactor == mlf) && (engineOf(c) == EngineGo || layout == FlatLayout) {
			return c
		}
	}
	t.Fatalf("no candidate %s SHARDS %d MLF %v among %d", layout, shards, mlf, len(plan.Candidates))
	return Candidate{}
}

// TestPlanEveryLayoutFromPredict: every layout the plan weighs (planLayouts) is planned
// at SHARDS 1, 2, 4 ... 128, its figures are core.Predict's (times the
// overhead), and a layout with no ClickHouse name is marked packlab-only.
func TestPlanEveryLayoutFromPredict(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e9}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	k, v := core.MustType("UInt64"), core.MustType("UInt16")
	for _, l := range core.Layouts() {
		var shards []int
		for _, c := range plan.Candidates {
			if c.Layout != string(l) || engineOf(c) != EngineGo {
				continue // a ClickHouse setup's figures are ClickHouse's (TestPlanClickHouseSetups)
			}
			if !slices.Contains(shards, c.Shards) {
				shards = append(shards, c.Shards)
			}
			mlf := c.MaxLoadFactor
			if !c.FollowsMLF {
				mlf = 0
			}
			pr, err := core.Predict(l, k, v, 1e9, core.Options{MaxLoadFactor: mlf}, c.Shards)
			if err != nil {
				t.Fatal(err)
			}
			wantPeak := dict.ScaleBytes(pr.PeakBytes+c.LoaderBytes, c.PeakOverhead) // every shard growing at once
			if c.BytesAllocated != pr.FinalBytes || c.BucketCount != pr.BucketCount || c.SteadyBytes != dict.ScaleBytes(pr.FinalBytes, c.Overhead)+c.LoaderBytes ||
				math.Abs(float64(c.PeakBytes-wantPeak)) > 1 {
				t.Errorf("%s: got bytes %d, buckets %d, steady %d, peak %d; want core.Predict's %d, %d, x%.3f, peak %d",
					SetupName(c), c.BytesAllocated, c.BucketCount, c.SteadyBytes, c.PeakBytes, pr.FinalBytes, pr.BucketCount, c.Overhead, wantPeak)
			}
			if c.GrowingAtOnce != c.Shards {
				t.Errorf("%s: %d shards growing at once, want all %d", SetupName(c), c.GrowingAtOnce, c.Shards)
			}
			// What the plan says the peak is made of must be this layout's
			// growth: no old slab beside the new where none is held.
			if w := growthWords(c); pr.GrowthBytes == 0 && strings.Contains(w, "old and new") ||
				l == core.LayoutSparse && !strings.Contains(w, "page by page") {
				t.Errorf("%s: the peak is %q, but the last growth holds %d bytes more", SetupName(c), w, pr.GrowthBytes)
			}
			if (dict.ClickHouseLayoutName(l) == "") != c.PacklabOnly || c.ClickHouseLayout != "" {
				t.Errorf("%s: packlab_only %v, clickhouse_layout %q, but ClickHouseLayoutName is %q", SetupName(c), c.PacklabOnly, c.ClickHouseLayout, dict.ClickHouseLayoutName(l))
			}
		}
		slices.Sort(shards)
		if !slices.Equal(shards, planShards) {
			t.Errorf("%s: planned at shards %v, want %v", l, shards, planShards)
		}
	}
}

// TestPlanLoadFactorsWorthShowing: for 1e9 keys a load factor from 0.5 up
// to 0.93 gives 2^31 cells, from 0.94 2^30: the plan shows 0.5 and 0.94,
// the lowest of each, and nothing in between.
func TestPlanLoadFactorsWorthShowing(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e9}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	var mlfs []float64
	for _, c := range plan.Candidates {
		if c.Layout == "packed" && c.Shards == 1 && engineOf(c) == EngineGo {
			mlfs = append(mlfs, c.MaxLoadFactor)
		}
	}
	slices.Sort(mlfs)
	if !slices.Equal(mlfs, []float64{0.5, 0.94}) {
		t.Errorf("packed SHARDS 1 load factors %v, want [0.5 0.94]", mlfs)
	}
	if c := candidateOf(t, plan, "packed", 1, 0.94); c.BucketCount != 1<<30 {
		t.Errorf("packed MLF 0.94: %d cells, want 2^30", c.BucketCount)
	}
}

// TestPlanBudget: with 24 GiB and no speeds measured, the answer is the
// setup with the least memory whose peak fits; a layout with no setup that
// fits is named, with its smallest peak; with 1 GiB nothing fits and the
// answer names the smallest setup and its peak.
func TestPlanBudget(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e9, MemoryBytes: 24 << 30, Prefer: PreferMemory}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	best := plan.Best()
	if !best.Fits || best.PeakBytes > 24<<30 || best.Rank != 1 {
		t.Fatalf("best %+v: want a setup whose peak fits in 24 GiB", best)
	}
	for _, c := range plan.Candidates {
		if c.Fits && engineOf(c) == EngineGo && onePercent(float64(c.CheckedBytes)) < onePercent(float64(best.CheckedBytes)) {
			t.Errorf("%s fits with a reload peak of %d, less than the answer's %d", SetupName(c), c.CheckedBytes, best.CheckedBytes)
		}
		if c.CheckedBytes != c.ReloadPeakBytes || engineOf(c) == EngineGo && c.ReloadPeakBytes != dict.ScaleBytes(c.BytesAllocated, c.Overhead)+c.PeakBytes {
			t.Errorf("%s: checked %d, reload peak %d; want the reload's: the serving table %d + the first load's peak %d",
				SetupName(c), c.CheckedBytes, c.ReloadPeakBytes, dict.ScaleBytes(c.BytesAllocated, c.Overhead), c.PeakBytes)
		}
		if c.Fits != (c.CheckedBytes <= 24<<30) {
			t.Errorf("%s: fits %v with a reload peak of %d", SetupName(c), c.Fits, c.CheckedBytes)
		}
	}
	if !strings.Contains(plan.Answer, SetupName(*best)) || best.Why == "" {
		t.Errorf("answer %q does not name %s, or no why", plan.Answer, SetupName(*best))
	}
	// gomap's swiss tables need 16-byte slots at 7/8 and split one table at
	// a time: over 24 GiB at any setting for 1e9 <UInt64,UInt16>.
	ruled := strings.Join(plan.RuledOut, "\n")
	if !strings.Contains(ruled, "gomap: every setup's reload peak is above 24.0 GiB") {
		t.Errorf("ruled out:\n%s\nwant gomap ruled out, with why", ruled)
	}

	none, err := MakePlan(PlanRequest{Rows: 1e9, MemoryBytes: 1 << 30, Prefer: PreferMemory}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	b := none.Best()
	if b.Fits || len(none.Candidates) == 0 {
		t.Fatalf("1 GiB: best %+v fits", b)
	}
	for _, c := range none.Candidates {
		if engineOf(c) == EngineGo && c.CheckedBytes < b.CheckedBytes {
			t.Errorf("1 GiB: %s peaks at %d at a reload, below the answer's %d", SetupName(c), c.CheckedBytes, b.CheckedBytes)
		}
	}
	want := "In Go (packlab's core): " + SetupName(*b) + ": steady "
	if !strings.Contains(none.Answer, want) || !strings.Contains(none.Answer, "does not fit in 1.0 GiB: ") ||
		b.Why != "nothing in Go fits in 1.0 GiB; this is the smallest: reload peak "+text.Bytes2(b.CheckedBytes)+", "+text.Bytes2(b.CheckedBytes-1<<30)+" over" {
		t.Errorf("1 GiB answer\n got %q (why %q)\nwant %q... does not fit, 14.7 GiB over", none.Answer, b.Why, want)
	}
}

// TestPlanRanksBySpeed: with speeds measured (three loads each, so each has
// a range), a plan that prefers reads or loads puts no fitting setup that is
// faster beyond both ranges below the answer, and among setups whose ranges
// overlap it takes the least memory; preferring memory, the answer is the
// one with no speeds at all. The runs are real, in this process.
func TestPlanRanksBySpeed(t *testing.T) {
	if testing.Short() {
		t.Skip("measures every layout at 2e5 rows, three loads each")
	}
	res, err := experiments.Run(context.Background(), config.Config{Rows: 200_000, InProcess: true, Seed: 1, Repeats: 3}, experiments.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, prefer := range []string{PreferRead, PreferLoad} {
		plan, err := MakePlan(PlanRequest{Rows: 1e6, MemoryBytes: 1 << 30, Prefer: prefer}, res, machine24)
		if err != nil {
			t.Fatal(err)
		}
		best := plan.Best()
		floor := 0.0 // the slowest speed of the fastest setup that fits
		for _, c := range plan.Candidates {
			if lo, _ := speedRange(c, prefer); c.Fits {
				floor = max(floor, lo)
			}
		}
		for _, c := range plan.Candidates {
			if engineOf(c) != EngineGo {
				continue // ClickHouse's setups take their speeds from ch_ runs, which this history has none of
			}
			if c.LoadRange == nil || c.ReadRange == nil {
				t.Fatalf("%s: no speed range although every layout was measured three times", SetupName(c))
			}
			if lo, _ := speedRange(c, prefer); c.Fits && lo > speedRangeHi(*best, prefer) {
				t.Errorf("prefer %s: %s is faster beyond both ranges (slowest %.0f rows/s) than the answer %s (fastest %.0f)", prefer, SetupName(c), lo, SetupName(*best), speedRangeHi(*best, prefer))
			}
			if _, hi := speedRange(c, prefer); c.Fits && (c.SpeedTier == 1) != (hi >= floor) {
				t.Errorf("prefer %s: %s in speed tier %d with its fastest %.0f rows/s against the fastest setup's slowest %.0f", prefer, SetupName(c), c.SpeedTier, hi, floor)
			}
			if c.Fits && c.SpeedTier == best.SpeedTier && byRule(c, *best) < 0 {
				t.Errorf("prefer %s: %s ties the answer %s on speed and comes first by the rule", prefer, SetupName(c), SetupName(*best))
			}
		}
		if best.SpeedTier != 1 || best.Why == "" {
			t.Errorf("prefer %s: answer in speed tier %d, why %q", prefer, best.SpeedTier, best.Why)
		}
	}
	mem, err := MakePlan(PlanRequest{Rows: 1e6, MemoryBytes: 1 << 30, Prefer: PreferMemory}, res, machine24)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := MakePlan(PlanRequest{Rows: 1e6, MemoryBytes: 1 << 30, Prefer: PreferMemory}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if SetupName(*mem.Best()) != SetupName(*bare.Best()) {
		t.Errorf("prefer memory: %s with speeds, %s without: speeds must not decide", SetupName(*mem.Best()), SetupName(*bare.Best()))
	}
}

func speedRangeHi(c Candidate, prefer string) float64 {
	_, hi := speedRange(c, prefer)
	return hi
}

// TestPlanIsFast: 1e12 rows (and 2^62) are answered allocating no table, a
// few MB at most; the time is logged (a TARGET line), not asserted.
func TestPlanIsFast(t *testing.T) {
	for _, rows := range []int64{1e12, source.MaxRows} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		plan, err := MakePlan(PlanRequest{Rows: rows}, nil, machine24)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		runtime.ReadMemStats(&after)
		t.Logf("TARGET %d rows: %d candidates in %v (target: well under 1 s), %d bytes allocated", rows, len(plan.Candidates), took, after.TotalAlloc-before.TotalAlloc)
		if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
			t.Errorf("%d rows allocated %d bytes: a table?", rows, a)
		}
	}
}

// TestPlanBadInput: bad input is a *FieldError naming the flag, the value
// and what is allowed, as run's is.
func TestPlanBadInput(t *testing.T) {
	for _, c := range []struct {
		req  PlanRequest
		want string
	}{
		{PlanRequest{Rows: 0}, "rows 0: out of range (allowed: 1 to 4611686018427387904)"},
		{PlanRequest{Rows: source.MaxRows + 1}, "rows 4611686018427387905: out of range"},
		{PlanRequest{Rows: 10, Key: "UInt7"}, "key UInt7: unknown type"},
		{PlanRequest{Rows: 10, Value: "Nullable(UInt7)"}, "value Nullable(UInt7): unknown type (allowed: UInt8, UInt16, UInt32, UInt64, UInt128, Int8, Int16, Int32, Int64, Int128, Float32, Float64, UUID, Date, DateTime; or a String or Nullable(T), as the dictionary's one attribute)"},
		{PlanRequest{Rows: 10, Key: "Nullable(UInt64)"}, "key Nullable(UInt64): a key cannot be Nullable"},
		{PlanRequest{Rows: 10, Key: "LowCardinality(String)"}, "key LowCardinality(String): unknown type"},
		{PlanRequest{Rows: 10, Threads: 300}, "threads 300: out of range (allowed: 1 to 256)"},
		{PlanRequest{Rows: 10, Prefer: "both"}, "prefer both: unknown (allowed: balanced (less memory among setups of similar speed; the default), memory (the least memory), read (the fastest reads) or load (the fastest load))"},
		{PlanRequest{Rows: 10, Runtime: "jvm"}, "runtime jvm: unknown (allowed: native (the default) or browser (this browser's wasm memory))"},
		{PlanRequest{Rows: 10, Runtime: "browser"}, "runtime browser: a plan for a browser's wasm memory is made in the browser (allowed: native)"},
		{PlanRequest{Rows: 10, MemoryBytes: 1000}, "memory_bytes 1000: too small"},
	} {
		_, err := MakePlan(c.req, nil, machine24)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want a FieldError starting %q", c.req, err, c.want)
		}
	}
	for s, want := range map[string]int64{"24GiB": 24 << 30, "24G": 24 << 30, "32GB": 32e9, "512 MiB": 512 << 20, "1.5TiB": 3 << 39, "1048576": 1 << 20} {
		if got, err := ParseMemory(s); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for s, want := range map[string]string{
		"":     `memory_bytes "": empty`,
		"lots": "memory_bytes lots: not a number",
		"12QB": `memory_bytes 12QB: unknown unit "QB"`,
		"1KiB": "memory_bytes 1KiB: too small (allowed: at least 1MiB",
		"9EiB": "memory_bytes 9EiB: too large",
	} {
		if _, err := ParseMemory(s); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseMemory(%q): got %v, want %q...", s, err, want)
		}
	}
}

// TestPlanClickHouse: the CREATE DICTIONARY names the layout ClickHouse
// builds for the types; packed with a UUID value is not what SPARSE_HASHED
// builds, so it is packlab-only there.
func TestPlanClickHouse(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e9, MemoryBytes: 24 << 30}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	best := plan.Best()
	if best.PacklabOnly { // compact: no dictionary builds it; the best one ClickHouse can run
		best = plan.BestClickHouse()
	}
	want := "CREATE DICTIONARY dict\n(\n    key UInt64,\n    value UInt16\n)\nPRIMARY KEY key\nSOURCE(CLICKHOUSE(TABLE 'source_table'))\nLIFETIME(0)\n" + best.ClickHouseLayout
	if best.CreateDictionary != want {
		t.Errorf("CREATE DICTIONARY\n got %q\nwant %q", best.CreateDictionary, want)
	}
	if i := slices.IndexFunc(plan.Candidates, func(c Candidate) bool {
		return c.Layout == "packed" && c.Shards == 4 && c.MaxLoadFactor == 0.94 && c.Engine == EngineClickHouse
	}); i < 0 || plan.Candidates[i].ClickHouseLayout != "LAYOUT(SPARSE_HASHED(SHARDS 4 MAX_LOAD_FACTOR 0.94))" {
		t.Errorf("packed SHARDS 4 MLF 0.94 has no ClickHouse setup SPARSE_HASHED(SHARDS 4 MAX_LOAD_FACTOR 0.94)")
	}
	uuid, err := MakePlan(PlanRequest{Rows: 1e6, Value: "UUID"}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if c := candidateOf(t, uuid, "packed", 1, 0.5); !c.PacklabOnly || c.ClickHouseLayout != "" || !strings.Contains(c.ClickHouseNote, "sparse_hash_map") {
		t.Errorf("packed <UInt64,UUID>: packlab_only %v, layout %q, note %q", c.PacklabOnly, c.ClickHouseLayout, c.ClickHouseNote)
	}
	if b := uuid.Best(); b.PacklabOnly {
		if ch := uuid.BestClickHouse(); ch == nil || ch.PacklabOnly || ch.CreateDictionary == "" {
			t.Errorf("best %s is packlab-only, but no ClickHouse setup is offered: %+v", SetupName(*b), ch)
		}
	}
}

// TestPlanMatchesMeasured is the planner's promise at sizes that fit: with
// the speeds and overheads of a calibration (2e6 rows), its predictions for
// other sizes and shard counts match what a run then measures: bytes
// exact for the layouts whose geometry is computed, not modelled; steady
// RSS and the peak within 10 %. (Below a few million rows the loader's
// freed blocks, about 10 MiB that the Go runtime keeps or returns as it
// likes, are too large a share of the tables for 10 %.)
func TestPlanMatchesMeasured(t *testing.T) {
	if testing.Short() || raceEnabled || !machine.MemoryMeasurable {
		t.Skip("measures every layout at 4e6 rows and three at 8e6; not under -short, -race or without /proc")
	}
	ctx := context.Background()
	cfgs, err := CalibrationConfigs(PlanRequest{Rows: 1e6, CalibrationRows: 2_000_000}, nil, 1) // not the default 1e7: seconds, not minutes
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		cfgs[i].Repeats = 1 // memory only: one load each
	}
	job := result.NewJob(CalibrationJobName(cfgs), "", time.Now())
	calib, err := experiments.RunConfigs(ctx, cfgs, experiments.RunOptions{Job: &job})
	if err != nil {
		t.Fatal(err)
	}
	var measured []result.Result
	for _, cfg := range []config.Config{
		{Rows: 4_000_000, NoRead: true, Seed: 2},
		{Rows: 8_000_000, NoRead: true, Seed: 3, Layouts: []string{"hashed", "packed", "hashed_array"}},
		{Rows: 8_000_000, NoRead: true, Seed: 4, Shards: 4, Layouts: []string{"hashed", "packed"}},
	} {
		res, err := experiments.Run(ctx, cfg, experiments.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		measured = append(measured, res...)
	}
	for _, r := range measured {
		if !slices.Contains(core.Layouts(), core.Layout(r.Layout)) {
			continue // not a setup the plan weighs
		}
		plan, err := MakePlan(PlanRequest{Rows: r.Rows, MemoryBytes: 1 << 40}, calib, machine24)
		if err != nil {
			t.Fatal(err)
		}
		// The planner lists each geometry at the lowest max load factor
		// that gives it: the run's table may stand under a lower one.
		i := slices.IndexFunc(plan.Candidates, func(c Candidate) bool {
			return engineOf(c) == EngineGo && c.Layout == r.Layout && c.Shards == r.Shards && c.MaxLoadFactor == r.MaxLoadFactor
		})
		if i < 0 {
			i = slices.IndexFunc(plan.Candidates, func(c Candidate) bool {
				return engineOf(c) == EngineGo && c.Layout == r.Layout && c.Shards == r.Shards && c.BucketCount == r.BucketCount
			})
		}
		if i < 0 {
			t.Fatalf("no candidate %s SHARDS %d with %d buckets", r.Layout, r.Shards, r.BucketCount)
		}
		c := plan.Candidates[i]
		rss := float64(r.RSSBytes) / float64(c.SteadyBytes)
		peak := float64(r.PeakRSSBytes) / float64(c.PeakBytes)
		t.Logf("%s at %s rows: bytes %d (measured %d), steady %s (RSS %s, x%.3f), peak %s (measured %s, x%.3f)", SetupName(c), text.Rows(r.Rows),
			c.BytesAllocated, r.BytesAllocated, text.Bytes(c.SteadyBytes), text.Bytes(r.RSSBytes), rss, text.Bytes(c.PeakBytes), text.Bytes(r.PeakRSSBytes), peak)
		if !c.Estimated && c.BytesAllocated != r.BytesAllocated {
			t.Errorf("%s at %d rows: predicted bytes_allocated %d, measured %d", SetupName(c), r.Rows, c.BytesAllocated, r.BytesAllocated)
		}
		if r.Estimated {
			continue // gomap: its memory is the Go runtime's to manage, and read, not computed
		}
		if rss < 0.9 || rss > 1.1 {
			t.Errorf("%s at %d rows: measured RSS %s is %.3fx the predicted steady %s", SetupName(c), r.Rows, text.Bytes(r.RSSBytes), rss, text.Bytes(c.SteadyBytes))
		}
		if c.Shards > 1 {
			// The peak counts every shard growing at once, the worst case;
			// the run shows how many did.
			pr, _ := core.Predict(core.Layout(r.Layout), core.MustType(r.KeyType), core.MustType(r.ValueType), r.ElementCount, core.Options{MaxLoadFactor: r.MaxLoadFactor}, r.Shards)
			if pr.GrowthBytes > 0 {
				t.Logf("%s: %.1f of %d shards grew at once", SetupName(c), float64(r.PeakRSSBytes-r.RSSBytes)/float64(pr.GrowthBytes), r.Shards)
			}
			if peak > 1.1 || r.PeakRSSBytes < r.RSSBytes+pr.GrowthBytes*9/10 {
				t.Errorf("%s at %d rows: measured peak %s is %.3fx the predicted %s (every shard growing at once), or less than one shard's growth above the steady RSS %s",
					SetupName(c), r.Rows, text.Bytes(r.PeakRSSBytes), peak, text.Bytes(c.PeakBytes), text.Bytes(r.RSSBytes))
			}
			continue
		}
		if peak < 0.9 || peak > 1.1 {
			t.Errorf("%s at %d rows: measured peak %s is %.3fx the predicted %s", SetupName(c), r.Rows, text.Bytes(r.PeakRSSBytes), peak, text.Bytes(c.PeakBytes))
		}
	}
}

// TestPlanTableShowsEachLayoutsRange: the plan's human table shows, for each
// layout, its best setup, its smallest that fits and its largest, in rank
// order and at most three a layout; for compact at 1e9 rows in 24 GiB that
// is its densest setup, not three load factors a hundredth apart.
func TestPlanTableShowsEachLayoutsRange(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e9, MemoryBytes: 24 << 30}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	shown := planTableSetups(plan.Candidates)
	_, _, rows := PlanTable(plan)
	if len(rows) != len(shown) {
		t.Fatalf("PlanTable has %d rows, planTableSetups picked %d", len(rows), len(shown))
	}
	for i := 1; i < len(shown); i++ {
		if shown[i].Rank <= shown[i-1].Rank {
			t.Errorf("row %d has rank %d after rank %d: want rank order", i, shown[i].Rank, shown[i-1].Rank)
		}
	}
	for _, l := range core.Layouts() {
		var mine []Candidate
		for _, c := range shown {
			if c.Layout == string(l) && engineOf(c) == EngineGo {
				mine = append(mine, c)
			}
		}
		if len(mine) == 0 || len(mine) > 3 {
			t.Errorf("%s: %d rows, want 1 to 3", l, len(mine))
			continue
		}
		// Each load factor at its best-ranked shard count.
		var best, dense, large *Candidate
		seen := map[float64]bool{}
		for i := range plan.Candidates {
			c := &plan.Candidates[i]
			if c.Layout != string(l) || seen[c.MaxLoadFactor] {
				continue
			}
			seen[c.MaxLoadFactor] = true
			if best == nil {
				best = c
			}
			if c.Fits && (dense == nil || c.SteadyBytes < dense.SteadyBytes) {
				dense = c
			}
			if large == nil || c.SteadyBytes > large.SteadyBytes {
				large = c
			}
		}
		has := func(want *Candidate, what string) {
			if want == nil {
				return
			}
			for _, c := range mine {
				if c.SteadyBytes == want.SteadyBytes && c.MaxLoadFactor == want.MaxLoadFactor {
					return
				}
			}
			t.Errorf("%s: the table leaves out its %s setup, %s (%s); it shows %v", l, what, SetupName(*want), text.Bytes2(want.SteadyBytes), setupNames(mine))
		}
		has(best, "best")
		has(dense, "smallest fitting")
		has(large, "largest")
	}
	var compact []Candidate
	for _, c := range shown {
		if c.Layout == string(core.LayoutCompact) {
			compact = append(compact, c)
		}
	}
	if len(compact) != 3 || !slices.ContainsFunc(compact, func(c Candidate) bool { return c.MaxLoadFactor >= 0.9 }) {
		t.Errorf("compact at 1e9 rows shows %v; want three setups reaching its densest (load factor 0.9 or more)", setupNames(compact))
	}
}

func setupNames(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, SetupName(c))
	}
	return out
}

// TestPlanReadsShardsSlower: a sharded setup's read is its one-shard
// speed divided by speed.ShardReadCost, which grows with the shards
// (measured at 1e7 rows: compact 1.15x slower at SHARDS 2 than at 1 beyond
// its fill, 1.58x at 8, 2.23x at 128); a ClickHouse setup's too, by its Go
// layout's cost.
func TestPlanReadsShardsSlower(t *testing.T) {
	prev := 1.0
	for _, n := range []int{2, 4, 8, 32, 128} {
		c := speed.ShardReadCost(core.LayoutCompact, n)
		if c <= prev || c > 2.6 {
			t.Errorf("compact's read at SHARDS %d costs %.3fx SHARDS 1's; want more than %.3f (fewer shards') and at most 2.6", n, c, prev)
		}
		prev = c
	}
	if c := speed.ShardReadCost(core.LayoutPacked, 1); c != 1 {
		t.Errorf("one shard's read costs %.3fx itself", c)
	}
	history := stableHistory()
	ch := history[0]
	ch.ID, ch.Layout, ch.LoadRowsPerSecond, ch.ReadRowsPerSecond, ch.LoadFactor = "20261206T000000.000Z-ch_sparse_hashed", "ch_sparse_hashed", 7e5, 6e6, 0.3
	plan, err := MakePlan(PlanRequest{Rows: 1e7, MemoryBytes: 1 << 40}, append(history, ch), machine24)
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		engine, layout string
		shards         int
		mlf            float64
	}
	read, fill := map[key]float64{}, map[key]float64{}
	for _, c := range plan.Candidates {
		if c.ReadRowsPerSecond != nil {
			k := key{engineOf(c), c.Layout, c.Shards, c.MaxLoadFactor}
			read[k], fill[k] = *c.ReadRowsPerSecond, c.LoadFactor
		}
	}
	checked := 0
	for k, r8 := range read {
		k1 := k
		k1.shards = 1
		r1, ok := read[k1]
		if k.shards != 8 || !ok {
			continue
		}
		want := r1 / speed.ShardReadCost(core.Layout(k.layout), 8) * speed.ReadCost(core.Layout(k.layout), fill[k1], 8) / speed.ReadCost(core.Layout(k.layout), fill[k], 8)
		if k.engine == EngineClickHouse {
			want = r1 / speed.ShardReadCost(core.Layout(k.layout), 8) * speed.ProbeLines(fill[k1], 10) / speed.ProbeLines(fill[k], 10)
		}
		if math.Abs(r8/want-1) > 0.02 {
			t.Errorf("%v reads %.0f rows/s at SHARDS 1, %.0f at 8; want %.0f", k, r1, r8, want)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("only %d setups at SHARDS 1 and 8 of one layout, engine and max load factor", checked)
	}
}

// TestPlanPreallocate: a preallocated plan reserves every setup for its
// keys: its figures are core.Predict's with the reservation (no growth
// held at the peak), its Go code reserves, its notes say so; and its speeds
// come from preallocated runs only, as a grown plan's from grown runs.
func TestPlanPreallocate(t *testing.T) {
	k, v := core.MustType("UInt64"), core.MustType("UInt16")
	run := func(id string, prealloc bool, load float64) result.Result {
		return result.Result{ID: id, Layout: "compact", KeyType: "UInt64", ValueType: "UInt16", Rows: planMinRows, Shards: 1,
			Source: string(source.Random), Runtime: experiments.RuntimeName(), LoadRowsPerSecond: load, ReadRowsPerSecond: 2e7,
			LoadFactor: 0.9, MaxLoadFactor: 0.9, Preallocate: prealloc}
	}
	// The preallocated run is the newer: a grown plan must not take it.
	history := []result.Result{run("20261201T000000.000Z-compact-a", false, 1e6), run("20261202T000000.000Z-compact-b", true, 3e6)}
	for _, prealloc := range []bool{false, true} {
		plan, err := MakePlan(PlanRequest{Rows: 1e9, MemoryBytes: 24 << 30, Preallocate: prealloc}, history, machine24)
		if err != nil {
			t.Fatal(err)
		}
		c := candidateOf(t, plan, "compact", 1, 0.5) // the lowest max load factor is always a setup
		opt := core.Options{MaxLoadFactor: 0.5}
		if prealloc {
			opt.Reserve = 1e9
		}
		pr, _ := core.Predict(core.LayoutCompact, k, v, 1e9, opt, 1)
		// The run's speed at its max load factor, 0.9, scaled to 0.5's.
		wantLoad := map[bool]float64{false: 1e6, true: 3e6}[prealloc] * speed.LoadCost(core.LayoutCompact, 0.9) / speed.LoadCost(core.LayoutCompact, 0.5)
		if c.Preallocate != prealloc || c.BytesAllocated != pr.FinalBytes || c.GrowthBytes != pr.GrowthBytes || c.LoadRowsPerSecond == nil || math.Abs(*c.LoadRowsPerSecond/wantLoad-1) > 1e-9 {
			t.Errorf("preallocate %v: compact SHARDS 1 MLF 0.5: preallocate %v, %d bytes, growth %d, load %v; want %d bytes, growth %d, load %v rows/s (the run preallocated as the plan)",
				prealloc, c.Preallocate, c.BytesAllocated, c.GrowthBytes, c.LoadRowsPerSecond, pr.FinalBytes, pr.GrowthBytes, wantLoad)
		}
		if got := strings.Contains(goCode(c), "Reserve: 1000000000"); got != prealloc {
			t.Errorf("preallocate %v: the Go code reserves: %v\n%s", prealloc, got, goCode(c))
		}
		if got := slices.ContainsFunc(plan.Notes, func(n string) bool { return strings.HasPrefix(n, "preallocated:") }); got != prealloc {
			t.Errorf("preallocate %v: a note says preallocated: %v (%q)", prealloc, got, plan.Notes)
		}
		if prealloc && pr.GrowthBytes != 0 {
			t.Errorf("a table reserved for its keys predicted to hold %d bytes of a growth", pr.GrowthBytes)
		}
	}
	cfgs, err := CalibrationConfigs(PlanRequest{Rows: 1e9, Preallocate: true}, nil, 2)
	if err != nil || len(cfgs) == 0 || !cfgs[0].Preallocate || !strings.HasSuffix(CalibrationJobName(cfgs), " preallocate") {
		t.Errorf("a preallocated plan's calibration: %+v, %v; want preallocated runs, named so", cfgs, err)
	}
}

// TestPlanReadSpeedSurvivesANoReadRun: a newer run made with --no-read
// gives the plan its load speed and leaves the read speed to the newest
// run that read (it once left the plan with no read speed at all).
func TestPlanReadSpeedSurvivesANoReadRun(t *testing.T) {
	run := func(id string, load, read, fill float64) result.Result {
		return result.Result{ID: id, Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Rows: planMinRows, Shards: 1,
			Source: string(source.Random), Runtime: experiments.RuntimeName(), LoadRowsPerSecond: load, ReadRowsPerSecond: read,
			LoadFactor: fill, MaxLoadFactor: 0.5}
	}
	history := []result.Result{run("20261201T000000.000Z-packed-a", 1e6, 2e7, 0.3), run("20261202T000000.000Z-packed-b", 3e6, 0, 0.4)}
	p, err := PlanRequest{Rows: 1e6}.Parse()
	if err != nil {
		t.Fatal(err)
	}
	m := measuresFrom(history, p)[core.LayoutPacked]
	if m.LoadRowsPerSecond != 3e6 || m.ReadRowsPerSecond != 2e7 || m.LoadFactor != 0.3 || !strings.Contains(m.From, "read 20261201T000000.000Z-packed-a") {
		t.Errorf("measure %+v; want the newer run's load (3e6), the older run's read (2e7 at fill 0.3), both named", m)
	}
}

// TestPlanTakesTheRunNearestItsRows: the plan compares the layouts' speeds
// at one size, each layout's one-shard run nearest it (the newest among runs
// of one size): the plan's rows when every measured layout has a run near
// them, else the size of the layout measured farthest from them. A
// billion-row plan takes packed's older 1e8 run over its newer 2M
// calibration, unless hashed was measured at 2M only; and the plan's note
// says which layouts were measured far below its size and how to measure
// them nearer.
func TestPlanTakesTheRunNearestItsRows(t *testing.T) {
	const small = 2_000_000 // a calibration's size before it moved to 1e7
	run := func(layout, id string, rows int64, load float64) result.Result {
		return result.Result{ID: id, Layout: layout, KeyType: "UInt64", ValueType: "UInt16", Rows: rows, Shards: 1,
			Source: string(source.Random), Runtime: experiments.RuntimeName(), LoadRowsPerSecond: load, ReadRowsPerSecond: load * 3,
			LoadFactor: 0.37, MaxLoadFactor: 0.5}
	}
	big, calib, calib2 := run("packed", "20261201T000000.000Z-packed-a", 100_000_000, 4e6),
		run("packed", "20261202T000000.000Z-packed-b", small, 14e6), run("packed", "20261203T000000.000Z-packed-c", small, 15e6)
	hashedSmall, hashedBig := run("hashed", "20261202T000000.000Z-hashed-a", small, 5e6), run("hashed", "20261201T000000.000Z-hashed-b", 50_000_000, 3e6)
	settled := run("packed", "20261201T120000.000Z-packed-d", small, 4.5e6) // older than calib2, idled first
	settled.SettleSeconds = 2.5
	for _, tc := range []struct {
		history []result.Result
		rows    int64
		want    result.Result
	}{
		{[]result.Result{big, calib2, calib}, 1e9, big},
		{[]result.Result{big, calib2, calib}, 3e7, big},
		{[]result.Result{big, calib2, calib}, small, calib2},
		{[]result.Result{big, calib2, calib}, 1e6, calib2},
		{[]result.Result{big, calib2, hashedSmall}, 1e9, calib2},         // hashed has 2M only: both at 2M
		{[]result.Result{big, calib2, hashedSmall, hashedBig}, 1e9, big}, // hashed at 5e7: packed at 1e8
		{[]result.Result{calib2, settled, calib}, small, settled},        // of equal sizes, a load on fresh memory before a newer one
		{[]result.Result{big, settled}, 1e9, big},                        // but nearness first
	} {
		p, err := PlanRequest{Rows: tc.rows}.Parse()
		if err != nil {
			t.Fatal(err)
		}
		if m := measuresFrom(tc.history, p)[core.LayoutPacked]; m.From != tc.want.ID || m.LoadRowsPerSecond != tc.want.LoadRowsPerSecond {
			t.Errorf("plan of %s rows, %d runs: speeds from %s (%v rows/s); want %s (%s rows)", text.Rows(tc.rows), len(tc.history), m.From, m.LoadRowsPerSecond, tc.want.ID, text.Rows(tc.want.Rows))
		}
	}
	for _, tc := range []struct {
		history []result.Result
		rows    int64
		want    string // in the notes; "" = no such note
		hint    bool   // and the commands that would measure nearer
	}{
		{[]result.Result{calib, hashedSmall}, 1e9, "speeds of hashed, packed were measured at up to 2M rows; a table of 1B rows", true},
		{[]result.Result{calib, big}, 1e9, "speeds of packed were measured at up to 100M rows; a table of 1B rows", false}, // 1e8 is as near as this machine goes
		{[]result.Result{calib, big}, 2e8, "", false},
	} {
		plan, err := MakePlan(PlanRequest{Rows: tc.rows, MemoryBytes: 1 << 40}, tc.history, machine24)
		if err != nil {
			t.Fatal(err)
		}
		notes := strings.Join(plan.Notes, "\n")
		// The speeds in the answer say so too (measuredWhere: where its
		// setup's speeds were measured).
		packed := plan.Measures[slices.IndexFunc(plan.Measures, func(m Measure) bool { return m.Layout == "packed" })]
		if w := measuredWhere(packed, tc.rows); strings.Contains(w, "expect it slower at") != (tc.want != "") || !strings.Contains(w, "measured at ") {
			t.Errorf("plan of %s rows: packed's speeds %q; want them to say where they were measured, and whether far below: %v", text.Rows(tc.rows), w, tc.want != "")
		}
		if tc.want == "" {
			if strings.Contains(notes, "were measured at up to") {
				t.Errorf("a 1e8 run for a 2e8 plan still draws the far-below note:\n%s", notes)
			}
			continue
		}
		hint := strings.Contains(notes, "a calibration at {calibration_rows} 100M,")
		if !strings.Contains(notes, tc.want) || hint != tc.hint ||
			tc.hint && !strings.Contains(notes, "runs of hashed,packed at 100M rows)") {
			t.Errorf("notes lack %q, or the commands that would measure nearer are there: %v (want %v):\n%s", tc.want, hint, tc.hint, notes)
		}
	}
}

// TestCalibrationAtAGivenSize: with CalibrationRows the calibration measures
// there every layout that has no run within 2x of it (and the scaling pair,
// when none was measured), at that size; without it, only layouts with no
// speed at half the default size or more, there: the plan's keys, 1e6 to
// 1e7 (for a 1e9 plan a speed of a 2M-row calibration is measured again at
// 1e7); every load after
// calibrationSettle's idle.
func TestCalibrationAtAGivenSize(t *testing.T) {
	run := func(layout string, rows int64) result.Result {
		return result.Result{ID: "20261202T000000.000Z-" + layout, Layout: layout, KeyType: "UInt64", ValueType: "UInt16", Rows: rows, Shards: 1,
			Source: string(source.Random), Runtime: experiments.RuntimeName(), LoadRowsPerSecond: 1e6, ReadRowsPerSecond: 1e7, MaxLoadFactor: 0.5,
			Repeats: 3, Spread: &result.Spread{LoadSecondsMin: 1, LoadSecondsMax: 1.1, ReadSecondsMin: 0.1, ReadSecondsMax: 0.11}}
	}
	history := []result.Result{run("packed", 150_000_000), run("hashed", 30_000_000)}
	for _, l := range core.Layouts() {
		if l != core.LayoutPacked && l != core.LayoutHashed {
			history = append(history, run(string(l), CalibrationRows))
		}
	}
	cfgs, err := CalibrationConfigs(PlanRequest{Rows: 1e9, CalibrationRows: 100_000_000}, history, 1) // one core: no scaling pair
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range core.Layouts() {
		if l != core.LayoutPacked {
			want = append(want, string(l))
		}
	}
	if len(cfgs) != 1 || !slices.Equal(cfgs[0].Layouts, want) || cfgs[0].Rows != 100_000_000 {
		t.Errorf("calibration at 1e8: %+v; want %v at 1e8 (packed has a run at 1.5e8, hashed's 3e7 is beyond 2x)", cfgs, want)
	}
	if cfgs, _ := CalibrationConfigs(PlanRequest{Rows: 1e9}, history, 1); len(cfgs) != 0 {
		t.Errorf("default calibration with every layout measured: %+v; want nothing", cfgs)
	}
	// A layout measured at 2M rows alone (a calibration before they moved
	// past the caches) is measured again at 1e7.
	small := slices.Clone(history)
	small[len(small)-1].Rows = 2_000_000
	if cfgs, _ := CalibrationConfigs(PlanRequest{Rows: 1e9}, small, 1); len(cfgs) != 1 || !slices.Equal(cfgs[0].Layouts, []string{small[len(small)-1].Layout}) ||
		cfgs[0].Rows != CalibrationRows || CalibrationRows < 10_000_000 {
		t.Errorf("default calibration with %s measured at 2M: %+v; want it alone at %d (at least 1e7)", small[len(small)-1].Layout, cfgs, CalibrationRows)
	}
	// A plan below 1e7 keys is measured at its own size, rounded up, at
	// least 1e6 (a String key table of 200,000 rows: minutes, not 16);
	// history at 1e7 speaks for it.
	for _, w := range []struct{ rows, at int64 }{{200_000, 1_000_000}, {2_300_000, 3_000_000}, {7e6, 7e6}, {9_500_000, CalibrationRows}, {1e12, CalibrationRows}} {
		growth := 0.0
		cfgs, _ := CalibrationConfigs(PlanRequest{Rows: w.rows, GrowthPercent: &growth}, nil, 1)
		if len(cfgs) != 1 || cfgs[0].Rows != w.at {
			t.Errorf("default calibration of a %d-key plan: %+v; want it at %d", w.rows, cfgs, w.at)
		}
	}
	if cfgs, _ := CalibrationConfigs(PlanRequest{Rows: 200_000}, history, 1); len(cfgs) != 0 {
		t.Errorf("default calibration of a 200,000-key plan with every layout measured at 1e7 or more: %+v; want nothing", cfgs)
	}
	// A run of one load has no range: the calibration measures it again,
	// three times.
	single := slices.Clone(history)
	single[0].Spread, single[0].Repeats = nil, 1
	if cfgs, _ := CalibrationConfigs(PlanRequest{Rows: 1e9}, single, 1); len(cfgs) != 1 || !slices.Equal(cfgs[0].Layouts, []string{"packed"}) || cfgs[0].Repeats != calibrationRepeats {
		t.Errorf("calibration with packed measured by one load: %+v; want packed, %d loads", cfgs, calibrationRepeats)
	}
	cfgs, _ = CalibrationConfigs(PlanRequest{Rows: 1e9, CalibrationRows: 1e6}, nil, 2)
	for _, c := range cfgs {
		if c.Rows != 1e6 {
			t.Errorf("calibration config %+v at %d rows; want every one at 1e6, the scaling pair's too", c.Layouts, c.Rows)
		}
		// Every calibration load idles first, so that it faults fresh
		// memory as a table of a plan's size does (calibrationSettle).
		if c.SettleSeconds != calibrationSettle.Seconds() {
			t.Errorf("calibration config %+v idles %v s first; want %v", c.Layouts, c.SettleSeconds, calibrationSettle.Seconds())
		}
	}
	if len(cfgs) != 3 {
		t.Errorf("calibration with no history: %d configs; want the layouts and the scaling pair", len(cfgs))
	}
	if err := (PlanRequest{Rows: 1e9, CalibrationRows: 10}).Validate(); err == nil || !strings.Contains(err.Error(), "calibration_rows 10: out of range") {
		t.Errorf("calibration at 10 rows: %v; want an error naming calibration_rows", err)
	}
	// A settle given is every load's, 0 (no idle) too.
	for _, settle := range []float64{0, 0.2} {
		cfgs, _ = CalibrationConfigs(PlanRequest{Rows: 1e9, SettleSeconds: &settle}, nil, 2)
		for _, c := range cfgs {
			if c.SettleSeconds != settle {
				t.Errorf("settle_seconds %v: calibration config %+v idles %v s first", settle, c.Layouts, c.SettleSeconds)
			}
		}
	}
	for _, bad := range []float64{-1, math.NaN(), config.MaxSettleSeconds + 1} {
		if err := (PlanRequest{Rows: 1e9, SettleSeconds: &bad}).Validate(); err == nil || !strings.Contains(err.Error(), "settle_seconds") || !strings.Contains(err.Error(), "out of range") {
			t.Errorf("settle_seconds %v: %v; want an error naming settle_seconds, out of range", bad, err)
		}
	}
}

// TestPlanSaysAWorkerAddedNothing: a measured scaling pair in which the
// second worker added nothing is a measurement, not a missing one.
func TestPlanSaysAWorkerAddedNothing(t *testing.T) {
	run := func(id string, shards int, load float64) result.Result {
		return result.Result{ID: id, Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Rows: CalibrationRows, Shards: shards, Threads: 2,
			Source: string(source.Random), Runtime: experiments.RuntimeName(), LoadRowsPerSecond: load, ReadRowsPerSecond: 3e7, LoadFactor: 0.48, MaxLoadFactor: 0.5}
	}
	plan, err := MakePlan(PlanRequest{Rows: 1e7, MemoryBytes: 1 << 40},
		[]result.Result{run("20261202T000000.000Z-packed-a", 1, 4e6), run("20261202T000001.000Z-packed-b", 2, 3.9e6)}, machine24)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(plan.Notes, "\n")
	if !strings.Contains(notes, "each extra worker adds 0 % of one worker's speed (measured packed SHARDS 2 against SHARDS 1") || strings.Contains(notes, "no multi-shard load measured") {
		t.Errorf("a pair that gained nothing:\n%s", notes)
	}
}

// TestPlanWithAttributes: a plan for a dictionary of three attributes
// weighs ClickHouse's layouts only, each attribute in its own table (or
// HASHED_ARRAY's array), and its figures are those ClickHouse 26.7 was
// measured to hold (TestClickHouseAgreesWithTheModels: HASHED 100,663,992
// bytes at 1e6, SPARSE_HASHED 79,692,472, HASHED(SHARDS 4) 201,328,440;
// HASHED_ARRAY's memory tracker 48,272,240); its CREATE DICTIONARY has
// every attribute, and no Go code pretends core builds it.
func TestPlanWithAttributes(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1_000_000, Attributes: []string{"UInt16", "UInt32", "Float64"}}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	find := func(layout string, shards int, mlf float64) *Candidate {
		c := find2(plan, layout, shards, mlf)
		if c == nil {
			t.Fatalf("no %s SHARDS %d MLF %v setup", layout, shards, mlf)
		}
		return c
	}
	rows := 0
	for _, c := range plan.Candidates {
		row := slices.Contains(dict.RowLayoutNames(), c.Layout)
		if (!dict.AttributeLayout(core.Layout(c.Layout)) && !row) || strings.Join(c.Attributes, ",") != "UInt16,UInt32,Float64" {
			t.Errorf("%s: attributes %v; want ClickHouse's layouts and the rows only, each with the three attributes", SetupName(c), c.Attributes)
		}
		if row {
			rows++
			if c.ClickHouseLayout != "" || !c.PacklabOnly || c.ValueType != "Tuple(UInt16, UInt32, Float64)" {
				t.Errorf("%s: ClickHouse %q, value %s: want packlab's own, a row", SetupName(c), c.ClickHouseLayout, c.ValueType)
			}
		}
	}
	// The row layouts hold the row in one table: at 1e6 the least memory
	// is packed_row at MLF 0.96, 2^20 cells of 8 + 14 bytes.
	if best := plan.Best(); rows == 0 || best.Layout != "packed_row" || best.BytesAllocated < 22<<20 || best.BytesAllocated > 22<<20+1024 {
		t.Errorf("%d row setups, rank 1 %s of %d bytes: want packed_row, 2^20 cells of 22 bytes", rows, SetupName(*best), best.BytesAllocated)
	}
	for _, w := range []struct {
		layout string
		shards int
		bytes  int64 // ClickHouse's, measured
		tol    float64
	}{
		{"hashed", 1, 100_663_992, 0.001},
		{"packed", 1, 79_692_472, 0.001},
		{"hashed", 4, 201_328_440, 0.001},
		{"hashed_array", 1, 48_272_240, 0.001},
	} {
		c := find(w.layout, w.shards, core.DefaultMaxLoadFactor)
		if w.layout == "hashed_array" {
			c = find(w.layout, w.shards, 0)
		}
		if !within(c.BytesAllocated, w.bytes, w.tol) {
			t.Errorf("%s: %d bytes, ClickHouse holds %d: want within %.1f %%", SetupName(*c), c.BytesAllocated, w.bytes, w.tol*100)
		}
	}
	best := plan.BestClickHouse() // the best ClickHouse setup, whose DDL the plan writes
	if !strings.Contains(best.CreateDictionary, "a3 Float64") || best.GoCode != "" {
		t.Errorf("best %s: DDL %q, Go code %q: want every attribute a column and no Go code", SetupName(*best), best.CreateDictionary, best.GoCode)
	}
	named, err := MakePlan(PlanRequest{Rows: 1_000_000, Attributes: []string{"country:UInt16", "plan:UInt32", "score:Float64"}}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if nb := named.BestClickHouse(); !strings.Contains(nb.CreateDictionary, "country UInt16,\n    plan UInt32,\n    score Float64") || nb.BytesAllocated != best.BytesAllocated {
		t.Errorf("named attributes: %d bytes (unnamed %d), DDL %q: want the same bytes and every name a column", nb.BytesAllocated, best.BytesAllocated, nb.CreateDictionary)
	}
	// A Nullable attribute: its nulls in a set of their keys, the DDL's
	// column Nullable; at 1e6 HASHED holds what ClickHouse 26.7 reported
	// for (UInt16, Nullable(UInt32)) with a tenth of the rows NULL:
	// 69,206,480 bytes, the two tables reserved for the rows and 2^18 cells
	// of null keys.
	nullable, err := MakePlan(PlanRequest{Rows: 1e6, Attributes: []string{"UInt16", "Nullable(UInt32)"}}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if c := find2(nullable, "hashed", 1, core.DefaultMaxLoadFactor); c == nil || !within(c.BytesAllocated, 69_206_480, 0.001) {
		t.Errorf("hashed of (UInt16, Nullable(UInt32)): %v, want ClickHouse's 69,206,480", c)
	}
	if ddl := nullable.BestClickHouse().CreateDictionary; !strings.Contains(ddl, "a2 Nullable(UInt32)") {
		t.Errorf("DDL %q: want the Nullable column", ddl)
	}
}

// TestPlanStringAttribute: a String attribute is its 16-byte reference in
// every ClickHouse table (as a UInt128's cell) and its values in the arena:
// each such setup costs what the same setup with a UInt128 does, plus ClickHouse's
// arena for 1e6 values of 8 to 32 bytes (33,550,336 bytes: chunks of 4 KiB
// to 16 MiB, as ClickHouse 26.7 reported it here for these rows).
func TestPlanStringAttribute(t *testing.T) {
	str, err := MakePlan(PlanRequest{Rows: 1_000_000, Attributes: []string{"UInt16", "name:String"}}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	wide, err := MakePlan(PlanRequest{Rows: 1_000_000, Attributes: []string{"UInt16", "name:UInt128"}}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	setup := func(c Candidate) string { return fmt.Sprintf("%s S%d MLF %v", c.Layout, c.Shards, c.MaxLoadFactor) }
	isRow := func(c Candidate) bool { return strings.HasSuffix(c.Layout, dict.RowSuffix) }
	wide.Candidates = slices.DeleteFunc(wide.Candidates, isRow) // an 18-byte row: in the row array (TestRowLayouts)
	costs := map[string]int64{}
	for _, c := range wide.Candidates {
		costs[setup(c)] = c.BytesAllocated
	}
	// packlab's rows hold the String as an 8-byte reference: a table of
	// 10-byte rows and the arena, 20 MB of values in its chunks (core.ArenaSize).
	var rows []Candidate
	str.Candidates = slices.DeleteFunc(str.Candidates, func(c Candidate) bool {
		if isRow(c) {
			rows = append(rows, c)
			return true
		}
		return false
	})
	for _, c := range rows {
		ten, err := core.Predict(core.Layout(strings.TrimSuffix(c.Layout, dict.RowSuffix)), core.MustType("UInt64"), core.RowType("row", 10), 1_000_000,
			core.Options{MaxLoadFactor: c.MaxLoadFactor, ValueBytes: 10}, c.Shards)
		if err != nil {
			t.Fatal(err)
		}
		if arena, want := c.BytesAllocated-ten.FinalBytes, core.ArenaSize(dict.RowArenaChunk, 1, 20_000_000); arena != want || want < 20_000_000 || want > 21<<20 {
			t.Errorf("%s: %d bytes, a table of 10-byte rows %d: an arena of %d, want %d", setup(c), c.BytesAllocated, ten.FinalBytes, arena, want)
		}
	}
	if len(rows) == 0 || len(str.Candidates) == 0 || len(str.Candidates) != len(wide.Candidates) {
		t.Fatalf("%d setups of ClickHouse's with a String, %d with a UInt128, %d rows: want the same, and some of each", len(str.Candidates), len(wide.Candidates), len(rows))
	}
	// The arenas ClickHouse 26.7 reported here: one of chunks of 4 KiB to
	// 16 MiB, or four (SHARDS 4) of 4 KiB to 4 MiB.
	measured := map[int]int64{1: 33_550_336, 4: 4 * 8_384_512}
	for _, c := range str.Candidates {
		arena := c.BytesAllocated - costs[setup(c)]
		if want, ok := measured[c.Shards]; (ok && arena != want) || arena < 20_000_000 || arena > 40_000_000 {
			t.Errorf("%s: %d bytes, the UInt128 setup's %d: an arena of %d, want %d (a share of 20 MB of values in each shard's)", setup(c), c.BytesAllocated, costs[setup(c)], arena, measured[c.Shards])
		}
		if strings.Join(c.Attributes, ",") != "UInt16,String" {
			t.Errorf("%s: attributes %v, want UInt16,String", setup(c), c.Attributes)
		}
	}
	if ddl := str.Best().CreateDictionary; !strings.Contains(ddl, "name String") {
		t.Errorf("the best setup's DDL %q: want the String a column", ddl)
	}
}

// TestPlanFlat: with the largest key of dense ids the plan weighs FLAT,
// an array per attribute indexed by the key: keys 0 .. 999,999 with a
// UInt16 take 2,097,312 bytes as ClickHouse 26.7 reports them (the array
// rounded to 2^21 bytes and 160 of bookkeeping), the least memory here,
// with its MAX_ARRAY_SIZE in the clause; without --max-key a note says why
// FLAT is not weighed; a largest key below the rows, or a float key, is
// refused by name.
func TestPlanFlat(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1_000_000, MaxKey: 999_999}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	best := plan.BestClickHouse()
	if best.Layout != FlatLayout || best.BytesAllocated != 2_097_312 || best.ClickHouseLayout != "LAYOUT(FLAT(MAX_ARRAY_SIZE 1000000))" ||
		!strings.Contains(best.CreateDictionary, "LAYOUT(FLAT(MAX_ARRAY_SIZE 1000000))") || best.GoCode != "" {
		t.Errorf("rank 1 %s: %d bytes, %s, DDL %q, Go %q: want FLAT of 2,097,312 bytes, its clause, no Go code",
			SetupName(*best), best.BytesAllocated, best.ClickHouseLayout, best.CreateDictionary, best.GoCode)
	}
	// Ids 0 .. 999,999 growing by 10 %: the new keys are past today's
	// largest, so the arrays hold the 1.1M keys.
	growth := 10.0
	grown, err := MakePlan(PlanRequest{Rows: 1_000_000, MaxKey: 999_999, GrowthPercent: &growth}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range grown.Candidates {
		if c.Layout == FlatLayout && (c.ClickHouseLayout != "LAYOUT(FLAT(MAX_ARRAY_SIZE 1100000))" || c.LoadFactor > 1) {
			t.Errorf("1M ids and 10 %% growth: %s at load factor %.3f; want MAX_ARRAY_SIZE 1100000", c.ClickHouseLayout, c.LoadFactor)
		}
	}
	none, err := MakePlan(PlanRequest{Rows: 1_000_000}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(none.Candidates, func(c Candidate) bool { return c.Layout == FlatLayout }) ||
		!strings.Contains(strings.Join(none.Notes, "\n"), "FLAT is not weighed") {
		t.Errorf("without max_key: FLAT weighed, or no note saying why not: %v", none.Notes)
	}
	for _, r := range []struct {
		req  PlanRequest
		want string
	}{
		{PlanRequest{Rows: 1_000_000, MaxKey: 5000}, "max_key 5000: below the rows"},
		{PlanRequest{Rows: 1000, MaxKey: 5000, Key: "Float64"}, "max_key 5000: FLAT indexes its arrays by an integer key, not Float64"},
		{PlanRequest{Rows: 1000, MaxKey: -1}, "max_key -1: out of range (allowed: 1 to 2^62)"},
		// Past what the key type holds: FLAT's array was sized for keys the type cannot have.
		{PlanRequest{Rows: 10, MaxKey: 300, Key: "UInt8"}, "max_key 300: larger than the key type UInt8 holds (allowed: at most 255 with key UInt8)"},
		{PlanRequest{Rows: 10, MaxKey: 1_000_000, Key: "Date"}, "max_key 1000000: larger than the key type Date holds (allowed: at most 65535 with key Date)"},
		{PlanRequest{Rows: 10, MaxKey: 128, Key: "Int8"}, "max_key 128: larger than the key type Int8 holds (allowed: at most 127 with key Int8)"},
		{PlanRequest{Rows: 1000, MaxKey: source.MaxRows + 1}, "max_key 4611686018427387905: out of range (allowed: 1 to 2^62)"},
	} {
		if _, err := MakePlan(r.req, nil, machine24); err == nil || !strings.HasPrefix(err.Error(), r.want) {
			t.Errorf("%+v: %v, want %q", r.req, err, r.want)
		}
	}
	// The ends of the range it states: 2^62 (what ParseMaxKey reads, as
	// --rows) was refused as out of "1 to 2^62"; FLAT's figures saturate.
	for _, mk := range []int64{1, source.MaxRows - 1, source.MaxRows} {
		plan, err := MakePlan(PlanRequest{Rows: 1, MaxKey: mk}, nil, machine24)
		if mk == 1 { // and the largest a narrow key can be
			if _, err := MakePlan(PlanRequest{Rows: 10, MaxKey: 255, Key: "UInt8"}, nil, machine24); err != nil {
				t.Errorf("max_key 255 of UInt8 keys: %v, want a plan", err)
			}
		}
		if err != nil {
			t.Errorf("max_key %d: %v, want a plan", mk, err)
			continue
		}
		if i := slices.IndexFunc(plan.Candidates, func(c Candidate) bool { return c.Layout == FlatLayout }); i < 0 || plan.Candidates[i].SteadyBytes <= 0 {
			t.Errorf("max_key %d: FLAT not weighed, or no memory", mk)
		}
	}
}

// find2 is a plan's setup of layout, shards and max load factor (0: any), or nil.
func find2(plan Plan, layout string, shards int, mlf float64) *Candidate {
	for i, c := range plan.Candidates {
		if c.Layout == layout && c.Shards == shards && (mlf == 0 || c.MaxLoadFactor == mlf) {
			return &plan.Candidates[i]
		}
	}
	return nil
}

// within reports whether got is within frac of want.
func within(got, want int64, frac float64) bool {
	return want > 0 && math.Abs(float64(got-want)) <= frac*float64(want)
}

// TestPlanComplexKey: a key ClickHouse's simple key (UInt64) cannot hold
// is planned in the COMPLEX_KEY_ layouts, the key's column of its own
// type: a UUID (the plan printed "key UInt64" over a UUID column, which
// ClickHouse 26.7 refuses to load: "Conversion between numeric types and
// UUID is not supported"), or a key the request says is not a whole
// number (a Float64 with fractions, which a UInt64 merges). Their memory
// is ClickHouse's: at 1e6 UUID keys and a UInt16 ClickHouse 26.7 reported
// COMPLEX_KEY_HASHED 83,882,216 bytes_allocated and COMPLEX_KEY_HASHED_ARRAY
// tracked 86,017,416 (the lab's ch_complex_key_ layouts); its first-load
// peak 116.7 and 130.3 MiB of RSS.
func TestPlanComplexKey(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e6, Key: "UUID"}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Request.ComplexKey {
		t.Error("a UUID key's request does not say complex_key")
	}
	chSetup := func(layout string) *Candidate {
		for i, c := range plan.Candidates {
			if c.Engine == EngineClickHouse && c.Layout == layout && c.Shards == 1 && c.MaxLoadFactor == 0.5 {
				return &plan.Candidates[i]
			}
		}
		return nil
	}
	for _, c := range plan.Candidates {
		if c.Engine == EngineClickHouse && (!c.ComplexKey || !strings.HasPrefix(c.ClickHouseLayout, "LAYOUT(COMPLEX_KEY_")) {
			t.Errorf("%s: %s, complex_key %v; want a COMPLEX_KEY_ layout", SetupName(c), c.ClickHouseLayout, c.ComplexKey)
		}
		if c.Engine == EngineClickHouse && c.Layout == "packed" {
			t.Errorf("%s: a ClickHouse setup of packed, whose PackedHashMap holds a UInt64 key only", SetupName(c))
		}
	}
	for _, w := range []struct {
		layout       string
		clickhouse   int64   // its bytes_allocated (tracked for HASHED_ARRAY)
		firstLoadMiB float64 // its RSS at the first load's peak
	}{{"hashed", 83_882_216, 116.67}, {"hashed_array", 86_017_416, 130.32}} {
		c := chSetup(w.layout)
		if c == nil {
			t.Fatalf("no ClickHouse setup of %s", w.layout)
		}
		if d := math.Abs(float64(c.SteadyBytes-w.clickhouse)) / float64(w.clickhouse); d > 0.001 {
			t.Errorf("%s: steady %d, ClickHouse's %d (%.2f %% apart)", c.ClickHouseLayout, c.SteadyBytes, w.clickhouse, 100*d)
		}
		if mib := float64(c.PeakBytes) / (1 << 20); math.Abs(mib/w.firstLoadMiB-1) > 0.1 {
			t.Errorf("%s: first load peak %.1f MiB, ClickHouse's %.1f", c.ClickHouseLayout, mib, w.firstLoadMiB)
		}
	}
	best := plan.BestClickHouse()
	if best == nil || !strings.Contains(best.CreateDictionary, "key UUID,") || strings.Contains(best.CreateDictionary, "UInt64") || !strings.Contains(best.ClickHouseNote, "tuple(key)") {
		t.Errorf("the ClickHouse answer: %+v", best)
	}
	if g := plan.BestGo(); g == nil || g.ComplexKey {
		t.Errorf("the Go answer: %+v", g)
	}

	// Several attributes over a UUID: SPARSE_HASHED is packed's setup
	// there, over a complex key sparse_hash_map.
	rows, err := MakePlan(PlanRequest{Rows: 1e6, Key: "UUID", Attributes: []string{"UInt16", "String"}}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rows.Candidates, func(c Candidate) bool {
		return c.Engine == EngineClickHouse && c.ClickHouseLayout == "LAYOUT(COMPLEX_KEY_SPARSE_HASHED())" && c.ClickHouse != nil
	}) {
		t.Error("UUID → UInt16,String: no COMPLEX_KEY_SPARSE_HASHED() setup")
	}

	frac, err := MakePlan(PlanRequest{Rows: 1e6, Key: "Float64", ComplexKey: true}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if b := frac.BestClickHouse(); b == nil || !b.ComplexKey || !strings.Contains(b.CreateDictionary, "key Float64,") {
		t.Errorf("a Float64 key with fractions: %+v", b)
	}
	whole, err := MakePlan(PlanRequest{Rows: 1e6, Key: "Float64"}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if b := whole.BestClickHouse(); b == nil || b.ComplexKey || !strings.Contains(b.CreateDictionary, "key UInt64,") {
		t.Errorf("a Float64 key of whole numbers: %+v", b)
	}
}

// TestPlanStringValue: a dictionary of Strings alone (id → name), which
// the plan refused ("the first attribute is the value the lab sends and
// checks"), is planned in ClickHouse's layouts and packlab's row layouts:
// no plain table holds a String, no speed is claimed for it, and no
// calibration is asked for. A value given against it is still refused.
func TestPlanStringValue(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 200_000, Attributes: []string{"name:String"}, Prefer: PreferMemory}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range plan.Candidates {
		if c.Engine == EngineGo && !strings.HasSuffix(c.Layout, dict.RowSuffix) {
			t.Errorf("%s: a plain table of String values", SetupName(c))
		}
		if c.LoadSeconds != nil || c.ReadSeconds != nil || c.GoCode != "" {
			t.Errorf("%s: a speed or Go code for a String value", SetupName(c))
		}
	}
	ch, g := plan.BestClickHouse(), plan.BestGo()
	if ch == nil || g == nil || !strings.Contains(ch.CreateDictionary, "    name String\n") || !strings.HasPrefix(ch.ClickHouseLayout, "LAYOUT(SPARSE_HASHED(") {
		t.Fatalf("answers: ClickHouse %+v, Go %+v", ch, g)
	}
	if cfgs, err := CalibrationConfigs(plan.Request, nil, 2); err != nil || len(cfgs) != 0 {
		t.Errorf("calibration for a String value: %v, %v", cfgs, err)
	}
	if alone, err := MakePlan(PlanRequest{Rows: 1000, Value: "String"}, nil, machine24); err != nil || !slices.Equal(alone.Request.Attributes, []string{"String"}) {
		t.Errorf("a String value alone: %v, attributes %v; want the dictionary's one attribute", err, alone.Request.Attributes)
	}
	if _, err := MakePlan(PlanRequest{Rows: 1000, Value: "UInt16", Attributes: []string{"String"}}, nil, machine24); err == nil {
		t.Error("--value UInt16 with --attributes String: planned")
	}
}

// TestPlannedRowsExact: the keys after a growth are computed exactly, not
// as rows x 1.1 in floating point (4400000000000000512 at 4e18).
func TestPlannedRowsExact(t *testing.T) {
	if got := plannedRows(4e18, 10); got != 4_400_000_000_000_000_000 {
		t.Errorf("plannedRows(4e18, 10) = %d, want 4.4e18 exactly", got)
	}
}

// TestPlanHeadlineTrimsTypes: a type given with spaces around it (--value
// " UInt16") is the type, in the headline too ("<UInt64,  UInt16>").
func TestPlanHeadlineTrimsTypes(t *testing.T) {
	plan, err := MakePlan(PlanRequest{Rows: 1e6, Key: "UInt64 ", Value: " UInt16", MemoryBytes: 24 << 30}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if h := PlanHeadline(plan); !strings.Contains(h, "of <UInt64, UInt16> in") {
		t.Errorf("headline %q, want <UInt64, UInt16>", h)
	}
}
