package core

import (
	"fmt"
	"iter"
	"runtime"
	"unsafe"
)

// Packed is ClickHouse's PackedHashMap<K, V>, which SPARSE_HASHED uses for
// UInt64 keys and values of at most 8 bytes: exactly the hashed table, but
// each cell is the pair with no padding (C++ __attribute__((packed))).
//
//	arena: 2^degree cells, stride = sizeof(K) + sizeof(V), alignment 1, one slab
//	<UInt64,UInt16>: stride 10, no padding
//
//	byte:   0        8  10       18 20       28 30
//	      +--------+--+--------+--+--------+--+--------+--+
//	      |key     |v |0 empty |  |key     |v |key     |v | ...
//	      +--------+--+--------+--+--------+--+--------+--+
//	       cell 0     cell 1      cell 2      cell 3
//
//	header: grower, size, the zero cell (key 0 lives there, as in Hashed).
//
// Go has no packed structs, so cells are byte ranges of one slab: keys and
// values are read and written little-endian through byte arrays, a single
// unaligned move each (bytes.go). Probing, growth in place and the zero
// cell are Hashed's; only the stride differs.
type Packed[K, V Bits] struct {
	arena   []byte  // the slab; len == 2^degree * stride
	stride  uintptr // sizeof(K) + vs
	vs      uintptr // the value's bytes in a cell: sizeof(V), or a row's (Options.ValueBytes)
	size    uint64  // elements in the arena, not counting the zero cell
	g       grower
	hasZero bool
	closed  bool
	zeroKey K
	zeroVal V
	owner   *slabOwner // the arena
	cleanup runtime.Cleanup
}

// NewPacked returns an empty packed table of 256 cells, or of as many as
// opt.Reserve needs (grower.reserve). It panics with a *SlabError if the
// first slab (2.5 KiB for <UInt64,UInt16>) cannot be had; New returns it as
// an error.
func NewPacked[K, V Bits](opt Options) *Packed[K, V] {
	t := &Packed[K, V]{g: newGrower(opt.mlf(), dictionaryFastDegree), vs: valueBytes[V](opt)}
	t.stride = sizeOf[K]() + t.vs
	t.g.reserve(opt.reserve())
	t.owner, t.cleanup = own(t, LayoutPacked)
	t.arena = mustSlab(LayoutPacked, slabBytes(LayoutPacked, t.g.cells(), uint64(t.stride)))
	t.owner.add(t.arena)
	return t
}

// loadValue reads a cell's value at p: all of V, or a row's first t.vs
// bytes (rowAt). The hot paths (Insert, Get, GetMany, rehash) write the
// test out instead: this does not inline (the row's call is over the
// inliner's budget), and a call per lookup cost a fifth of packed's reads
// at 1e7.
func (t *Packed[K, V]) loadValue(p unsafe.Pointer) V {
	if t.vs == sizeOf[V]() {
		return loadBitsAt[V](p)
	}
	return rowAt[V](p, t.vs)
}

func (t *Packed[K, V]) Layout() Layout { return LayoutPacked }

// Insert stores (key, value) if key is absent and reports whether it did.
func (t *Packed[K, V]) Insert(key K, value V) bool {
	var zero K
	if key == zero {
		if t.closed {
			closedPanic(LayoutPacked)
		}
		if t.hasZero {
			return false
		}
		t.hasZero, t.zeroVal = true, value
		return true
	}
	stride := t.stride
	for {
		base, mask := unsafe.Pointer(unsafe.SliceData(t.arena)), uintptr(t.g.mask)
		var p unsafe.Pointer
		for i := uintptr(hashKey(key)) & mask; ; i = (i + 1) & mask {
			p = unsafe.Add(base, i*stride)
			k := loadBitsAt[K](p)
			if k == key {
				return false
			}
			if k == zero {
				break
			}
		}
		// Grow before placing: see Hashed.Insert.
		if t.g.overflow(t.size + 1) {
			t.grow()
			continue
		}
		storeBitsAt(p, key)
		if v := unsafe.Add(p, sizeOf[K]()); t.vs == sizeOf[V]() {
			storeBitsAt(v, value)
		} else {
			setRowAt(v, t.vs, value)
		}
		t.size++
		return true
	}
}

// grow enlarges the arena to the next size and rehashes it in place (see
// Hashed.grow and Hashed.rehash).
func (t *Packed[K, V]) grow() {
	if t.closed {
		closedPanic(LayoutPacked)
	}
	g := t.g
	g.increase()
	stride := t.stride
	old := uintptr(len(t.arena)) / stride
	// May panic with a *SlabError: nothing has changed yet.
	t.arena = t.owner.grow(t.arena, slabBytes(LayoutPacked, g.cells(), uint64(stride)))
	t.g = g
	t.rehash(old)
}

