package core

import (
	"fmt"
	"iter"
	"math/bits"
	"runtime"
	"unsafe"
)

// The sparse layout: its memory picture, and the measurements behind it.
//
//	buckets: 2^n logical buckets, split into groups of 48
//	group:   16 bytes = 48-bit bitmap (+ the vector's capacity in the top
//	         16 bits) and a reference to a packed vector of its cells
//
//	bucket:  0  1  2  3  4  5 ...            47 | 48 ...
//	bitmap:  0  1  0  0  1  1 ...             0 | next group
//	            |        |  |
//	vector:  +--------------+--------------+--------------+
//	         |key     |v |pad|key     |v |pad|key     |v |pad|
//	         +--------------+--------------+--------------+
//	         only occupied buckets have a cell: position = popcount(bitmap
//	         below the bucket); cells are struct{K; V} with padding, as the
//	         library stores std::pair; a vector holds exactly its count.
//
// Probing is quadratic (triangular): start = intHash64(key) & (buckets-1),
// then +1, +2, +3, ... The table starts at 32 buckets and doubles when an
// insert would take it past buckets*mlf (ClickHouse sets mlf 0.5; the
// library's own default is 0.8), re-inserting every element.
//
// # Where the vectors live
//
// The library reallocates a group's vector to the new count on every
// insert and leaves the rest to malloc. Here the vectors live in slabs the
// table owns (sparse_alloc.go), the seed's "sparse_hash_map packed
// allocator" row:
//
//	groups slab: ceil(buckets/48) * 16 bytes           (metadata)
//	arena:       slabs of 1/64 of the arena (>= 4 KiB), carved into pages
//	             of P bytes, P ~ 3/8 * cell * sqrt(buckets), one 48-cell
//	             block (128 B for 2-byte cells) to 32 KiB
//	             (16 KiB for <UInt64,UInt16> from 2^22 buckets on)
//	heap:        48 classes, one per vector size; class k is a dense array
//	             of k-cell blocks over its own list of pages:
//
//	class 14:  page A                         page B
//	          +----+----+-- --+----+----+---+ +----+----+------+---+----+
//	          | b0 | b1 | ... |b70 |tail|own| |b71 |b72 | free |tail|own|
//	          +----+----+-- --+----+----+---+ +----+----+------+---+----+
//	           block = 14 cells; own = uint32 owner (group index) per block
//
//	a group's vector ref = slab index << 32 | byte offset in the slab
//
// An insert allocates the group's new block at the end of class k+1, copies
// the cells around the new one, and frees the old block of class k by moving
// class k's last block into its place (its owner group learns the new ref).
// A class of n blocks therefore always holds ceil(n/per) pages, whatever the
// groups' counts did; a page a class no longer needs goes to the arena's
// pool, where any class takes it next.
//
// Why dense classes. While a table fills, every group's count drifts up (a
// Poisson mean going from 12 to 24 between two growths at mlf 0.5): the
// small classes empty out while the large ones grow. A simulation of the
// allocation sequence (the real groups, bitmaps and triangular probing, 1e7
// random keys, chunks of 64 KiB; bytes held / (cells + groups), at the end
// of the load and just before its last growth):
//
//	allocator                                       end    before growth  growth peak
//	free list per exact size class, chunks kept     1.55   1.85           3.4
//	the same with classes of 4 cells                1.74   1.99           3.7
//	fullest chunk first, empty chunks returned      1.36   1.27           2.7
//	dense classes (move the last block), pages
//	returned to a shared pool                       1.026  1.019          1.11
//	dense, classes of 2 cells (slack counted)       1.054  1.038          1.15
//
// A free list per class strands the vacated blocks of the small classes:
// they are never the size a growing group asks for. Returning empty chunks
// helps little, because departures from a class are random and a chunk
// empties only when its last block leaves. Moving blocks keeps every class
// dense at the price of one more copy of a vector per insert, of a block
// that is in cache (the old block was just read, the class's last block was
// written recently): 6 % of the memmove time of a load. The owner entries
// that make the move possible cost 4 bytes per vector (0.28 bytes per pair
// at 1e7), and compaction passes would have needed them too.
//
// # Growth
//
// A growth re-inserts every element into a table of twice the buckets, page
// by page: class by class, each page of the old heap moved and then put in
// the pool, where the new heap's classes take it. Old and new heap share the
// arena (the page size only changes while the table is small: below 2^22
// buckets for <UInt64,UInt16>, 2^24 at most; then the old arena is released
// after the move), so the table never holds two copies of its
// cells: at its peak it holds the old table, the new groups and the pages
// the new heap needs beyond the old one's. A dry run on the new bitmaps
// alone first replays the move and counts those pages exactly; they are
// reserved (a slab or none) before anything changes, so a refused slab
// leaves the table as it was, and the move itself allocates nothing. Owner
// entries are uint32: a table has at most 2^32 groups (2^37 buckets, about
// 6.9e10 keys at mlf 0.5); a growth past that is refused with a *SlabError.
//
// # Figures
//
// 1e7 random <UInt64,UInt16> (the anchors workload), mlf 0.5, 2^25 buckets:
// 17.60 bytes per pair = cells 16 + groups 1.118 + owners 0.280 + empty
// 0.190 (page tails 0.078, free slots of the classes' last pages 0.028,
// uncarved 0.082, pool 0.002) + Go-side tables 0.014, in 144 slabs of
// 16 KiB pages. The ideal (exact vectors, nothing between them) is 17.12;
// the Go heap's size classes gave 17.29 computed, and 66-87 bytes per pair
// resident. The most the table held during the load was its final size
// (the growth at 8.4e6 keys held less). See the README for RSS and times.

