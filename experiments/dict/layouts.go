package dict

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// The table of layouts: every layout the lab runs, whose it is, what
// ClickHouse calls it (per release where that changed) and one line of what
// it is. The window, the page, the command line's help, the report and the
// plan all render it; nothing else describes a layout.
//
// It lives here, not in core: core's tables are faithful to ClickHouse's but
// need not know its release history, and the lab's other layouts (the row
// layouts, the C++ maps, ClickHouse's own dictionaries) are the lab's, which
// core does not know. This package is what the lab knows of a dictionary
// before it runs one; the names of its layouts are the first of it.

// Family is whose a layout is.
type Family string

const (
	FamilyPacklab    Family = "packlab"       // core's tables and the row layouts
	FamilyReference  Family = "C++ reference" // the C++ maps measured beside them (references.go)
	FamilyClickHouse Family = "ClickHouse"    // ClickHouse's own dictionaries, run in ClickHouse (clickhouse.go)
)

// Layout is one row of the table of layouts.
type Layout struct {
	Name   string `json:"name"` // as a configuration's layouts name it: packed, packed_row, boost_flat, ch_hashed
	Family Family `json:"family"`
	// Table is packlab's table of the same shape: the layout itself, a row
	// layout's table, a ClickHouse dictionary's model; "" for a C++ map
	// and for FLAT.
	Table core.Layout `json:"table,omitempty"`
	// ClickHouse is what ClickHouse calls packlab's table, per release
	// where that changed; empty where no ClickHouse layout builds it.
	ClickHouse []ClickHouseName `json:"clickhouse,omitempty"`
	// Label is the few words shown under the name: ClickHouse's name for
	// it, the C++ type, or whose it is (Caption).
	Label string `json:"label"`
	Doc   string `json:"doc"` // one line: what it is
}

// ClickHouseName is what ClickHouse calls a table in the releases from
// Since up to (not including) Before; a zero bound is no bound.
type ClickHouseName struct {
	Layout    string  `json:"layout"`              // the LAYOUT word: SPARSE_HASHED
	Structure string  `json:"structure,omitempty"` // what it builds, where the word does not say it: PackedHashMap
	Since     Release `json:"since,omitzero"`
	Before    Release `json:"before,omitzero"`
}

// String is "SPARSE_HASHED (PackedHashMap, since 23.5)", "HASHED_ARRAY".
func (n ClickHouseName) String() string {
	var in []string
	if n.Structure != "" {
		in = append(in, n.Structure)
	}
	if !n.Since.IsZero() {
		in = append(in, "since "+n.Since.String())
	}
	if !n.Before.IsZero() {
		in = append(in, "before "+n.Before.String())
	}
	if len(in) == 0 {
		return n.Layout
	}
	return n.Layout + " (" + strings.Join(in, ", ") + ")"
}

