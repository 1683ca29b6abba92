// Package rowstore is a row run's store beside its table: the arena of its
// rows' String bytes, the array of rows wider than a cell, the source that
// fills them as the table loads (Source), the read's copy of the rows it
// finds (CopyRows), and what they add to a result's bytes (Count). The
// engine (experiments) builds one for a row layout's run (New); it needs
// only core, core/source and the model (experiments/dict).
package rowstore

// What a row keeps beside its table: its Strings' bytes in one arena, the
// row holding an 8-byte reference to them (dict.RowStringBytes), so that a
// row of a UInt16 and a String is a cell of key + 10 bytes, whatever the
// String's length; and a row wider than a cell's value (dict.MaxRowBytes)
// in a row array, the cell holding its number (dict.RowCell). A row with
// Nullable attributes ends in a byte of their null flags (bit i for the
// i-th Nullable); a NULL String takes nothing in the arena.
//
//	--attributes UInt16,String,Nullable(UInt32): a row of 2 + 8 + 4 + 1 bytes
//
//	row:    +--+----------------------------------+----+-----+
//	        |a1| String: offset 40 b, length 24 b |a3  |nulls|   in the table's cell
//	        +--+----------------------------------+----+-----+
//	                 |
//	arena:  [chunk 0: 64 KiB][chunk 1: 128 KiB .][...]   one for the table
//	                 ^ the String's bytes, no terminator
//
//	--attributes UInt64,Float64,UInt32,String: a row of 8 + 8 + 4 + 8 bytes
//
//	cell:   +--------+-----+                 (compact: the key's remainder
//	        |key     |row #|                  and the row's number in a slot)
//	        +--------+-----+
//	                    |  4 bytes below 2^32 rows, else 8
//	array:  [chunk 0: 2,340 rows of 28 bytes][chunk 1: 4,681 ...] ... 4 MiB chunks
//	                    ^ the row, its String's reference into the arena
//
// The arena and the row array are each a core.Arena: chunks growing to
// dict.RowArenaChunk outside the Go heap (huge pages, as a table's slab),
// filled in order and never moved, so a String's reference and a row's
// number stay valid as they grow; a piece never straddles two slabs. The lab's
// rows are drawn from their keys as ClickHouse's are (chdriver's attributesSQL): a
// String's length uniformly from its range, its bytes hex digits of a hash
// of the key; a wide row's other bytes hashes of the key too. Both are counted in the result's
// bytes_allocated beside the table's slab. A wide row's read is one more
// cache miss than a narrow one's: the cell, then the row.

import (
	"encoding/binary"
	"unsafe"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
)

// rowArena holds a row layout's String bytes.
type rowArena struct {
	*core.Arena
}

// add makes room for n bytes and returns them and their offset.
func (a rowArena) add(n int) ([]byte, int64, error) {
	off, err := a.Alloc(n)
	if err != nil {
		return nil, 0, err
	}
	return a.At(off, n), off, nil
}

// get is the String a reference names.
func (a rowArena) get(ref uint64) []byte {
	return a.At(int64(ref>>24), refLen(ref))
}

// refLen is the length of the String a reference names: its low 24 bits
// (the rest is its offset in the arena).
func refLen(ref uint64) int { return int(ref & (1<<24 - 1)) }

// rowArray holds a wide row layout's rows in an arena: whole rows in each
// chunk, so row i is in the first chunks (small ones, core.ArenaFirstChunk
// doubling) or in chunk (i - geoRows) / per of dict.RowArenaChunk after them.
type rowArray struct {
	*core.Arena
	width  int
	cell   int     // a row number's bytes in the table's cell: 4 or 8
	per    int64   // rows a chunk of dict.RowArenaChunk
	starts []int64 // the first row of each of the first chunks
	offs   []int64 // their offsets
	rows   int64
	// The rows and bytes of the first chunks.
	geoRows, geoBytes int64
}

// newRowArray is an empty array of rows of width bytes (at most
// core.ArenaFirstChunk), numbered in cells of cell bytes.
func newRowArray(width, cell int) *rowArray {
	a := &rowArray{Arena: core.NewArena(dict.RowArenaChunk), width: width, cell: cell, per: max(dict.RowArenaChunk/int64(width), 1)}
	for j := 0; a.ChunkBytes(j) < dict.RowArenaChunk; j++ {
		a.starts, a.offs = append(a.starts, a.geoRows), append(a.offs, a.geoBytes)
		a.geoRows += a.ChunkBytes(j) / int64(width)
		a.geoBytes += a.ChunkBytes(j)
	}
	return a
}