// Sparse is google's sparse_hash_map, which ClickHouse's SPARSE_HASHED used
// for every key and value before PackedHashMap and still uses for values
// over 8 bytes and complex keys.
//
// Its design, with the measurements that chose it, is the comment at
// the top of sparse.go.
type Sparse[K, V Bits] struct {
	groups    unsafe.Pointer // ceil(buckets/48) sparseGroups in groupSlab (closedMemory once closed)
	arena     sparseArena    // the pages the vectors live in
	heap      sparseHeap     // the vectors, by class
	mask      uint64         // buckets - 1; buckets is a power of two, at least 32
	size      uint64
	maxFill   uint64 // uint64(buckets * mlf): an insert beyond it grows the table
	mlf       float64
	groupSlab []byte
	closed    bool
	owner     *slabOwner // groupSlab and the arena's slabs
	cleanup   runtime.Cleanup
}

// sparseGroup is 16 bytes, like the library's sparsegroup on a 64-bit
// machine: the bitmap of its 48 buckets, and where its vector is.
type sparseGroup struct {
	bitmap uint64    // bits 0..47: occupied buckets; bits 48..63: the vector's capacity (= count)
	ref    sparseRef // the vector: count cells of struct{K; V}, in bucket order
}

const (
	sparseGroupSize       = 48
	sparseOccupied        = 1<<sparseGroupSize - 1
	sparseStartingBuckets = 32
	sparseCapacityShift   = sparseGroupSize
	sparseGroupBytes      = 16
)

func sparseGroupAt(groups unsafe.Pointer, i uint64) *sparseGroup {
	return (*sparseGroup)(unsafe.Add(groups, uintptr(i)*sparseGroupBytes))
}

func (g *sparseGroup) count() int    { return bits.OnesCount64(g.bitmap & sparseOccupied) }
func (g *sparseGroup) capacity() int { return int(g.bitmap >> sparseCapacityShift) }

func sparseCellBytes[K, V Bits]() uint32 { return uint32(unsafe.Sizeof(cell[K, V]{})) }

// NewSparse returns an empty sparse table of 32 buckets, or of as many as
// opt.Reserve needs: the library's resize(n), the smallest power of two
// that holds n below the max load factor (sparseBucketsFor). Only the
// groups are allocated ahead; their vectors still grow one insert at a
// time, which is why ClickHouse found reserve could not stop sparse_hash's
// reallocations. It panics with a *SlabError if its first slab cannot be
// had; New returns it as an error.
func NewSparse[K, V Bits](opt Options) *Sparse[K, V] {
	t := &Sparse[K, V]{mlf: opt.mlf()}
	t.owner, t.cleanup = own(t, LayoutSparse)
	buckets := sparseBucketsFor(opt.reserve(), t.mlf)
	t.groupSlab = t.newGroups(buckets)
	t.groups = unsafe.Pointer(unsafe.SliceData(t.groupSlab))
	t.setBuckets(buckets)
	t.arena.pageShift = sparsePageShift(buckets, sparseCellBytes[K, V]())
	t.heap.geo = newSparseGeometry(t.arena.pageShift, sparseCellBytes[K, V]())
	return t
}

