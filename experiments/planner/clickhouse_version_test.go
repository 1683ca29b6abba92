package planner

import (
	"errors"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// TestPlanForAnOlderClickHouse: the plan's LAYOUT clauses are for the
// release asked: no SHARDS before 23.1, no PackedHashMap (packed) or
// MAX_LOAD_FACTOR before 23.5, no SHARDS for HASHED_ARRAY before 23.12;
// each setup it cannot build says why, naming the change.
func TestPlanForAnOlderClickHouse(t *testing.T) {
	for _, c := range []struct {
		version                          string
		shards, packed, mlf, arrayShards bool
	}{
		{"26.7", true, true, true, true},
		{"23.5.3.24", true, true, true, false},
		{"v23.3-lts", true, false, false, false},
		{"22.8", false, false, false, false},
	} {
		plan, err := MakePlan(PlanRequest{Rows: 1e8, MemoryBytes: 24 << 30, ClickHouseVersion: c.version}, nil, machine24)
		if err != nil {
			t.Fatal(err)
		}
		var shards, packed, mlf, arrayShards bool
		for _, k := range plan.Candidates {
			if engineOf(k) == EngineGo && !k.PacklabOnly {
				continue // a Go table ClickHouse builds too: its ClickHouse setup is another row
			}
			if k.ClickHouseLayout == "" {
				if dict.ClickHouseLayoutName(core.Layout(k.Layout)) != "" && !strings.Contains(k.ClickHouseNote, "ClickHouse "+plan.Request.ClickHouseVersion+" ") && !strings.Contains(k.ClickHouseNote, "ClickHouse "+plan.Request.ClickHouseVersion+"'s") &&
					!strings.Contains(k.ClickHouseNote, "packs nothing") && !strings.Contains(k.ClickHouseNote, "not PackedHashMap") {
					t.Errorf("%s: %s SHARDS %d MLF %v has no LAYOUT and says %q", c.version, k.Layout, k.Shards, k.MaxLoadFactor, k.ClickHouseNote)
				}
				continue
			}
			shards = shards || k.Shards > 1
			packed = packed || k.Layout == "packed"
			mlf = mlf || strings.Contains(k.ClickHouseLayout, "MAX_LOAD_FACTOR")
			arrayShards = arrayShards || k.Layout == "hashed_array" && k.Shards > 1
		}
		if shards != c.shards || packed != c.packed || mlf != c.mlf || arrayShards != c.arrayShards {
			t.Errorf("ClickHouse %s: SHARDS %v, PackedHashMap %v, MAX_LOAD_FACTOR %v, HASHED_ARRAY SHARDS %v; want %v %v %v %v",
				c.version, shards, packed, mlf, arrayShards, c.shards, c.packed, c.mlf, c.arrayShards)
		}
	}
	for _, bad := range []string{"x", "20.3", "23", "23.13", "23.x"} {
		_, err := MakePlan(PlanRequest{Rows: 1e8, ClickHouseVersion: bad}, nil, machine24)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != "clickhouse_version" || !strings.Contains(err.Error(), bad) {
			t.Errorf("clickhouse_version %q: %v, want a field error naming it", bad, err)
		}
	}
}
