package core

import (
	"fmt"
	"iter"
	"runtime"
	"unsafe"
)

// Hashed is ClickHouse's HashMap<K, V>, the table behind LAYOUT(HASHED()).
//
//	cells: 2^degree cells of struct{K; V} with natural padding, in one slab
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
// It grows when size > cells*mlf (x4 below 2^19 cells, then x2), as
// ClickHouse's HashTable does: the slab is enlarged like a realloc (on
// Linux by mremap, which moves pages rather than bytes, so the peak of a
// growth is the new slab alone; elsewhere by a copy, when for a moment the
// old and the new slab are both alive), then every element is re-placed in
// place. There is no delete, hence no tombstones.
type Hashed[K, V Bits] struct {
	cells   []cell[K, V] // a view of the slab; len == 2^degree; key 0 marks an empty cell
	size    uint64       // elements in cells, not counting the zero cell
	g       grower
	hasZero bool
	closed  bool
	zero    cell[K, V] // the pair with key 0, when hasZero
	owner   *slabOwner // the cell slab
	cleanup runtime.Cleanup
}

// cell is one padded key/value place: struct{K; V} as C++ lays out std::pair.
type cell[K, V Bits] struct {
	key   K
	value V
}

// NewHashed returns an empty hashed table of 256 cells. It panics with a
// *SlabError if the first slab (4 KiB for <UInt64,UInt16>) cannot be had.
func NewHashed[K, V Bits](opt Options) *Hashed[K, V] {
	return newHashed[K, V](opt.mlf(), dictionaryFastDegree, LayoutHashed)
}

// newHashed builds a hashed table; layout names it in errors and panics
// (hashed_array's key index is one).
func newHashed[K, V Bits](mlf float64, fastDegree uint8, layout Layout) *Hashed[K, V] {
	t := &Hashed[K, V]{g: newGrower(mlf, fastDegree)}
	t.owner, t.cleanup = own(t, layout)
	t.cells = t.newCells(t.g)
	return t
}

// newCells allocates the slab of g's size, owned by t, and views it as cells.
func (t *Hashed[K, V]) newCells(g grower) []cell[K, V] {
	slab := mustSlab(t.owner.layout, slabBytes(t.owner.layout, g.cells(), uint64(unsafe.Sizeof(cell[K, V]{}))))
	t.owner.add(slab)
	return viewOf[cell[K, V]](slab, g.cells())
}

func (t *Hashed[K, V]) Layout() Layout { return LayoutHashed }

// Insert stores (key, value) if key is absent and reports whether it did.
func (t *Hashed[K, V]) Insert(key K, value V) bool {
	var zero K
	if key == zero {
		return t.insertZero(value)
	}
	for {
		base, mask := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(t.g.mask)
		// The first two cells of the probe, read before either is tested
		// (see Get): at the fills a table grows at, one of them is empty in
		// ~95 % of inserts, and which one is chosen without a branch.
		i := uintptr(hashKey(key)) & mask
		j := (i + 1) & mask
		o0, o1 := i*unsafe.Sizeof(cell[K, V]{}), j*unsafe.Sizeof(cell[K, V]{})
		k0, k1 := (*cell[K, V])(unsafe.Add(base, o0)).key, (*cell[K, V])(unsafe.Add(base, o1)).key
		if k0 == key || k1 == key {
			return false
		}
		var o uintptr
		if uintptr(b2u(k0 == zero)|b2u(k1 == zero)) != 0 {
			o = o1 ^ (o0^o1)&-uintptr(b2u(k0 == zero))
		} else {
			for i = (j + 1) & mask; ; i = (i + 1) & mask {
				k := (*cell[K, V])(unsafe.Add(base, i*unsafe.Sizeof(cell[K, V]{}))).key
				if k == key {
					return false
				}
				if k == zero {
					break
				}
			}
			o = i * unsafe.Sizeof(cell[K, V]{})
		}
		// Grow before placing, at the same element count as ClickHouse
		// (which places, then grows past cells*mlf), so that a growth that
		// cannot get its slab leaves the table as it was.
		if t.g.overflow(t.size + 1) {
			t.grow()
			continue
		}
		c := (*cell[K, V])(unsafe.Add(base, o))
		c.key, c.value = key, value
		t.size++
		return true
	}
}

