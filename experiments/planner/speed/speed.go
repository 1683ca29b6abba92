// Package speed is how a table's load and read speeds follow its load
// factor and its shards, so that speeds measured at one load factor and one
// shard are scaled to others: the cache lines a linear-probing lookup
// touches (a model, stated as such in the plan), and compact's, hashed's and
// packed's costs fitted to loads and reads of 1e7 rows (docs/plan.md,
// "Speed against the load factor", "Several shards' reads"); and how long a
// calibration's load takes.
package speed

import (
	"math"
	"strings"

	"github.com/packlab/packlab/core"
)

// ProbeLines is the cache lines a successful lookup touches in a
// linear-probing table at load factor a whose cells are cell bytes: the
// first, plus the extra probes ((1 + 1/(1-a))/2 - 1 of them, Knuth) that
// run past it, cell/64 of a line each. Read speeds measured at one load
// factor are scaled by it to another: a model, stated as such in the plan.
func ProbeLines(a, cell float64) float64 {
	a = min(a, 0.999)
	probes := (1 + 1/(1-a)) / 2
	return 1 + (probes-1)*min(cell, 64)/64
}

// ReadCost is a batched lookup's time (the lab's read phase) at load
// factor a, relative to one that probes a single slot: for compact, hashed
// and packed 1 + slope x (SearchProbes(a) - 1), the slope fitted to reads
// of 1e7 rows across fills (docs/plan.md, "Speed against the load
// factor"); for the others ProbeLines, the cache lines a probe touches (a
// model). compact's GetMany prefetches core.CompactReadLines lines, so the
// lines it waits for hardly change below fill 0.93, yet it read 1.4x
// slower at 0.90 than at 0.72; hashed's 16-byte cells read 2.2x slower at
// fill 0.97 than at 0.3 where ProbeLines says 4.8x, packed's 10-byte cells
// 3.7x where it says 3.4x but 1.9x at 0.85 where it says 1.4x.
func ReadCost(l core.Layout, a, cell float64) float64 {
	switch l {
	case core.LayoutCompact:
		return CompactReadCost(a)
	case core.LayoutHashed:
		return 1 + hashedReadSlope*(SearchProbes(a)-1)
	case core.LayoutPacked:
		return 1 + packedReadSlope*(SearchProbes(a)-1)
	case core.LayoutIceberg:
		// A hit reads its front bucket's header line and its slot's line
		// at any fill, the back yard only for the few pairs a full bucket
		// turned away: reads of 1e7-row tables at fills 0.46 to 0.91 (max
		// load factors 0.5 to 0.99; BenchmarkReadInterleaved with
		// PACKLAB_RI_FILLS, PACKLAB_RI_LAYOUT=iceberg) took x0.84 to x1.13 of
		// the emptiest's time, with no trend up.
		return 1
	}
	return ProbeLines(a, cell)
}

// SearchProbes is the slots a successful lookup probes in a linear-probing
// table at load factor a: (1 + 1/(1-a))/2 (Knuth).
func SearchProbes(a float64) float64 { return (1 + 1/(1-min(a, 0.999))) / 2 }

// CompactReadCost is a compact lookup's time at load factor a, relative to
// one that probes a single slot: 1 + compactReadSlope * (SearchProbes(a) -
// 1), the slope fitted to reads of 1e7 rows at load factors 0.7 to 0.97
// (docs/plan.md, "Speed against the load factor").
func CompactReadCost(a float64) float64 { return 1 + compactReadSlope*(SearchProbes(a)-1) }

