package worker

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
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
)

// appendCell appends a's cell text in RowBinary: a Nullable's flag (1 for
// NULL, then nothing), a String as its length (a varint) and bytes,
// another type as its bits in its size, little endian, as the lab sends a
// value.
func appendCell(dst []byte, a dict.Attribute, text []byte) []byte {
	if a.Nullable {
		if string(text) == source.NullText {
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

// WriteFileAttributes writes path, ClickHouse's source of a file's
// attributes in RowBinary (the key as the dictionary keeps it: its low
// dictKeyBytes bytes; the value; each attribute's cell in its type), from
// run r's file, and returns what its columns held (their bytes and NULLs).
func WriteFileAttributes(ctx context.Context, r config.Run, dictKeyBytes int, path string, progress func(Progress)) (config.FileStats, error) {
	return opsFor(r.Key, r.Value).writeFileAttributes(ctx, r, dictKeyBytes, path, progress)
}

// writeFileAttributes is WriteFileAttributes of one (key, value) pair.
func (typed[K, V]) writeFileAttributes(ctx context.Context, r config.Run, dictKeyBytes int, path string, progress func(Progress)) (st config.FileStats, err error) {
	src, err := config.Open[K, V](ctx, r)
	if err != nil {
		return st, err
	}
	defer src.Close()
	cells, ok := src.(core.CellSource)
	if !ok {
		return st, fmt.Errorf("the source %s reads no attribute columns", r.Spec)
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
	attrs := r.Attrs[1:]
	st = config.NewFileStats(len(attrs))
	var b core.Block[K, V]
	var buf []byte
	start, last := time.Now(), time.Now()
	blockRows := config.FirstBlockRows(cells)
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		if now := time.Now(); progress != nil && now.Sub(last) >= CountProgressEvery {
			last = now // the file read again, for ClickHouse's source: as long as the count
			progress(Progress{Phase: PhaseCount, Rows: st.Rows, TotalRows: -1, Seconds: now.Sub(start).Seconds()})
		}
		before := st.Bytes()
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
			buf = appendBits(buf, vlo, vhi, r.Value.Size)
			for j, a := range attrs {
				buf = appendCell(buf, a, cells.Cell(i, j))
			}
		}
		st.Count(b.Len(), cells)
		blockRows = config.NextBlockRows(blockRows, b.Len(), st.Bytes()-before)
		if _, err := f.Write(buf); err != nil {
			return st, fmt.Errorf("writing ClickHouse's source: %s", source.PathErrorReason(err))
		}
	}
}
