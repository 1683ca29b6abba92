package planner

// What the planner takes from this machine's measurements: per layout, one
// shard's load and read speed and the RSS overhead over the computed bytes;
// for ClickHouse's setups, its own dictionaries' loads (clickHouseMeasuresFrom);
// for the loader, the gain of each extra parallel worker and the producer's
// ceiling. All of it comes from saved results; CalibrationConfigs are the
// short runs (at the plan's own size, 1e6 to 1e7: calibrationRowsFor) that
// make the missing ones.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner/speed"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// CalibrationRows is the size of the planner's calibration runs: 1e7 rows,
// tables of 90 to 540 MiB for <UInt64,UInt16>, past the CPU's caches and
// most of the TLB's reach (from a 2e6-row calibration the plan read packed
// at 40.1M rows/s, where a run of 1e8 read 22.9M). A first calibration, every layout and
// ClickHouse's three calibrationRepeats times after calibrationSettle's
// idle, took 13 minutes on the shared 2-core lab machine, 8 of them
// ClickHouse's (speed.CalibrationLoadSeconds), in under 1 GiB.
const CalibrationRows = 10_000_000

// minCalibrationRows is the smallest default calibration: below 1e6 rows a
// load is mostly the process's start and the CPU's caches.
const minCalibrationRows = 1_000_000

// calibrationRowsFor is the default calibration size for a plan of
// distinct keys: the plan's own size, rounded up to one significant digit,
// from minCalibrationRows to CalibrationRows. A table of 200,000 String
// keys is measured at 1e6 rows (about 3 minutes for ClickHouse's three
// COMPLEX_KEY_ layouts) instead of 1e7 (about 16), at speeds no faster
// than its own size's; a plan of 1e7 rows or more, at 1e7 as before.
func calibrationRowsFor(distinct int64) int64 {
	if distinct >= CalibrationRows {
		return CalibrationRows
	}
	step := int64(1)
	for step*10 <= distinct {
		step *= 10
	}
	return max((distinct+step-1)/step*step, minCalibrationRows)
}

// planMinRows is the smallest measured run the planner takes speeds and
// overhead from: below it a run is mostly the runtime and the caches.
const planMinRows = 100_000

// Measure is one layout's measurements as the planner uses them.
type Measure struct {
	Layout            string  `json:"layout"`
	Rows              int64   `json:"rows"`                 // the size the speeds were measured at; 0 = no speed measured
	LoadRowsPerSecond float64 `json:"load_rows_per_second"` // one shard
	ReadRowsPerSecond float64 `json:"read_rows_per_second"`
	LoadFactor        float64 `json:"load_factor"` // of the measured table: the read model's reference
	// MaxLoadFactor is the load run's (its layout's default for 0): the
	// load model's reference (speed.LoadCost).
	MaxLoadFactor float64 `json:"max_load_factor"`
	// The speeds' ranges, [slowest, fastest] rows/s over the run's loads
	// (Result.Spread); null for a run of one load, whose speed cannot decide.
	LoadRange *[2]float64 `json:"load_rows_per_second_range"`
	ReadRange *[2]float64 `json:"read_rows_per_second_range"`
	Loads     int         `json:"loads"` // loads the speed run's figures are the median of
	// Overhead and PeakOverhead are measured here, shown beside the plan's
	// computed figures as a check; the plan's memory does not use them (it
	// is computed, the same everywhere).
	Overhead         float64 `json:"overhead"`          // (rss_bytes - the loader's blocks) / bytes_allocated, at least 1
	PeakOverhead     float64 `json:"peak_overhead"`     // peak_rss_bytes / the predicted peak (tables + loader), at least 1
	OverheadMeasured bool    `json:"overhead_measured"` // false: the memory guard's cautious bound for both
	From             string  `json:"from"`              // the result ids the figures come from
}

