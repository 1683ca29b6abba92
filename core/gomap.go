package core

import (
	"fmt"
	"iter"
	"math"
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
// does not know its row count would make it; New(LayoutGoMap,
// Options{Reserve: n}) returns make(map[K]V, n).
func NewGoMap[K, V Bits]() *GoMap[K, V] { return &GoMap[K, V]{m: map[K]V{}} }

// newGoMap is make(map[K]V, reserve). The runtime allocates a hint it cannot
// have table by table until it dies of it (a fatal error, not a panic), so
// where slabs are mappings the bytes the hint needs are asked of the OS
// first: a reservation the machine cannot hold panics with a *SlabError, as
// the other layouts' first slab does.
func newGoMap[K, V Bits](reserve uint64) *GoMap[K, V] {
	if reserve == 0 {
		return NewGoMap[K, V]()
	}
	if slabsMapped {
		slots, tables := goMapGeometry(0, saturate(reserve))
		slot := int64(unsafe.Sizeof(cell[K, V]{}))
		bytes := goMapBytes(slots, tables, slot)
		if uint64(bytes) > uint64(^uintptr(0)) {
			panic(&SlabError{Layout: LayoutGoMap, Bytes: uint64(bytes), Err: fmt.Errorf("a hint of %d keys needs at least %d bytes, more than an address holds", reserve, bytes)})
		}
		freeSlab(mustSlab(LayoutGoMap, uintptr(bytes)))
	}
	return &GoMap[K, V]{m: make(map[K]V, int(min(reserve, math.MaxInt)))}
}

// goMapGeometry is the slots and tables of a builtin map after n distinct
// inserts into a map made with size hint `hint` (Go 1.24-1.26,
// internal/runtime/maps). Unhinted, a table doubles from 8 slots up to 1024
// and then splits when 7/8 full; hashes spread evenly, so tables fill and
// split together: a map of n > 896 keys has about nextPow2(n/896) tables of
// 1024 slots (near a boundary some have split and some not yet). A hint
// above 8 makes at once a directory of nextPow2(ceil(hint*8/7 / 1024))
// tables of nextPow2(hint*8/7 / tables) slots each (NewMap); a map that
// outgrows its hint ends near where an unhinted one would.
func goMapGeometry(n, hint int64) (slots, tables int64) {
	slots = 8
	switch {
	case n <= 8:
	case n <= 896:
		for n > slots*7/8 {
			slots *= 2
		}
		tables = 1
	default:
		tables = 1
		for tables*896 < n {
			tables *= 2 // at most 2^53 for n <= 2^62
		}
		slots = SaturatingMul(tables, 1024)
	}
	if hint > 8 && hint <= math.MaxInt64/8 {
		target := hint * 8 / 7
		dir := int64(1)
		for dir*1024 < target {
			dir *= 2
		}
		per := int64(8)
		for per < target/dir {
			per *= 2
		}
		slots, tables = max(slots, SaturatingMul(dir, per)), max(tables, dir)
	}
	return slots, tables
}

// goMapBytes is the bytes of a builtin map of that geometry: a control byte
// and a slot each, a directory pointer and a table header each, the header.
func goMapBytes(slots, tables, slot int64) int64 {
	return SaturatingAdd(SaturatingAdd(SaturatingMul(slots, slot+1),
		SaturatingMul(tables, 8+int64(unsafe.Sizeof(swissTable{})))), int64(unsafe.Sizeof(swissMap{})))
}

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