func (t *Hashed[K, V]) insertZero(value V) bool {
	if t.closed {
		closedPanic(t.owner.layout)
	}
	if t.hasZero {
		return false
	}
	t.hasZero, t.zero.value = true, value
	return true
}

// grow enlarges the slab to the next size, as ClickHouse's HashTable::resize
// reallocs its buffer (growSlab: mremap where the OS has it, so the old
// cells are neither copied nor resident twice), then rehashes in place.
func (t *Hashed[K, V]) grow() {
	if t.closed {
		closedPanic(t.owner.layout)
	}
	g := t.g
	g.increase()
	old := uintptr(len(t.cells))
	// May panic with a *SlabError: nothing has changed yet.
	slab := t.owner.grow(bytesOf(t.cells), slabBytes(t.owner.layout, g.cells(), uint64(unsafe.Sizeof(cell[K, V]{}))))
	t.cells, t.g = viewOf[cell[K, V]](slab, g.cells()), g
	t.rehash(old)
}

// rehash moves every element of the first old cells, and of the chain that
// runs on past them, to its place in the grown table: ClickHouse's resize
// and reinsert. A key's new home is its old home plus a multiple of old,
// so the pass reads the old cells in order and writes 2 or 4 ascending
// streams, which the hardware prefetcher follows.
//
// An element stays where it is when the probe from its new home reaches it
// before an empty cell, and moves to that empty cell otherwise, which frees
// its cell for the elements behind it. A chain that wrapped around the end
// of the old cells into their start ends up, after the first pass, just
// past the old end; the second pass walks that run until an empty cell.
func (t *Hashed[K, V]) rehash(old uintptr) {
	base, mask := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(t.g.mask)
	at := func(i uintptr) *cell[K, V] { return (*cell[K, V])(unsafe.Add(base, i*unsafe.Sizeof(cell[K, V]{}))) }
	var zero K
	reinsert := func(i uintptr) {
		c := at(i)
		p := uintptr(hashKey(c.key)) & mask
		for ; p != i; p = (p + 1) & mask {
			if d := at(p); d.key == zero {
				*d, *c = *c, cell[K, V]{}
				return
			}
		}
	}
	i := uintptr(0)
	for ; i < old; i++ {
		if at(i).key != zero {
			reinsert(i)
		}
	}
	for ; i <= mask && at(i).key != zero; i++ {
		reinsert(i)
	}
}

// Get returns the value stored for key.
//
// The probe reads cells through an unsafe pointer: i is masked, so every
// cell it names lies inside the slab, and the bounds check the compiler
// cannot remove (i <= mask < len) is not needed. hashKey inlines.
//
// It reads the first two cells of the probe before testing either, and
// picks the one that holds key without a branch: at the fills a table
// grows at, ~97 % of hits are in those two, so the one branch that decides
// "found" is predicted, where a loop's first "key == key?" was taken ~85 %
// of the time and every mispredict discarded the lookups the CPU had
// started behind it (the next keys' cache misses).
func (t *Hashed[K, V]) Get(key K) (V, bool) {
	var zero K
	if key != zero {
		base, mask := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(t.g.mask)
		i := uintptr(hashKey(key)) & mask
		j := (i + 1) & mask
		o0, o1 := i*unsafe.Sizeof(cell[K, V]{}), j*unsafe.Sizeof(cell[K, V]{})
		k0, k1 := (*cell[K, V])(unsafe.Add(base, o0)).key, (*cell[K, V])(unsafe.Add(base, o1)).key
		if uintptr(b2u(k0 == key)|b2u(k1 == key)) != 0 {
			return (*cell[K, V])(unsafe.Add(base, o1^(o0^o1)&-uintptr(b2u(k0 == key)))).value, true
		}
		if k0 != zero && k1 != zero {
			for i = (j + 1) & mask; ; i = (i + 1) & mask {
				c := (*cell[K, V])(unsafe.Add(base, i*unsafe.Sizeof(cell[K, V]{})))
				if c.key == key {
					return c.value, true
				}
				if c.key == zero {
					break
				}
			}
		}
	} else if t.hasZero {
		return t.zero.value, true
	}
	if t.closed { // a closed table has one empty cell: every lookup ends here
		closedPanic(t.owner.layout)
	}
	var v V
	return v, false
}