// newGroups allocates the zeroed groups of a table of n buckets.
func (t *Sparse[K, V]) newGroups(buckets uint64) []byte {
	groups := (buckets + sparseGroupSize - 1) / sparseGroupSize
	if groups > sparseMaxGroups {
		panic(&SlabError{Layout: LayoutSparse, Bytes: groups * sparseGroupBytes,
			Err: fmt.Errorf("%d buckets make %d groups, more than the 2^32 a vector's owner can name", buckets, groups)})
	}
	slab := mustSlab(LayoutSparse, slabBytes(LayoutSparse, groups, sparseGroupBytes))
	t.owner.add(slab)
	return slab
}

func (t *Sparse[K, V]) setBuckets(n uint64) {
	t.mask = n - 1
	t.maxFill = uint64(float64(n) * t.mlf)
}

func (t *Sparse[K, V]) buckets() uint64 { return t.mask + 1 }

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

// cellAt is cell i of the vector at ref.
func (t *Sparse[K, V]) cellAt(ref sparseRef, i int) *cell[K, V] {
	return (*cell[K, V])(unsafe.Add(t.arena.addr(ref), uintptr(i)*unsafe.Sizeof(cell[K, V]{})))
}

// Get returns the value stored for key. Probing is triangular: bucket
// h, h+1, h+3, h+6, ... (mod buckets); a bucket is occupied when its bit is
// set, and its cell is the vector's cell popcount(bitmap below the bucket).
func (t *Sparse[K, V]) Get(key K) (V, bool) {
	v, ok := t.lookup(hashKey(key)&t.mask, key)
	if !ok && t.closed { // a closed table's groups are closedMemory: every probe ends here
		closedPanic(LayoutSparse)
	}
	return v, ok
}

// lookup probes from bucket b for key.
func (t *Sparse[K, V]) lookup(b uint64, key K) (V, bool) {
	mask, groups := t.mask, t.groups
	bases := unsafe.Pointer(unsafe.SliceData(t.arena.bases))
	for step := uint64(1); ; step++ {
		g := sparseGroupAt(groups, b/sparseGroupSize)
		pos := b % sparseGroupSize
		w := g.bitmap
		if w>>pos&1 == 0 {
			break
		}
		if c := (*cell[K, V])(sparseCell(bases, g.ref, w, pos, unsafe.Sizeof(cell[K, V]{}))); c.key == key {
			return c.value, true
		}
		b = (b + step) & mask
	}
	var v V
	return v, false
}

// sparseCell is the address of bucket pos's cell in the vector at ref, for
// a group of bitmap w and cells of cs bytes; bases is the arena's slab table.
func sparseCell(bases unsafe.Pointer, ref sparseRef, w, pos uint64, cs uintptr) unsafe.Pointer {
	base := *(*unsafe.Pointer)(unsafe.Add(bases, uintptr(ref>>32)*unsafe.Sizeof(bases)))
	return unsafe.Add(base, uintptr(ref&sparseRefOffset)+uintptr(bits.OnesCount64(w&(1<<pos-1)))*cs)
}

// Insert stores (key, value) if key is absent and reports whether it did.
func (t *Sparse[K, V]) Insert(key K, value V) bool { return t.insert(hashKey(key), key, value) }

// InsertMany is Insert for every pair, pipelined as GetMany is: an insert
// reads its home group, then a cell of the group's vector or copies it, so
// the group and the vector are prefetched ahead (0.65-0.76x the time of one
// Insert at a time at 6e6 keys, thread CPU) (a growth in between only makes the
// prefetches useless, never wrong: the inserts hash again from h).
func (t *Sparse[K, V]) InsertMany(keys []K, values []V, inserted []bool) int {
	values, inserted = values[:len(keys)], inserted[:len(keys)]
	var p sparsePipe
	p.start(t.groups, t.mask, t.arena.bases)
	n := 0
	p.run(len(keys), func(batch, from int, ahead bool) {
		if ahead {
			p.vectors(&p.h[batch%3], min(getBatch, len(keys)-from), unsafe.Sizeof(cell[K, V]{}))
			return
		}
		for j, k := range keys[from:min(from+getBatch, len(keys))] {
			ok := t.insert(p.h[batch%3][j], k, values[from+j])
			inserted[from+j] = ok
			n += b2i(ok)
		}
		p.start(t.groups, t.mask, t.arena.bases) // a growth may have changed them
	}, func(h *[getBatch]uint64, from int) { hashBatch(h, keys[from:min(from+getBatch, len(keys))]) })
	return n
}

