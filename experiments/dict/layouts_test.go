package dict

import (
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
)

// TestLayoutsTable: the table of layouts has every layout the lab runs
// once, in the lab's order, each with a label no other shows and a line of
// what it is; what ClickHouse calls core's tables agrees with the
// dictionaries that build them.
func TestLayoutsTable(t *testing.T) {
	var want []string
	for _, l := range core.Layouts() {
		want = append(want, string(l))
	}
	want = append(want, RowLayoutNames()...)
	for _, m := range ReferenceMaps() {
		want = append(want, m.Name)
	}
	for _, d := range ClickHouseDictionaries() {
		want = append(want, d.Name)
	}
	var names []string
	labels := map[string]string{}
	for _, l := range Layouts() {
		names = append(names, l.Name)
		if l.Label == "" || l.Doc == "" || l.Family == "" {
			t.Errorf("%s: label %q, doc %q, family %q", l.Name, l.Label, l.Doc, l.Family)
		}
		if other, ok := labels[l.Label]; ok {
			t.Errorf("%s and %s both show %q", other, l.Name, l.Label)
		}
		labels[l.Label] = l.Name
		if f, ok := FindLayout(strings.ToUpper(l.Name)); !ok || f.Name != l.Name {
			t.Errorf("FindLayout(%q) = %v, %v", strings.ToUpper(l.Name), f.Name, ok)
		}
	}
	if !slices.Equal(names, want) {
		t.Errorf("layouts %v, want %v", names, want)
	}
	if got := Names(LayoutsOf(FamilyReference)); got != "boost_flat, absl_flat, dense_hash_map, sparse_hash_map, hopscotch" {
		t.Errorf("reference maps %q", got)
	}
	for l, label := range map[core.Layout]string{
		core.LayoutHashed:      "HASHED (HashMap)",
		core.LayoutPacked:      "SPARSE_HASHED (PackedHashMap, since 23.5)",
		core.LayoutSparse:      "SPARSE_HASHED (sparse_hash_map, before 23.5)",
		core.LayoutHashedArray: "HASHED_ARRAY",
		core.LayoutGoMap:       "Go map",
	} {
		i := slices.IndexFunc(Layouts(), func(e Layout) bool { return e.Name == string(l) })
		if e := Layouts()[i]; e.Label != label {
			t.Errorf("%s: label %q, want %q", l, e.Label, label)
		}
	}
	for _, l := range core.Layouts() {
		d, ok := ClickHouseDictionaryFor(l)
		if name := ClickHouseLayoutName(l); ok != (name != "") || ok && name != d.Layout {
			t.Errorf("%s: ClickHouseLayoutName %q, dictionary %q (%v)", l, name, d.Layout, ok)
		}
	}
	if s := Structure(core.LayoutHashed) + " " + Structure(core.LayoutHashedArray) + " " + Structure(core.LayoutCompact); s != "HashMap HASHED_ARRAY " {
		t.Errorf("structures %q", s)
	}
}

// TestReleaseBuilds: which release builds which table, at the changes the
// table's comment lists.
func TestReleaseBuilds(t *testing.T) {
	u16 := core.MustType("UInt16")
	for _, c := range []struct {
		v      Release
		l      core.Layout
		shards int
		mlf    float64
		ok     bool
	}{
		{Release{21, 8}, core.LayoutHashedArray, 1, 0, false},
		{Release{21, 11}, core.LayoutHashedArray, 1, 0, true},
		{Release{22, 8}, core.LayoutHashed, 4, 0, false},
		{Release{23, 1}, core.LayoutHashed, 4, 0, true},
		{Release{23, 8}, core.LayoutHashedArray, 4, 0, false},
		{Release{23, 12}, core.LayoutHashedArray, 4, 0, true},
		{Release{23, 3}, core.LayoutHashed, 1, 0.9, false},
		{Release{23, 3}, core.LayoutPacked, 1, 0, false},
		{Release{23, 5}, core.LayoutPacked, 1, 0.9, true},
		{Release{23, 3}, core.LayoutSparse, 1, 0, true},
	} {
		ok, why := c.v.Builds(c.l, u16, c.shards, c.mlf)
		if ok != c.ok || ok != (why == "") || !ok && !strings.Contains(why, "ClickHouse "+c.v.String()) {
			t.Errorf("%v builds %s (shards %d, mlf %v): %v %q", c.v, c.l, c.shards, c.mlf, ok, why)
		}
	}
}

// TestParseRelease: version()'s answer and a person's way of writing a
// release read the same; anything else is not a release.
func TestParseRelease(t *testing.T) {
	for in, want := range map[string]Release{"26.7.2.1": {26, 7}, " 23.5 ": {23, 5}, "v23.5-lts": {23, 5}, "V21.11.3.1_x": {21, 11}} {
		if got, ok := ParseRelease(in); !ok || got != want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "23", "x.5", "23.y", "23.5.x", "23..5"} {
		if got, ok := ParseRelease(in); ok {
			t.Errorf("ParseRelease(%q) = %v, want not a release", in, got)
		}
	}
}