// plannable reports whether a saved result can speak for this machine's
// speed in a plan with or without preallocation: measured here (this
// runtime), from distinct random keys, with the loader's default knobs and
// the tables' default huge pages, large enough, and preallocated as the
// plan is (a reserved table loads faster, and a reserved compact table
// sits at another fill).
func plannable(r result.Result, preallocate bool, runtime string) bool {
	return r.Runtime == runtime && r.Source == string(source.Random) && r.Rows >= planMinRows &&
		r.LoadRowsPerSecond > 0 && result.ShardSelectOf(r) == string(core.ShardSelectAuto) && result.BlockRowsOf(r) == core.DefaultBlockRows &&
		result.HugePagesOf(r) != "off" && r.Preallocate == preallocate
}

// sameSizes reports whether r's key and value types have the sizes of p's:
// the tables see only bits, so a <Int64,Date> run speaks for <UInt64,UInt16>.
func sameSizes(r result.Result, p ParsedRequest) bool {
	k, err1 := core.ParseType(r.KeyType)
	v, err2 := core.ParseType(r.ValueType)
	if p.stringKey { // a String key's runs are of its lengths (labKey)
		return r.KeyType == p.labKey() && err2 == nil && v.Size == p.value.Size
	}
	return err1 == nil && err2 == nil && k.Size == p.key.Size && v.Size == p.value.Size
}

// measuresFrom picks, for every layout, the measurements of history that
// speak for p: the one-shard run of the same types (or the same sizes)
// nearest the size the plan compares layouts at (speedRows), of those one
// that idled first (on fresh memory), then the newest (speedRun), and its
// overhead when it ran isolated (else the newest isolated run's of the
// layout).
func measuresFrom(history []result.Result, p ParsedRequest) map[core.Layout]Measure {
	out := map[core.Layout]Measure{}
	target := speedRows(history, p)
	for _, l := range core.Layouts() {
		m := Measure{Layout: string(l), Overhead: dict.AllocatorFactor(l), PeakOverhead: dict.AllocatorFactor(l)}
		// The read speed from the best such run that read (one with
		// --no-read has none), which may be another one.
		best := speedRun(history, p, l, target, false)
		read := speedRun(history, p, l, target, true)
		if best != nil {
			m.Rows, m.LoadRowsPerSecond, m.Loads = best.Rows, best.LoadRowsPerSecond, max(best.Repeats, 1)
			m.MaxLoadFactor = dict.EffectiveMLF(l, best.MaxLoadFactor)
			m.LoadRange, _ = best.SpeedRanges()
			m.From = best.ID
		}
		if read != nil {
			m.ReadRowsPerSecond, m.LoadFactor = read.ReadRowsPerSecond, read.LoadFactor
			_, m.ReadRange = read.SpeedRanges()
			if read != best {
				m.From += "; read " + read.ID
			}
		}
		// Overhead: the speed run's, when it ran isolated; else the newest
		// isolated run of the layout, any types. Not a preallocated run's:
		// its bytes_allocated counts pages a reservation never touched.
		memoryRun := func(r *result.Result) bool {
			return r.Isolated && r.Runtime == p.Runtime && r.Rows >= planMinRows && r.RSSBytes > 0 && r.PeakRSSBytes > 0 && r.BytesAllocated > 0 &&
				!r.Preallocate
		}
		ovh := best
		if ovh == nil || !memoryRun(ovh) {
			ovh = nil
			for i := range history {
				r := &history[i]
				if r.Layout == string(l) && memoryRun(r) && (ovh == nil || r.ID > ovh.ID) {
					ovh = r
				}
			}
		}
		if ovh != nil {
			m.Overhead = max(1, float64(ovh.RSSBytes-runLoaderBytes(*ovh))/float64(ovh.BytesAllocated))
			m.PeakOverhead = max(1, peakOverhead(*ovh))
			m.OverheadMeasured = true
			if ovh != best {
				m.From = strings.TrimPrefix(m.From+"; overhead "+ovh.ID, "; ")
			}
		}
		out[l] = m
	}
	return out
}

