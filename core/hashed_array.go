package core

import (
	"fmt"
	"iter"
	"unsafe"
)

// HashedArray is ClickHouse's HASHED_ARRAY: a key -> row index table plus one
// dense array per value attribute. The key is stored once however many
// attributes there are; each attribute costs only its values.
//
//	index:  ClickHouse's plain HashMap<K, size_t>: cells of struct{K; uint64}
//	        (16 B for UInt64 keys), linear probing, grows past 0.5 full,
//	        x4 below 2^23 cells then x2; it has no MAX_LOAD_FACTOR.
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
type HashedArray[K, V Bits] struct {
	index  *Hashed[K, uint64] // key -> position in values
	values []V                // len == index.Len(); cap doubles
}

// podArrayInitialBytes is ClickHouse's PODArray initial allocation.
const podArrayInitialBytes = 4096

// NewHashedArray returns an empty hashed_array table.
func NewHashedArray[K, V Bits]() *HashedArray[K, V] {
	return &HashedArray[K, V]{index: newHashed[K, uint64](DefaultMaxLoadFactor, hashMapFastDegree)}
}

func (t *HashedArray[K, V]) Layout() Layout { return LayoutHashedArray }

func (t *HashedArray[K, V]) Insert(key K, value V) bool {
	if !t.index.Insert(key, uint64(len(t.values))) {
		return false
	}
	if len(t.values) == cap(t.values) {
		n := max(2*cap(t.values), podArrayInitialBytes/int(sizeOf[V]()))
		grown := make([]V, len(t.values), n)
		copy(grown, t.values)
		t.values = grown
	}
	t.values = append(t.values, value)
	return true
}

func (t *HashedArray[K, V]) Get(key K) (V, bool) {
	if c := t.index.find(key); c != nil {
		return t.values[c.value], true
	}
	var v V
	return v, false
}

func (t *HashedArray[K, V]) Has(key K) bool { return t.index.find(key) != nil }
func (t *HashedArray[K, V]) Len() int       { return len(t.values) }

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
	seen := make([]bool, len(t.values))
	for k, row := range t.index.All() {
		if row >= uint64(len(t.values)) || seen[row] {
			return fmt.Errorf("hashed_array: key %v points at row %d (of %d), twice or out of range", k, row, len(t.values))
		}
		seen[row] = true
	}
	return t.Stats().check()
}