// vectors prefetches the lines of the home groups' vectors of h[:n], cells
// of cs bytes (every line, not the first alone: -10 % of InsertMany's time
// at 6e6 keys, thread CPU).
func (p *sparsePipe) vectors(h *[getBatch]uint64, n int, cs uintptr) {
	bases, m := unsafe.Pointer(unsafe.SliceData(p.bases)), 0
	for j := range n {
		if g := sparseGroupAt(p.table, h[j]&p.mask/sparseGroupSize); g.bitmap&sparseOccupied != 0 {
			// The offset wraps around when the vector is below the origin:
			// count the lines by length, never compare offsets.
			start := uintptr(sparseCell(bases, g.ref, 0, 0, 0)) - uintptr(p.origin)
			size := uintptr(bits.OnesCount64(g.bitmap&sparseOccupied)) * cs
			for line := uintptr(0); line < size; line += 64 {
				p.offs[m] = start + line
				if m++; m == getBatch {
					prefetchOffsets(p.origin, &p.offs, m)
					m = 0
				}
			}
		}
	}
	prefetchOffsets(p.origin, &p.offs, m)
}

// insert is Insert of a key whose hashKey is h.
func (t *Sparse[K, V]) insert(h uint64, key K, value V) bool {
	for {
		mask, groups := t.mask, t.groups
		b := h & mask
		for step := uint64(1); ; step++ {
			g := sparseGroupAt(groups, b/sparseGroupSize)
			pos := b % sparseGroupSize
			w := g.bitmap
			if w>>pos&1 == 0 {
				break
			}
			if t.cellAt(g.ref, bits.OnesCount64(w&(1<<pos-1))).key == key {
				return false
			}
			b = (b + step) & mask
		}
		// Grow before placing, at the library's element count (it grows
		// when size+1 would pass the threshold), so that a growth that
		// cannot get its memory leaves the table as it was.
		if t.size+1 > t.maxFill {
			t.grow()
			continue
		}
		t.place(groups, b, key, value)
		t.size++
		return true
	}
}

// place puts a pair into the empty bucket b of groups (the table's, or the
// new ones during a growth): the group's vector moves to a block one cell
// larger, as the library reallocates it to the new count on every insert.
// The allocation comes first, so a *SlabError leaves everything as it was.
func (t *Sparse[K, V]) place(groups unsafe.Pointer, b uint64, key K, value V) {
	gi := b / sparseGroupSize
	g := sparseGroupAt(groups, gi)
	pos := b % sparseGroupSize
	w := g.bitmap
	n := bits.OnesCount64(w & sparseOccupied)
	at := bits.OnesCount64(w & (1<<pos - 1))
	ref := t.heap.alloc(&t.arena, t.owner, n+1, uint32(gi))
	dst := unsafe.Slice((*cell[K, V])(t.arena.addr(ref)), n+1)
	if n > 0 {
		src := unsafe.Slice((*cell[K, V])(t.arena.addr(g.ref)), n)
		copy(dst[:at], src[:at])
		copy(dst[at+1:], src[at:])
		t.heap.free(&t.arena, groups, n, g.ref)
	}
	dst[at] = cell[K, V]{key, value}
	g.ref = ref
	g.bitmap = (w|1<<pos)&sparseOccupied | uint64(n+1)<<sparseCapacityShift
}

// grow moves every element into a table of twice the buckets (the
// library's resize; see the design comment for the order and the memory).
func (t *Sparse[K, V]) grow() {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	t.resize(sparseBucketsFor(t.size+1, t.mlf))
}

