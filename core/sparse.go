package core

import (
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"unsafe"
)

// Sparse is google's sparse_hash_map, which ClickHouse's SPARSE_HASHED used
// for every key and value before PackedHashMap and still uses for values
// over 8 bytes and complex keys.
//
//	buckets: 2^n logical buckets, split into groups of 48
//	group:   16 bytes = pointer to a packed vector + 48-bit bitmap
//	         (the top 16 bits of the bitmap word hold the vector's capacity)
//
//	bucket:  0  1  2  3  4  5 ...            47 | 48 ...
//	bitmap:  0  1  0  0  1  1 ...             0 | next group
//	            |        |  |
//	vector:  +--------------+--------------+--------------+- - - - - +
//	         |key     |v |pad|key     |v |pad|key     |v |pad| spare    |
//	         +--------------+--------------+--------------+- - - - - +
//	         only occupied buckets have a cell: position = popcount(bitmap
//	         below the bucket); cells are struct{K; V} with padding, as the
//	         library stores std::pair.
//
// Probing is quadratic (triangular): start = intHash64(key) & (buckets-1),
// then +1, +2, +3, ... The table starts at 32 buckets and doubles when an
// insert would take it past buckets*mlf (ClickHouse sets mlf 0.5; the
// library's own default is 0.8), re-inserting every element into a new table.
//
// The library reallocates a group's vector on every insert to exactly the
// new count, leaving the slack to malloc. Here a vector is allocated at the
// Go size class that fits it and the class's spare cells are used before the
// next reallocation; that spare capacity is counted as empty bytes.
type Sparse[K, V Bits] struct {
	groups  []sparseGroup // len == ceil(buckets / 48)
	buckets uint64        // always a power of two, at least 32
	size    uint64
	mlf     float64
	maxFill uint64 // uint64(buckets * mlf): an insert beyond it enlarges
	closed  bool
}

// sparseGroup is 16 bytes, like the library's sparsegroup on a 64-bit machine.
type sparseGroup struct {
	cells  unsafe.Pointer // *[capacity]cell[K, V], nil while capacity is 0
	bitmap uint64         // bits 0..47: occupied buckets; bits 48..63: capacity
}

const (
	sparseGroupSize       = 48
	sparseOccupied        = 1<<sparseGroupSize - 1
	sparseStartingBuckets = 32
	sparseCapacityShift   = sparseGroupSize
)

func (g *sparseGroup) count() int    { return bits.OnesCount64(g.bitmap & sparseOccupied) }
func (g *sparseGroup) capacity() int { return int(g.bitmap >> sparseCapacityShift) }

// NewSparse returns an empty sparse table of 32 buckets.
func NewSparse[K, V Bits](opt Options) *Sparse[K, V] {
	t := &Sparse[K, V]{mlf: opt.mlf()}
	t.setBuckets(sparseStartingBuckets)
	return t
}

func (t *Sparse[K, V]) setBuckets(n uint64) {
	t.buckets = n
	t.maxFill = uint64(float64(n) * t.mlf)
	t.groups = make([]sparseGroup, (n+sparseGroupSize-1)/sparseGroupSize)
}

// sparseBucketsFor is the library's min_buckets: the smallest power of two,
// at least 32, that holds n elements below its threshold.
func sparseBucketsFor(n uint64, mlf float64) uint64 {
	b := uint64(sparseStartingBuckets)
	for n > uint64(float64(b)*mlf) {
		b *= 2
	}
	return b
}

func (t *Sparse[K, V]) Layout() Layout { return LayoutSparse }

func (t *Sparse[K, V]) cellsOf(g *sparseGroup) []cell[K, V] {
	if g.cells == nil {
		return nil
	}
	return unsafe.Slice((*cell[K, V])(g.cells), g.capacity())
}

// probe walks key's probe sequence; it returns the bucket holding key, or
// the first empty bucket and found == false.
func (t *Sparse[K, V]) probe(key K) (bucket uint64, found bool) {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	mask := t.buckets - 1
	b := hashKey(key) & mask
	for step := uint64(1); ; step++ {
		g := &t.groups[b/sparseGroupSize]
		pos := b % sparseGroupSize
		if g.bitmap&(1<<pos) == 0 {
			return b, false
		}
		if t.cellsOf(g)[bits.OnesCount64(g.bitmap&(1<<pos-1))].key == key {
			return b, true
		}
		b = (b + step) & mask
	}
}

func (t *Sparse[K, V]) Insert(key K, value V) bool {
	b, found := t.probe(key)
	if found {
		return false
	}
	if t.size+1 > t.maxFill {
		t.resize(sparseBucketsFor(t.size+1, t.mlf))
		b, _ = t.probe(key)
	}
	t.place(b, key, value)
	t.size++
	return true
}

