package planner

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/packlab/packlab/experiments/text"
)

// The front of the plan: the setups that no other beats on all three of
// memory (what the budget is checked against), load time and read time.
// The balanced rule picks along it (docs/plan.md); the faces draw it
// (report.PlanFrontChart) and list it, so that a user sees what each step
// to less memory costs in speed.

// Front is the setups that fit the budget (all of them when none does),
// with both speeds measured, that no other such setup dominates: as little
// memory or less, loading and reading as fast or faster, and better in one
// of them; least memory first. Figures within frontTolerance of each other
// count as equal (shard counts that change nothing but a few bytes), and
// the first by rank stands for setups of equal figures.
func (plan Plan) Front() []Candidate {
	var timed []Candidate
	fits := slices.ContainsFunc(plan.Candidates, func(c Candidate) bool { return c.Fits })
	for _, c := range plan.Candidates {
		if c.LoadSeconds != nil && c.ReadSeconds != nil && *c.LoadSeconds > 0 && *c.ReadSeconds > 0 && (c.Fits || !fits) {
			timed = append(timed, c)
		}
	}
	figures := func(c Candidate) [3]float64 {
		return [3]float64{float64(c.CheckedBytes), *c.LoadSeconds, *c.ReadSeconds}
	}
	var front []Candidate
	for i, c := range timed {
		fc := figures(c)
		dominated := false
		for j, o := range timed {
			fo := figures(o)
			notWorse, better := true, false
			for k := range fo {
				notWorse = notWorse && fo[k] <= fc[k]*(1+frontTolerance)
				better = better || fo[k] < fc[k]*(1-frontTolerance)
			}
			if j != i && notWorse && (better || j < i) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, c)
		}
	}
	slices.SortStableFunc(front, func(a, b Candidate) int { return cmp.Compare(a.CheckedBytes, b.CheckedBytes) })
	return front
}

// frontTolerance is how near two figures count as equal on the front: 1 %,
// below the spread of repeated loads (docs/plan.md).
const frontTolerance = 0.01

// FrontLines words the front, a line a setup: its memory, its times, and
// what the step from the one before (less memory) buys.
func (plan Plan) FrontLines() []string {
	front := plan.Front()
	var lines []string
	for i, c := range front {
		fits := ""
		if !c.Fits {
			fits = ", over the budget"
		}
		l := fmt.Sprintf("%s (%s): %s at its peak%s, load %s, read %s", SetupName(c), engineWords(engineOf(c)),
			text.Bytes(c.CheckedBytes), fits, text.Seconds(c.LoadSeconds), text.Seconds(c.ReadSeconds))
		if i > 0 {
			p := front[i-1]
			l += fmt.Sprintf("; %s %% more memory than %s for a load %s and a read %s", text.Float(text.Round(100*(float64(c.CheckedBytes)/float64(p.CheckedBytes)-1), 1)),
				SetupName(p), times(*p.LoadSeconds / *c.LoadSeconds), times(*p.ReadSeconds / *c.ReadSeconds))
		}
		lines = append(lines, l)
	}
	return lines
}

// times words a speed-up: "1.4x faster", "1.2x slower", "as fast".
func times(x float64) string {
	switch {
	case x >= 1.005:
		return text.Float(text.Round(x, 2)) + "x faster"
	case x <= 1/1.005:
		return text.Float(text.Round(1/x, 2)) + "x slower"
	}
	return "as fast"
}
