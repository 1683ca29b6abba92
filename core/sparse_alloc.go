package core

import (
	"math"
	"math/bits"
	"unsafe"
)

// The sparse table's vector allocator: see the design comment in sparse.go
// for why it is built this way and what it costs.
//
//	arena:  slabs (mmap) --carved into--> pages of P bytes (P = 2^pageShift)
//	heap:   48 classes; class k holds the vectors of k cells, densely:
//	        block i of class k is slot i%per of page pages[i/per]
//
//	one page of class k:
//	+---------+---------+-- ... --+---------+------+-----------------------+
//	| block 0 | block 1 |         | block   | tail | owner 0 | owner 1 ... |
//	| k cells | k cells |         | per-1   |      | uint32 group index    |
//	+---------+---------+-- ... --+---------+------+-----------------------+
//
// A vector is addressed by a sparseRef: slab index << 32 | byte offset in
// the slab. Slabs hold no Go pointer; the slab bases live in a Go slice.

// sparseRef is a vector's (or page's) place: slab index << 32 | offset.
type sparseRef = uint64

const (
	sparseRefOffset = 1<<32 - 1
	sparseMaxSlab   = 1 << 30 // a slab's offsets fit in 32 bits with room
	// sparseMaxGroups: owners are uint32 group indexes.
	sparseMaxGroups = 1 << 32
	sparseOwnerSize = 4
)

// sparseArena hands out pages of one size, carved in order from slabs it
// allocates as it needs them; freed pages go to a pool and are handed out
// again first. During a growth the old and the new heap share the arena, so
// the pages the old heap's drain frees are the ones the new heap fills.
type sparseArena struct {
	bases     []unsafe.Pointer // slab i starts at bases[i] (read by every lookup)
	slabs     [][]byte         // slab i
	pool      []sparseRef      // free pages, reused last-in first-out
	carveSlab int              // the slab the next page is carved from (len(slabs): none left)
	carveOff  uint64           // offset of the next uncarved page in it
	bytes     int64            // sum of len(slabs)
	pageShift uint8            // P = 1 << pageShift
	frozen    bool             // while a drain runs: a new slab would be a bug (see reserve)
}

func (a *sparseArena) pageBytes() uint64 { return 1 << a.pageShift }

// addr is the address of ref.
func (a *sparseArena) addr(ref sparseRef) unsafe.Pointer {
	return unsafe.Add(*(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(a.bases)), uintptr(ref>>32)*unsafe.Sizeof(unsafe.Pointer(nil)))), uintptr(ref&sparseRefOffset))
}

// uncarved is how many pages the slabs still have to carve.
func (a *sparseArena) uncarved() uint64 {
	var n uint64
	for i := a.carveSlab; i < len(a.slabs); i++ {
		n += uint64(len(a.slabs[i])) >> a.pageShift
	}
	if a.carveSlab < len(a.slabs) {
		n -= a.carveOff >> a.pageShift
	}
	return n
}

// free is the number of pages the arena can hand out without a new slab.
func (a *sparseArena) free() uint64 { return uint64(len(a.pool)) + a.uncarved() }

// takePage returns a free page, allocating a slab if none is left (which
// panics with a *SlabError before anything changes).
func (a *sparseArena) takePage(o *slabOwner) sparseRef {
	if n := len(a.pool); n > 0 {
		p := a.pool[n-1]
		a.pool = a.pool[:n-1]
		return p
	}
	if a.carveSlab == len(a.slabs) {
		if a.frozen {
			panic("core: sparse: a growth ran out of the pages it reserved")
		}
		if err := a.grow(o, 1); err != nil {
			panic(err)
		}
	}
	p := sparseRef(a.carveSlab)<<32 | a.carveOff
	a.carveOff += a.pageBytes()
	if a.carveOff == uint64(len(a.slabs[a.carveSlab])) {
		a.carveSlab, a.carveOff = a.carveSlab+1, 0
	}
	return p
}

