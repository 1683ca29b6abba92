package experiments

// A row's Strings: the bytes in one arena beside the table, the row holding
// an 8-byte reference to them (dict.RowStringBytes), so that a row of a UInt16
// and a String is a cell of key + 10 bytes, whatever the String's length.
// A row with Nullable attributes ends in a byte of their null flags (bit i
// for the i-th Nullable); a NULL String takes nothing in the arena.
//
//	--attributes UInt16,String,Nullable(UInt32): a row of 2 + 8 + 4 + 1 bytes
//
//	row:    +--+----------------------------------+----+-----+
//	        |a1| String: offset 40 b, length 24 b |a3  |nulls|   in the table's cell
//	        +--+----------------------------------+----+-----+
//	                 |
//	arena:  [chunk 0: 1 MiB ............][chunk 1 ....   ]   one for the table
//	                 ^ the String's bytes, no terminator
//
// The arena is chunks of dict.RowArenaChunk bytes, each filled from its start; a
// String that does not fit in what is left of a chunk starts the next one
// (at most maxStringLen bytes of a chunk stay unused). The lab's rows are
// drawn from their keys as ClickHouse's are (attributesSQL): a String's
// length uniformly from its range, its bytes hex digits of a hash of the
// key. The arena is on the Go heap: pointer-free chunks the collector never
// scans, counted in the result's bytes_allocated beside the table's slab.

import (
	"encoding/binary"
	"unsafe"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
)

// rowArena holds a row layout's String bytes.
type rowArena struct {
	chunks [][]byte
	used   int64 // the Strings' bytes
}

// add makes room for n bytes and returns them and their offset.
func (a *rowArena) add(n int) ([]byte, int64) {
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+n > dict.RowArenaChunk {
		a.chunks = append(a.chunks, make([]byte, 0, dict.RowArenaChunk))
		last++
	}
	c := a.chunks[last]
	off := int64(last)*dict.RowArenaChunk + int64(len(c))
	a.chunks[last] = c[:len(c)+n]
	a.used += int64(n)
	return a.chunks[last][len(c):], off
}

// get is the String a reference names.
func (a *rowArena) get(ref uint64) []byte {
	off, n := ref>>24, int(ref&(1<<24-1))
	c := a.chunks[off/dict.RowArenaChunk]
	i := int(off % dict.RowArenaChunk)
	return c[i : i+n]
}

// bytes is what the arena allocated.
func (a *rowArena) bytes() int64 { return int64(len(a.chunks)) * dict.RowArenaChunk }

// rowString is where a String attribute sits in the row and how its
// values are drawn.
type rowString struct {
	at       int    // its reference's first byte in the row
	min, max int    // its lengths
	salt     uint64 // its attribute's number
	null     byte   // its flag in the row's null byte, 0 if not Nullable
}

// rowStrings is what a row run writes into its rows beyond the source's
// bits: each String's reference, its bytes in the arena the load fills,
// and the byte of null flags of a row with Nullables (a Nullable is NULL
// in one row of dict.NullEvery, by a hash of the key).
type rowStrings struct {
	strs    []rowString
	nulls   []uint64 // the Nullables' attribute numbers, bit i of the flags for nulls[i]
	flagsAt int      // the flags' byte in the row
	arena   rowArena
}

// rowStringsFor is p's row Strings and null flags; nil when p is not a
// row's run or its row has neither.
func rowStringsFor(p parsedConfig) *rowStrings {
	if !p.row {
		return nil
	}
	var rs rowStrings
	at := 0
	for i, a := range p.attrs {
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
	if len(rs.strs) == 0 && len(rs.nulls) == 0 {
		return nil
	}
	return &rs
}

// count adds the arena to a result: its Strings are payload, its chunks'
// unused ends empty.
func (rs *rowStrings) count(r *Result) {
	if rs == nil {
		return
	}
	r.BytesAllocated += rs.arena.bytes()
	r.PayloadBytes += rs.arena.used
	r.EmptyBytes += rs.arena.bytes() - rs.arena.used
}

// withRowStrings is src with each row's Strings put in rs's arena and
// their references written into the row; src itself when rs is nil. It is
// an IndexedSource when src is (the read order needs only the keys).
func withRowStrings[K, V core.Bits](src core.Source[K, V], rs *rowStrings) core.Source[K, V] {
	if rs == nil {
		return src
	}
	s := &rowStringSource[K, V]{Source: src, rs: rs}
	if ix, ok := src.(core.IndexedSource[K, V]); ok {
		return indexedRowStrings[K, V]{s, ix}
	}
	return s
}

// rowStringSource is withRowStrings' source.
type rowStringSource[K, V core.Bits] struct {
	core.Source[K, V]
	rs *rowStrings
}

func (s *rowStringSource[K, V]) Next(b *core.Block[K, V], max int) error {
	if err := s.Source.Next(b, max); err != nil {
		return err
	}
	for i, k := range b.Keys {
		row := unsafe.Slice((*byte)(unsafe.Pointer(&b.Values[i])), unsafe.Sizeof(b.Values[i]))
		var flags byte
		for j, a := range s.rs.nulls {
			if core.PairChecksum(k, 2000+a)%dict.NullEvery == 0 {
				flags |= 1 << j
			}
		}
		if len(s.rs.nulls) > 0 {
			row[s.rs.flagsAt] = flags
		}
		for _, st := range s.rs.strs {
			if flags&st.null != 0 {
				binary.LittleEndian.PutUint64(row[st.at:], 0)
				continue
			}
			h := core.PairChecksum(k, st.salt)
			n := st.min + int(core.PairChecksum(k, 1000+st.salt)%uint64(st.max-st.min+1))
			dst, off := s.rs.arena.add(n)
			for j := range dst {
				dst[j] = "0123456789ABCDEF"[h>>(4*(j%16))&15]
			}
			binary.LittleEndian.PutUint64(row[st.at:], uint64(off)<<24|uint64(n))
		}
	}
	return nil
}

// indexedRowStrings is rowStringSource over an IndexedSource.
type indexedRowStrings[K, V core.Bits] struct {
	*rowStringSource[K, V]
	ix core.IndexedSource[K, V]
}

func (s indexedRowStrings[K, V]) Row(i int64) (K, V) { return s.ix.Row(i) }

// copyRowStrings is the read's visit of a row run's found rows (nil when
// rs is): every String's bytes copied out, as a dictGet of a String column
// copies them into its result.
func copyRowStrings[V core.Bits](rs *rowStrings) func(vals []V, found []bool) {
	if rs == nil || len(rs.strs) == 0 {
		return nil
	}
	var out []byte
	return func(vals []V, found []bool) {
		out = out[:0]
		for i := range vals {
			if !found[i] {
				continue
			}
			row := unsafe.Slice((*byte)(unsafe.Pointer(&vals[i])), unsafe.Sizeof(vals[i]))
			for _, st := range rs.strs {
				if st.null == 0 || row[rs.flagsAt]&st.null == 0 { // not NULL
					out = append(out, rs.arena.get(binary.LittleEndian.Uint64(row[st.at:]))...)
				}
			}
		}
	}
}