// speedRun is the run of history that speaks for layout l's speed in plan
// p: one shard, plannable, the same key and value sizes (the same types
// first), nearest target rows, of those one that idled before its load,
// then the newest; with read, only a run that read. Nil: none.
func speedRun(history []result.Result, p ParsedRequest, l core.Layout, target int64, read bool) *result.Result {
	exact := func(r *result.Result) bool { return r.KeyType == p.key.Name && r.ValueType == p.value.Name }
	better := func(a, b *result.Result) bool {
		if exact(a) != exact(b) {
			return exact(a)
		}
		if da, db := rowsDistance(a.Rows, target), rowsDistance(b.Rows, target); da != db {
			return da < db
		}
		// A run of several loads has a range, which a plan that prefers a
		// speed needs before the speed may decide.
		if ra, rb := a.Spread != nil && a.Repeats > 1, b.Spread != nil && b.Repeats > 1; ra != rb {
			return ra
		}
		// A load that idled first (the calibration's, --settle) ran on
		// fresh memory; one without may have reused the pages its
		// predecessor freed and run several times faster on this VM.
		if sa, sb := a.SettleSeconds > 0, b.SettleSeconds > 0; sa != sb {
			return sa
		}
		return a.ID > b.ID
	}
	var best *result.Result
	for i := range history {
		r := &history[i]
		if r.Layout == string(l) && r.Shards == 1 && plannable(*r, p.Preallocate, p.Runtime) && sameSizes(*r, p) &&
			(!read || r.ReadRowsPerSecond > 0) && (best == nil || better(r, best)) {
			best = r
		}
	}
	return best
}

// clickHouseMeasuresFrom picks, for each of p's clickHouseSpeedLayouts, the
// ClickHouse load of history that speaks for p: one shard, random keys of
// p's sizes, measured in this runtime, the nearest p's keys, of those one
// of several loads (a range), then the newest.
func clickHouseMeasuresFrom(history []result.Result, p ParsedRequest) map[string]Measure {
	out := map[string]Measure{}
	for _, name := range clickHouseSpeedLayouts(p.ComplexKey) {
		var best *result.Result
		for i := range history {
			r := &history[i]
			if r.Layout != name || r.Shards > 1 || r.Runtime != p.Runtime || r.Source != string(source.Random) || r.Rows < planMinRows ||
				r.LoadRowsPerSecond <= 0 || r.Preallocate || !sameSizes(*r, p) || r.Attributes != "" {
				continue
			}
			if best == nil || betterClickHouseRun(r, best, p.distinct) {
				best = r
			}
		}
		if best == nil {
			continue
		}
		m := Measure{Layout: name, Rows: best.Rows, LoadRowsPerSecond: best.LoadRowsPerSecond, ReadRowsPerSecond: best.ReadRowsPerSecond,
			LoadFactor: best.LoadFactor, Loads: max(best.Repeats, 1), Overhead: 1, PeakOverhead: 1, From: best.ID}
		m.LoadRange, m.ReadRange = best.SpeedRanges()
		out[name] = m
	}
	return out
}

func betterClickHouseRun(a, b *result.Result, target int64) bool {
	if da, db := rowsDistance(a.Rows, target), rowsDistance(b.Rows, target); da != db {
		return da < db
	}
	if ra, rb := a.Spread != nil && a.Repeats > 1, b.Spread != nil && b.Repeats > 1; ra != rb {
		return ra
	}
	return a.ID > b.ID
}

// clickHouseSpeedLayouts are the lab's ClickHouse layouts whose loads give
// the ClickHouse setups of a plan their speeds (chSpeedLayout): the
// hashed ones, the COMPLEX_KEY_ ones for a complex key.
func clickHouseSpeedLayouts(complex bool) []string {
	var out []string
	for _, d := range dict.ClickHouseDictionaries() {
		if d.ComplexKey == complex && !d.Flat() {
			out = append(out, d.Name)
		}
	}
	return out
}

// rowsDistance is how far apart two row counts are: |ln(a/b)|.
func rowsDistance(a, b int64) float64 {
	return math.Abs(math.Log(float64(max(a, 1)) / float64(max(b, 1))))
}