// putPage returns a page to the pool.
func (a *sparseArena) putPage(p sparseRef) { a.pool = append(a.pool, p) }

// grow adds one slab of at least `pages` pages: 1/64 of what the arena
// holds (so that the slab count grows with the logarithm of the table and
// the uncarved tail is at most ~1.5 % of it), at least 4 KiB, at most
// sparseMaxSlab (reserve loops for more).
func (a *sparseArena) grow(o *slabOwner, pages uint64) error {
	p := a.pageBytes()
	want := min(max(pages*p, uint64(a.bytes/64), 4096), sparseMaxSlab)
	want = (want + p - 1) &^ (p - 1)
	slab, err := newSlab(o.layout, uintptr(want))
	if err != nil {
		return err
	}
	o.add(slab)
	a.slabs = append(a.slabs, slab)
	a.bases = append(a.bases, unsafe.Pointer(unsafe.SliceData(slab)))
	a.bytes += int64(want)
	return nil
}

// reserve makes sure the arena can hand out `pages` pages with no new slab.
// On failure it releases what it added and returns the *SlabError.
func (a *sparseArena) reserve(o *slabOwner, pages uint64) error {
	had := len(a.slabs)
	for free := a.free(); free < pages; free = a.free() {
		if err := a.grow(o, pages-free); err != nil {
			a.releaseFrom(o, had)
			return err
		}
	}
	return nil
}

// releaseFrom frees slabs from index i on; they must hold no carved page.
func (a *sparseArena) releaseFrom(o *slabOwner, i int) {
	for j := len(a.slabs) - 1; j >= i; j-- {
		a.bytes -= int64(len(a.slabs[j]))
		o.release(a.slabs[j])
		a.slabs[j], a.bases[j] = nil, nil
	}
	a.slabs, a.bases = a.slabs[:i], a.bases[:i]
	if a.carveSlab > i {
		a.carveSlab, a.carveOff = i, 0
	}
}

// trim releases the slabs at the end that no page was carved from (what a
// growth reserved and did not need).
func (a *sparseArena) trim(o *slabOwner) {
	first := a.carveSlab
	if first < len(a.slabs) && a.carveOff > 0 {
		first++
	}
	if first < len(a.slabs) {
		a.releaseFrom(o, first)
	}
}

// release frees every slab of the arena.
func (a *sparseArena) release(o *slabOwner) {
	a.releaseFrom(o, 0)
	a.pool = nil
}

// goBytes is what the arena's tables take on the Go heap.
func (a *sparseArena) goBytes() int64 {
	return int64(cap(a.bases))*int64(unsafe.Sizeof(unsafe.Pointer(nil))) +
		int64(cap(a.slabs))*int64(unsafe.Sizeof([]byte(nil))) +
		int64(cap(a.pool))*int64(unsafe.Sizeof(sparseRef(0)))
}

// sparseGeometry is how a page of P bytes is cut for each class, for one
// cell size. per[k] blocks of k cells, then the owner array at ownersOff[k].
type sparseGeometry struct {
	per       [sparseGroupSize + 1]uint32 // blocks per page
	blk       [sparseGroupSize + 1]uint32 // bytes per block: k cells
	ownersOff [sparseGroupSize + 1]uint32 // where the page's owners start
	recip     [sparseGroupSize + 1]uint32 // ceil(2^32 / blk): offset/blk as a multiply
}

// sparseMaxPageShift keeps a page's offsets below 2^16, where the
// reciprocal division of sparseGeometry.slotOf is exact.
const sparseMaxPageShift = 15

func newSparseGeometry(pageShift uint8, cellBytes uint32) sparseGeometry {
	var g sparseGeometry
	p := uint32(1) << pageShift
	for k := uint32(1); k <= sparseGroupSize; k++ {
		blk := k * cellBytes
		g.blk[k] = blk
		g.per[k] = p / (blk + sparseOwnerSize)
		g.ownersOff[k] = p - g.per[k]*sparseOwnerSize
		g.recip[k] = uint32((1<<32 + uint64(blk) - 1) / uint64(blk))
	}
	return g
}

