package report

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/planner"
)

// TestPlanFrontChart: every timed setup is two points, the front's in
// their own joined series, the budget a vertical line; no speeds, no chart.
func TestPlanFrontChart(t *testing.T) {
	setup := func(rank int, layout string, bytes int64, load, read float64) planner.Candidate {
		return planner.Candidate{Rank: rank, Layout: layout, Shards: 1, CheckedBytes: bytes, LoadSeconds: &load, ReadSeconds: &read, Fits: bytes <= 3<<30}
	}
	plan := planner.Plan{BudgetBytes: 3 << 30, Candidates: []planner.Candidate{
		setup(1, "compact", 1<<30, 20, 9), setup(2, "hashed", 2<<30, 5, 2), setup(3, "gomap", 5<<30/2, 11, 3), setup(4, "sparse", 4<<30, 1, 1),
	}}
	c, err := PlanFrontChart(plan)
	if err != nil {
		t.Fatal(err)
	}
	var opt struct {
		Series []struct {
			Name string `json:"name"`
			Data []struct {
				Name  string `json:"name"`
				Value []any  `json:"value"`
			} `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &opt); err != nil {
		t.Fatal(err)
	}
	points := map[string]int{}
	for _, s := range opt.Series {
		points[s.Name] = len(s.Data)
	}
	// gomap is beaten by hashed; sparse does not fit: both grey.
	if points["front: read"] != 2 || points["front: load"] != 2 || points["other setups"] != 4 || points["budget 3.0 GiB"] != 2 {
		t.Errorf("series and their points: %v", points)
	}
	if !strings.Contains(string(c.Option), "hashed SHARDS 1 (Go)") || c.Kind != PlanFrontChartKind {
		t.Errorf("kind %q, option %s", c.Kind, c.Option)
	}
	for i := range plan.Candidates {
		plan.Candidates[i].LoadSeconds = nil
	}
	if _, err := PlanFrontChart(plan); !errors.Is(err, ErrNoData) {
		t.Errorf("no speeds: %v, want ErrNoData", err)
	}
}
