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

// NewHashed returns an empty hashed table of 256 cells, or of as many as
// opt.Reserve needs (grower.reserve). It panics with a *SlabError if the
// first slab (4 KiB for <UInt64,UInt16>) cannot be had; New returns it as
// an error.
func NewHashed[K, V Bits](opt Options) *Hashed[K, V] {
	return newHashed[K, V](opt.mlf(), dictionaryFastDegree, opt.reserve(), LayoutHashed)
}

// newHashed builds a hashed table sized for reserve elements; layout names
// it in errors and panics (hashed_array's key index is one).
func newHashed[K, V Bits](mlf float64, fastDegree uint8, reserve uint64, layout Layout) *Hashed[K, V] {
	t := &Hashed[K, V]{g: newGrower(mlf, fastDegree)}
	t.g.reserve(reserve)
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
		var c *cell[K, V]
		for i := uintptr(hashKey(key)) & mask; ; i = (i + 1) & mask {
			c = (*cell[K, V])(unsafe.Add(base, i*unsafe.Sizeof(cell[K, V]{})))
			if c.key == key {
				return false
			}
			if c.key == zero {
				break
			}
		}
		// Grow before placing, at the same element count as ClickHouse
		// (which places, then grows past cells*mlf), so that a growth that
		// cannot get its slab leaves the table as it was.
		if t.g.overflow(t.size + 1) {
			t.grow()
			continue
		}
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
// (Reading the first two cells before testing either, to take a
// mispredicted branch off the hit path, cost 15 % at 1e7: the extra
// instructions let fewer lookups overlap their cache misses.)
func (t *Hashed[K, V]) Get(key K) (V, bool) {
	var zero K
	if key != zero {
		base, end := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(len(t.cells))*unsafe.Sizeof(cell[K, V]{})
		if c := t.find(base, end, (uintptr(hashKey(key))&uintptr(t.g.mask))*unsafe.Sizeof(cell[K, V]{}), key); c != nil {
			return c.value, true
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

// find probes for key (not 0) from the cell at byte offset o, its home,
// over the slab [base, base+end), and returns the key's cell, or nil.
// Cells are addressed through an unsafe pointer: o is always a whole cell
// inside the slab, so the bounds check the compiler cannot remove is not
// needed. It inlines into Get and GetMany (cost 52 of the compiler's 80;
// hashKey inlines too): the probe calls no function.
func (t *Hashed[K, V]) find(base unsafe.Pointer, end, o uintptr, key K) *cell[K, V] {
	for {
		c := (*cell[K, V])(unsafe.Add(base, o))
		if c.key == key {
			return c
		} else if c.key == *new(K) {
			return nil
		}
		if o += unsafe.Sizeof(cell[K, V]{}); o == end {
			o = 0
		}
	}
}

// homes computes the byte offsets of the home cells of keys[lo:lo+getBatch]
// into h and prefetches them (prefetch.go).
func (t *Hashed[K, V]) homes(keys []K, lo int, h *homes) {
	if lo >= len(keys) {
		return
	}
	mask := uintptr(t.g.mask)
	batch := keys[lo:min(lo+getBatch, len(keys))]
	for j, k := range batch {
		h[j] = (uintptr(hashKey(k)) & mask) * unsafe.Sizeof(cell[K, V]{})
	}
	prefetchOffsets(unsafe.Pointer(unsafe.SliceData(t.cells)), h, len(batch))
}

// GetMany looks up every key of keys: values[i], found[i] = Get(keys[i]).
// It returns how many were found; values and found must be at least as long
// as keys. It overlaps the keys' cache misses (prefetch.go): at 1e7 it reads
// about 2.5x as many rows a second as a loop of Get.
func (t *Hashed[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.closed {
		closedPanic(t.owner.layout)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	var zero K
	base, end := unsafe.Pointer(unsafe.SliceData(t.cells)), uintptr(len(t.cells))*unsafe.Sizeof(cell[K, V]{})
	var h [2]homes
	t.homes(keys, 0, &h[0])
	n := 0
	for lo, cur := 0, 0; lo < len(keys); lo, cur = lo+getBatch, cur^1 {
		t.homes(keys, lo+getBatch, &h[cur^1])
		for j, key := range keys[lo:min(lo+getBatch, len(keys))] {
			var v V
			ok := false
			if key != zero {
				if c := t.find(base, end, h[cur][j], key); c != nil {
					v, ok = c.value, true
				}
			} else if t.hasZero {
				v, ok = t.zero.value, true
			}
			values[lo+j], found[lo+j] = v, ok
			n += b2i(ok)
		}
	}
	return n
}

// InsertMany is Insert for every pair of keys and values, pipelined
// (insertBatched); the loader's workers insert their blocks with it.
func (t *Hashed[K, V]) InsertMany(keys []K, values []V, inserted []bool) int {
	return insertBatched(keys, values, inserted, func(keys []K, lo int) (h homes) {
		t.homes(keys, lo, &h)
		return h
	}, t.Insert)
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
	t.owner.close(&t.cleanup)
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
