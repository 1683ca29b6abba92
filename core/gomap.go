package core

import (
	"fmt"
	"iter"
	"unsafe"
)

// GoMap is Go's builtin map[K]V, the table a Go programmer writes without
// thinking: since Go 1.24 a swiss table (internal/runtime/maps).
//
//	directory: 2^globalDepth pointers to tables (several may share one)
//	table:     up to 1024 slots in groups of 8; splits in two when full
//	group:     one 8-byte control word (a control byte per slot) + 8 slots
//	slot:      struct{K; V} with natural padding (16 B for <UInt64,UInt16>)
//
//	group: +--------+----------------+----------------+-- ... --+
//	       |ctrl x8 |key     |v |pad |key     |v |pad |         |  8 slots
//	       +--------+----------------+----------------+-- ... --+
//
// A table grows (x2, or by splitting past 1024 slots) when 7/8 of its slots
// are used. A map of at most 8 elements is one bare group with no table.
//
// Stats reads that geometry from the runtime's own structures (layout
// mirrored from Go 1.24-1.26) and is marked Estimated: packlab did not
// allocate it and cannot see the allocator's rounding.
type GoMap[K, V Bits] struct {
	m map[K]V
}

// NewGoMap returns an empty builtin map with no size hint, as a loader that
// does not know its row count would make it.
func NewGoMap[K, V Bits]() *GoMap[K, V] { return &GoMap[K, V]{m: map[K]V{}} }

func (t *GoMap[K, V]) Layout() Layout { return LayoutGoMap }

func (t *GoMap[K, V]) Insert(key K, value V) bool {
	if t.m == nil {
		closedPanic(LayoutGoMap)
	}
	if _, ok := t.m[key]; ok {
		return false
	}
	t.m[key] = value
	return true
}

func (t *GoMap[K, V]) Get(key K) (V, bool) {
	v, ok := t.m[key]
	if !ok && t.m == nil {
		closedPanic(LayoutGoMap)
	}
	return v, ok
}

// GetMany is Get in a loop: the runtime's map has no batch lookup.
func (t *GoMap[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.m == nil {
		closedPanic(LayoutGoMap)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	n := 0
	for i, k := range keys {
		values[i], found[i] = t.m[k]
		n += b2i(found[i])
	}
	return n
}

func (t *GoMap[K, V]) Has(key K) bool { _, ok := t.Get(key); return ok }

func (t *GoMap[K, V]) Len() int {
	if t.m == nil {
		closedPanic(LayoutGoMap)
	}
	return len(t.m)
}

// Close drops the map. Its memory is the Go runtime's: the collector frees
// it at its next cycle, not at once, and the lab says so.
func (t *GoMap[K, V]) Close() { t.m = nil }

func (t *GoMap[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.m == nil {
			closedPanic(LayoutGoMap)
		}
		for k, v := range t.m {
			if !yield(k, v) {
				return
			}
		}
	}
}

// swissMap and swissTable mirror internal/runtime/maps.Map and .table.
type swissMap struct {
	used              uint64
	seed              uintptr
	dirPtr            unsafe.Pointer
	dirLen            int
	globalDepth       uint8
	globalShift       uint8
	writing           uint8
	tombstonePossible bool
	clearSeq          uint64
}

type swissTable struct {
	used       uint16
	capacity   uint16
	growthLeft uint16
	localDepth uint8
	index      int
	groups     unsafe.Pointer
	lengthMask uint64
}

const swissGroupSlots = 8

// geometry returns the slot groups, the directory length and the distinct
// tables of the map, read from the runtime; ok is false when what it reads
// does not add up (an unknown runtime), and the caller must estimate.
func (t *GoMap[K, V]) geometry() (groups, dirLen, tables int64, ok bool) {
	m := *(**swissMap)(unsafe.Pointer(&t.m))
	if m == nil || m.used != uint64(len(t.m)) {
		return 0, 0, 0, false
	}
	if m.dirLen == 0 {
		if m.dirPtr == nil {
			return 0, 0, 0, true
		}
		return 1, 0, 0, true // small map: one group, no table
	}
	dir := unsafe.Slice((**swissTable)(m.dirPtr), m.dirLen)
	var used uint64
	for i, tab := range dir {
		if i > 0 && tab == dir[i-1] {
			continue // a table spans a run of directory entries
		}
		if tab.capacity == 0 || tab.capacity&(tab.capacity-1) != 0 {
			return 0, 0, 0, false
		}
		groups += int64(tab.capacity) / swissGroupSlots
		tables++
		used += uint64(tab.used)
	}
	return groups, int64(m.dirLen), tables, used == m.used
}

func (t *GoMap[K, V]) Stats() Stats {
	if t.m == nil {
		closedPanic(LayoutGoMap)
	}
	slot := int64(unsafe.Sizeof(cell[K, V]{}))
	pair := int64(sizeOf[K]() + sizeOf[V]())
	n := int64(len(t.m))
	groups, dirLen, tables, ok := t.geometry()
	if !ok {
		// A map grown by inserts runs between 7/16 and 7/8 full; take the middle.
		groups = (n*32/21 + swissGroupSlots - 1) / swissGroupSlots
		tables = (groups + 127) / 128
		dirLen = tables
	}
	meta := groups*8 + dirLen*8 + tables*int64(unsafe.Sizeof(swissTable{})) + int64(unsafe.Sizeof(swissMap{}))
	s := Stats{
		ElementCount:   n,
		BucketCount:    groups * swissGroupSlots,
		BytesAllocated: groups*swissGroupSlots*slot + meta,
		PayloadBytes:   n * pair,
		PaddingBytes:   n * (slot - pair),
		EmptyBytes:     (groups*swissGroupSlots - n) * slot,
		MetadataBytes:  meta,
		Estimated:      true,
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

func (t *GoMap[K, V]) CheckInvariants() error {
	if t.m == nil {
		return fmt.Errorf("gomap: closed")
	}
	for k, v := range t.m {
		if got, ok := t.Get(k); !ok || got != v {
			return fmt.Errorf("gomap: key %v not found again", k)
		}
	}
	if _, _, _, ok := t.geometry(); !ok {
		return fmt.Errorf("gomap: the runtime's map geometry could not be read; stats fall back to a model")
	}
	return t.Stats().check()
}