// LoadCost is a load's time a row at max load factor m, relative to one
// whose lookups would probe a single slot, for the layouts whose load was
// fitted against it: compact, 1 + compactLoadSlope * (SearchProbes(m) - 1).
// A growing table's fill cycles below m (compact grows x5/4), so m, not the
// fill the load ends at, is what its inserts see: fitted against the fill
// after the load instead, the error was 23 %, against an insert's probes
// ((1 + 1/(1-m)^2)/2) 12 % (docs/plan.md, "Speed against the load factor").
// hashed and packed (linear probing, fitted on packed) take
// probingLoadSlope the same way: packed loaded 1.76x slower at max load
// factor 0.98 than at 0.5 (the model: 1.75x), though its error across 0.5 to
// 0.98 is 42 % (a load at 0.5 ends in a table twice as large, and grows
// once more). For the others it is 1: a load is taken at its measured
// speed whatever the max load factor.
func LoadCost(l core.Layout, m float64) float64 {
	switch l {
	case core.LayoutCompact:
		return 1 + compactLoadSlope*(SearchProbes(m)-1)
	case core.LayoutHashed, core.LayoutPacked:
		return 1 + probingLoadSlope*(SearchProbes(m)-1)
	}
	return 1
}

// The slopes of compact's read and load cost, fitted by least squares to
// `packlab run --rows 1e7 --layout compact` on the 2-core lab machine
// (docs/plan.md, "Speed against the load factor": the runs, the fit and
// its error).
const (
	compactReadSlope = 0.25  // reads at load factors 0.70-0.97: within 21 % of each (a busy machine)
	compactLoadSlope = 0.059 // loads growing at max load factors 0.70-0.97: within 7.5 % of each
	probingLoadSlope = 0.032 // packed's loads growing at max load factors 0.5-0.98: within 42 %
	// hashed's and packed's reads at fills 0.3-0.97 of one table of 2^24
	// cells (BenchmarkReadInterleaved with PACKLAB_RI_FILLS): within 15 %
	// and 19 % of each, where ProbeLines was off by up to 113 % and 27 %.
	hashedReadSlope = 0.099
	packedReadSlope = 0.224
)

// CalibrationLoadSeconds is about how long one load of layout (a ch_
// layout too) at rows takes in a plan's calibration, the idle before it
// apart: its process, load, read and checks, scaled from the lab machine's
// at 1e7 rows (2 cores shared by five sessions, load average 10-12: a
// first calibration of every layout, ClickHouse's three, and hashed at 1 and
// 2 shards, 33 loads, took 785 s there; these figures and the idles sum to
// 781 s, hashed SHARDS 2 taken as SHARDS 1). A ClickHouse load also starts
// ClickHouse, fills its source and reads twice, on one thread and then on
// all, which takes clickHouseStartSeconds at any size. For a layout not
// listed, 10 s.
func CalibrationLoadSeconds(layout string, rows int64) float64 {
	s, ok := calibrationSeconds[layout]
	if !ok {
		s = 10
	}
	if strings.HasPrefix(layout, "ch_") {
		return clickHouseStartSeconds + (s-clickHouseStartSeconds)*float64(rows)/1e7
	}
	return s * float64(rows) / 1e7
}

// clickHouseStartSeconds is what a ch_ load takes whatever its rows:
// nine loads of the three ch_complex_key_ layouts at 1e5 rows, no idle,
// took 25.0 s (load average 5), where the rows' share was about 1 s.
const clickHouseStartSeconds = 2.8

// calibrationSeconds are CalibrationLoadSeconds' figures at 1e7 rows: each
// layout's three loads' wall time in that calibration over three, less the
// 2.5 s idle before each; iceberg's, not in that calibration, is compact's
// scaled by their loads in one run of the side-by-side harness (2.39 s
// against 1.69); the ch_complex_key_ layouts' are their loads of 1e6
// String(20) keys (the slower of String(20) and UUID keys, load average
// 5: 11.4, 17.8 and 13.3 s) less the start, times 10.
var calibrationSeconds = map[string]float64{
	"hashed": 7.1, "packed": 6.0, "sparse": 18.2, "hashed_array": 11.5, "gomap": 16.6, "compact": 5.0, "iceberg": 7.0,
	"ch_hashed": 48.4, "ch_sparse_hashed": 41.0, "ch_hashed_array": 64.9,
	"ch_complex_key_hashed": 89, "ch_complex_key_sparse_hashed": 153, "ch_complex_key_hashed_array": 108,
}

