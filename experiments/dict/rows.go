package dict

import (
	"strings"

	"github.com/packlab/packlab/core"
)

// RowSuffix names a row layout after its table: packed_row, compact_row.
const RowSuffix = "_row"

// MaxRowBytes is the widest row a cell takes: a U128's.
const MaxRowBytes = 16

// RowTables are the tables a row layout may be.
var RowTables = []core.Layout{core.LayoutPacked, core.LayoutCompact}

// RowLayoutNames is what --layout takes for a row layout.
func RowLayoutNames() []string {
	names := make([]string, len(RowTables))
	for i, l := range RowTables {
		names[i] = string(l) + RowSuffix
	}
	return names
}

// ParseRowLayout finds the table of a row layout's name.
func ParseRowLayout(name string) (core.Layout, bool) {
	n := core.LayoutKey(name)
	for _, l := range RowTables {
		if n == string(l)+RowSuffix {
			return l, true
		}
	}
	return "", false
}

// RowType is the value type of a row of attrs: their bytes summed,
// aligned to nothing, named as ClickHouse names a row of types.
func RowType(attrs []Attribute) core.Type {
	names := make([]string, len(attrs))
	size := 0
	nullable := false
	for i, a := range attrs {
		names[i], size = a.Name, size+RowAttrBytes(a)
		if a.Nullable {
			names[i], nullable = "Nullable("+a.Name+")", true
		}
	}
	if nullable { // a byte of null flags, a bit a Nullable attribute
		size++
	}
	return core.RowType("Tuple("+strings.Join(names, ", ")+")", size)
}

// RowStringBytes is a String's part of a row: its reference into the arena.
const RowStringBytes = 8

// RowArenaChunk is the arena's unit of allocation.
const RowArenaChunk = 1 << 20

// RowAttrBytes is what attribute a takes in a row.
func RowAttrBytes(a Attribute) int {
	if a.IsString() {
		return RowStringBytes
	}
	return a.Size
}

// RowArenaBytes is what a row layout's arena allocates for the String
// attributes of n rows: their mean lengths over the rows not NULL, in
// whole chunks.
func RowArenaBytes(attrs []Attribute, n int64) int64 {
	var sum float64
	for _, a := range attrs {
		sum += a.MeanLen() * float64(a.NonNull(n)) // a NULL takes none
	}
	total := int64(sum + 0.5)
	if total == 0 {
		return 0
	}
	return (total + RowArenaChunk - 1) / RowArenaChunk * RowArenaChunk
}

// RowPrediction is core's prediction for a row layout's table of attrs
// (the row as its value, its cells keeping only the row's bytes), and the
// arena of its Strings, which only grows: in the final bytes and the peak.
func RowPrediction(l core.Layout, key core.Type, attrs []Attribute, n int64, opt core.Options, shards int) (core.Prediction, error) {
	row := RowType(attrs)
	opt.ValueBytes = row.Size
	pr, err := core.Predict(l, key, row, n, opt, shards)
	if err != nil {
		return pr, err
	}
	arena := RowArenaBytes(attrs, n)
	pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, arena)
	pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, arena)
	return pr, nil
}