// resize re-inserts every element into a fresh table of n buckets. A dry
// run first works out how many pages the move needs at most, and those are
// reserved before anything changes: the move itself allocates nothing, so
// a refused slab leaves the table as it was.
func (t *Sparse[K, V]) resize(n uint64) {
	cs := sparseCellBytes[K, V]()
	newSlab := t.newGroups(n)
	newGroups := unsafe.Pointer(unsafe.SliceData(newSlab))
	shift := sparsePageShift(n, cs)
	shared := shift == t.arena.pageShift
	geo := newSparseGeometry(shift, cs)

	need, oldPages := t.dryRun(newGroups, n-1, &geo, shared)
	clear(newSlab)
	var fresh sparseArena
	target := &t.arena
	if shared {
		need -= min(need, oldPages) // the old heap's pages come back as it drains
	} else {
		fresh.pageShift = shift
		target = &fresh
	}
	if err := target.reserve(t.owner, need); err != nil {
		t.owner.release(newSlab)
		panic(err)
	}

	// From here nothing can fail.
	oldHeap, oldSlab := t.heap, t.groupSlab
	old := &t.arena // where the old heap's pages are
	if !shared {
		moved := t.arena
		old, t.arena = &moved, fresh
	}
	t.heap = sparseHeap{geo: geo}
	t.groups, t.groupSlab = newGroups, newSlab
	t.setBuckets(n)
	t.arena.frozen = true
	var home [getBatch]uint64
	var offs homes
	eachPage(&oldHeap, old, func(page sparseRef, cells []cell[K, V]) {
		for len(cells) > 0 {
			batch := cells[:min(getBatch, len(cells))]
			cells = cells[len(batch):]
			for j := range batch {
				home[j] = hashKey(batch[j].key)
				offs[j] = uintptr(home[j]&t.mask/sparseGroupSize) * sparseGroupBytes
			}
			prefetchOffsets(newGroups, &offs, len(batch))
			for j := range batch {
				t.place(newGroups, sparseFreeBucket(newGroups, home[j], t.mask), batch[j].key, batch[j].value)
			}
		}
		if shared {
			t.arena.putPage(page)
		}
	})
	t.arena.frozen = false
	t.owner.release(oldSlab)
	if shared {
		t.arena.trim(t.owner)
	} else {
		old.release(t.owner)
	}
}

// eachPage calls f with the cells of every page of h (in arena a), class by
// class and page by page: the order in which a growth moves them, and
// in which its dry run replays the move.
func eachPage[K, V Bits](h *sparseHeap, a *sparseArena, f func(page sparseRef, cells []cell[K, V])) {
	for k := 1; k <= sparseGroupSize; k++ {
		c := &h.class[k]
		for i, page := range c.pages {
			blocks := h.geo.per[k]
			if i == len(c.pages)-1 {
				blocks = c.fill
			}
			f(page, unsafe.Slice((*cell[K, V])(a.addr(page)), uint32(k)*blocks))
		}
	}
}

// sparseFreeBucket is the first empty bucket of h's probe sequence.
func sparseFreeBucket(groups unsafe.Pointer, h, mask uint64) uint64 {
	b := h & mask
	for step := uint64(1); ; step++ {
		if sparseGroupAt(groups, b/sparseGroupSize).bitmap>>(b%sparseGroupSize)&1 == 0 {
			return b
		}
		b = (b + step) & mask
	}
}

// dryRun replays the move of resize on the bitmaps of newGroups alone,
// counting the pages the new heap's classes would hold after every step,
// plus (shared) the old heap's pages not yet drained: the most pages the
// move will ever need at once, and the old heap's page count.
func (t *Sparse[K, V]) dryRun(newGroups unsafe.Pointer, mask uint64, geo *sparseGeometry, shared bool) (most, oldPages uint64) {
	oldPages = t.heap.pages()
	var pc sparsePageCounter
	pc.per = &geo.per
	remaining := uint64(0)
	if shared {
		remaining = oldPages
	}
	most = remaining
	var home [getBatch]uint64
	var offs homes
	eachPage(&t.heap, &t.arena, func(page sparseRef, cells []cell[K, V]) {
		for len(cells) > 0 {
			batch := cells[:min(getBatch, len(cells))]
			cells = cells[len(batch):]
			for j := range batch {
				home[j] = hashKey(batch[j].key)
				offs[j] = uintptr(home[j]&mask/sparseGroupSize) * sparseGroupBytes
			}
			prefetchOffsets(newGroups, &offs, len(batch))
			for j := range batch {
				b := sparseFreeBucket(newGroups, home[j], mask)
				g := sparseGroupAt(newGroups, b/sparseGroupSize)
				// As place: the new block first, then the old one freed.
				n := bits.OnesCount64(g.bitmap)
				pc.alloc(n + 1)
				most = max(most, pc.total+remaining)
				if n > 0 {
					pc.free(n)
				}
				g.bitmap |= 1 << (b % sparseGroupSize)
			}
		}
		if shared {
			remaining--
		}
	})
	return most, oldPages
}

func (t *Sparse[K, V]) Has(key K) bool { _, found := t.Get(key); return found }

func (t *Sparse[K, V]) Len() int {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	return int(t.size)
}

