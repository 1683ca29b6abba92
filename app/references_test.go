package app

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/refdriver"
)

// TestLimitsListReferences: the form lists the C++ reference maps after
// packlab's layouts (whose list is core's), and where the worker is not
// built it marks them unavailable with the command that builds them.
func TestLimitsListReferences(t *testing.T) {
	t.Setenv(refdriver.WorkerEnv, filepath.Join(t.TempDir(), "packlab-refs"))
	l, _ := newLab(t)
	lim, err := l.Limits()
	if err != nil {
		t.Fatal(err)
	}
	var own, refs, chs []string
	for _, ly := range lim.Layouts {
		if ly.ClickHouseOwn {
			chs = append(chs, ly.Name) // after the reference maps, in a group of their own
			if !strings.HasPrefix(ly.ClickHouseLabel, "ClickHouse ") {
				t.Errorf("%s: labelled %q, want ClickHouse's", ly.Name, ly.ClickHouseLabel)
			}
			continue
		}
		if len(chs) > 0 {
			t.Errorf("%s listed after ClickHouse's dictionaries", ly.Name)
		}
		if ly.Reference {
			refs = append(refs, ly.Name)
			if ly.Available || !strings.Contains(ly.Unavailable, "make refs") || !strings.HasPrefix(ly.ClickHouseLabel, "C++ ") || ly.UsesMaxLoadFactor {
				t.Errorf("%s: %+v, want unavailable naming make refs, labelled C++, not using max_load_factor", ly.Name, ly)
			}
			continue
		}
		if len(refs) > 0 {
			t.Errorf("%s listed after the reference maps", ly.Name)
		}
		if !ly.Available {
			t.Errorf("%s: not available", ly.Name)
		}
		own = append(own, ly.Name)
	}
	var wantOwn, wantRefs []string
	for _, ly := range core.Layouts() {
		wantOwn = append(wantOwn, string(ly))
	}
	wantOwn = append(wantOwn, dict.RowLayoutNames()...)
	for _, r := range refdriver.References() {
		wantRefs = append(wantRefs, r.Name)
	}
	var wantCH []string
	for _, d := range dict.ClickHouseDictionaries() {
		wantCH = append(wantCH, d.Name)
	}
	if !slices.Equal(chs, wantCH) {
		t.Errorf("ClickHouse's layouts %v, want %v", chs, wantCH)
	}
	if !slices.Equal(own, wantOwn) || !slices.Equal(refs, wantRefs) {
		t.Errorf("layouts %v then %v, want %v then %v", own, refs, wantOwn, wantRefs)
	}
	if lim.References.Available || !strings.Contains(lim.References.Note, "unavailable") || lim.References.BuildCommand != "make refs" {
		t.Errorf("references %+v", lim.References)
	}
	// A form that asks for one is refused on its layouts field, with why.
	_, err = l.Estimate(small("packed", "boost_flat"))
	apiError(t, err, "layouts", "make refs")
}

// TestRunWithReference: where the worker is built, a run of the lab's own
// API measures a reference map beside a core layout, and the results table
// marks it C++.
func TestRunWithReference(t *testing.T) {
	path := os.Getenv(refdriver.WorkerEnv)
	if path == "" {
		path, _ = filepath.Abs(filepath.Join("..", "bin", refdriver.WorkerName))
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s is not built (run: make refs)", path)
		}
		t.Setenv(refdriver.WorkerEnv, path)
	}
	l, ev := newLab(t)
	lim, err := l.Limits()
	if err != nil || !lim.References.Available {
		t.Fatalf("references with %s: %+v, %v", path, lim.References, err)
	}
	st, err := l.StartRun(small("packed", "hopscotch"))
	if err != nil {
		t.Fatal(err)
	}
	if tab := ev.waitTable(t, l, st.ID, 2); len(tab.Rows) != 2 || !strings.HasPrefix(tab.Rows[1].Cells[0], "hopscotch (C++)") {
		t.Errorf("table rows %q, want the second named hopscotch (C++)", tab.Rows)
	}
}