// packlabLayouts are core's tables and the row layouts, in the order the
// lab shows them. SPARSE_HASHED has been two tables: google
// sparse_hash_map from 19.15, and PackedHashMap (for a UInt64 key and a
// value of at most 8 bytes, not a UUID) since ClickHouse PR #49380, merged
// between the 23.4 (2023-04-26) and 23.5 (2023-06-08) releases
// (ClickHouse's changelog of 23.5; the source's HashedDictionary.h); a
// wider value stays in sparse_hash_map.
var packlabLayouts = []Layout{
	{Name: "hashed", Table: core.LayoutHashed,
		ClickHouse: []ClickHouseName{{Layout: "HASHED", Structure: "HashMap"}},
		Doc:        "ClickHouse HASHED: open addressing, padded struct{K;V} cells"},
	{Name: "packed", Table: core.LayoutPacked,
		ClickHouse: []ClickHouseName{{Layout: "SPARSE_HASHED", Structure: "PackedHashMap", Since: ReleasePackedHashMap}},
		Doc:        "ClickHouse PackedHashMap: the same table, cells unpadded"},
	{Name: "sparse", Table: core.LayoutSparse,
		ClickHouse: []ClickHouseName{
			{Layout: "SPARSE_HASHED", Structure: "sparse_hash_map", Before: ReleasePackedHashMap},
			{Layout: "SPARSE_HASHED", Structure: "sparse_hash_map", Since: ReleasePackedHashMap}, // for a value PackedHashMap does not take
		},
		Doc: "google sparse_hash_map: 48-bucket groups with a bitmap"},
	{Name: "hashed_array", Table: core.LayoutHashedArray,
		ClickHouse: []ClickHouseName{{Layout: "HASHED_ARRAY"}},
		Doc:        "ClickHouse HASHED_ARRAY: key → row index, values in an array"},
	{Name: "gomap", Table: core.LayoutGoMap, Label: "Go map",
		Doc: "Go's builtin map[K]V (swiss table), the everyday baseline"},
	{Name: "compact", Table: core.LayoutCompact, Label: "no ClickHouse layout (packlab's, ordered probing)",
		Doc: "quotiented slots of a few bytes: only what the home slot does not say, near the information limit"},
	{Name: "iceberg", Table: core.LayoutIceberg, Label: "no ClickHouse layout (packlab's, buckets)",
		Doc: "quotiented slots packed bit to bit into cache-line buckets: a front yard by one hash, a small two-choice back yard"},
	{Name: "packed_row", Table: core.LayoutPacked, Label: "no ClickHouse layout (packlab's, a row in a cell)",
		Doc: "the key once and every attribute beside it in one unpadded cell (packed); a row over 16 bytes in an array beside it, its number in the cell"},
	{Name: "compact_row", Table: core.LayoutCompact, Label: "no ClickHouse layout (packlab's, a row in a slot)",
		Doc: "the key's quotient and every attribute in one compact slot; a row over 16 bytes in an array beside it, its number in the slot"},
}

// Layouts is the table of layouts: packlab's (core's tables, then the row
// layouts), the C++ reference maps, ClickHouse's own dictionaries, in the
// order the lab shows them.
func Layouts() []Layout {
	out := make([]Layout, 0, len(packlabLayouts)+len(referenceMaps)+len(clickHouseDictionaries))
	for _, l := range packlabLayouts {
		l.Family = FamilyPacklab
		if len(l.ClickHouse) > 0 {
			l.Label = l.ClickHouse[0].String()
		}
		out = append(out, l)
	}
	for _, m := range referenceMaps {
		out = append(out, Layout{Name: m.Name, Family: FamilyReference, Label: "C++ " + m.Map, Doc: m.Doc})
	}
	for _, d := range clickHouseDictionaries {
		out = append(out, Layout{Name: d.Name, Family: FamilyClickHouse, Table: d.Model,
			ClickHouse: []ClickHouseName{{Layout: d.Layout}}, Label: "ClickHouse " + d.Layout, Doc: d.Doc})
	}
	return out
}

// LayoutsOf is the table's layouts of one family, in its order.
func LayoutsOf(f Family) []Layout {
	var out []Layout
	for _, l := range Layouts() {
		if l.Family == f {
			out = append(out, l)
		}
	}
	return out
}

// FindLayout finds a layout of the table by name (as core.ParseLayout reads
// names: case and '-' for '_' do not matter).
func FindLayout(name string) (Layout, bool) {
	return findNamed(Layouts(), name, func(l Layout) string { return l.Name })
}

