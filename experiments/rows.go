package experiments

// Rows: packlab's own layouts for a dictionary of several attributes,
// which no ClickHouse layout has. ClickHouse's HASHED and SPARSE_HASHED
// keep a table per attribute, each holding the key again; a row layout
// keeps the key once and every attribute beside it in one cell, with no
// padding between them: packed_row is the packed table (PackedHashMap's
// cells) with the row as its value, compact_row the compact table with
// the row in its slots' value bits.
//
//	packed_row, --attributes UInt16,UInt32,Float64: a cell of 8 + 14 bytes
//
//	byte:  0        8  10   14       22
//	      +--------+--+----+--------+
//	      |key     |a1|a2  |a3      |   one cell; 2^k of them, as packed
//	      +--------+--+----+--------+
//
// The row is carried in the narrowest value type that holds it (a U128
// for 9 to 16 bytes) and a cell keeps only the row's bytes
// (core.Options.ValueBytes), so rows are at most 16 bytes so far. The
// lab's rows are the row's bytes drawn from the key (the synthetic
// source's values, cut to the row): what a cell holds of each attribute
// does not change its memory or speed.

import (
	"fmt"
	"strings"

	"github.com/packlab/packlab/core"
)

// rowSuffix names a row layout after its table: packed_row, compact_row.
const rowSuffix = "_row"

// maxRowBytes is the widest row a cell takes: a U128's.
const maxRowBytes = 16

// rowTables are the tables a row layout may be.
var rowTables = []core.Layout{core.LayoutPacked, core.LayoutCompact}

// RowLayoutNames is what --layout takes for a row layout.
func RowLayoutNames() []string {
	names := make([]string, len(rowTables))
	for i, l := range rowTables {
		names[i] = string(l) + rowSuffix
	}
	return names
}

// parseRowLayout finds the table of a row layout's name.
func parseRowLayout(name string) (core.Layout, bool) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	for _, l := range rowTables {
		if n == string(l)+rowSuffix {
			return l, true
		}
	}
	return "", false
}

// rowType is the value type of a row of attrs: their bytes summed,
// aligned to nothing, named as ClickHouse names a row of types.
func rowType(attrs []attribute) core.Type {
	names := make([]string, len(attrs))
	size := 0
	for i, a := range attrs {
		names[i], size = a.Name, size+a.Size
	}
	return core.RowType("Tuple("+strings.Join(names, ", ")+")", size)
}

// checkRow refuses attributes a row layout cannot hold: a String (its
// arena is ClickHouse's, not modelled for rows), a row wider than a cell's
// value, or a file's values (one column is read so far).
func (c Config) checkRow(name string, attrs []attribute) error {
	list := strings.Join(c.Attributes, ",")
	size := 0
	for _, a := range attrs {
		if a.isString() || a.Nullable {
			return fieldErr("--attributes", list, name+" holds fixed-size attributes (a String's arena and a Nullable's nulls are modelled for ClickHouse's layouts only, so far)", "fixed-size types with "+name)
		}
		size += a.Size
	}
	if size > maxRowBytes {
		return fieldErr("--attributes", list, fmt.Sprintf("a row of %d bytes; %s holds rows of at most %d bytes so far", size, name, maxRowBytes),
			"attributes of 16 bytes or less in all, e.g. UInt16,UInt32,Float64 (14)")
	}
	if c.Source != "" {
		return fieldErr("--layout", name, "rows are drawn from the keys: a file's attributes are not read yet", "--keys, or a layout of one value for --source")
	}
	return nil
}

// at is p for a run of layout l: for a row layout, the row as its value.
func (p parsedConfig) at(l layoutChoice) parsedConfig {
	if l.row {
		p.value, p.row = rowType(p.attrs), true
	}
	return p
}

// options are the tables' options; a row's cells keep only its bytes.
func (p parsedConfig) options() core.Options {
	o := p.Config.options()
	if p.row {
		o.ValueBytes = p.value.Size
	}
	return o
}

// layoutName is the name a result of core's layout l takes: a row
// layout's, when this is a row's run.
func (p parsedConfig) layoutName(l core.Layout) string {
	if p.row {
		return string(l) + rowSuffix
	}
	return string(l)
}

// rowCandidates are the plan's row layouts for a dictionary of several
// fixed-size attributes whose row fits a cell: packed_row and compact_row
// at each shard count and distinct geometry, their tables grown (not
// reserved, unless --preallocate) as packlab's are. No ClickHouse layout
// builds them, and their speeds are not measured yet, so they carry none.
func rowCandidates(p parsedPlan, sc Scaling, threads int) ([]Candidate, error) {
	if len(p.attrs) < 2 || (Config{Attributes: attributesList(p.attrs)}).checkRow("", p.attrs) != nil {
		return nil, nil
	}
	row := rowType(p.attrs)
	var out []Candidate
	for _, l := range rowTables {
		for _, shards := range planShards {
			var lastBuckets int64 = -1
			for _, mlf := range planLoadFactors() {
				opt := p.options(mlf)
				opt.ValueBytes = row.Size
				pr, err := core.Predict(l, p.key, row, p.distinct, opt, shards)
				if err != nil {
					return nil, fmt.Errorf("%s%s: %w", l, rowSuffix, err)
				}
				if pr.BucketCount == lastBuckets {
					continue
				}
				lastBuckets = pr.BucketCount
				rp := p
				rp.value = row
				c := candidate(rp, l, mlf, shards, pr, Measure{}, sc, threads)
				c.Layout = string(l) + rowSuffix
				c.ClickHouseLayout, c.ClickHouseNote, c.PacklabOnly, c.ClickHouse = "", "packlab's own: no ClickHouse layout keeps a row", true, nil
				c.followsMLF = true
				out = append(out, c)
			}
		}
	}
	return out, nil
}
