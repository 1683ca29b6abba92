//go:build !js

package server

import "testing"

// TestTrackedReloadAgainstMeasured holds the reload model, with no server,
// to MemoryTracking's peaks measured on the test server (6 Dec, ClickHouse
// 26.7, random keys, a String of 4 to 32 bytes (mean 18), the highest of
// three reloads sampled by three connections, MB above the base;
// TestReloadPeaksTracked makes them): within the 10 %.
func TestTrackedReloadAgainstMeasured(t *testing.T) {
	for _, c := range []struct {
		layout   string
		shards   int
		attr     string
		rows     int64
		measured float64
	}{
		{"HASHED", 1, "UInt16", 1e6, 94.0},
		{"HASHED", 1, "String", 1e6, 180.6},
		{"SPARSE_HASHED", 1, "UInt16", 1e6, 56.0},
		{"SPARSE_HASHED", 1, "String", 1e6, 123.5},
		{"HASHED", 4, "UInt16", 1e6, 156.9},
		{"HASHED", 4, "String", 1e6, 296.2},
		{"HASHED_ARRAY", 1, "UInt16", 1e6, 90.6},
		{"HASHED_ARRAY", 1, "String", 1e6, 171.9},
		{"HASHED_ARRAY", 4, "UInt16", 1e6, 158.7},
		{"HASHED_ARRAY", 4, "String", 1e6, 255.1},
		{"HASHED", 1, "UInt16", 1e7, 1351.0},
		{"HASHED", 1, "String", 1e7, 2554.6},
		{"SPARSE_HASHED", 1, "UInt16", 1e7, 841.2},
		{"SPARSE_HASHED", 1, "String", 1e7, 1080.9},
		{"HASHED", 4, "UInt16", 1e7, 1360.2},
		{"HASHED", 4, "String", 1e7, 2613.5},
		{"HASHED_ARRAY", 1, "UInt16", 1e7, 1394.8},
		{"HASHED_ARRAY", 1, "String", 1e7, 2292.7},
		{"HASHED_ARRAY", 4, "UInt16", 1e7, 2501.6},
		{"HASHED_ARRAY", 4, "String", 1e7, 3551.5},
	} {
		d := &Dictionary{ElementCount: c.rows, AttributeNames: []string{"a"}, AttributeTypes: []string{c.attr},
			sample: &sample{MeanLen: map[string]float64{"a": 18}, Nulls: map[string]float64{}}}
		attrs, problem := d.attributes()
		cd, ok := modelledLayout(c.layout)
		if problem != "" || !ok {
			t.Fatalf("%s with a %s: %s", c.layout, c.attr, problem)
		}
		f, problem := d.modelAs(cd, attrs, c.shards, 0)
		if problem != "" {
			t.Fatalf("%s with a %s: %s", c.layout, c.attr, problem)
		}
		if r := mb(f.reloadPeak) / c.measured; r < 0.9 || r > 1.1 {
			t.Errorf("%s(SHARDS %d) with a %s at %.0e rows: the model's reload peak %.1f MB, MemoryTracking's %.1f: %.2fx (allowed 0.9x to 1.1x)",
				c.layout, c.shards, c.attr, float64(c.rows), mb(f.reloadPeak), c.measured, r)
		}
	}
}
