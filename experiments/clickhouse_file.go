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
// column in the header, else the columns after the value's are taken in
// order; --columns none draws them from the key as for generated keys.
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
// still holds. The model of a String attribute takes the file's mean
// length, counted in that pass.

import (
	"cmp"
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
)

// columnsNone is --columns' word for attributes drawn from the key.
const columnsNone = "none"

// fileColumns sets spec's Columns and CheckCell for a file of several
// attributes: the file's column of each after the first.
func (c Config) fileColumns(spec *core.SourceSpec) error {
	attrs, err := c.attributes()
	if err != nil || len(attrs) < 2 {
		if len(c.Columns) > 0 {
			return &FieldError{Flag: "--columns", Value: strings.Join(c.Columns, ","), Problem: "applies to a file's attributes after the value",
				Allowed: "with --attributes of two or more"}
		}
		return nil
	}
	if len(c.Columns) == 1 && strings.EqualFold(strings.TrimSpace(c.Columns[0]), columnsNone) {
		return nil
	}
	list := strings.Join(c.Columns, ",")
	if len(c.Columns) > 0 && len(c.Columns) != len(attrs)-1 {
		return NewFieldError("--columns", list, fmt.Sprintf("%d columns for %d attributes after the value", len(c.Columns), len(attrs)-1),
			"one column for each attribute after the first, e.g. --columns 3,4, or none")
	}
	if kind, stream := core.IsStream(c.Source); stream {
		return NewFieldError("--source", c.Source, kind+": a file's attributes are read twice (the check, then ClickHouse's source)", "a regular file, or --columns none")
	}
	for i, a := range attrs[1:] {
		if a.Nullable {
			return NewFieldError("--attributes", strings.Join(c.Attributes, ","), "attribute "+strconv.Itoa(i+2)+" is Nullable: a file's NULLs are not modelled yet",
				"fixed-size or String attributes from a file, or --columns none for generated ones")
		}
	}
	spec.Columns = c.Columns
	if len(spec.Columns) == 0 {
		for i := range attrs[1:] {
			name, _ := SplitAttribute(c.Attributes[i+1])
			spec.Columns = append(spec.Columns, cmp.Or(name, strconv.Itoa(i+3)))
		}
	}
	spec.CheckCell = checkCell(attrs[1:])
	return nil
}

// checkCell is core's CheckCell for attrs: a fixed-size attribute's cell
// must parse as its type; a String takes any text.
func checkCell(attrs []Attribute) func(i int, text []byte) error {
	return func(i int, text []byte) error {
		if a := attrs[i]; !a.isString() {
			_, _, err := core.ParseValue(a.Type, string(text))
			return err
		}
		return nil
	}
}

// withFile is p with its file's String lengths (st) in the model.
func (p parsedConfig) withFile(st fileStats) parsedConfig {
	if p.fileAttributes() && len(st.cellBytes) == len(p.attrs)-1 {
		p.attrs = withFileLengths(p.attrs, st)
	}
	return p
}

// fileAttributes reports whether p's attributes after the first come from
// its file's columns.
func (p parsedConfig) fileAttributes() bool { return len(p.spec.Columns) > 0 }

// appendCell appends a's cell text in RowBinary: a String as its length
// (a varint) and bytes, another type as its bits in its size, little
// endian, as the lab sends a value.
func appendCell(dst []byte, a Attribute, text []byte) []byte {
	if a.isString() {
		return append(binary.AppendUvarint(dst, uint64(len(text))), text...)
	}
	lo, hi, _ := core.ParseValue(a.Type, string(text)) // checked by CheckCell as the source read it
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
// of each of its attribute columns in all.
type fileStats struct {
	rows      int64
	cellBytes []int64 // by attribute after the first
}

// count adds a block of n rows, with their cells when the source has
// attribute columns.
func (st *fileStats) count(n int, cells core.CellSource) {
	st.rows += int64(n)
	for i := 0; cells != nil && i < n; i++ {
		for j := range st.cellBytes {
			st.cellBytes[j] += int64(len(cells.Cell(i, j)))
		}
	}
}

// withFileLengths is attrs with each String's mean length the file's
// (stats), for the model of the arena.
func withFileLengths(attrs []Attribute, st fileStats) []Attribute {
	out := slices.Clone(attrs)
	for i := range out[1:] {
		if a := &out[i+1]; a.isString() && st.rows > 0 {
			a.FileMeanLen = float64(st.cellBytes[i]) / float64(st.rows)
			if a.FileMeanLen == 0 {
				a.MinLen, a.MaxLen = 0, 0 // every value empty: nothing in the arena
			}
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
		return st, fmt.Errorf("writing ClickHouse's source: %s", unwrapPathError(err))
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing ClickHouse's source: %s", unwrapPathError(cerr))
		}
	}()
	attrs := p.attrs[1:]
	st.cellBytes = make([]int64, len(attrs))
	var b core.Block[K, V]
	var buf []byte
	start, last := time.Now(), time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if now := time.Now(); progress != nil && now.Sub(last) >= countProgressEvery {
			last = now // the file read again, for ClickHouse's source: as long as the count
			progress(Progress{Phase: PhaseCount, Rows: st.rows, TotalRows: -1, Seconds: now.Sub(start).Seconds()})
		}
		if err := src.Next(&b, core.DefaultBlockRows); err != nil {
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
		if _, err := f.Write(buf); err != nil {
			return st, fmt.Errorf("writing ClickHouse's source: %s", unwrapPathError(err))
		}
	}
}
