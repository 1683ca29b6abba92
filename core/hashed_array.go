package core

import (
	"fmt"
	"iter"
	"runtime"
	"unsafe"
)

// HashedArray is ClickHouse's HASHED_ARRAY: a key -> row index table plus one
// dense array per value attribute. The key is stored once however many
// attributes there are; each attribute costs only its values.
//
//	index:  ClickHouse's plain HashMap<K, size_t>: cells of struct{K; uint64}
//	        (16 B for UInt64 keys), linear probing, grows past 0.5 full, x2
//	        (see "Growth" below); it has no MAX_LOAD_FACTOR.
//	        +--------+--------+----------------+--------+--------+
//	        |key     |row     | 0 = empty      |key     |row     | ...
//	        +--------+--------+----------------+--------+--------+
//	                     |                               |
//	values: one PODArray<V>, doubling from 4 KiB:        v
//	        +--+--+--+--+--+--+--+--+- - - - - - - - - -+
//	        |v0|v1|v2|v3|v4|v5|v6|v7|  spare capacity    |
//	        +--+--+--+--+--+--+--+--+- - - - - - - - - -+
//
// The row index is metadata (8 bytes per key); the array's spare capacity is
// empty bytes. ClickHouse's own bytes_allocated for this layout counted the
// key index as one byte per element (fixed in PR #118641); packlab counts it
// all.
//
// Growth. A HashMap left to itself grows x4 below 2^23 cells, but
// ClickHouse's HASHED_ARRAY does not leave it: before each block it reserves
// the index for every row read so far (HashedArrayDictionary.cpp, loadData:
// resize(total_rows); skipped when sharded), so a load of n distinct keys
// ends at the smallest power of two of cells that holds n at half full, and
// each reservation that grows it at least doubles it. The index here grows
// x2 from 256 cells, which ends at those same cells for any n, key by key
// instead of block by block: at 1e6 <UInt64,UInt16> keys 2^21 cells, 34.0
// MiB with the values, where ClickHouse 26.7's memory tracker gained 34.1
// MiB over the load and the x4 rule held 2^22 cells, 66.0 MiB.
// HashMapCells is the x4 rule, for a sharded ClickHouse's index.
type HashedArray[K, V Bits] struct {
	index   *Hashed[K, uint64] // key -> position in values; owns its slab
	values  []V                // a view of the value slab; len == index.Len(); cap doubles
	closed  bool
	owner   *slabOwner // the value slab
	cleanup runtime.Cleanup
}

// podArrayInitialBytes is ClickHouse's PODArray initial allocation.
const podArrayInitialBytes = 4096

// hashedArrayFastDegree makes the index's grower double from its first
// size on (it grows x4 only below this degree, the initial one): the cells
// ClickHouse's reservation for the rows read so far ends at (see Growth).
const hashedArrayFastDegree = initialDegree

// HashMapCells is the cells of ClickHouse's plain HashMap (the grower
// HashTableGrowerWithPrecalculation: 256 cells, grows past half full, x4
// below 2^23 cells, then x2) after n distinct keys, built reserved for
// reserve of them, and the cells it had before its last growth (0 if it
// did not grow): the key index of a sharded HASHED_ARRAY, which ClickHouse
// does not reserve as it loads. packlab's hashed_array doubles instead
// (see HashedArray's Growth). n and reserve are 0 to MaxPredictRows.
func HashMapCells(n, reserve int64) (final, previous int64) {
	g := newGrower(DefaultMaxLoadFactor, hashMapFastDegree)
	g.reserve(uint64(max(reserve, 0)))
	f, p := g.cellsFor(uint64(max(n, 0)))
	return saturate(f), saturate(p)
}

// NewHashedArray returns an empty hashed_array table; New(LayoutHashedArray,
// Options{Reserve: n}) returns one sized for n keys.
func NewHashedArray[K, V Bits]() *HashedArray[K, V] { return newHashedArray[K, V](0) }

// newHashedArray builds a table sized for reserve keys, as ClickHouse's
// loader reserves before a block: the key index by HashMap's rule
// (grower.reserve at 0.5), the value array to the power of two that holds
// them (PODArray::reserve). It panics with a *SlabError if either slab
// cannot be had.
func newHashedArray[K, V Bits](reserve uint64) *HashedArray[K, V] {
	t := &HashedArray[K, V]{index: newHashed[K, uint64](DefaultMaxLoadFactor, hashedArrayFastDegree, reserve, LayoutHashedArray)}
	t.owner, t.cleanup = own(t, LayoutHashedArray)
	if reserve > 0 {
		n := hashedArrayValueCap(reserve, uint64(sizeOf[V]()))
		t.values = viewOf[V](t.owner.grow(nil, slabBytes(LayoutHashedArray, n, uint64(sizeOf[V]()))), n)[:0]
	}
	return t
}