// place puts a pair into empty bucket b, growing its group's vector.
func (t *Sparse[K, V]) place(b uint64, key K, value V) {
	g := &t.groups[b/sparseGroupSize]
	pos := b % sparseGroupSize
	at := bits.OnesCount64(g.bitmap & (1<<pos - 1))
	n := g.count()
	cells := t.cellsOf(g)
	if n == len(cells) {
		// Reallocate at the next size class: slices.Grow rounds the capacity
		// up to what the allocator hands out anyway.
		grown := slices.Grow([]cell[K, V](nil), n+1)
		grown = grown[:min(cap(grown), sparseGroupSize)]
		copy(grown, cells[:at])
		copy(grown[at+1:], cells[at:n])
		cells = grown
		g.cells = unsafe.Pointer(unsafe.SliceData(cells))
		g.bitmap = g.bitmap&sparseOccupied | uint64(len(cells))<<sparseCapacityShift
	} else {
		copy(cells[at+1:n+1], cells[at:n])
	}
	cells[at] = cell[K, V]{key, value}
	g.bitmap |= 1 << pos
}

// resize re-inserts every element into a fresh table of n buckets.
func (t *Sparse[K, V]) resize(n uint64) {
	old := t.groups
	t.setBuckets(n)
	for gi := range old {
		g := &old[gi]
		for _, c := range t.cellsOf(g)[:g.count()] {
			b, _ := t.probe(c.key)
			t.place(b, c.key, c.value)
		}
	}
}

func (t *Sparse[K, V]) Get(key K) (V, bool) {
	b, found := t.probe(key)
	if !found {
		var v V
		return v, false
	}
	g := &t.groups[b/sparseGroupSize]
	return t.cellsOf(g)[bits.OnesCount64(g.bitmap&(1<<(b%sparseGroupSize)-1))].value, true
}

func (t *Sparse[K, V]) Has(key K) bool { _, found := t.probe(key); return found }
func (t *Sparse[K, V]) Len() int {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	return int(t.size)
}

// GetMany is Get in a loop.
func (t *Sparse[K, V]) GetMany(keys []K, values []V, found []bool) int {
	values, found = values[:len(keys)], found[:len(keys)]
	n := 0
	for i, k := range keys {
		values[i], found[i] = t.Get(k)
		n += b2i(found[i])
	}
	return n
}

// Close drops the groups and their vectors (for now on the Go heap: the
// collector frees them at its next cycle).
func (t *Sparse[K, V]) Close() {
	t.closed = true
	t.groups, t.size, t.buckets, t.maxFill = nil, 0, 0, 0
}

func (t *Sparse[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.closed {
			closedPanic(LayoutSparse)
		}
		for gi := range t.groups {
			g := &t.groups[gi]
			for _, c := range t.cellsOf(g)[:g.count()] {
				if !yield(c.key, c.value) {
					return
				}
			}
		}
	}
}

func (t *Sparse[K, V]) Stats() Stats {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	cellBytes := int64(unsafe.Sizeof(cell[K, V]{}))
	pair := int64(sizeOf[K]() + sizeOf[V]())
	var capacity int64
	for gi := range t.groups {
		capacity += int64(t.groups[gi].capacity())
	}
	n := int64(t.size)
	meta := int64(len(t.groups))*int64(unsafe.Sizeof(sparseGroup{})) + int64(unsafe.Sizeof(*t))
	s := Stats{
		ElementCount:   n,
		BucketCount:    int64(t.buckets),
		BytesAllocated: capacity*cellBytes + meta,
		PayloadBytes:   n * pair,
		PaddingBytes:   n * (cellBytes - pair),
		EmptyBytes:     (capacity - n) * cellBytes,
		MetadataBytes:  meta,
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

func (t *Sparse[K, V]) CheckInvariants() error {
	if t.closed {
		return fmt.Errorf("sparse: closed")
	}
	if t.buckets < sparseStartingBuckets || t.buckets&(t.buckets-1) != 0 {
		return fmt.Errorf("sparse: %d buckets is not a power of two >= %d", t.buckets, sparseStartingBuckets)
	}
	if want := (t.buckets + sparseGroupSize - 1) / sparseGroupSize; uint64(len(t.groups)) != want {
		return fmt.Errorf("sparse: %d groups for %d buckets, want %d", len(t.groups), t.buckets, want)
	}
	var n uint64
	for gi := range t.groups {
		g := &t.groups[gi]
		if g.count() > g.capacity() {
			return fmt.Errorf("sparse: group %d has %d cells in a vector of %d", gi, g.count(), g.capacity())
		}
		if uint64(gi)*sparseGroupSize+uint64(bits.Len64(g.bitmap&sparseOccupied)) > t.buckets {
			return fmt.Errorf("sparse: group %d marks a bucket beyond %d", gi, t.buckets)
		}
		cells := t.cellsOf(g)
		for i, c := range cells[:g.count()] {
			b, found := t.probe(c.key)
			if !found || b/sparseGroupSize != uint64(gi) || bits.OnesCount64(g.bitmap&(1<<(b%sparseGroupSize)-1)) != i {
				return fmt.Errorf("sparse: key %v in group %d cell %d is not found by a lookup", c.key, gi, i)
			}
		}
		n += uint64(g.count())
	}
	if n != t.size {
		return fmt.Errorf("sparse: %d occupied buckets, size says %d", n, t.size)
	}
	if t.size > t.maxFill {
		return fmt.Errorf("sparse: %d elements exceed the threshold %d of %d buckets", t.size, t.maxFill, t.buckets)
	}
	return t.Stats().check()
}
