package core

import (
	"fmt"
	"iter"
	"unsafe"
)

// Packed is ClickHouse's PackedHashMap<K, V>, which SPARSE_HASHED uses for
// UInt64 keys and values of at most 8 bytes: exactly the hashed table, but
// each cell is the pair with no padding (C++ __attribute__((packed))).
//
//	arena: 2^degree cells, stride = sizeof(K) + sizeof(V), alignment 1
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
// Go has no packed structs, so cells are byte ranges of one []byte: keys and
// values are read and written little-endian, a single unaligned move each.
// Probing, growth and the zero cell are Hashed's; only the stride differs.
type Packed[K, V Bits] struct {
	arena   []byte // len == 2^degree * stride
	size    uint64 // elements in the arena, not counting the zero cell
	g       grower
	hasZero bool
	zeroKey K
	zeroVal V
}

// NewPacked returns an empty packed table of 256 cells.
func NewPacked[K, V Bits](opt Options) *Packed[K, V] {
	t := &Packed[K, V]{g: newGrower(opt.mlf(), dictionaryFastDegree)}
	t.arena = make([]byte, t.g.cells()*packedStride[K, V]())
	return t
}

func packedStride[K, V Bits]() uint64 { return uint64(sizeOf[K]() + sizeOf[V]()) }

func (t *Packed[K, V]) Layout() Layout { return LayoutPacked }

func (t *Packed[K, V]) Insert(key K, value V) bool {
	var zero K
	if key == zero {
		if t.hasZero {
			return false
		}
		t.hasZero, t.zeroKey, t.zeroVal = true, key, value
		return true
	}
	const ks = 0
	stride, vs := packedStride[K, V](), uint64(sizeOf[K]())
	arena, mask := t.arena, t.g.mask
	for i := hashKey(key) & mask; ; i = (i + 1) & mask {
		c := arena[i*stride : i*stride+stride]
		k := loadBits[K](c[ks:])
		if k == key {
			return false
		}
		if k == zero {
			storeBits(c[ks:], key)
			storeBits(c[vs:], value)
			t.size++
			if t.g.overflow(t.size) {
				t.grow()
			}
			return true
		}
	}
}

// grow moves every element into an arena of the next size.
func (t *Packed[K, V]) grow() {
	old := t.arena
	t.g.increase()
	stride := packedStride[K, V]()
	t.arena = make([]byte, t.g.cells()*stride)
	arena, mask := t.arena, t.g.mask
	var zero K
	for off := uint64(0); off < uint64(len(old)); off += stride {
		c := old[off : off+stride]
		k := loadBits[K](c)
		if k == zero {
			continue
		}
		i := hashKey(k) & mask
		for loadBits[K](arena[i*stride:]) != zero {
			i = (i + 1) & mask
		}
		copy(arena[i*stride:i*stride+stride], c)
	}
}

// find returns the byte offset of key's cell, or -1; the zero cell is -2.
func (t *Packed[K, V]) find(key K) int64 {
	var zero K
	if key == zero {
		if t.hasZero {
			return -2
		}
		return -1
	}
	// The hot loop of every lookup: the arena holds mask+1 cells, so every
	// i*stride is a whole cell inside it and needs no bounds check.
	stride := uintptr(packedStride[K, V]())
	base, mask := unsafe.Pointer(unsafe.SliceData(t.arena)), uintptr(t.g.mask)
	for i := uintptr(hashKey(key)) & mask; ; i = (i + 1) & mask {
		k := loadBitsAt[K](unsafe.Add(base, i*stride))
		if k == key {
			return int64(i * stride)
		}
		if k == zero {
			return -1
		}
	}
}

func (t *Packed[K, V]) Get(key K) (V, bool) {
	switch off := t.find(key); off {
	case -1:
		var v V
		return v, false
	case -2:
		return t.zeroVal, true
	default:
		return loadBits[V](t.arena[uint64(off)+uint64(sizeOf[K]()):]), true
	}
}

func (t *Packed[K, V]) Has(key K) bool { return t.find(key) != -1 }

func (t *Packed[K, V]) Len() int { return int(t.size) + b2i(t.hasZero) }

func (t *Packed[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.hasZero && !yield(t.zeroKey, t.zeroVal) {
			return
		}
		var zero K
		stride, ks := packedStride[K, V](), uint64(sizeOf[K]())
		for off := uint64(0); off < uint64(len(t.arena)); off += stride {
			c := t.arena[off : off+stride]
			if k := loadBits[K](c); k != zero && !yield(k, loadBits[V](c[ks:])) {
				return
			}
		}
	}
}

func (t *Packed[K, V]) Stats() Stats {
	stride := int64(packedStride[K, V]())
	header := int64(unsafe.Sizeof(*t))
	zeroCell := int64(unsafe.Sizeof(t.zeroKey) + unsafe.Sizeof(t.zeroVal))
	n := int64(t.Len())
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
	stride := packedStride[K, V]()
	if uint64(len(t.arena)) != t.g.cells()*stride {
		return fmt.Errorf("packed: arena of %d bytes, want 2^%d cells x %d", len(t.arena), t.g.degree, stride)
	}
	var zero K
	var n uint64
	ks := uint64(sizeOf[K]())
	for off := uint64(0); off < uint64(len(t.arena)); off += stride {
		c := t.arena[off : off+stride]
		k := loadBits[K](c)
		if k == zero {
			if loadBits[V](c[ks:]) != *new(V) {
				return fmt.Errorf("packed: empty cell at byte %d holds a value", off)
			}
			continue
		}
		n++
		if f := t.find(k); f != int64(off) {
			return fmt.Errorf("packed: key %v at byte %d is found at %d", k, off, f)
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