// Names is the layouts' names, comma-separated.
func Names(ls []Layout) string {
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// ClickHouseLayoutName is the LAYOUT word of the ClickHouse dictionary that builds
// core's table l (the same in every release that has it), or "" for a table
// no ClickHouse layout builds (gomap, compact, iceberg).
func ClickHouseLayoutName(l core.Layout) string {
	for _, e := range packlabLayouts {
		if e.Name == string(l) && len(e.ClickHouse) > 0 {
			return e.ClickHouse[0].Layout
		}
	}
	return ""
}

// Structure is the ClickHouse structure core's table l copies, as the
// report names it: HashMap, PackedHashMap, sparse_hash_map, HASHED_ARRAY; ""
// for a table no ClickHouse layout builds.
func Structure(l core.Layout) string {
	for _, e := range packlabLayouts {
		if e.Name == string(l) && len(e.ClickHouse) > 0 {
			if t := e.ClickHouse[0].Structure; t != "" {
				return t
			}
			return e.ClickHouse[0].Layout
		}
	}
	return ""
}

// Release is a ClickHouse release: its year and month, 23.5. The zero
// Release is none.
type Release struct{ Major, Minor int }

// The releases whose changes to the dictionaries' layouts the lab knows,
// from ClickHouse's changelogs and pull requests:
//
//	21.11  HASHED_ARRAY (#30242)
//	23.1   SHARDS and the parallel loader (#40003); PREALLOCATE ignored (#45388)
//	23.5   SPARSE_HASHED builds PackedHashMap for a value of at most 8 bytes
//	       (sparse_hash_map before), and takes MAX_LOAD_FACTOR (#49380)
//	23.12  SHARDS for HASHED_ARRAY (#57544)
//
// The lab runs one release (make chdb: 26.7); a plan may be for another.
var (
	ReleaseHashedArray       = Release{21, 11}
	ReleaseShards            = Release{23, 1}
	ReleasePackedHashMap     = Release{23, 5}
	ReleaseHashedArrayShards = Release{23, 12}
)

// ParseRelease reads a release as ClickHouse's version() answers it
// (26.7.2.1) or as a person writes it (23.5, v23.5-lts): its first two
// numbers.
func ParseRelease(s string) (Release, bool) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "v")
	if i := strings.IndexAny(t, "-_ "); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) < 2 {
		return Release{}, false
	}
	for _, p := range parts[2:] {
		if _, err := strconv.Atoi(p); err != nil {
			return Release{}, false
		}
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return Release{major, minor}, err1 == nil && err2 == nil
}

// IsZero reports whether v is no release.
func (v Release) IsZero() bool { return v == Release{} }

// AtLeast reports whether v is o or later.
func (v Release) AtLeast(o Release) bool {
	return v.Major > o.Major || v.Major == o.Major && v.Minor >= o.Minor
}

func (v Release) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Builds says whether release v builds core's table l for a value of type
// value with shards and mlf, and if not, why, citing the change.
func (v Release) Builds(l core.Layout, value core.Type, shards int, mlf float64) (ok bool, why string) {
	switch {
	case l == core.LayoutHashedArray && !v.AtLeast(ReleaseHashedArray):
		return false, fmt.Sprintf("ClickHouse %s has no HASHED_ARRAY (21.11, #30242)", v)
	case shards > 1 && !v.AtLeast(ReleaseShards):
		return false, fmt.Sprintf("ClickHouse %s has no SHARDS (23.1, #40003)", v)
	case shards > 1 && l == core.LayoutHashedArray && !v.AtLeast(ReleaseHashedArrayShards):
		return false, fmt.Sprintf("ClickHouse %s's HASHED_ARRAY takes no SHARDS (23.12, #57544)", v)
	case mlf != 0 && mlf != core.DefaultMaxLoadFactor && l != core.LayoutHashedArray && !v.AtLeast(ReleasePackedHashMap):
		return false, fmt.Sprintf("ClickHouse %s has no MAX_LOAD_FACTOR (23.5, #49380)", v)
	case l == core.LayoutPacked && !v.AtLeast(ReleasePackedHashMap):
		return false, fmt.Sprintf("ClickHouse %s's SPARSE_HASHED is sparse_hash_map, not PackedHashMap (23.5, #49380): see the sparse setups", v)
	}
	return true, ""
}