// rehash is Hashed.rehash over packed cells.
func (t *Packed[K, V]) rehash(old uintptr) {
	stride, ks, row := t.stride, sizeOf[K](), t.vs != sizeOf[V]()
	base, mask := unsafe.Pointer(unsafe.SliceData(t.arena)), uintptr(t.g.mask)
	var zero K
	reinsert := func(i uintptr, k K) {
		c := unsafe.Add(base, i*stride)
		p := uintptr(hashKey(k)) & mask
		for ; p != i; p = (p + 1) & mask {
			d := unsafe.Add(base, p*stride)
			if loadBitsAt[K](d) == zero {
				storeBitsAt(d, k)
				storeBitsAt(c, zero)
				if row { // a row's bytes move as they are
					copy(unsafe.Slice((*byte)(unsafe.Add(d, ks)), t.vs), unsafe.Slice((*byte)(unsafe.Add(c, ks)), t.vs))
					clear(unsafe.Slice((*byte)(unsafe.Add(c, ks)), t.vs))
					return
				}
				storeBitsAt(unsafe.Add(d, ks), loadBitsAt[V](unsafe.Add(c, ks)))
				storeBitsAt(unsafe.Add(c, ks), *new(V))
				return
			}
		}
	}
	i := uintptr(0)
	for ; i < old; i++ {
		if k := loadBitsAt[K](unsafe.Add(base, i*stride)); k != zero {
			reinsert(i, k)
		}
	}
	for ; i <= mask; i++ {
		k := loadBitsAt[K](unsafe.Add(base, i*stride))
		if k == zero {
			break
		}
		reinsert(i, k)
	}
}

// Get returns the value stored for key.
func (t *Packed[K, V]) Get(key K) (V, bool) {
	var zero K
	if key != zero {
		base, end := unsafe.Pointer(unsafe.SliceData(t.arena)), uintptr(len(t.arena))
		stride := t.stride
		if p := t.find(base, end, (uintptr(hashKey(key))&uintptr(t.g.mask))*stride, stride, key); p != nil {
			if v := unsafe.Add(p, sizeOf[K]()); t.vs != sizeOf[V]() {
				return rowAt[V](v, t.vs), true
			}
			return loadBitsAt[V](unsafe.Add(p, sizeOf[K]())), true
		}
	} else if t.hasZero {
		return t.zeroVal, true
	}
	if t.closed { // see Hashed.Get
		closedPanic(LayoutPacked)
	}
	var v V
	return v, false
}

// find probes for key (not 0) from the cell at byte offset o, its home,
// over the arena [base, base+end), and returns the key's cell, or nil. Cells
// are addressed through an unsafe pointer: o is always a whole cell inside
// the arena, so it needs no bounds check. It inlines into Get and GetMany:
// the probe calls no function.
func (t *Packed[K, V]) find(base unsafe.Pointer, end, o, stride uintptr, key K) unsafe.Pointer {
	// Kept parallel to Hashed.find: each probes its own cell layout and stays inlinable into the probe loops.
	for {
		p := unsafe.Add(base, o)
		if k := loadBitsAt[K](p); k == key {
			return p
		} else if k == *new(K) {
			return nil
		}
		if o += stride; o == end {
			o = 0
		}
	}
}

// homes computes the byte offsets of the home cells of keys[lo:lo+getBatch]
// into h and prefetches them (prefetch.go).
func (t *Packed[K, V]) homes(keys []K, lo int, h *homes) {
	// Kept parallel to Hashed.homes: a shared homesAt was not shown to cost
	// nothing (2^20 keys, best of 12 interleaved runs on a busy machine, ms:
	// packed GetMany 17.3 -> 18.6, hashed InsertMany 62.7 -> 77.8, packed
	// InsertMany 26.0 -> 24.3).
	if lo >= len(keys) {
		return
	}
	stride, mask := t.stride, uintptr(t.g.mask)
	batch := keys[lo:min(lo+getBatch, len(keys))]
	for j, k := range batch {
		h[j] = (uintptr(hashKey(k)) & mask) * stride
	}
	prefetchOffsets(unsafe.Pointer(unsafe.SliceData(t.arena)), h, len(batch))
}

