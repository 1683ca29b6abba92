package experiments

// A file's attributes in ClickHouse's layouts: a TSV or CSV source whose
// columns after the key and the value are the dictionary's other
// attributes, as a user's dictionary source file has them.
//
//	id	price	country	name          --source users.tsv
//	1	100	FR	Ana           --attributes price:UInt16,country:String,name:String
//	2	250	DE	Bo            (or --columns 3,4 by position)
//
// Each attribute after the first is read from its column: --columns gives
// them (positions or header names), else an attribute's name finds its
// column in the header, else columns 3, 4, ... are taken in order (after
// the key's and the value's default columns); --columns none draws them from the key as for generated keys.
// Every cell is checked against its attribute's type as the file is read
// through before any run (core's CheckCell: a bad cell names the file,
// line and column; --skip-bad-rows skips its row as any bad row).
//
// ClickHouse is then given the rows the lab parsed, not the file: before
// its worker starts, the lab reads the file once more and writes the
// dictionary's source itself in RowBinary (writeFileAttributes): the key
// as the dictionary keeps it (a simple key as UInt64), the value, and each
// attribute's cell in its type (a String as a varint length and its
// bytes). The same parser feeds the worker its key and value, so the
// dictionary holds exactly the file's rows and the lab's checksum of them
// still holds. A Nullable attribute's NULL is \N, as ClickHouse writes
// one in TSV and CSV. The model takes the file's own String lengths and
// NULLs (counted as the file is read through) over the generated ones.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
)

// columnsNone is --columns' word for attributes drawn from the key.
const columnsNone = "none"

// fileColumns sets spec's Columns and CheckCell for a file of several
// attributes: the file's column of each after the first.
func (c Config) fileColumns(spec *source.Spec) error {
	attrs, err := c.attributes()
	if err != nil || len(attrs) < 2 {
		if len(c.Columns) > 0 {
			return &FieldError{Field: "columns", Value: strings.Join(c.Columns, ","), Problem: "applies to a file's attributes after the value",
				Allowed: "with {attributes} of two or more"}
		}
		return nil
	}
	if len(c.Columns) == 1 && strings.EqualFold(strings.TrimSpace(c.Columns[0]), columnsNone) {
		return nil
	}
	list := strings.Join(c.Columns, ",")
	if len(c.Columns) > 0 && len(c.Columns) != len(attrs)-1 {
		return NewFieldError("columns", list, fmt.Sprintf("%d columns for %d attributes after the value", len(c.Columns), len(attrs)-1),
			"one column for each attribute after the first, e.g. {columns} 3,4, or none")
	}
	if kind, stream := source.IsStream(c.Source); stream {
		why := "a file's attributes are read twice (the check of every cell and its Strings' lengths, then the load)"
		if slices.ContainsFunc(c.Layouts, func(l string) bool { return strings.HasPrefix(strings.ToLower(strings.TrimSpace(l)), "ch_") }) {
			why = "a file's attributes are read twice (the check, then ClickHouse's source)"
		}
		return NewFieldError("source", c.Source, kind+": "+why, "a regular file, or {columns} none")
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
		if a := attrs[i]; a.Nullable && string(text) == dict.NullText {
			return nil
		}
		if a := attrs[i]; !a.IsString() {
			_, _, err := source.ParseValue(a.Type, string(text))
			return err
		}
		return nil
	}
}

// withFile is p with what its file's attribute columns hold (st) in the
// model.
func (p parsedConfig) withFile(st fileStats) parsedConfig {
	if p.fileAttributes() && len(st.cellBytes) == len(p.attrs)-1 {
		p.attrs = withFileColumns(p.attrs, st)
	}
	return p
}

// fileAttributes reports whether p's attributes after the first come from
// its file's columns.
func (p parsedConfig) fileAttributes() bool { return len(p.spec.Columns) > 0 }

// appendCell appends a's cell text in RowBinary: a Nullable's flag (1 for
// NULL, then nothing), a String as its length (a varint) and bytes,
// another type as its bits in its size, little endian, as the lab sends a
// value.
func appendCell(dst []byte, a dict.Attribute, text []byte) []byte {
	if a.Nullable {
		if string(text) == dict.NullText {
			return append(dst, 1)
		}
		dst = append(dst, 0)
	}
	if a.IsString() {
		return append(binary.AppendUvarint(dst, uint64(len(text))), text...)
	}
	lo, hi, _ := source.ParseValue(a.Type, string(text)) // checked by CheckCell as the source read it
	return appendBits(dst, lo, hi, a.Size)
}