// speedRows is the size a plan compares the layouts' speeds at: a table's
// speed follows its size (the caches, the TLB, and on a VM the fresh
// memory) more than which version of the code measured it, so each layout's
// run nearest the plan's rows speaks for it; but one layout measured near
// the plan's rows beside others measured far below would lose to their
// small tables' speeds, so the layouts are compared at one size: that of
// the measured layout whose nearest run is farthest from the plan's rows.
// Measured here: from a 2M-row calibration the plan said packed SHARDS 1
// loads 2e8 rows in 24.2 s and reads 40.1M rows/s; from a run of 1e8 rows,
// 68.0 s and 22.9M rows/s; a run of 2e8 took 64.4 s and read 11.9M rows/s.
func speedRows(history []result.Result, p ParsedRequest) int64 {
	rows := max(p.distinct, 1)
	target, worst := rows, -1.0
	for _, l := range core.Layouts() {
		if r := speedRun(history, p, l, rows, false); r != nil && rowsDistance(r.Rows, rows) > worst {
			target, worst = r.Rows, rowsDistance(r.Rows, rows)
		}
	}
	return target
}

// peakOverhead is a result's measured peak over what the planner would
// predict for it: the tables at their peak (every shard growing at once)
// plus the loader's blocks; 0 when it cannot be predicted.
func peakOverhead(r result.Result) float64 {
	k, err1 := core.ParseType(r.KeyType)
	v, err2 := core.ParseType(r.ValueType)
	mlf := r.MaxLoadFactor
	if !followsMaxLoadFactor(core.Layout(r.Layout), k, v) {
		mlf = 0
	}
	pr, err3 := core.Predict(core.Layout(r.Layout), k, v, r.ElementCount, core.Options{MaxLoadFactor: mlf}, r.Shards)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0
	}
	want := core.SaturatingAdd(pr.PeakBytes, runLoaderBytes(r))
	return float64(r.PeakRSSBytes) / float64(want)
}

// runLoaderBytes is the loader's blocks of a measured run (loaderBytes):
// part of its peak, and, freed but kept by the Go runtime, of its RSS.
func runLoaderBytes(r result.Result) int64 {
	k, err1 := core.ParseType(r.KeyType)
	v, err2 := core.ParseType(r.ValueType)
	if err1 != nil || err2 != nil || r.Shards < 1 {
		return 0
	}
	spec, err := source.Parse(r.Source) // a key generator's loader reads no file
	return dict.LoaderBytes(k, v, r.Shards, r.BlockRows, r.Rows, !(err == nil && spec.IsSynthetic()))
}

// scalingFrom finds the newest multi-shard run of history with a one-shard
// run of the same layout, types and rows beside it (the nearest in time),
// and works out what each extra worker added.
func scalingFrom(history []result.Result, runtime string) speed.Scaling {
	var best speed.Scaling
	bestID := ""
	for _, rs := range history {
		p := min(rs.Shards, result.ThreadsOf(rs))
		if rs.Shards < 2 || p < 2 || !plannable(rs, false, runtime) || rs.ID <= bestID {
			continue
		}
		var r1 *result.Result
		for i := range history {
			r := &history[i]
			if r.Shards == 1 && plannable(*r, false, runtime) && r.Layout == rs.Layout && r.KeyType == rs.KeyType && r.ValueType == rs.ValueType &&
				r.Rows == rs.Rows && r.MaxLoadFactor == rs.MaxLoadFactor && result.ThreadsOf(*r) == result.ThreadsOf(rs) &&
				(r1 == nil || result.IDDistance(r.ID, rs.ID) < result.IDDistance(r1.ID, rs.ID)) {
				r1 = r
			}
		}
		if r1 == nil {
			continue
		}
		eff := func(many, one float64) float64 { return min(max((many/one-1)/float64(p-1), 0), 1) }
		s := speed.Scaling{Efficiency: eff(rs.LoadRowsPerSecond, r1.LoadRowsPerSecond),
			From: fmt.Sprintf("%s SHARDS %d against SHARDS 1, %s rows, %d threads (%s, %s)", rs.Layout, rs.Shards, text.Rows(rs.Rows), p, rs.ID, r1.ID)}
		manyRange, _ := rs.SpeedRanges()
		oneRange, _ := r1.SpeedRanges()
		if manyRange != nil && oneRange != nil {
			s.EfficiencyRange = &[2]float64{eff(manyRange[0], oneRange[1]), eff(manyRange[1], oneRange[0])}
		}
		if busy := rs.Producer.ReadSeconds + rs.Producer.SplitSeconds; busy > 0 {
			s.ProducerRowsPerSecond = float64(rs.Rows) / busy
		}
		best, bestID = s, rs.ID
	}
	return best
}

