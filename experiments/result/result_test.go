package result

import "testing"

// TestIsReference: a run's layout is a reference map when it is neither
// packlab's own nor ClickHouse's, whatever case the name was typed in.
func TestIsReference(t *testing.T) {
	for layout, want := range map[string]bool{
		"boost_flat": true, "Boost-Flat": true, "absl_flat": true,
		"packed": false, "compact": false, "gomap": false, "packed_row": false, "compact_row": false,
		"ch_hashed": false, "ch_sparse_hashed": false, "": false,
	} {
		if got := IsReference(layout); got != want {
			t.Errorf("IsReference(%q) = %v, want %v", layout, got, want)
		}
		if got := (Result{Layout: layout}).IsReference(); got != want {
			t.Errorf("Result{Layout: %q}.IsReference() = %v, want %v", layout, got, want)
		}
	}
	if !(Result{Layout: "packed", Reference: "boost::unordered_flat_map"}).IsReference() {
		t.Error("a result naming its library is a reference's")
	}
}

func TestCombine(t *testing.T) {
	reps := []Result{
		{Layout: "hashed", Rows: 1000, LoadSeconds: 3, LoadKernelSeconds: 0.5, ReadSeconds: 1, ReadRowsPerSecond: 1000, RSSBytes: 1},
		{Layout: "hashed", Rows: 1000, LoadSeconds: 1, LoadKernelSeconds: 0.1, ReadSeconds: 4, ReadRowsPerSecond: 250, RSSBytes: 2},
		{Layout: "hashed", Rows: 1000, LoadSeconds: 2, LoadKernelSeconds: 0.3, ReadSeconds: 2, ReadRowsPerSecond: 500, RSSBytes: 3},
	}
	r := Combine(reps)
	if r.LoadSeconds != 2 || r.ReadSeconds != 2 || r.LoadRowsPerSecond != 500 || r.ReadRowsPerSecond != 500 || r.RSSBytes != 3 || r.Repeats != 3 || r.LoadKernelSeconds != 0.3 {
		t.Errorf("combined %+v: want medians 2 s and 2 s, 500 rows/s each, kernel 0.3 s, memory of the last, repeats 3", r)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median of 4 = %v, want 2.5", m)
	}
}