// GetMany looks up every key of keys: values[i], found[i] = Get(keys[i]).
// It returns how many were found; values and found must be at least as long
// as keys. See getBatch for what it buys over calling Get in a loop.
func (t *Hashed[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.closed {
		closedPanic(t.owner.layout)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	base, mask := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(t.g.mask)
	n, sink := 0, uint8(0)
	for start := 0; start < len(keys); start += getBatch {
		batch := keys[start:min(start+getBatch, len(keys))]
		for _, k := range batch {
			sink += *(*uint8)(unsafe.Add(base, (uintptr(hashKey(k))&mask)*unsafe.Sizeof(cell[K, V]{})))
		}
		for j, k := range batch {
			v, ok := t.Get(k)
			values[start+j], found[start+j] = v, ok
			n += b2i(ok)
		}
	}
	touchSink.Store(uint32(sink))
	return n
}

// InsertMany is Insert for every pair of keys and values, its cache misses
// overlapped like GetMany's: inserted[i] = Insert(keys[i], values[i]). It
// returns how many were inserted; values and inserted must be at least as
// long as keys. The loader's workers insert their blocks with it.
func (t *Hashed[K, V]) InsertMany(keys []K, values []V, inserted []bool) int {
	values, inserted = values[:len(keys)], inserted[:len(keys)]
	n, sink := 0, uint8(0)
	for start := 0; start < len(keys); start += getBatch {
		batch := keys[start:min(start+getBatch, len(keys))]
		base, mask := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(t.g.mask)
		for _, k := range batch {
			sink += *(*uint8)(unsafe.Add(base, (uintptr(hashKey(k))&mask)*unsafe.Sizeof(cell[K, V]{})))
		}
		for j, k := range batch {
			ok := t.Insert(k, values[start+j])
			inserted[start+j] = ok
			n += b2i(ok)
		}
	}
	touchSink.Store(uint32(sink))
	return n
}

func (t *Hashed[K, V]) Has(key K) bool { _, ok := t.Get(key); return ok }

func (t *Hashed[K, V]) Len() int {
	if t.closed {
		closedPanic(t.owner.layout)
	}
	return int(t.size) + b2i(t.hasZero)
}

func (t *Hashed[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.closed {
			closedPanic(t.owner.layout)
		}
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

// Close releases the table's slab at once. A second Close does nothing; any
// other use of a closed table panics with a message that says so.
func (t *Hashed[K, V]) Close() {
	if t.closed {
		return
	}
	t.cleanup.Stop()
	t.owner.free()
	t.closed, t.hasZero, t.size = true, false, 0
	t.cells = closedView[cell[K, V]]()
	t.g.mask, t.g.maxFill = 0, 0
}

func (t *Hashed[K, V]) Stats() Stats {
	n := int64(t.Len())
	cellBytes := int64(unsafe.Sizeof(cell[K, V]{}))
	pair := int64(sizeOf[K]() + sizeOf[V]())
	header := int64(unsafe.Sizeof(*t))
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
	if t.closed {
		return fmt.Errorf("hashed: closed")
	}
	if uint64(len(t.cells)) != t.g.cells() {
		return fmt.Errorf("hashed: %d cells, want 2^%d", len(t.cells), t.g.degree)
	}
	if len(t.owner.slabs) != 1 || &t.owner.slabs[0][0] != &bytesOf(t.cells)[0] {
		return fmt.Errorf("hashed: owns %d slabs, want exactly the cell slab", len(t.owner.slabs))
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
		// Linear probing's invariant: from the key's home to its cell there
		// is no empty cell (or a lookup would stop short) and no other copy.
		mask := uintptr(t.g.mask)
		for j := uintptr(hashKey(c.key)) & mask; j != uintptr(i); j = (j + 1) & mask {
			if k := t.cells[j].key; k == zero || k == c.key {
				return fmt.Errorf("hashed: key %v in cell %d is not found by a lookup (cell %d holds %v)", c.key, i, j, k)
			}
		}
		if v, ok := t.Get(c.key); !ok || v != c.value {
			return fmt.Errorf("hashed: Get(%v) = %v, %v; cell %d holds %v", c.key, v, ok, i, c.value)
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

// b2u is b as 0 or 1, which the compiler makes with SETcc, not a branch.
func b2u(b bool) uint8 {
	var u uint8
	if b {
		u = 1
	}
	return u
}