// ShardReadCost is a read's time a lookup with shards tables, relative to
// one table's: core.Sharded's GetMany sorts each batch of 1024 keys by
// shard before each table looks its share up, so every lookup pays the
// sort, and the more shards the shorter each table's batch and the fewer
// cache misses it overlaps: 1 + step + slope x log2(shards), fitted per
// layout to reads of 1e7 rows at SHARDS 1 to 128 (docs/plan.md, "Several
// shards' reads"); a layout not measured (gomap, iceberg) takes the others' mean.
// A ClickHouse setup takes its Go layout's: ClickHouse hashes each key to
// its shard, and its SHARDS 4 read 1.36x (HASHED) and 1.24x (SPARSE_HASHED)
// slower than SHARDS 1 where hashed's and packed's costs say 1.29x, 1.32x.
func ShardReadCost(l core.Layout, shards int) float64 {
	if shards <= 1 {
		return 1
	}
	f, ok := shardRead[l]
	if !ok {
		f = [2]float64{0.075, 0.117} // the five measured layouts' mean
	}
	return 1 + f[0] + f[1]*math.Log2(float64(shards))
}

// shardRead is ShardReadCost's step and slope per layout, fitted by least
// squares to BenchmarkReadInterleaved (every shard count's table read in
// turn, the tenth percentile of 320 passes of 2^16 lookups; compact's
// divided by its fill's cost first, its shards ending at other fills).
var shardRead = map[core.Layout][2]float64{
	core.LayoutCompact: {0.062, 0.162}, // within 7 % of each
	core.LayoutHashed:  {0.123, 0.081}, // within 8 %
	core.LayoutPacked:  {0.189, 0.068}, // within 9 %
	// sparse's and hashed_array's fitted a negative step: the slope alone.
	core.LayoutSparse:      {0, 0.121}, // within 21 %
	core.LayoutHashedArray: {0, 0.152}, // within 19 %
}

// Scaling is what several shards add to a load, as a plan measured it
// (a multi-shard load beside a one-shard one).
type Scaling struct {
	Efficiency float64 `json:"efficiency"` // each extra parallel worker adds this share of one worker's speed; 0 = not measured
	// EfficiencyRange is the least and the most Efficiency the pair's
	// ranges allow (the many-shard load's slowest over the one-shard's
	// fastest, and the reverse); null when either run was one load.
	EfficiencyRange       *[2]float64 `json:"efficiency_range"`
	ProducerRowsPerSecond float64     `json:"producer_rows_per_second"` // rows/s the producer reads and splits: the ceiling; 0 = not measured
	From                  string      `json:"from"`
}

// LoadRate is the load speed of shards shards on threads threads, from one
// shard's rate r1: each extra worker that has a thread adds Efficiency of
// r1, up to the producer's ceiling.
func (s Scaling) LoadRate(r1 float64, shards, threads int) float64 {
	return s.LoadRateAt(r1, s.Efficiency, shards, threads)
}

// LoadRange is LoadRate over a one-shard range r: the slowest with the
// least efficiency the pair allows, the fastest with the most.
func (s Scaling) LoadRange(r [2]float64, shards, threads int) [2]float64 {
	lo, hi := s.Efficiency, s.Efficiency
	if s.EfficiencyRange != nil {
		lo, hi = s.EfficiencyRange[0], s.EfficiencyRange[1]
	}
	return [2]float64{s.LoadRateAt(r[0], lo, shards, threads), s.LoadRateAt(r[1], hi, shards, threads)}
}

// LeastEfficiency is the least gain an extra worker adds that the scaling
// pair's loads allow: EfficiencyRange's low end, else Efficiency.
func (s Scaling) LeastEfficiency() float64 {
	if s.EfficiencyRange != nil {
		return s.EfficiencyRange[0]
	}
	return s.Efficiency
}

// LoadRateAt is LoadRate with each extra worker adding efficiency of r1.
func (s Scaling) LoadRateAt(r1, efficiency float64, shards, threads int) float64 {
	p := max(min(shards, threads), 1)
	rate := r1 * (1 + float64(p-1)*efficiency)
	if shards > 1 && s.ProducerRowsPerSecond > 0 {
		rate = min(rate, max(s.ProducerRowsPerSecond, r1))
	}
	return rate
}