// appendBits appends the low size bytes of (lo, hi), little endian.
func appendBits(dst []byte, lo, hi uint64, size int) []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], lo)
	binary.LittleEndian.PutUint64(b[8:], hi)
	return append(dst, b[:size]...)
}

// fileStats is what a pass over a file counted: its rows, and the bytes
// and the NULLs (\N) of each of its attribute columns in all.
type fileStats struct {
	rows      int64
	cellBytes []int64 // by attribute after the first
	nulls     []int64
}

// bytes is the attribute cells' bytes counted so far.
func (st *fileStats) bytes() int64 {
	var b int64
	for _, c := range st.cellBytes {
		b += c
	}
	return b
}

// newFileStats counts a source with columns attribute columns.
func newFileStats(columns int) fileStats {
	return fileStats{cellBytes: make([]int64, columns), nulls: make([]int64, columns)}
}

// count adds a block of n rows, with their cells when the source has
// attribute columns.
func (st *fileStats) count(n int, cells core.CellSource) {
	st.rows += int64(n)
	for i := 0; cells != nil && i < n; i++ {
		for j := range st.cellBytes {
			c := cells.Cell(i, j)
			st.cellBytes[j] += int64(len(c))
			if string(c) == dict.NullText {
				st.nulls[j]++
			}
		}
	}
}

// withFileColumns is attrs with what the file's columns hold (st): a
// String's mean length, a Nullable's share of NULLs, for the model.
func withFileColumns(attrs []dict.Attribute, st fileStats) []dict.Attribute {
	out := slices.Clone(attrs)
	if st.rows <= 0 {
		return out
	}
	for i := range out[1:] {
		a := &out[i+1]
		nulls := int64(0)
		if a.Nullable {
			nulls = st.nulls[i]
		}
		values := st.rows - nulls
		a.File = &dict.FileColumn{NullShare: float64(nulls) / float64(st.rows)}
		if a.IsString() && values > 0 {
			a.File.MeanLen = float64(st.cellBytes[i]-nulls*int64(len(dict.NullText))) / float64(values)
		}
	}
	return out
}

// writeFileAttributes writes path, the dictionary's source in RowBinary
// (key as the dictionary keeps it: dictKeyBytes of its bits; value;
// attributes), from p's file.
func (typed[K, V]) writeFileAttributes(ctx context.Context, p parsedConfig, dictKeyBytes int, path string, progress func(Progress)) (st fileStats, err error) {
	src, err := openSourceOf[K, V](ctx, p)
	if err != nil {
		return st, err
	}
	defer src.Close()
	cells, ok := src.(core.CellSource)
	if !ok {
		return st, fmt.Errorf("the source %s reads no attribute columns", p.spec)
	}
	f, err := os.Create(path)
	if err != nil {
		return st, fmt.Errorf("writing ClickHouse's source: %s", source.PathErrorReason(err))
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing ClickHouse's source: %s", source.PathErrorReason(cerr))
		}
	}()
	attrs := p.attrs[1:]
	st = newFileStats(len(attrs))
	var b core.Block[K, V]
	var buf []byte
	start, last := time.Now(), time.Now()
	blockRows := firstBlockRows(cells)
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if now := time.Now(); progress != nil && now.Sub(last) >= countProgressEvery {
			last = now // the file read again, for ClickHouse's source: as long as the count
			progress(Progress{Phase: PhaseCount, Rows: st.rows, TotalRows: -1, Seconds: now.Sub(start).Seconds()})
		}
		before := st.bytes()
		if err := src.Next(&b, blockRows); err != nil {
			if errors.Is(err, io.EOF) {
				return st, nil
			}
			return st, err
		}
		buf = buf[:0]
		for i := range b.Len() {
			klo, khi := core.ToUint64(b.Keys[i])
			vlo, vhi := core.ToUint64(b.Values[i])
			buf = appendBits(buf, klo, khi, dictKeyBytes)
			buf = appendBits(buf, vlo, vhi, p.value.Size)
			for j, a := range attrs {
				buf = appendCell(buf, a, cells.Cell(i, j))
			}
		}
		st.count(b.Len(), cells)
		blockRows = nextBlockRows(blockRows, b.Len(), st.bytes()-before)
		if _, err := f.Write(buf); err != nil {
			return st, fmt.Errorf("writing ClickHouse's source: %s", source.PathErrorReason(err))
		}
	}
}
