package sweep

// The seed-claims sweep's runs: what each of the seed's claims is about
// (the report, in package report, puts each measurement beside its claim).

import (
	"context"
	"runtime"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
)

// SeedClaimsSpeedRows is the size of the seed-claims sweep's speed runs:
// tables past the CPU caches, a load of one to two seconds each. A
// variable only so that the test of docs/cli.md's examples runs the
// sweep's 45 loads at the examples' size (TestCLIExamples).
var SeedClaimsSpeedRows int64 = 4_000_000

// SeedClaimsShards are the shard counts of the speed-against-shards runs.
var SeedClaimsShards = []int{1, 2, 4, 8, 16}

// SeedClaimsSpeedLayout is the layout of the speed claims: the table
// SPARSE_HASHED builds for <UInt64,UInt16> since 23.5, and the fastest to
// insert, so the loader's own costs show most.
const SeedClaimsSpeedLayout = core.LayoutPacked

// SeedClaimsMemory are the structures of the seed's memory table.
var SeedClaimsMemory = []core.Layout{core.LayoutHashed, core.LayoutPacked, core.LayoutSparse}

// seedClaimsConfigs are the sweep's runs: the speed claims on
// SeedClaimsSpeedLayout at SeedClaimsSpeedRows (each Repeats times, 3 by
// default, 5 for the pairs of the two few-per-cent claims: times are
// medians), then the memory of the seed's three structures at base.Rows.
func seedClaimsConfigs(base config.Config, _ Options) []config.Config {
	speed := base
	speed.Layouts = []string{string(SeedClaimsSpeedLayout)}
	speed.Rows = SeedClaimsSpeedRows
	speed.NoRead = true
	if speed.Repeats <= 1 {
		speed.Repeats = 3
	}
	// The two claims of a few per cent compare pairs of runs: more loads
	// each, as the machine's noise is of that size.
	pair := speed
	pair.Repeats = max(speed.Repeats, 5)
	var cfgs []config.Config
	for _, sel := range []core.ShardSelect{core.ShardSelectModulo, core.ShardSelectMask} {
		c := pair
		c.Shards, c.ShardSelect = 8, string(sel)
		cfgs = append(cfgs, c)
	}
	big := pair
	big.Shards, big.ShardSelect, big.BlockRows = 8, string(core.ShardSelectMask), core.DefaultBlockRows*8
	cfgs = append(cfgs, big)
	for _, threads := range threadCounts(runtime.NumCPU()) {
		for _, s := range SeedClaimsShards {
			c := speed
			c.Shards, c.Threads = s, threads
			cfgs = append(cfgs, c)
		}
	}
	mem := base
	mem.Layouts = nil
	for _, l := range SeedClaimsMemory {
		mem.Layouts = append(mem.Layouts, string(l))
	}
	mem.NoRead = true
	return append(cfgs, mem)
}

// threadCounts are 1, 2, 4, ... up to cores, and cores.
func threadCounts(cores int) []int {
	var out []int
	for t := 1; t < cores; t *= 2 {
		out = append(out, t)
	}
	return append(out, max(cores, 1))
}

// seedClaimsRows is the memory comparison's default size: the largest of
// 1e6, 1e7 and 1e8 whose run of the three structures the memory guard lets
// through on this machine now.
func seedClaimsRows(ctx context.Context, base config.Config) int64 {
	rows := int64(1_000_000)
	for _, n := range []int64{10_000_000, 100_000_000} {
		c := base
		c.Rows, c.Layouts, c.NoRead = n, nil, true
		for _, l := range SeedClaimsMemory {
			c.Layouts = append(c.Layouts, string(l))
		}
		if mc, err := experiments.Check(ctx, c); err == nil && mc.Fits {
			rows = n
		}
	}
	return rows
}