// GetMany is Get for every key of keys, its cache misses overlapped (see
// prefetch.go); values and found must be at least as long as keys.
func (t *Packed[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.closed {
		closedPanic(LayoutPacked)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	var zero K
	base, end := unsafe.Pointer(unsafe.SliceData(t.arena)), uintptr(len(t.arena))
	stride, row := t.stride, t.vs != sizeOf[V]()
	var h [2]homes
	t.homes(keys, 0, &h[0])
	n := 0
	// Kept parallel to Hashed.GetMany: a loop shared through a probe function would make an indirect call per key.
	for lo, cur := 0, 0; lo < len(keys); lo, cur = lo+getBatch, cur^1 {
		t.homes(keys, lo+getBatch, &h[cur^1])
		for j, key := range keys[lo:min(lo+getBatch, len(keys))] {
			var v V
			ok := false
			if key != zero {
				if p := t.find(base, end, h[cur][j], stride, key); p != nil {
					if p = unsafe.Add(p, sizeOf[K]()); row {
						v, ok = rowAt[V](p, t.vs), true
					} else {
						v, ok = loadBitsAt[V](p), true
					}
				}
			} else if t.hasZero {
				v, ok = t.zeroVal, true
			}
			values[lo+j], found[lo+j] = v, ok
			n += b2i(ok)
		}
	}
	return n
}

// InsertMany is Insert for every pair of keys and values, pipelined
// (insertBatched); the loader's workers insert their blocks with it.
func (t *Packed[K, V]) InsertMany(keys []K, values []V, inserted []bool) int {
	return insertBatched(keys, values, inserted, func(keys []K, lo int) (h homes) {
		t.homes(keys, lo, &h)
		return h
	}, t.Insert)
}

func (t *Packed[K, V]) Has(key K) bool { _, ok := t.Get(key); return ok }

func (t *Packed[K, V]) Len() int {
	if t.closed {
		closedPanic(LayoutPacked)
	}
	return int(t.size) + b2i(t.hasZero)
}

func (t *Packed[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.closed {
			closedPanic(LayoutPacked)
		}
		if t.hasZero && !yield(t.zeroKey, t.zeroVal) {
			return
		}
		var zero K
		stride, ks := t.stride, sizeOf[K]()
		for off := uintptr(0); off < uintptr(len(t.arena)); off += stride {
			c := t.arena[off : off+stride]
			if k := loadBits[K](c); k != zero && !yield(k, t.loadValue(unsafe.Pointer(&c[ks]))) {
				return
			}
		}
	}
}

// Close releases the arena at once; see Hashed.Close.
func (t *Packed[K, V]) Close() {
	if t.closed {
		return
	}
	t.owner.close(&t.cleanup)
	t.closed, t.hasZero, t.size = true, false, 0
	t.arena = closedView[[32]byte]()[0][:t.stride]
	t.g.mask, t.g.maxFill = 0, 0
}

func (t *Packed[K, V]) Stats() Stats {
	n := int64(t.Len())
	stride := int64(t.stride)
	header := int64(unsafe.Sizeof(*t))
	zeroCell := int64(unsafe.Sizeof(t.zeroKey) + unsafe.Sizeof(t.zeroVal))
	cells := int64(t.g.cells())
	s := Stats{
		ElementCount:   n,
		BucketCount:    cells,
		BytesAllocated: int64(len(t.arena)) + header,
		PayloadBytes:   n * stride,
		EmptyBytes:     (cells - int64(t.size)) * stride,
		MetadataBytes:  header - zeroCell,
	}
	if !t.hasZero {
		s.EmptyBytes += zeroCell
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

func (t *Packed[K, V]) CheckInvariants() error {
	if t.closed {
		return fmt.Errorf("packed: closed")
	}
	stride := t.stride
	if uintptr(len(t.arena)) != uintptr(t.g.cells())*stride {
		return fmt.Errorf("packed: arena of %d bytes, want 2^%d cells x %d", len(t.arena), t.g.degree, stride)
	}
	if len(t.owner.slabs) != 1 || &t.owner.slabs[0][0] != &t.arena[0] {
		return fmt.Errorf("packed: owns %d slabs, want exactly the arena", len(t.owner.slabs))
	}
	var zero K
	var n uint64
	ks, mask := sizeOf[K](), uintptr(t.g.mask)
	for i := uintptr(0); i <= mask; i++ {
		c := t.arena[i*stride : i*stride+stride]
		k := loadBits[K](c)
		if k == zero {
			if t.loadValue(unsafe.Pointer(&c[ks])) != *new(V) {
				return fmt.Errorf("packed: empty cell %d holds a value", i)
			}
			continue
		}
		n++
		// Linear probing's invariant; see Hashed.CheckInvariants.
		for j := uintptr(hashKey(k)) & mask; j != i; j = (j + 1) & mask {
			if o := loadBits[K](t.arena[j*stride:]); o == zero || o == k {
				return fmt.Errorf("packed: key %v in cell %d is not found by a lookup (cell %d holds %v)", k, i, j, o)
			}
		}
		if v, ok := t.Get(k); !ok || v != t.loadValue(unsafe.Pointer(&c[ks])) {
			return fmt.Errorf("packed: Get(%v) = %v, %v; cell %d holds %v", k, v, ok, i, t.loadValue(unsafe.Pointer(&c[ks])))
		}
	}
	if n != t.size {
		return fmt.Errorf("packed: %d occupied cells, size says %d", n, t.size)
	}
	if t.g.overflow(t.size) {
		return fmt.Errorf("packed: %d elements exceed max fill %d", t.size, t.g.maxFill)
	}
	return t.Stats().check()
}