// hashedArrayValueCap is the value array's capacity after a reservation of
// n (n >= 1): the power of two that holds n, at least PODArray's first 4 KiB
// (n = 1: the array an unreserved table's first insert makes).
func hashedArrayValueCap(n, valueBytes uint64) uint64 {
	c := max(podArrayInitialBytes/valueBytes, 1)
	for c < n {
		c *= 2
	}
	return c
}

func (t *HashedArray[K, V]) Layout() Layout { return LayoutHashedArray }

func (t *HashedArray[K, V]) Insert(key K, value V) bool {
	// Make room for the value first, so that a value slab that cannot be
	// had leaves the table as it was (the Has costs a second probe only on
	// the insert that fills the array).
	if len(t.values) == cap(t.values) && !t.index.Has(key) {
		t.growValues()
	}
	if !t.index.Insert(key, uint64(len(t.values))) {
		return false
	}
	t.values = append(t.values, value)
	return true
}

// growValues doubles the value array, as PODArray does (a realloc: growSlab,
// in place where the OS can remap pages).
func (t *HashedArray[K, V]) growValues() {
	n := max(2*uint64(cap(t.values)), podArrayInitialBytes/uint64(sizeOf[V]()))
	bytes := slabBytes(LayoutHashedArray, n, uint64(sizeOf[V]()))
	t.values = viewOf[V](t.owner.grow(bytesOf(t.values[:cap(t.values)]), bytes), n)[:len(t.values)]
}

func (t *HashedArray[K, V]) Get(key K) (V, bool) {
	if row, ok := t.index.Get(key); ok {
		return t.values[row], true
	}
	var v V
	return v, false
}

// GetMany is Get for every key of keys, the index's cache misses overlapped
// by its own GetMany (prefetch.go), called on chunks of arrayChunk keys so
// that its pipeline runs (a chunk of one batch would prefetch nothing
// ahead); values and found must be at least as long as keys.
func (t *HashedArray[K, V]) GetMany(keys []K, values []V, found []bool) int {
	var rows [arrayChunk]uint64
	n := 0
	for start := 0; start < len(keys); start += arrayChunk {
		batch := keys[start:min(start+arrayChunk, len(keys))]
		ok := found[start : start+len(batch)]
		n += t.index.GetMany(batch, rows[:len(batch)], ok)
		for j, row := range rows[:len(batch)] {
			var v V
			if ok[j] {
				v = t.values[row]
			}
			values[start+j] = v
		}
	}
	return n
}

// arrayChunk is how many keys HashedArray.GetMany gives the index at once:
// at 1e7 keys it read 22.4-23.8 M keys/s against 14.5-15.1 in chunks of
// getBatch (one thread, scattered keys).
const arrayChunk = 512

func (t *HashedArray[K, V]) Has(key K) bool { _, ok := t.index.Get(key); return ok }
func (t *HashedArray[K, V]) Len() int       { return t.index.Len() }

// Close releases the index and the value slab; see Hashed.Close.
func (t *HashedArray[K, V]) Close() {
	if t.closed {
		return
	}
	t.closed = true
	t.index.Close()
	t.owner.close(&t.cleanup)
	t.values = nil
}

func (t *HashedArray[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for k, row := range t.index.All() {
			if !yield(k, t.values[row]) {
				return
			}
		}
	}
}

func (t *HashedArray[K, V]) Stats() Stats {
	ix := t.index.Stats()
	ks, vs := int64(sizeOf[K]()), int64(sizeOf[V]())
	cellBytes := int64(unsafe.Sizeof(cell[K, uint64]{}))
	n := int64(len(t.values))
	header := int64(unsafe.Sizeof(*t))
	// In the index, an occupied cell is key (payload) + row (metadata) + padding.
	s := Stats{
		ElementCount:   n,
		BucketCount:    ix.BucketCount,
		BytesAllocated: ix.BytesAllocated + int64(cap(t.values))*vs + header,
		PayloadBytes:   n * (ks + vs),
		PaddingBytes:   n * (cellBytes - ks - 8),
		EmptyBytes:     ix.EmptyBytes + int64(cap(t.values)-len(t.values))*vs,
		MetadataBytes:  ix.MetadataBytes + n*8 + header,
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

func (t *HashedArray[K, V]) CheckInvariants() error {
	if err := t.index.CheckInvariants(); err != nil {
		return fmt.Errorf("hashed_array index: %w", err)
	}
	if t.index.Len() != len(t.values) {
		return fmt.Errorf("hashed_array: %d keys but %d values", t.index.Len(), len(t.values))
	}
	if want := min(cap(t.values), 1); len(t.owner.slabs) != want || want == 1 && &t.owner.slabs[0][0] != &bytesOf(t.values[:1])[0] {
		return fmt.Errorf("hashed_array: owns %d value slabs, want %d: the value array", len(t.owner.slabs), want)
	}
	seen := make([]bool, len(t.values))
	for k, row := range t.index.All() {
		if row >= uint64(len(t.values)) || seen[row] {
			return fmt.Errorf("hashed_array: key %v points at row %d (of %d), twice or out of range", k, row, len(t.values))
		}
		seen[row] = true
	}
	return t.Stats().check()
}