// slotOf is the slot of a block at offset off (< 2^16) of its page: off/blk.
// The offset is a multiple of blk, so the rounded-up reciprocal is exact.
func (g *sparseGeometry) slotOf(k int, off uint64) uint64 {
	return off * uint64(g.recip[k]) >> 32
}

// sparsePageShift is the page size for a table of `buckets` buckets of
// cells of cellBytes: P near 3/8 * cellBytes * sqrt(buckets), the size at
// which the 48 classes' partly filled pages (48 * P/2) cost about what the
// pages' unusable tails (half a block per page) do; at least one 48-cell
// block; at most 1024 cells' worth, 4 KiB to 2^sparseMaxPageShift. It stops
// changing where that cap is reached (2^22 buckets of 16-byte cells, 2^24 of
// 2-byte ones), so the growths of big tables share their arena.
func sparsePageShift(buckets uint64, cellBytes uint32) uint8 {
	if sparseFixedPageShift != 0 {
		return sparseFixedPageShift
	}
	want := 0.375 * float64(cellBytes) * math.Sqrt(float64(buckets))
	s := uint8(bits.Len64(uint64(want)))
	if s > 0 && float64(uint64(1)<<(s-1))*1.4142 >= want {
		s-- // the nearer power of two
	}
	lo := uint8(bits.Len64(uint64(sparseGroupSize*cellBytes+sparseOwnerSize) - 1))
	hi := uint8(bits.Len64(uint64(min(max(1024*cellBytes, 4096), 1<<sparseMaxPageShift)) - 1))
	return min(max(s, lo), hi)
}

// sparseFixedPageShift, when set (tests only), is the page size of every
// table, so that small tables grow within one arena as big ones do.
var sparseFixedPageShift uint8

// sparseClass is one class of the heap: n = (len(pages)-1)*per + fill blocks.
type sparseClass struct {
	pages []sparseRef // in block order
	fill  uint32      // blocks in the last page, 1..per (0 when no page)
}

// sparseHeap is one table's vectors: 48 dense classes over an arena.
// Dense: freeing a block moves the class's last block into its place, so a
// class of n blocks takes exactly ceil(n/per) pages whatever came and went.
type sparseHeap struct {
	class  [sparseGroupSize + 1]sparseClass
	blocks uint64 // live blocks (= non-empty groups): their owner entries are metadata
	geo    sparseGeometry
}

// owner is the owner entry of the block at ref of class k.
func (h *sparseHeap) owner(a *sparseArena, k int, ref sparseRef) *uint32 {
	mask := a.pageBytes() - 1
	page := ref &^ mask
	slot := h.geo.slotOf(k, ref&mask)
	return (*uint32)(a.addr(page + uint64(h.geo.ownersOff[k]) + slot*sparseOwnerSize))
}

// alloc returns a new block of class k owned by group g. It may take a page
// (and so allocate a slab, panicking with a *SlabError) before it changes
// anything.
func (h *sparseHeap) alloc(a *sparseArena, o *slabOwner, k int, g uint32) sparseRef {
	c := &h.class[k]
	if len(c.pages) == 0 || c.fill == h.geo.per[k] {
		c.pages = append(c.pages, a.takePage(o))
		c.fill = 0
	}
	ref := c.pages[len(c.pages)-1] + uint64(c.fill)*uint64(h.geo.blk[k])
	*(*uint32)(a.addr(c.pages[len(c.pages)-1] + uint64(h.geo.ownersOff[k]) + uint64(c.fill)*sparseOwnerSize)) = g
	c.fill++
	h.blocks++
	return ref
}

