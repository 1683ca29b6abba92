package report

import (
	"strings"
	"testing"

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
