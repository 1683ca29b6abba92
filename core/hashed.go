package core

import (
	"fmt"
	"iter"
	"unsafe"
)

// Hashed is ClickHouse's HashMap<K, V>, the table behind LAYOUT(HASHED()).
//
//	cells: 2^degree cells of struct{K; V} with natural padding
//	<UInt64,UInt16>: stride 16 = key 8 + value 2 + padding 6 (37.5 % of the cell)
//
//	index:  0                1                2                3
//	      +--------+--+------+----------------+--------+--+------+--------+--+------+
//	      |key     |v |pad   | 0 = empty      |key     |v |pad   |key     |v |pad   | ...
//	      +--------+--+------+----------------+--------+--+------+--------+--+------+
//	       start = intHash64(key) & (cells-1); probe start, start+1, ... (step 1)
//
//	header: grower, size, and the zero cell: key 0 marks an empty cell, so a
//	real key 0 lives in one cell embedded in the header with a has-zero flag.
//
// It grows when size > cells*mlf (x4 below 2^19 cells, then x2) into a new
// slab and re-inserts every element; the old slab is garbage afterwards, so
// for a moment both are alive (1.5x the new size at x2). There is no delete,
// hence no tombstones.
type Hashed[K, V Bits] struct {
	cells   []cell[K, V] // len == 2^degree; key 0 marks an empty cell
	size    uint64       // elements in cells, not counting the zero cell
	g       grower
	hasZero bool
	zero    cell[K, V] // the pair with key 0, when hasZero
}

// cell is one padded key/value place: struct{K; V} as C++ lays out std::pair.
type cell[K, V Bits] struct {
	key   K
	value V
}

// NewHashed returns an empty hashed table of 256 cells.
func NewHashed[K, V Bits](opt Options) *Hashed[K, V] {
	return newHashed[K, V](opt.mlf(), dictionaryFastDegree)
}

func newHashed[K, V Bits](mlf float64, fastDegree uint8) *Hashed[K, V] {
	t := &Hashed[K, V]{g: newGrower(mlf, fastDegree)}
	t.cells = make([]cell[K, V], t.g.cells())
	return t
}

func (t *Hashed[K, V]) Layout() Layout { return LayoutHashed }

func (t *Hashed[K, V]) Insert(key K, value V) bool {
	var zero K
	if key == zero {
		if t.hasZero {
			return false
		}
		t.hasZero, t.zero = true, cell[K, V]{key, value}
		return true
	}
	cells, mask := t.cells, t.g.mask
	for i := hashKey(key) & mask; ; i = (i + 1) & mask {
		c := &cells[i]
		if c.key == key {
			return false
		}
		if c.key == zero {
			c.key, c.value = key, value
			t.size++
			if t.g.overflow(t.size) {
				t.grow()
			}
			return true
		}
	}
}

// grow moves every element into a slab of the next size.
func (t *Hashed[K, V]) grow() {
	old := t.cells
	t.g.increase()
	t.cells = make([]cell[K, V], t.g.cells())
	cells, mask := t.cells, t.g.mask
	var zero K
	for j := range old {
		c := &old[j]
		if c.key == zero {
			continue
		}
		i := hashKey(c.key) & mask
		for cells[i].key != zero {
			i = (i + 1) & mask
		}
		cells[i] = *c
	}
}

func (t *Hashed[K, V]) find(key K) *cell[K, V] {
	var zero K
	if key == zero {
		if t.hasZero {
			return &t.zero
		}
		return nil
	}
	cells, mask := t.cells, t.g.mask
	for i := hashKey(key) & mask; ; i = (i + 1) & mask {
		c := &cells[i]
		if c.key == key {
			return c
		}
		if c.key == zero {
			return nil
		}
	}
}

func (t *Hashed[K, V]) Get(key K) (V, bool) {
	if c := t.find(key); c != nil {
		return c.value, true
	}
	var v V
	return v, false
}

func (t *Hashed[K, V]) Has(key K) bool { return t.find(key) != nil }

func (t *Hashed[K, V]) Len() int { return int(t.size) + b2i(t.hasZero) }

func (t *Hashed[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.hasZero && !yield(t.zero.key, t.zero.value) {
			return
		}
		var zero K
		for i := range t.cells {
			if c := &t.cells[i]; c.key != zero && !yield(c.key, c.value) {
				return
			}
		}
	}
}

func (t *Hashed[K, V]) Stats() Stats {
	cellBytes := int64(unsafe.Sizeof(cell[K, V]{}))
	pair := int64(sizeOf[K]() + sizeOf[V]())
	header := int64(unsafe.Sizeof(*t))
	n := int64(t.Len())
	occupied := n // cells in use, the zero cell included
	total := int64(len(t.cells)) + 1
	s := Stats{
		ElementCount:   n,
		BucketCount:    int64(len(t.cells)),
		BytesAllocated: int64(len(t.cells))*cellBytes + header,
		PayloadBytes:   n * pair,
		PaddingBytes:   occupied * (cellBytes - pair),
		EmptyBytes:     (total - occupied) * cellBytes,
		MetadataBytes:  header - cellBytes, // the header less its zero cell
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

func (t *Hashed[K, V]) CheckInvariants() error {
	if uint64(len(t.cells)) != t.g.cells() {
		return fmt.Errorf("hashed: %d cells, want 2^%d", len(t.cells), t.g.degree)
	}
	var zero K
	var n uint64
	for i := range t.cells {
		c := &t.cells[i]
		if c.key == zero {
			if c.value != *new(V) {
				return fmt.Errorf("hashed: empty cell %d holds value %v", i, c.value)
			}
			continue
		}
		n++
		if f := t.find(c.key); f != c {
			return fmt.Errorf("hashed: key %v in cell %d is not found by a lookup", c.key, i)
		}
	}
	if n != t.size {
		return fmt.Errorf("hashed: %d occupied cells, size says %d", n, t.size)
	}
	if t.g.overflow(t.size) {
		return fmt.Errorf("hashed: %d elements exceed max fill %d of %d cells", t.size, t.g.maxFill, len(t.cells))
	}
	return t.Stats().check()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