// add appends a zeroed row and returns its bytes and its number.
func (a *rowArray) add() ([]byte, uint64, error) {
	off, err := a.Alloc(a.width)
	if err != nil {
		return nil, 0, err
	}
	a.rows++
	return a.At(off, a.width), uint64(a.rows - 1), nil
}

// row is row number i.
func (a *rowArray) row(i uint64) []byte {
	n, w := int64(i), int64(a.width)
	if n >= a.geoRows {
		n -= a.geoRows
		return a.At(a.geoBytes+n/a.per*dict.RowArenaChunk+n%a.per*w, a.width)
	}
	j := len(a.starts) - 1
	for a.starts[j] > n {
		j--
	}
	return a.At(a.offs[j]+(n-a.starts[j])*w, a.width)
}

// rowString is where a String attribute sits in the row and how its
// values are drawn.
type rowString struct {
	at       int    // its reference's first byte in the row
	min, max int    // its lengths
	salt     uint64 // its attribute's number
	null     byte   // its flag in the row's null byte, 0 if not Nullable
}

// Store is what a row run keeps beyond the source's bits: each
// String's reference in the row and its bytes in the arena the load
// fills, the byte of null flags of a row with Nullables (a Nullable is
// NULL in one row of dict.NullEvery, by a hash of the key), and a wide
// row's array.
type Store struct {
	strs    []rowString
	nulls   []uint64 // the Nullables' attribute numbers, bit i of the flags for nulls[i]
	flagsAt int      // the flags' byte in the row
	arena   rowArena
	wide    *rowArray // nil when the row is the cell's value
	// A file's rows: attributes from..from+cells-1 are the source's cells
	// (the engine's rowSpec: from 0, the value's column first; from 1 when
	// the file has no value column), at their offsets in the row; the
	// others are drawn from the key.
	attrs       []dict.Attribute
	at          []int
	from, cells int
}

// cell is attribute ai's column among the source's cells, or -1.
func (rs *Store) cell(ai int) int {
	if ai < rs.from || ai >= rs.from+rs.cells {
		return -1
	}
	return ai - rs.from
}

// Close releases the arena and the row array; nothing when rs is nil.
func (rs *Store) Close() {
	if rs == nil {
		return
	}
	rs.arena.Close()
	if rs.wide != nil {
		rs.wide.Close()
	}
}

// New is the store of a row run of attrs whose table's cell holds a value
// of valueBytes bytes; fileCells of the attributes, from the cellsFrom-th
// on, are a file's cells the source reads (0 when none are). It is nil
// when the row has no Strings, no Nullables and fits in the cell, and no
// attribute comes from the file.
func New(attrs []dict.Attribute, valueBytes, fileCells, cellsFrom int) *Store {
	rs := Store{arena: rowArena{core.NewArena(dict.RowArenaChunk)}, attrs: attrs, cells: fileCells, from: cellsFrom}
	at := 0
	for i, a := range attrs {
		rs.at = append(rs.at, at)
		var flag byte
		if a.Nullable {
			flag = 1 << len(rs.nulls)
			rs.nulls = append(rs.nulls, uint64(i))
		}
		if a.IsString() {
			rs.strs = append(rs.strs, rowString{at: at, min: a.MinLen, max: a.MaxLen, salt: uint64(i), null: flag})
		}
		at += dict.RowAttrBytes(a)
	}
	rs.flagsAt = at
	if row := dict.RowType(attrs); row.Size != valueBytes {
		rs.wide = newRowArray(row.Size, valueBytes)
	}
	if len(rs.strs) == 0 && len(rs.nulls) == 0 && rs.wide == nil && rs.cells == 0 {
		rs.arena.Close()
		return nil
	}
	return &rs
}

// Bytes is what a row store adds to a result's byte figures (its
// BytesAllocated, PayloadBytes, EmptyBytes and MetadataBytes).
type Bytes struct{ Allocated, Payload, Empty, Metadata int64 }

// Count is what rs's arena and row array add to the bytes of a run whose
// table m holds elements rows, duplicates of the source's rows having
// repeated a key: the Strings and rows the table keeps are payload
// (keptRowBytes), the rest of their chunks empty, and a wide row's number
// in the cell metadata rather than payload. Nothing when rs is nil.
func Count[K, V core.Bits](rs *Store, m *core.Sharded[K, V], duplicates, elements int64) Bytes {
	var b Bytes
	if rs == nil {
		return b
	}
	kept := keptRowBytes(rs, m, duplicates)
	for _, a := range []*core.Arena{rs.arena.Arena, rs.wideArena()} {
		if a != nil {
			b.Allocated += a.Size()
			b.Empty += a.Size()
		}
	}
	b.Payload += kept.strings + kept.rows
	b.Empty -= kept.strings + kept.rows
	if a := rs.wide; a != nil {
		numbers := elements * int64(a.cell)
		b.Payload -= numbers
		b.Metadata += numbers
	}
	return b
}

