package app

import (
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/result"
)

// TestDriversRegistered: a lab takes the drivers' layouts, and --layout's
// list of names ends with the C++ reference maps', then ClickHouse's.
func TestDriversRegistered(t *testing.T) {
	want := "; C++ reference maps: boost_flat, absl_flat, dense_hash_map, sparse_hash_map, hopscotch; ClickHouse's own: " + dict.Names(dict.LayoutsOf(dict.FamilyClickHouse))
	if got := config.LayoutNames(); !strings.HasSuffix(got, want) {
		t.Errorf("LayoutNames() = %q, want it to end with %q", got, want)
	}
	if !result.IsReference("Boost-Flat") || result.IsReference("ch_hashed") || result.IsReference("packed") {
		t.Error("IsReference: want Boost-Flat a reference map, ch_hashed and packed not")
	}
}
