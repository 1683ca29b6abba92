package chdriver

import (
	"slices"
	"testing"

	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
)

// TestCalibrationMeasuresClickHouse: where ClickHouse runs, a plan's
// calibration measures its dictionaries' own loads (the ch_ layouts whose
// speeds the ClickHouse setups take), unless the plan is for Go alone, has
// several attributes, or history has them with a range.
func TestCalibrationMeasuresClickHouse(t *testing.T) {
	needClickHouse(t)
	chLayouts := []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}
	measures := func(cfgs []config.Config) []string {
		var out []string
		for _, c := range cfgs {
			for _, l := range c.Layouts {
				if slices.Contains(chLayouts, l) {
					out = append(out, l)
				}
			}
		}
		return out
	}
	cfgs, err := planner.CalibrationConfigs(planner.PlanRequest{Rows: 1e9}, nil, 1)
	if err != nil || !slices.Equal(measures(cfgs), chLayouts) {
		t.Fatalf("a first calibration measures %v of ClickHouse (%v), want %v", measures(cfgs), err, chLayouts)
	}
	for _, c := range cfgs {
		if err := c.Validate(); err != nil || c.Repeats != 3 || c.SettleSeconds == 0 {
			t.Errorf("calibration config %+v: %v", c, err)
		}
	}
	if cfgs, _ := planner.CalibrationConfigs(planner.PlanRequest{Rows: 1e9, For: planner.EngineGo}, nil, 1); len(measures(cfgs)) != 0 {
		t.Errorf("a plan for Go measures %v of ClickHouse", measures(cfgs))
	}
	if cfgs, _ := planner.CalibrationConfigs(planner.PlanRequest{Rows: 1e9, Attributes: []string{"UInt16", "String"}}, nil, 1); len(measures(cfgs)) != 0 {
		t.Errorf("a plan of two attributes measures %v of ClickHouse", measures(cfgs))
	}
	var history []result.Result
	for _, l := range chLayouts[:2] {
		history = append(history, result.Result{ID: "20261206T000000.000Z-" + l, Layout: l, KeyType: "UInt64", ValueType: "UInt16", Rows: planner.CalibrationRows,
			Shards: 1, Source: string(source.Random), Runtime: experiments.RuntimeName(), LoadRowsPerSecond: 1e6, ReadRowsPerSecond: 1e7, Repeats: 3,
			Spread: &result.Spread{LoadSecondsMin: 1, LoadSecondsMax: 1.1, ReadSecondsMin: 0.1, ReadSecondsMax: 0.11}})
	}
	if cfgs, _ := planner.CalibrationConfigs(planner.PlanRequest{Rows: 1e9}, history, 1); !slices.Equal(measures(cfgs), chLayouts[2:]) {
		t.Errorf("with ch_hashed and ch_sparse_hashed measured: %v, want ch_hashed_array alone", measures(cfgs))
	}
}