// calibrationRepeats is the loads of each layout in a calibration: three,
// so that each speed has a median and a range (Result.Spread), and a plan
// that prefers a speed lets it decide only beyond that range.
const calibrationRepeats = 3

// CalibrationConfigs parses r and answers as its
// ParsedRequest.CalibrationConfigs.
func CalibrationConfigs(r PlanRequest, history []result.Result, cores int) ([]config.Config, error) {
	p, err := r.Parse()
	if err != nil {
		return nil, err
	}
	return p.CalibrationConfigs(history, cores)
}

// CalibrationConfigs are the runs that measure what history lacks for p on
// a machine of the given cores, each calibrationRepeats times: each layout
// with no speed for these types at half calibrationRowsFor the plan or more,
// or one of a single load (one shard, that many random keys; with p.CalibrationRows
// given, each layout with no run within 2x of it, there), the ch_ layouts
// likewise where ClickHouse runs here (clickHouseMissing), and, when the
// load may use more than one thread and no multi-shard load was measured,
// one layout at one shard and at as many shards as threads, back to back.
// Nil: nothing is missing, or nothing the plan would use (a dictionary
// whose value is a String or a Nullable: no run's value is, and its
// setups carry no speeds).
func (p ParsedRequest) CalibrationConfigs(history []result.Result, cores int) ([]config.Config, error) {
	if p.unfixedValue() {
		return nil, nil
	}
	if p.Runtime != experiments.RuntimeName() {
		return nil, fault.New("calibrate", "", fmt.Sprintf("a %s plan's speeds are measured by a %s run, not here", p.Runtime, p.Runtime),
			"plan without measuring (memory decides), or run `packlab plan {calibrate}` on the machine the table will run on")
	}
	rows := cmp.Or(p.CalibrationRows, calibrationRowsFor(p.distinct))
	// By default a layout measured at half its rows or more keeps its
	// speed; one measured only below (a 2M calibration of a 1e9 plan) is
	// measured again.
	known := history
	if p.CalibrationRows == 0 {
		known = slices.DeleteFunc(slices.Clone(history), func(r result.Result) bool { return r.Rows < rows/2 })
	}
	var missing []string
	fastest, rate := core.Layouts()[0], 0.0
	for _, l := range core.Layouts() {
		run := speedRun(known, p, l, rows, false)
		if p.stringKey { // no Go answer: the COMPLEX_KEY_ layouts alone (clickHouseMissing)
			break
		} else if run == nil || run.Spread == nil || run.Repeats < 2 || p.CalibrationRows != 0 && rowsDistance(run.Rows, rows) > math.Ln2 {
			missing = append(missing, string(l))
		} else if run.LoadRowsPerSecond > rate {
			fastest, rate = l, run.LoadRowsPerSecond
		}
	}
	base := config.Config{Key: p.labKey(), Value: p.value.Name, Rows: rows, Seed: 1, Preallocate: p.Preallocate,
		SettleSeconds: calibrationSettle.Seconds(), Repeats: calibrationRepeats}
	if p.SettleSeconds != nil {
		base.SettleSeconds = *p.SettleSeconds
	}
	var cfgs []config.Config
	if len(missing) > 0 {
		c := base
		c.Layouts = missing
		cfgs = append(cfgs, c)
	}
	if ch := clickHouseMissing(p, base, known); len(ch) > 0 {
		c := base
		c.Layouts = ch
		cfgs = append(cfgs, c)
	}
	threads := min(cmp.Or(p.Threads, cores), cores)
	if threads >= 2 && scalingFrom(history, p.Runtime).From == "" && !p.stringKey {
		one, many := base, base
		// Scaling is taken from grown loads (scalingFrom) for both kinds of
		// plan: what each extra worker adds with a reservation was not
		// measured apart.
		one.Preallocate, many.Preallocate = false, false
		// Each run of the pair faults fresh memory (calibrationSettle; back
		// to back, hashed at 2M rows took 0.55 and 0.61 s at SHARDS 1 and
		// 0.10 and 0.08 s at SHARDS 2 on the pages SHARDS 1 freed), as a
		// large load does. Loads of 1e7 rows with 5 s idle before each:
		// packed SHARDS 1 3.07 and 3.29 s, SHARDS 2 1.82 and 1.77 s (75 %;
		// the faults run on both threads); with huge pages off 0 %, so the
		// pair keeps the plan's huge pages.
		one.Layouts, many.Layouts = []string{string(fastest)}, []string{string(fastest)}
		many.Shards = min(threads, core.MaxShards)
		cfgs = append(cfgs, one, many)
	}
	return cfgs, nil
}

