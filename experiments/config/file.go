package config

// A file's attributes: a TSV or CSV source whose columns after the key and
// the value are the dictionary's other attributes, as a user's dictionary
// source file has them (the picture and how ClickHouse is given them:
// package experiments/worker's source_file.go). Each attribute after the
// first is read from its column: Columns gives them (positions or header
// names), else an attribute's name finds its column in the header, else
// columns 3, 4, ... are taken in order (after the key's and the value's
// default columns); Columns none draws them from the key as for generated
// keys. Every cell is checked against its attribute's type as the file is
// read through before any run (core's CheckCell: a bad cell names the
// file, line and column; SkipBadRows skips its row as any bad row), and
// the pass counts what the columns hold (FileStats), which the model takes
// over the generated lengths and NULLs (WithFile).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/text"
)

// columnsNone is --columns' word for attributes drawn from the key.
const columnsNone = "none"

// FileColumnsAllowed is what Columns allows, for a face's error of the list
// it splits (SplitList) and for Validate's.
const FileColumnsAllowed = "one column for each attribute after the first (a position or a header name), e.g. {columns} 3,4, or none"

// fileColumns sets spec's Columns and CheckCell for a file of several
// attributes (attrs, resolved; nil when they are not valid): the file's
// column of each after the first.
func (c Config) fileColumns(spec *source.Spec, attrs []dict.Attribute) error {
	if len(attrs) < 2 {
		if len(c.Columns) > 0 {
			return &fault.FieldError{Field: "columns", Value: strings.Join(c.Columns, ","), Problem: "applies to a file's attributes after the value",
				Allowed: "with {attributes} of two or more"}
		}
		return nil
	}
	if len(c.Columns) == 1 && strings.EqualFold(strings.TrimSpace(c.Columns[0]), columnsNone) {
		return nil
	}
	list := strings.Join(c.Columns, ",")
	if len(c.Columns) > 0 && len(c.Columns) != len(attrs)-1 {
		return fault.New("columns", list, text.Count(len(c.Columns), "column", "columns")+" for "+text.Count(len(attrs)-1, "attribute", "attributes")+" after the value",
			FileColumnsAllowed)
	}
	if kind, stream := source.IsStream(c.Source); stream {
		why := "a file's attributes are read twice (the check of every cell and its Strings' lengths, then the load)"
		if slices.ContainsFunc(c.Layouts, func(l string) bool { return strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), "ch_") }) {
			why = "a file's attributes are read twice (the check, then ClickHouse's source)"
		}
		return fault.New("source", c.Source, kind+": "+why, "a regular file, or {columns} none")
	}
	spec.Columns = c.Columns
	if len(spec.Columns) == 0 {
		// By position; with a header line a named attribute's is the
		// column its name heads (source.Spec's Names, givenAttributeNames).
		for i := range attrs[1:] {
			spec.Columns = append(spec.Columns, strconv.Itoa(i+3))
		}
	}
	spec.CheckCell = checkCell(attrs[1:])
	return nil
}

// attributeNames sets spec's Names and ByDefault: the names --attributes
// gives the value and each attribute read from a column ("" where it
// gives none), and whether that column's position is only the default, so
// that a file with a header line loads each from the column its name
// heads, and refuses one given whose header names another.
func (c Config) attributeNames(spec *source.Spec) {
	var names []string
	for i, a := range c.Attributes {
		if i > len(spec.Columns) {
			break
		}
		name, _ := SplitAttribute(a)
		names = append(names, name)
	}
	if !slices.ContainsFunc(names, func(n string) bool { return n != "" }) {
		return
	}
	spec.Names = names
	spec.ByDefault = []bool{strings.TrimSpace(c.ValueColumn) == ""}
	for range spec.Columns {
		spec.ByDefault = append(spec.ByDefault, len(c.Columns) == 0)
	}
}

// checkCell is core's CheckCell for attrs: a fixed-size attribute's cell
// must parse as its type; a String takes any text; a Nullable's \N is
// NULL.
func checkCell(attrs []dict.Attribute) func(i int, text []byte) error {
	return func(i int, text []byte) error {
		if a := attrs[i]; a.Nullable && string(text) == source.NullText {
			return nil
		}
		if a := attrs[i]; !a.IsString() {
			_, _, err := source.ParseValue(a.Type, string(text))
			return err
		}
		if string(text) == source.NullText {
			// ClickHouse would load the default ('') in its place
			// (input_format_null_as_default): a NULL loaded as its two
			// characters, or silently as '', is not what the file says.
			return fmt.Errorf(`\N is NULL, and String is not Nullable (allowed: any other text, or the attribute as Nullable(String))`)
		}
		return nil
	}
}

// WithFile is r with what its file's attribute columns hold (st) in the
// model.
func (r Run) WithFile(st FileStats) Run {
	if len(r.Spec.Columns) > 0 && len(st.CellBytes) == len(r.Attrs)-1 {
		r.Attrs = WithFileColumns(r.Attrs, st)
	}
	return r
}

// FileStats is what a pass over a file counted: its rows, and the bytes
// and the NULLs (\N) of each of its attribute columns in all.
type FileStats struct {
	Rows      int64
	CellBytes []int64 // by attribute after the first
	Nulls     []int64
}

// Bytes is the attribute cells' bytes counted so far.
func (st *FileStats) Bytes() int64 {
	var b int64
	for _, c := range st.CellBytes {
		b += c
	}
	return b
}

// NewFileStats counts a source with columns attribute columns.
func NewFileStats(columns int) FileStats {
	return FileStats{CellBytes: make([]int64, columns), Nulls: make([]int64, columns)}
}

// Count adds a block of n rows, with their cells when the source has
// attribute columns.
func (st *FileStats) Count(n int, cells core.CellSource) {
	st.Rows += int64(n)
	for i := 0; cells != nil && i < n; i++ {
		for j := range st.CellBytes {
			c := cells.Cell(i, j)
			st.CellBytes[j] += int64(len(c))
			if string(c) == source.NullText {
				st.Nulls[j]++
			}
		}
	}
}

// WithFileColumns is attrs with what the file's columns hold (st): a
// String's mean length, a Nullable's share of NULLs, for the model.
func WithFileColumns(attrs []dict.Attribute, st FileStats) []dict.Attribute {
	out := slices.Clone(attrs)
	if st.Rows <= 0 {
		return out
	}
	for i := range out[1:] {
		a := &out[i+1]
		nulls := int64(0)
		if a.Nullable {
			nulls = st.Nulls[i]
		}
		values := st.Rows - nulls
		a.File = &dict.FileColumn{NullShare: float64(nulls) / float64(st.Rows)}
		if a.IsString() && values > 0 {
			a.File.MeanLen = float64(st.CellBytes[i]-nulls*int64(len(source.NullText))) / float64(values)
		}
	}
	return out
}

// FirstBlockRows is a pass's first block: core's, or a small one when the
// file has attribute cells, whose size is not known yet.
func FirstBlockRows(cells core.CellSource) int {
	if cells == nil {
		return core.DefaultBlockRows
	}
	return dict.FirstCellBlockRows
}

// NextBlockRows is the next block's rows after one of n rows whose cells
// took cellBytes (dict.CellBlockRows).
func NextBlockRows(rows, n int, cellBytes int64) int {
	return dict.CellBlockRows(rows, n, cellBytes, core.DefaultBlockRows)
}