// free releases the block at ref of class k: the class's last block moves
// into its place, and that block's group (in groups) learns its new ref.
// A page left empty goes back to the arena's pool.
func (h *sparseHeap) free(a *sparseArena, groups unsafe.Pointer, k int, ref sparseRef) {
	c := &h.class[k]
	page := c.pages[len(c.pages)-1]
	last := page + uint64(c.fill-1)*uint64(h.geo.blk[k])
	if last != ref {
		blk := uintptr(h.geo.blk[k])
		copy(unsafe.Slice((*byte)(a.addr(ref)), blk), unsafe.Slice((*byte)(a.addr(last)), blk))
		g := *(*uint32)(a.addr(page + uint64(h.geo.ownersOff[k]) + uint64(c.fill-1)*sparseOwnerSize))
		*h.owner(a, k, ref) = g
		sparseGroupAt(groups, uint64(g)).ref = ref
	}
	c.fill--
	h.blocks--
	if c.fill == 0 {
		a.putPage(page)
		c.pages = c.pages[:len(c.pages)-1]
		if len(c.pages) > 0 {
			c.fill = h.geo.per[k]
		}
	}
}

// pages is how many pages the heap's classes hold.
func (h *sparseHeap) pages() uint64 {
	var n uint64
	for k := range h.class {
		n += uint64(len(h.class[k].pages))
	}
	return n
}

func (h *sparseHeap) goBytes() int64 {
	var n int64
	for k := range h.class {
		n += int64(cap(h.class[k].pages)) * int64(unsafe.Sizeof(sparseRef(0)))
	}
	return n
}

// sparsePageCounter replays the page counts of a heap's classes as blocks
// change class, without memory: what a growth's dry run uses to know how
// many pages its drain will need at most.
type sparsePageCounter struct {
	per   *[sparseGroupSize + 1]uint32
	fill  [sparseGroupSize + 1]uint32
	pages [sparseGroupSize + 1]uint64
	total uint64
}

func (c *sparsePageCounter) alloc(k int) {
	if c.pages[k] == 0 || c.fill[k] == c.per[k] {
		c.pages[k]++
		c.total++
		c.fill[k] = 0
	}
	c.fill[k]++
}

func (c *sparsePageCounter) free(k int) {
	c.fill[k]--
	if c.fill[k] == 0 {
		c.pages[k]--
		c.total--
		if c.pages[k] > 0 {
			c.fill[k] = c.per[k]
		}
	}
}

// sparseExpectedPages is how many pages a heap holds for n random keys in
// `buckets` buckets. The keys that hash into a group are Poisson, of mean
// lambda = 48 n / buckets, and triangular probing keeps most of a
// collision's probes inside the group, so a group's count is about Poisson
// too (measured at 1000 keys in 2048 buckets: much closer than the binomial
// of independent buckets, which is half as wide), cut at 48. The number of
// groups with k cells is binomial over the groups, and class k holds
// ceil(that / per[k]) pages.
func sparseExpectedPages(n, buckets uint64, geo *sparseGeometry) float64 {
	size := min(buckets, sparseGroupSize)
	groups := float64((buckets + sparseGroupSize - 1) / sparseGroupSize)
	lambda := min(float64(n)/float64(buckets), 1) * float64(size)
	if lambda == 0 {
		return 0
	}
	pmf, below := math.Exp(-lambda), math.Exp(-lambda) // P(count = k), P(count <= k)
	pages := 0.0
	for k := uint64(1); k <= size; k++ {
		pmf *= lambda / float64(k)
		q := pmf
		if k == size {
			q = max(0, 1-below) // the tail: a full group
		}
		below += pmf
		pages += expectedCeil(groups, q, float64(geo.per[k]))
	}
	return pages
}

