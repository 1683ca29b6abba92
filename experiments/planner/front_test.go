package planner

import (
	"strings"
	"testing"
)

func timedSetup(rank int, layout string, bytes int64, load, read float64, fits bool) Candidate {
	return Candidate{Rank: rank, Layout: layout, Shards: 1, CheckedBytes: bytes, LoadSeconds: &load, ReadSeconds: &read, Fits: fits}
}

// TestFront: the front keeps what no other setup beats on memory, load and
// read at once, least memory first; near-equal setups are one point (the
// first by rank); setups over the budget count only when none fits; a
// setup without both speeds is not on it.
func TestFront(t *testing.T) {
	plan := Plan{Candidates: []Candidate{
		timedSetup(1, "compact", 100, 20, 9, true),                 // least memory
		timedSetup(2, "packed", 130, 10, 12, true),                 // faster load
		timedSetup(3, "hashed", 200, 5, 2, true),                   // fastest
		timedSetup(4, "gomap", 300, 11, 3, true),                   // beaten by hashed on all three
		timedSetup(5, "hashed", 201, 5, 2.01, true),                // hashed again within 1 %: one point
		timedSetup(6, "sparse", 50, 1, 1, false),                   // over the budget
		{Rank: 7, Layout: "iceberg", CheckedBytes: 10, Fits: true}, // no speeds
	}}
	var got []string
	for _, c := range plan.Front() {
		got = append(got, c.Layout)
	}
	if strings.Join(got, ",") != "compact,packed,hashed" {
		t.Errorf("the front: %v, want compact, packed, hashed", got)
	}
	lines := plan.FrontLines()
	if len(lines) != 3 || !strings.Contains(lines[1], "30 % more memory than compact SHARDS 1 for a load 2x faster and a read 1.33x slower") {
		t.Errorf("the front's lines: %q", lines)
	}

	for i := range plan.Candidates {
		plan.Candidates[i].Fits = false
	}
	if f := plan.Front(); len(f) != 1 || f[0].Layout != "sparse" {
		t.Errorf("nothing fits: the front %v, want sparse alone (it beats every other setup)", f)
	}
	if f := (Plan{Candidates: plan.Candidates[6:]}).Front(); len(f) != 0 {
		t.Errorf("no speeds: the front %v, want none", f)
	}
}
