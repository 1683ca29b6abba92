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
	"fmt"
	"math"
	"strings"

	"github.com/packlab/packlab/core"
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

// balancedLayoutCost is what a layout must save (of the checked peak) to
// win among setups of one speed tier, where its speed at the sizes plans
// are made for falls further behind than a calibration of 1e7 rows shows:
// iceberg's batch read was 0.79x compact's at 1e7 in one run of the
// side-by-side harness (inside the tier), but 0.86x boost's at 1e8 where
// compact's was 1.3x-1.7x in other runs, about 0.5x-0.66x compact's
// (docs/performance.md), so it must save what a doubling of the shards
// must. Without it iceberg and compact, a few percent apart, traded the Go answer between
// 9.5e8, 1e9 and 1.05e9 rows in 24 GiB (compact, iceberg, iceberg: 1.5 %,
// 4.3 % and 1 % apart). A calibration at the plan's size (1e8) puts such a
// layout in tier 2 by its own speed; under prefer memory it weighs nothing.
var balancedLayoutCost = map[core.Layout]layoutCost{
	core.LayoutIceberg: {balancedShardCost, "its reads at 1e8 rows fall further behind than a calibration at 1e7 shows"},
}

// layoutCost is a layout's balancedLayoutCost and why, as the runners-up
// say it.
type layoutCost struct {
	share float64
	why   string
}

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
// balancedShardCost of the checked peak, and a layout balancedLayoutCost.
func byBalancedRule(a, b Candidate) int {
	return cmp.Or(cmp.Compare(onePercent(float64(a.CheckedBytes)*balancedWeight(a)), onePercent(float64(b.CheckedBytes)*balancedWeight(b))), byRule(a, b))
}

// balancedWeight is what c's checked peak counts for under the balanced
// rule, relative to its bytes: balancedShardCost a doubling of its shards,
// and its layout's balancedLayoutCost.
func balancedWeight(c Candidate) float64 {
	return (1 + balancedShardCost*math.Log2(float64(max(c.Shards, 1)))) * (1 + balancedLayoutCost[core.Layout(c.Layout)].share)
}

// balancedWeightWhy says what makes c weigh more than best: its shards,
// its layout or both.
func balancedWeightWhy(c, best Candidate) string {
	var why []string
	if c.Shards > best.Shards {
		why = append(why, fmt.Sprintf("each doubling of the shards counts as %.0f %% more: %d against %d", 100*balancedShardCost, c.Shards, best.Shards))
	}
	if cost := balancedLayoutCost[core.Layout(c.Layout)]; cost.share > balancedLayoutCost[core.Layout(best.Layout)].share {
		why = append(why, fmt.Sprintf("%s counts as %.0f %% more (%s)", c.Layout, 100*cost.share, cost.why))
	}
	return strings.Join(why, "; ")
}

// layoutCostWords are the balanced rule's layout costs for its sentence:
// ", iceberg as 10 % more".
func layoutCostWords() string {
	var out string
	for _, l := range core.Layouts() {
		if cost := balancedLayoutCost[l]; cost.share > 0 {
			out += fmt.Sprintf(", %s as %.0f %% more", l, 100*cost.share)
		}
	}
	return out
}