// GetMany is Get for every key of keys, software-pipelined over batches of
// getBatch keys (see prefetch.go): while batch i is probed, the home cells
// of batch i+1 are prefetched (their groups arrived meanwhile) and the home
// groups of batch i+2 are asked for, so a lookup's two dependent misses,
// group then cell, are both in flight well before it runs. At 6e6 random
// keys (thread CPU): 31-39 ns a key against Get's 66-105, where touching
// the groups and then the cells of one batch before probing it gave 74-78.
func (t *Sparse[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	var p sparsePipe
	p.start(t.groups, t.mask, t.arena.bases)
	n := 0
	// The same pipeline as InsertMany's, kept written out in each: they prefetch different lines (cells here, vectors there) and a shared driver would add a call per key.
	p.run(len(keys), func(batch, from int, ahead bool) {
		if ahead {
			p.cells(&p.h[batch%3], min(getBatch, len(keys)-from), unsafe.Sizeof(cell[K, V]{}))
			return
		}
		for j, key := range keys[from:min(from+getBatch, len(keys))] {
			values[from+j], found[from+j] = t.lookup(p.h[batch%3][j]&p.mask, key)
			n += b2i(found[from+j])
		}
	}, func(h *[getBatch]uint64, from int) { hashBatch(h, keys[from:min(from+getBatch, len(keys))]) })
	return n
}

// sparsePipe is GetMany's and InsertMany's pipeline: the hashes of three
// batches, and the prefetches of their groups and home cells.
type sparsePipe struct {
	h      [3][getBatch]uint64
	offs   homes
	table  unsafe.Pointer // the groups
	mask   uint64
	bases  []unsafe.Pointer
	origin unsafe.Pointer // cell prefetches are offsets from it (mod 2^64)
}

func (p *sparsePipe) start(groups unsafe.Pointer, mask uint64, bases []unsafe.Pointer) {
	p.table, p.mask, p.bases = groups, mask, bases
	if len(bases) > 0 {
		p.origin = bases[0]
	}
}

// run drives the pipeline over n keys in batches of getBatch: for batch
// i+2 it hashes (hash) and prefetches the home groups; for batch i+1 it
// calls step(i+1, its first key, true) to prefetch what the groups point
// to; for batch i, step(i, its first key, false) to do the work.
func (p *sparsePipe) run(n int, step func(batch, from int, ahead bool), hash func(h *[getBatch]uint64, from int)) {
	batches := (n + getBatch - 1) / getBatch
	for i := -2; i < batches; i++ {
		if i+2 < batches {
			h := &p.h[(i+2)%3]
			hash(h, (i+2)*getBatch)
			p.groups(h, min(getBatch, n-(i+2)*getBatch))
		}
		if i+1 >= 0 && i+1 < batches {
			step(i+1, (i+1)*getBatch, true)
		}
		if i >= 0 {
			step(i, i*getBatch, false)
		}
	}
}

func hashBatch[K Bits](h *[getBatch]uint64, keys []K) {
	for j, k := range keys {
		h[j] = hashKey(k)
	}
}

// groups prefetches the home groups of the hashes h[:n].
func (p *sparsePipe) groups(h *[getBatch]uint64, n int) {
	for j := range n {
		p.offs[j] = uintptr(h[j]&p.mask/sparseGroupSize) * sparseGroupBytes
	}
	prefetchOffsets(p.table, &p.offs, n)
}

// cells prefetches the home cells of the hashes h[:n] that are occupied,
// reading their groups (prefetched a batch earlier). The cells are in
// several slabs: their offsets are taken from one origin, wrapping around,
// which the prefetch's address arithmetic undoes.
func (p *sparsePipe) cells(h *[getBatch]uint64, n int, cs uintptr) {
	bases, m := unsafe.Pointer(unsafe.SliceData(p.bases)), 0
	for j := range n {
		b := h[j] & p.mask
		g := sparseGroupAt(p.table, b/sparseGroupSize)
		if w, pos := g.bitmap, b%sparseGroupSize; w>>pos&1 != 0 {
			p.offs[m] = uintptr(sparseCell(bases, g.ref, w, pos, cs)) - uintptr(p.origin)
			m++
		}
	}
	prefetchOffsets(p.origin, &p.offs, m)
}

// Close releases the groups and every page at once; see Hashed.Close.
func (t *Sparse[K, V]) Close() {
	if t.closed {
		return
	}
	t.owner.close(&t.cleanup)
	t.closed, t.size, t.maxFill = true, 0, 0
	t.groups, t.groupSlab = unsafe.Pointer(&closedMemory), nil
	t.setBuckets(sparseStartingBuckets)
	t.maxFill = 0
	t.arena, t.heap = sparseArena{}, sparseHeap{}
}

func (t *Sparse[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.closed {
			closedPanic(LayoutSparse)
		}
		for gi := range uint64(len(t.groupSlab)) / sparseGroupBytes {
			g := sparseGroupAt(t.groups, gi)
			for i := range g.count() {
				if c := t.cellAt(g.ref, i); !yield(c.key, c.value) {
					return
				}
			}
		}
	}
}

// goBytes is what the table takes on the Go heap: its header (with the
// heap's class table and geometry), the arena's slab and page tables, and
// its slab owner. Stats counts it as metadata.
func (t *Sparse[K, V]) goBytes() int64 {
	return int64(unsafe.Sizeof(*t)) + t.arena.goBytes() + t.heap.goBytes() +
		int64(unsafe.Sizeof(*t.owner)) + int64(cap(t.owner.slabs))*int64(unsafe.Sizeof([]byte(nil)))
}

// Stats: every byte of every slab is counted. Cells are payload and
// padding; the groups and the owner entry of each vector are metadata;
// what else the arena holds (free slots of the classes' last pages, page
// tails, pooled and uncarved pages) is empty bytes.
func (t *Sparse[K, V]) Stats() Stats {
	if t.closed {
		closedPanic(LayoutSparse)
	}
	cs := int64(sparseCellBytes[K, V]())
	pair := int64(sizeOf[K]() + sizeOf[V]())
	n := int64(t.size)
	owners := int64(t.heap.blocks) * sparseOwnerSize
	meta := int64(len(t.groupSlab)) + owners + t.goBytes()
	s := Stats{
		ElementCount:   n,
		BucketCount:    int64(t.buckets()),
		BytesAllocated: int64(len(t.groupSlab)) + t.arena.bytes + t.goBytes(),
		PayloadBytes:   n * pair,
		PaddingBytes:   n * (cs - pair),
		EmptyBytes:     t.arena.bytes - n*cs - owners,
		MetadataBytes:  meta,
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

// CheckInvariants checks every group, its bitmap, its vector and the
// counts against each other: an invariant checker for tests, one pass that
// says which rule broke where.
func (t *Sparse[K, V]) CheckInvariants() error {
	if t.closed {
		return fmt.Errorf("sparse: closed")
	}
	buckets := t.buckets()
	if buckets < sparseStartingBuckets || buckets&t.mask != 0 {
		return fmt.Errorf("sparse: %d buckets is not a power of two >= %d", buckets, sparseStartingBuckets)
	}
	groups := (buckets + sparseGroupSize - 1) / sparseGroupSize
	if uint64(len(t.groupSlab)) != groups*sparseGroupBytes {
		return fmt.Errorf("sparse: %d bytes of groups for %d buckets, want %d", len(t.groupSlab), buckets, groups*sparseGroupBytes)
	}
	if want := sparsePageShift(buckets, sparseCellBytes[K, V]()); t.arena.pageShift != want {
		return fmt.Errorf("sparse: pages of 2^%d bytes, want 2^%d for %d buckets", t.arena.pageShift, want, buckets)
	}
	if err := t.checkSlabs(); err != nil {
		return err
	}
	if err := t.checkPages(groups); err != nil {
		return err
	}
	if err := t.checkGroups(buckets, groups); err != nil {
		return err
	}
	if t.size > t.maxFill {
		return fmt.Errorf("sparse: %d elements exceed the threshold %d of %d buckets", t.size, t.maxFill, buckets)
	}
	return t.Stats().check()
}

// checkSlabs checks that the owner holds exactly the groups and the arena's
// slabs, each whole pages at its base.
func (t *Sparse[K, V]) checkSlabs() error {
	a := &t.arena
	var slabBytes int64
	for i, s := range a.slabs {
		if len(s) == 0 || len(s)%int(a.pageBytes()) != 0 || a.bases[i] != unsafe.Pointer(unsafe.SliceData(s)) {
			return fmt.Errorf("sparse: slab %d of %d bytes is not whole pages of %d at its base", i, len(s), a.pageBytes())
		}
		slabBytes += int64(len(s))
	}
	if slabBytes != a.bytes || len(t.owner.slabs) != len(a.slabs)+1 {
		return fmt.Errorf("sparse: arena says %d bytes in %d slabs, they hold %d; the owner holds %d slabs", a.bytes, len(a.slabs), slabBytes, len(t.owner.slabs))
	}
	return nil
}

// checkPages checks that every carved page is in exactly one class or in
// the pool, and that every block of a class names the group whose vector
// it is.
func (t *Sparse[K, V]) checkPages(groups uint64) error {
	a, h := &t.arena, &t.heap
	carved := map[sparseRef]string{}
	for i, s := range a.slabs {
		for off := uint64(0); off < uint64(len(s)); off += a.pageBytes() {
			if i < a.carveSlab || i == a.carveSlab && off < a.carveOff {
				carved[sparseRef(i)<<32|off] = ""
			}
		}
	}
	claim := func(p sparseRef, by string) error {
		if was, ok := carved[p]; !ok || was != "" {
			return fmt.Errorf("sparse: page %#x claimed by %s (carved %v, already %q)", p, by, ok, was)
		}
		carved[p] = by
		return nil
	}
	for _, p := range a.pool {
		if err := claim(p, "the pool"); err != nil {
			return err
		}
	}
	var blocks, cells uint64
	for k := 1; k <= sparseGroupSize; k++ {
		c := &h.class[k]
		if (len(c.pages) == 0) != (c.fill == 0) || c.fill > h.geo.per[k] {
			return fmt.Errorf("sparse: class %d has %d pages, the last holding %d of %d blocks", k, len(c.pages), c.fill, h.geo.per[k])
		}
		for i, p := range c.pages {
			if err := claim(p, fmt.Sprintf("class %d", k)); err != nil {
				return err
			}
			n := h.geo.per[k]
			if i == len(c.pages)-1 {
				n = c.fill
			}
			for s := range uint64(n) {
				ref := p + s*uint64(h.geo.blk[k])
				gi := *h.owner(a, k, ref)
				if uint64(gi) >= groups {
					return fmt.Errorf("sparse: a block of class %d names group %d of %d", k, gi, groups)
				}
				if g := sparseGroupAt(t.groups, uint64(gi)); g.ref != ref || g.count() != k {
					return fmt.Errorf("sparse: a block of class %d names group %d, which has %d cells at %#x", k, gi, g.count(), g.ref)
				}
				blocks++
				cells += uint64(k)
			}
		}
	}
	for p, by := range carved {
		if by == "" {
			return fmt.Errorf("sparse: page %#x is carved but neither pooled nor in a class", p)
		}
	}
	if blocks != h.blocks || cells != t.size {
		return fmt.Errorf("sparse: the classes hold %d blocks of %d cells, the heap says %d blocks, size %d", blocks, cells, h.blocks, t.size)
	}
	return nil
}

// checkGroups checks every group: capacity == count, buckets in range,
// every key found where it is, and the count of them all.
func (t *Sparse[K, V]) checkGroups(buckets, groups uint64) error {
	var n uint64
	for gi := range groups {
		g := sparseGroupAt(t.groups, gi)
		if g.count() != g.capacity() {
			return fmt.Errorf("sparse: group %d has %d cells in a vector of %d", gi, g.count(), g.capacity())
		}
		if gi*sparseGroupSize+uint64(bits.Len64(g.bitmap&sparseOccupied)) > buckets {
			return fmt.Errorf("sparse: group %d marks a bucket beyond %d", gi, buckets)
		}
		for i := range g.count() {
			c := t.cellAt(g.ref, i)
			if v, ok := t.Get(c.key); !ok || v != c.value {
				return fmt.Errorf("sparse: key %v in group %d cell %d is not found by a lookup", c.key, gi, i)
			}
			b := t.lookupBucket(c.key)
			if b/sparseGroupSize != gi || bits.OnesCount64(g.bitmap&(1<<(b%sparseGroupSize)-1)) != i {
				return fmt.Errorf("sparse: key %v in group %d cell %d: its probe ends at bucket %d", c.key, gi, i, b)
			}
		}
		n += uint64(g.count())
	}
	if n != t.size {
		return fmt.Errorf("sparse: %d occupied buckets, size says %d", n, t.size)
	}
	return nil
}

// lookupBucket is the bucket a lookup of key ends at.
func (t *Sparse[K, V]) lookupBucket(key K) uint64 {
	b := hashKey(key) & t.mask
	for step := uint64(1); ; step++ {
		g := sparseGroupAt(t.groups, b/sparseGroupSize)
		pos := b % sparseGroupSize
		if g.bitmap>>pos&1 == 0 || t.cellAt(g.ref, bits.OnesCount64(g.bitmap&(1<<pos-1))).key == key {
			return b
		}
		b = (b + step) & t.mask
	}
}