// clickHouseMissing are the ch_ layouts whose loads give the plan's
// ClickHouse setups their speeds (clickHouseMeasuresFrom) that history
// lacks, or has without a range or (with CalibrationRows) not within 2x of
// base's rows: measured by ClickHouse itself, where it runs here (the
// layout validates: make chdb built its worker) and the plan weighs
// ClickHouse's setups with one attribute and no reservation, as their
// speeds are then used (clickHouseSetup).
func clickHouseMissing(p ParsedRequest, base config.Config, history []result.Result) []string {
	if p.For == EngineGo || p.rowValued() || p.Preallocate {
		return nil
	}
	have := clickHouseMeasuresFrom(history, p)
	var out []string
	for _, name := range clickHouseSpeedLayouts(p.ComplexKey) {
		m, ok := have[name]
		if ok && m.LoadRange != nil && m.Loads >= 2 && (p.CalibrationRows == 0 || rowsDistance(m.Rows, base.Rows) <= math.Ln2) {
			continue
		}
		c := base
		c.Layouts = []string{name}
		if c.Validate() == nil {
			out = append(out, name)
		}
	}
	return out
}

// CalibrationJobName names a calibration's job: "plan calibration
// UInt64/UInt16 2M".
func CalibrationJobName(cfgs []config.Config) string {
	if len(cfgs) == 0 {
		return result.CalibrationJobPrefix
	}
	c := cfgs[0].WithDefaults()
	name := fmt.Sprintf("%s %s/%s %s", result.CalibrationJobPrefix, c.Key, c.Value, text.Rows(c.Rows))
	if c.Preallocate {
		name += " preallocate"
	}
	return name
}

// calibrationSettle is the idle time before each of a calibration's loads.
// On a VM that hands freed memory back to its host (this lab's machine), a
// load that follows another within about 2 s reuses the huge pages it freed
// and one that follows later faults fresh ones, several times slower (packed,
// 2M rows, the second of two loads after a gap of 0, 1, 2, 3, 5, 8 s: 0.21,
// 0.16, 0.47, 0.35, 0.30, 0.48 s; the first, after 8 s, 0.24 to 0.52 s). So
// without it a calibration's speeds depend on its order (the first layout
// pays), and its scaling pair measured the first run's fresh pages against
// the second's reused ones ("each extra worker adds 100 %", capped). With
// it every load faults fresh memory, as a table of the sizes plans are for
// does.
const calibrationSettle = 2500 * time.Millisecond
