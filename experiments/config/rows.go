package config

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
// (core.Options.ValueBytes). A wider row (17 bytes and more) lives in a
// row array beside the table, the cell keeping the key and the row's
// number (4 bytes): a row of 28 bytes is a packed cell of 12 bytes and 28
// in the array, so the empty cells of a table at fill 0.5 cost 12 bytes
// each, not 36. A String is an 8-byte reference in the row, its bytes in
// an arena beside the table; a row with Nullables ends in a byte of their
// null flags (experiments/rowstore). The lab's rows are the row's bytes
// drawn from the key (the synthetic source's values, cut to the row;
// hashes of the key for a wide row), or a file's own columns (rowSpec):
// what a cell holds of each attribute does not change its memory or speed,
// a String's length does (the arena).

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
)

// checkRow refuses attributes a row layout cannot hold: more than 8
// Nullables (their flags are a byte).
func (c Config) checkRow(name string, attrs []dict.Attribute) error {
	list := strings.Join(c.Attributes, ",")
	n := 0
	for _, a := range attrs {
		if a.Nullable {
			n++
		}
	}
	if n > 8 {
		return fault.New("attributes", list, fmt.Sprintf("%d Nullable attributes; %s keeps the null flags of at most 8 in a byte", n, name), "at most 8 Nullable attributes with "+name)
	}
	return nil
}

// rowSpec is a row run's source (of attrs): a file's with its attributes in its
// Columns, the value's column first, and no value column (the row is built
// from those cells, experiments/rowstore; the attributes the file does not
// hold, with --columns none, are drawn from the key); any other source as
// it is.
func rowSpec(s source.Spec, attrs []dict.Attribute) source.Spec {
	if s.Kind != source.File || s.NoValueColumn() {
		return s
	}
	s.Columns = append([]string{cmp.Or(strings.TrimSpace(s.ValueColumn), "2")}, s.Columns...)
	s.ValueColumn, s.CheckCell = "none", checkCell(attrs[:len(s.Columns)])
	if s.Names != nil { // the value's column is now the first of Columns
		s.Names = append([]string{""}, s.Names...)
		s.ByDefault = append([]bool{false}, s.ByDefault...)
	}
	return s
}

// CheckRow refuses attributes no row layout holds (checkRow's rules for
// a generated source), for the planner's row setups.
func CheckRow(attrs []dict.Attribute) error {
	return Config{Attributes: dict.AttributesList(attrs)}.checkRow("a row layout", attrs)
}

// FileColumns are the file's columns a row run reads the attributes
// after the value from (rowSpec; Result.AttributeColumns), nil when they
// are drawn from the key.
func (r Run) FileColumns() []string {
	s := r.Spec
	if s.Kind != source.File || !s.NoValueColumn() || len(s.Columns) == 0 {
		return nil
	}
	cols := s.ColumnLabels()[1-r.CellsFrom():]
	if len(cols) == 0 {
		return nil
	}
	return cols
}

// CellsFrom is the first attribute a file row run's cells hold: 0, the
// value's column first (rowSpec), or 1 when the file has no value column
// (value_column none: the value is drawn from the key).
func (r Run) CellsFrom() int {
	if (source.Spec{ValueColumn: r.Config.ValueColumn}).NoValueColumn() {
		return 1
	}
	return 0
}
