package planner

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// TestPlanStringKey: a dictionary keyed by a String, which the plan
// refused ("unknown type"), is planned in ClickHouse's COMPLEX_KEY_
// layouts alone (core holds no String key: no Go answer), its memory at
// the key's lengths. At 1e5 keys of String(28) and a UInt16 ClickHouse
// 26.7 (the lab's ch_complex_key_ runs, loaded from a file) reported
// COMPLEX_KEY_HASHED() 12,579,048 bytes_allocated.
func TestPlanStringKey(t *testing.T) {
	none := 0.0
	plan, err := MakePlan(PlanRequest{Rows: 100_000, Key: "String(28)", GrowthPercent: &none}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Request.ComplexKey || plan.BestGo() != nil {
		t.Errorf("complex_key %v, Go answer %+v; want a complex key and no Go answer", plan.Request.ComplexKey, plan.BestGo())
	}
	steady := map[string]int64{}
	for _, c := range plan.Candidates {
		if c.Engine != EngineClickHouse || !strings.HasPrefix(c.ClickHouseLayout, "LAYOUT(COMPLEX_KEY_") || c.KeyType != "String" {
			t.Errorf("%s: engine %q, %s, key %s; want ClickHouse's COMPLEX_KEY_ layouts of a String key", SetupName(c), c.Engine, c.ClickHouseLayout, c.KeyType)
		}
		steady[c.ClickHouseLayout] = c.SteadyBytes
	}
	if got, want := steady["LAYOUT(COMPLEX_KEY_HASHED())"], int64(12_579_048); math.Abs(float64(got-want))/float64(want) > 0.001 {
		t.Errorf("COMPLEX_KEY_HASHED(): steady %d, ClickHouse's %d", got, want)
	}
	// sparse_hash_map's bytes_allocated is its estimate of the pairs alone
	// (ClickHouse #22867); the process held 8.4 MiB after a purge.
	if got := steady["LAYOUT(COMPLEX_KEY_SPARSE_HASHED())"]; got < 6_590_408 || float64(got) > 8.4*(1<<20) {
		t.Errorf("COMPLEX_KEY_SPARSE_HASHED(): steady %d, ClickHouse's estimate 6,590,408 and RSS 8.4 MiB", got)
	}
	best := plan.BestClickHouse()
	if best == nil || !strings.Contains(best.CreateDictionary, "key String,") || !strings.Contains(best.ClickHouseNote, "tuple(key)") {
		t.Errorf("the ClickHouse answer: %+v", best)
	}
	// Longer keys take more: the arena holds each key's size and bytes.
	long, err := MakePlan(PlanRequest{Rows: 100_000, Key: "String(100)", GrowthPercent: &none}, nil, machine24)
	if err != nil {
		t.Fatal(err)
	}
	if b := long.BestClickHouse(); b == nil || best == nil || b.SteadyBytes < best.SteadyBytes+6_000_000 {
		t.Errorf("String(100) keys: %+v; want about 7.2 MB more than String(28)'s", b)
	}

	// Its speeds: the lab's COMPLEX_KEY_ loads of keys of its length, no
	// Go table's and no scaling pair's (that measures Go tables).
	cfgs, err := CalibrationConfigs(plan.Request, nil, 2)
	for _, c := range cfgs {
		if c.Key != "String(28)" || slices.ContainsFunc(c.Layouts, func(l string) bool { return !strings.HasPrefix(l, "ch_complex_key_") }) {
			t.Errorf("calibration %+v of a String(28) key", c)
		}
	}
	want := 0 // ClickHouse's worker is not built here: nothing to measure
	if (config.Config{Layouts: []string{"ch_complex_key_hashed"}, Key: "String(28)", Rows: 100_000}).Validate() == nil {
		want = 1
	}
	if err != nil || len(cfgs) != want {
		t.Errorf("calibration: %v, %d configs; want %d, the ch_complex_key_ layouts' alone", err, len(cfgs), want)
	}
	for mean, want := range map[float64]string{27.99: "String(28)", 3.2: "String(8)"} {
		p, err := PlanRequest{Rows: 1000, Key: "String", From: &dict.TableSource{Table: "t", KeyColumn: "k", KeyMeanLen: mean}}.Parse()
		if err != nil || p.labKey() != want {
			t.Errorf("a table's String key of mean length %v: the lab measures %q (%v); want %s", mean, p.labKey(), err, want)
		}
	}

	for _, r := range []struct {
		req   PlanRequest
		field string
		want  string
	}{
		{PlanRequest{Rows: 1000, Key: "String(40..20)"}, "key", "shortest length 40 is over its longest, 20"},
		{PlanRequest{Rows: 1000, Key: "Tuple(String, UInt64)"}, "key", "unknown type"},
		{PlanRequest{Rows: 1000, Key: "String", MaxKey: 999}, "max_key", "not a String"},
		{PlanRequest{Rows: 1000, Key: "String", For: EngineGo}, "for", "no String key"},
	} {
		_, err := MakePlan(r.req, nil, machine24)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != r.field || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%+v: %v; want a %s error saying %q", r.req, err, r.field, r.want)
		}
	}
}
