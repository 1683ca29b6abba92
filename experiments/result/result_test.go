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