// rowBytesKept is the bytes of the arena's Strings and of the row array's
// rows that the table's rows hold.
type rowBytesKept struct{ strings, rows int64 }

// keptRowBytes is what of rs's arena and row array m's rows hold. Every
// piece is a kept row's unless the source repeated a key: the row store
// draws a row as the source yields it, and the table keeps the first of a
// key's rows (core.Map.Insert), so a repeated key's String bytes and wide
// row are left behind in their chunks; then the rows are walked to count
// what they hold.
func keptRowBytes[K, V core.Bits](rs *Store, m *core.Sharded[K, V], duplicates int64) rowBytesKept {
	if rs == nil {
		return rowBytesKept{}
	}
	var k rowBytesKept
	if rs.wide != nil {
		k.rows = rs.wide.Len()
	}
	if duplicates == 0 {
		k.strings = rs.arena.Len()
		return k
	}
	for _, v := range m.All() {
		row := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
		if a := rs.wide; a != nil {
			n, _ := core.ToUint64(v)
			row = a.row(n)
		}
		for _, st := range rs.strs {
			if ref, ok := rs.stringRef(row, st); ok {
				k.strings += int64(refLen(ref))
			}
		}
	}
	if rs.wide != nil {
		k.rows = int64(m.Len()) * int64(rs.wide.width)
	}
	return k
}

// wideArena is the row array's arena, nil without one.
func (rs *Store) wideArena() *core.Arena {
	if rs.wide == nil {
		return nil
	}
	return rs.wide.Arena
}

// Source is src with each row's Strings put in rs's arena and their
// references written into the row, and a wide row put in rs's array, its
// number in the value; src itself when rs is nil. It is an IndexedSource
// when src is (the read order needs only the keys).
func Source[K, V core.Bits](src core.Source[K, V], rs *Store) core.Source[K, V] {
	if rs == nil {
		return src
	}
	s := &storeSource[K, V]{Source: src, rs: rs}
	if ix, ok := src.(core.IndexedSource[K, V]); ok {
		return indexedSource[K, V]{s, ix}
	}
	return s
}

// storeSource is Source's source.
// With a file's cells it reads blocks of at most dict.CellBlockBytes of
// them (dict.CellBlockRows), however many rows the load asks for: a block
// of 65,536 rows of 2-6 KB Strings held about 1 GB in the worker beside a
// table and arena of 396 MiB.
type storeSource[K, V core.Bits] struct {
	core.Source[K, V]
	rs    *Store
	limit int // rows the next block may have, 0 for no limit
}

func (s *storeSource[K, V]) Next(b *core.Block[K, V], most int) error {
	cells, _ := s.Source.(core.CellSource)
	ask := most
	if cells != nil && s.rs.cells > 0 {
		if s.limit == 0 {
			s.limit = dict.FirstCellBlockRows
		}
		ask = min(most, s.limit)
	}
	if err := s.Source.Next(b, ask); err != nil {
		return err
	}
	if cells != nil && s.rs.cells > 0 {
		var bytes int64
		for i := range b.Keys {
			for j := range s.rs.cells {
				bytes += int64(len(cells.Cell(i, j)))
			}
		}
		s.limit = dict.CellBlockRows(s.limit, len(b.Keys), bytes, most)
	}
	for i, k := range b.Keys {
		row := unsafe.Slice((*byte)(unsafe.Pointer(&b.Values[i])), unsafe.Sizeof(b.Values[i]))
		if a := s.rs.wide; a != nil {
			var n uint64
			var err error
			if row, n, err = a.add(); err != nil {
				return err
			}
			for j := 0; j < len(row); j += 8 { // the row's bits, drawn from the key
				var w [8]byte
				binary.LittleEndian.PutUint64(w[:], core.PairChecksum(k, 3000+uint64(j/8)))
				copy(row[j:], w[:])
			}
			b.Values[i] = core.FromUint64[V](n, 0)
		}
		if s.rs.cells > 0 {
			s.rs.fromCells(row, cells, i)
		}
		if err := fillRow(s.rs, k, row, cells, i); err != nil {
			return err
		}
	}
	return nil
}

