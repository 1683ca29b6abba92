package report

import (
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/planner"
)

// TestPlanChartSpeaksOfItsRuntime: the Plan chart of a native plan (every
// face's default, the desktop window's) says a native run's growth and
// nothing of a browser's wasm memory, which its notes once named beside it
// ("the growth of a native run, or of this browser's wasm memory when
// planned for it").
func TestPlanChartSpeaksOfItsRuntime(t *testing.T) {
	plan, err := planner.MakePlan(planner.PlanRequest{Rows: 1e9, MemoryBytes: 24 << 30}, nil,
		planner.PlanMachine{AvailableBytes: 24 << 30, TotalBytes: 24 << 30, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	c, err := PlanChart(plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sub := decodeOption(t, c).Title.Subtext; !strings.Contains(sub, "the growth of a native run") || strings.Contains(sub, "browser") || strings.Contains(sub, "wasm") {
		t.Errorf("a native plan's chart says %q: want a native run's growth and no browser's wasm memory", sub)
	}
}

// TestPlanCurvesOfShardedSetups: a setup of 2 shards draws its curves from
// 1e3 to 1e10 rows at once, with its growth steps and not a point a row
// about each: core.Predict's cells of sharded tables are an expectation
// that changes at every count about a step, and the chart's bisection,
// which took them for steps, ran for minutes (the Plan tab's plan never
// answered when a layout's best setup had 2 shards).
func TestPlanCurvesOfShardedSetups(t *testing.T) {
	plan, err := planner.MakePlan(planner.PlanRequest{Rows: 2e5, MemoryBytes: 24 << 30}, nil,
		planner.PlanMachine{AvailableBytes: 24 << 30, TotalBytes: 24 << 30, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []string{"hashed", "sparse", "compact", "iceberg"} {
		c := *plan.Best()
		c.Layout, c.Shards, c.FollowsMLF, c.MaxLoadFactor = layout, 2, false, 0
		done := make(chan int, 1)
		go func() {
			line, _, _ := planCurves(plan, c, planChartMaxRows)
			done <- len(line)
		}()
		select {
		case n := <-done:
			// 169 counts at 24 a decade, and two more at each step.
			if n > 169+2*sawtoothSteps*168 {
				t.Errorf("%s SHARDS 2: %d points from 1e3 to 1e10 rows; want the decades' and the steps' only", layout, n)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s SHARDS 2: the curves from 1e3 to 1e10 rows took over a minute", layout)
		}
	}
}

// TestSawtoothRowsBounded: a cells function that changes at every count is
// given at most sawtoothSteps steps between two counts of a decade's 24,
// not a bisection at every count.
func TestSawtoothRowsBounded(t *testing.T) {
	calls := 0
	rows := sawtoothRows(1e3, 1e6, func(n int64) int64 { calls++; return n })
	if len(rows) > 73+2*sawtoothSteps*72 || calls > 100_000 {
		t.Errorf("sawtoothRows over cells(n) = n from 1e3 to 1e6: %d rows, %d calls; want at most %d steps between counts", len(rows), calls, sawtoothSteps)
	}
}