// expectedCeil is E[ceil(X/per)] for X binomial of `trials` trials of
// probability q: summed where the mean is small (most classes of a small
// table hold a block or two, and each costs a whole page), the mean / per
// plus half a page of rounding where it is not.
func expectedCeil(trials, q, per float64) float64 {
	mu := trials * q
	if mu > 200 {
		return mu/per + (per-1)/(2*per)
	}
	if q >= 1 {
		return math.Ceil(trials / per)
	}
	// P(X = x) from P(X = 0) = (1-q)^trials, term by term.
	e, pr := 0.0, math.Exp(trials*math.Log1p(-q))
	for x := 1.0; x <= trials && x < mu+12*math.Sqrt(mu)+20; x++ {
		pr *= (trials - x + 1) / x * q / (1 - q)
		e += pr * math.Ceil(x/per)
	}
	return e
}

// sparsePredict works out a sparse table after n distinct random inserts:
// its buckets, its bytes_allocated, and what it holds at the peak of its
// last growth (both groups arrays, and the most pages the move needs: the
// old heap's or the new heap's, whichever is more when they share an arena,
// both when the page size changed). The page counts are expectations, not
// a replay: the figures are estimates, within a few percent of a real table.
func sparsePredict(n, reserve uint64, cellBytes uint32, mlf float64) (buckets uint64, final, peak float64) {
	start := sparseBucketsFor(reserve, mlf)
	buckets = max(sparseBucketsFor(n, mlf), start)
	shift := sparsePageShift(buckets, cellBytes)
	geo := newSparseGeometry(shift, cellBytes)
	page := float64(uint64(1) << shift)
	// The Go heap: the header, the class page lists (about two words a page
	// with append's slack), and the arena's and the owner's slab tables
	// (slabs of 4 KiB while the arena is small, few and large later).
	goBytes := func(pages, bytes float64) float64 {
		slabs := min(bytes/4096, 256)
		return float64(unsafe.Sizeof(Sparse[uint8, uint8]{})+unsafe.Sizeof(slabOwner{})) + 16*pages + 56*slabs
	}
	groups := func(b uint64) float64 { return float64((b+sparseGroupSize-1)/sparseGroupSize) * sparseGroupBytes }
	// The arena carves whole slabs of 1/64 of itself, at least 4 KiB: half
	// of the last one is uncarved on average, all of the first one's rest.
	arena := func(bytes float64) float64 { return max(4096, bytes+max(4096, bytes/64)/2) }
	// The pool holds a few pages the classes' fills left behind (measured:
	// 1 to 6 at 1e3 to 1e7 keys): count two.
	const pooled = 2
	carved := sparseExpectedPages(n, buckets, &geo) + pooled
	peak = groups(buckets) + arena(carved*page) + goBytes(carved, carved*page)
	if buckets > start {
		prev := buckets / 2
		moved := uint64(float64(prev) * mlf)
		oldShift := sparsePageShift(prev, cellBytes)
		oldGeo := newSparseGeometry(oldShift, cellBytes)
		oldPages := sparseExpectedPages(moved, prev, &oldGeo)
		// The last growth's move: with a fraction x moved, the new heap holds
		// x*moved keys (its classes open a page each early on) and the old
		// one about (1-x) of its pages, until they are back in the pool.
		most := 0.0
		for x := 0.1; x < 1.05; x += 0.1 {
			newPages := sparseExpectedPages(uint64(x*float64(moved)), buckets, &geo)
			if oldShift == shift {
				most = max(most, newPages+(1-x)*oldPages)
			} else {
				most = max(most, newPages)
			}
		}
		var move float64
		if oldShift == shift {
			carved = max(carved, most) // the arena never shrinks below it
			move = arena(carved * page)
		} else {
			move = arena(oldPages*float64(uint64(1)<<oldShift)) + most*page
		}
		peak = max(peak, groups(prev)+groups(buckets)+move+goBytes(carved, move))
	}
	final = groups(buckets) + arena(carved*page) + goBytes(carved, carved*page)
	return buckets, final, max(peak, final)
}
