package planner

// The default rule, prefer balanced: memory decides among setups of
// similar speed; a setup much slower to load or to read than another that
// fits loses to it unless it saves much memory. The thresholds were chosen
// from measurements (docs/plan.md, "What decides"): compact at 1e7 rows
// loaded 1.5-1.9x and read 1.6-4x slower at max load factor 0.97 than at
// 0.9, for 7-10 % less memory; packed against compact at the same size
// reads about 1.3-1.6x faster for 25-30 % more memory.

import (
	"cmp"
	"math"
)

const (
	// balancedSlower: a setup is much slower when another's median speed
	// (load or read) is at least this many times its own: 1/0.75, so the
	// answer keeps at least three quarters of the fastest speed that fits
	// unless it saves much memory. Below it, speeds measured at one size
	// and scaled by a model (their ranges: 10-30 % between calibrations)
	// do not decide.
	balancedSlower = 4.0 / 3
	// balancedSaves: a much slower setup still wins when its checked peak
	// is at most this share of the faster one's (saves at least a third).
	balancedSaves = 2.0 / 3
	// balancedShardCost is what each doubling of the shards must save (of
	// the checked peak) to win among setups of one speed tier: a tenth.
	// compact grows x5/4, so two shard counts' tables differ by up to a
	// fifth at one row count and swap places a few percent of rows
	// further: with 2 % a doubling, 1e9, 1.03e9 and 1.05e9 rows in 24 GiB
	// (10 % growth) answered SHARDS 1, 1 and 2 (6 % less at 1.05e9), and
	// before this rule 9.5e8, 1e9 and 1.03e9 answered SHARDS 1, 8 and 1
	// (TestPlanAnswersAreStable).
	balancedShardCost = 0.10
)

// balancedTiers puts in tier 2 every setup of cs (setups of one engine
// that fit) that another of cs outruns by balancedSlower, loading or
// reading, without it saving balancedSaves; the rest in tier 1. Setups
// with no measured speed are compared on memory alone.
func balancedTiers(cs []*Candidate) {
	for _, x := range cs {
		x.SpeedTier = 1
		for _, y := range cs {
			if y == x || float64(x.CheckedBytes) <= balancedSaves*float64(y.CheckedBytes) {
				continue
			}
			if muchFaster(y.loadAtLeast, x.loadAtLeast) || muchFaster(y.ReadRowsPerSecond, x.ReadRowsPerSecond) {
				x.SpeedTier = 2
				break
			}
		}
	}
}

// The loads compared are loadAtLeast: several shards' gain counted at the
// least the scaling pair's ranges allow. A 2M-row pair here said each extra
// worker adds 58 %, 0 to 100 % by the loads' ranges; taken at 58 % it made
// every one-shard setup "much slower" than a sharded one, and the answer
// flipped between SHARDS 4, 8 and 2 for 9.5e8, 1e9 and 1.05e9 rows, where
// the lab at 1e7 loaded compact SHARDS 2 no faster than SHARDS 1 on the same
// busy machine.

// muchFaster: speed a is at least balancedSlower times speed b.
func muchFaster(a, b *float64) bool {
	return a != nil && b != nil && *b > 0 && *a >= balancedSlower**b
}

// byBalancedRule is byRule with each doubling of the shards costing
// balancedShardCost of the checked peak.
func byBalancedRule(a, b Candidate) int {
	weighed := func(c Candidate) float64 {
		return float64(c.CheckedBytes) * (1 + balancedShardCost*math.Log2(float64(max(c.Shards, 1))))
	}
	return cmp.Or(cmp.Compare(onePercent(weighed(a)), onePercent(weighed(b))), byRule(a, b))
}