// fromCells writes the fixed-size attributes of the block's row i that the
// source's cells hold into row (a NULL as zeros); fillRow does the rest.
func (rs *Store) fromCells(row []byte, cells core.CellSource, i int) {
	for j, a := range rs.attrs[rs.from : rs.from+rs.cells] {
		if a.IsString() {
			continue
		}
		text := cells.Cell(i, j)
		var lo, hi uint64
		if !a.Nullable || string(text) != source.NullText {
			lo, hi, _ = source.ParseValue(a.Type, string(text)) // checked by CheckCell as the source read it
		}
		var w [16]byte
		binary.LittleEndian.PutUint64(w[:], lo)
		binary.LittleEndian.PutUint64(w[8:], hi)
		at := rs.at[rs.from+j]
		copy(row[at:at+a.Size], w[:])
	}
}

// fillRow writes row's null flags and Strings: for the attributes the
// source's cells hold (rs.cell), as the block's row i holds them, a
// String's bytes copied into rs's arena; for the others, drawn from key k.
func fillRow[K core.Bits](rs *Store, k K, row []byte, cells core.CellSource, i int) error {
	var flags byte
	for j, a := range rs.nulls {
		if c := rs.cell(int(a)); c >= 0 {
			if string(cells.Cell(i, c)) == source.NullText {
				flags |= 1 << j
			}
		} else if core.PairChecksum(k, 2000+a)%dict.NullEvery == 0 {
			flags |= 1 << j
		}
	}
	if len(rs.nulls) > 0 {
		row[rs.flagsAt] = flags
	}
	for _, st := range rs.strs {
		if flags&st.null != 0 {
			binary.LittleEndian.PutUint64(row[st.at:], 0)
			continue
		}
		var text []byte
		n := st.min + int(core.PairChecksum(k, 1000+st.salt)%uint64(st.max-st.min+1))
		if c := rs.cell(int(st.salt)); c >= 0 {
			text = cells.Cell(i, c)
			n = len(text)
		}
		dst, off, err := rs.arena.add(n)
		if err != nil {
			return err
		}
		if text != nil {
			copy(dst, text)
		} else {
			h := core.PairChecksum(k, st.salt)
			for j := range dst {
				dst[j] = "0123456789ABCDEF"[h>>(4*(j%16))&15]
			}
		}
		binary.LittleEndian.PutUint64(row[st.at:], uint64(off)<<24|uint64(n))
	}
	return nil
}

// indexedSource is storeSource over an IndexedSource.
type indexedSource[K, V core.Bits] struct {
	*storeSource[K, V]
	ix core.IndexedSource[K, V]
}

func (s indexedSource[K, V]) Row(i int64) (K, V) { return s.ix.Row(i) }

// CopyRows is the read's visit of a row run's found rows (nil when there
// is nothing to copy): a wide row's bytes copied out of the array, as a
// dictGet of each attribute reads its column, and every String's bytes
// copied out of the arena, as a dictGet of a String column copies them
// into its result.
func CopyRows[V core.Bits](rs *Store) func(vals []V, found []bool) {
	if rs == nil || len(rs.strs) == 0 && rs.wide == nil {
		return nil
	}
	var out []byte
	return func(vals []V, found []bool) {
		// The chunk's bytes first, so that out grows once, to a size
		// kept for the chunks after it (an eighth over): grown by
		// appends it left about four times its size of garbage a
		// growth, and the peak hung on when the collector ran.
		if need := copyBytes(rs, vals, found); need > cap(out) {
			out = make([]byte, 0, need+need/8)
		}
		out = out[:0]
		for i := range vals {
			if !found[i] {
				continue
			}
			row := unsafe.Slice((*byte)(unsafe.Pointer(&vals[i])), unsafe.Sizeof(vals[i]))
			if a := rs.wide; a != nil {
				n, _ := core.ToUint64(vals[i])
				row = a.row(n)
				out = append(out, row...)
			}
			for _, st := range rs.strs {
				if ref, ok := rs.stringRef(row, st); ok {
					out = append(out, rs.arena.get(ref)...)
				}
			}
		}
	}
}

// copyBytes is what CopyRows copies of the rows found in vals.
func copyBytes[V core.Bits](rs *Store, vals []V, found []bool) int {
	n := 0
	for i := range vals {
		if !found[i] {
			continue
		}
		row := unsafe.Slice((*byte)(unsafe.Pointer(&vals[i])), unsafe.Sizeof(vals[i]))
		if a := rs.wide; a != nil {
			v, _ := core.ToUint64(vals[i])
			row = a.row(v)
			n += len(row)
		}
		for _, st := range rs.strs {
			if ref, ok := rs.stringRef(row, st); ok {
				n += refLen(ref)
			}
		}
	}
	return n
}

// stringRef is the reference of a row's String st, false where the row's
// flags say it is NULL.
func (rs *Store) stringRef(row []byte, st rowString) (uint64, bool) {
	if st.null != 0 && row[rs.flagsAt]&st.null != 0 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(row[st.at:]), true
}
