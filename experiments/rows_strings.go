package experiments

// A row's Strings: the bytes in one arena beside the table, the row holding
// an 8-byte reference to them (rowStringBytes), so that a row of a UInt16
// and a String is a cell of key + 10 bytes, whatever the String's length.
//
//	row:    +--+---------------------------+
//	        |a1| offset (40 bits), length (24 bits) |   in the table's cell
//	        +--+---------------------------+
//	                      |
//	arena:  [chunk 0: 1 MiB ............][chunk 1 ....   ]   one for the table
//	                      ^ the String's bytes, no terminator
//
// The arena is chunks of rowArenaChunk bytes, each filled from its start; a
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
)

// rowStringBytes is a String's part of a row: its reference into the arena.
const rowStringBytes = 8

// rowArenaChunk is the arena's unit of allocation.
const rowArenaChunk = 1 << 20

// rowAttrBytes is what attribute a takes in a row.
func rowAttrBytes(a Attribute) int {
	if a.isString() {
		return rowStringBytes
	}
	return a.Size
}

// RowArenaBytes is what a row layout's arena allocates for the String
// attributes of n rows: their mean lengths summed, in whole chunks.
func RowArenaBytes(attrs []Attribute, n int64) int64 {
	var mean float64
	for _, a := range attrs {
		mean += a.meanLen()
	}
	total := int64(mean*float64(n) + 0.5)
	if total == 0 {
		return 0
	}
	return (total + rowArenaChunk - 1) / rowArenaChunk * rowArenaChunk
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

// rowArena holds a row layout's String bytes.
type rowArena struct {
	chunks [][]byte
	used   int64 // the Strings' bytes
}

// add makes room for n bytes and returns them and their offset.
func (a *rowArena) add(n int) ([]byte, int64) {
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+n > rowArenaChunk {
		a.chunks = append(a.chunks, make([]byte, 0, rowArenaChunk))
		last++
	}
	c := a.chunks[last]
	off := int64(last)*rowArenaChunk + int64(len(c))
	a.chunks[last] = c[:len(c)+n]
	a.used += int64(n)
	return a.chunks[last][len(c):], off
}

// get is the String a reference names.
func (a *rowArena) get(ref uint64) []byte {
	off, n := ref>>24, int(ref&(1<<24-1))
	c := a.chunks[off/rowArenaChunk]
	i := int(off % rowArenaChunk)
	return c[i : i+n]
}

// bytes is what the arena allocated.
func (a *rowArena) bytes() int64 { return int64(len(a.chunks)) * rowArenaChunk }

// rowString is where a String attribute sits in the row and how its
// values are drawn.
type rowString struct {
	at       int    // its reference's first byte in the row
	min, max int    // its lengths
	salt     uint64 // its attribute's number
}

// rowStrings is a source of a row layout's rows: inner's rows, each
// String's reference written into the value after its bytes went into the
// arena. It is an IndexedSource when inner is (the read order needs only
// the keys).
type rowStrings[K, V core.Bits] struct {
	core.Source[K, V]
	strs  []rowString
	arena *rowArena
}

// rowStringsOf lists the String attributes of a row of attrs.
func rowStringsOf(attrs []Attribute) []rowString {
	var strs []rowString
	at := 0
	for i, a := range attrs {
		if a.isString() {
			strs = append(strs, rowString{at: at, min: a.MinLen, max: a.MaxLen, salt: uint64(i)})
		}
		at += rowAttrBytes(a)
	}
	return strs
}

// newRowStrings wraps src for the Strings strs, or returns src when the
// row has none.
func newRowStrings[K, V core.Bits](src core.Source[K, V], strs []rowString, arena *rowArena) core.Source[K, V] {
	if len(strs) == 0 {
		return src
	}
	s := &rowStrings[K, V]{Source: src, strs: strs, arena: arena}
	if ix, ok := src.(core.IndexedSource[K, V]); ok {
		return indexedRowStrings[K, V]{s, ix}
	}
	return s
}

func (s *rowStrings[K, V]) Next(b *core.Block[K, V], max int) error {
	if err := s.Source.Next(b, max); err != nil {
		return err
	}
	for i, k := range b.Keys {
		row := unsafe.Slice((*byte)(unsafe.Pointer(&b.Values[i])), unsafe.Sizeof(b.Values[i]))
		for _, st := range s.strs {
			h := core.PairChecksum(k, st.salt)
			n := st.min + int(core.PairChecksum(k, 1000+st.salt)%uint64(st.max-st.min+1))
			dst, off := s.arena.add(n)
			for j := range dst {
				dst[j] = "0123456789ABCDEF"[h>>(4*(j%16))&15]
			}
			binary.LittleEndian.PutUint64(row[st.at:], uint64(off)<<24|uint64(n))
		}
	}
	return nil
}

// indexedRowStrings is rowStrings over an IndexedSource.
type indexedRowStrings[K, V core.Bits] struct {
	*rowStrings[K, V]
	ix core.IndexedSource[K, V]
}

func (s indexedRowStrings[K, V]) Row(i int64) (K, V) { return s.ix.Row(i) }

// copyStrings is the read's visit of a row layout's found rows: every
// String's bytes copied out, as a dictGet of a String column copies them
// into its result.
func copyStrings[V core.Bits](arena *rowArena, strs []rowString) func(vals []V, found []bool) {
	var out []byte
	return func(vals []V, found []bool) {
		out = out[:0]
		for i := range vals {
			if !found[i] {
				continue
			}
			row := unsafe.Slice((*byte)(unsafe.Pointer(&vals[i])), unsafe.Sizeof(vals[i]))
			for _, st := range strs {
				out = append(out, arena.get(binary.LittleEndian.Uint64(row[st.at:]))...)
			}
		}
	}
}
