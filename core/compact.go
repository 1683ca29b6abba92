package core

import (
	"fmt"
	"iter"
	"math"
	"math/bits"
	"runtime"
	"unsafe"
)

// The compact layout: its design, and the measurements that decided it.
//
// # Words
//
//   - x: the key's hash, a bijection of the key (compact_hash.go), so the
//     key can be computed back from x.
//   - m: the number of home slots; any number, not only a power of two.
//   - home: floor(x*m / 2^64), the slot a key's probe starts at. It is
//     monotone in x: slots are in hash order.
//   - remainder: the bits of x that its home does not say. x*m's low word,
//     shifted right by s = floor(log2 m), is distinct for every x of one
//     home (consecutive x differ there by m >= 2^s), so 64 - s bits are
//     enough, one more than a power-of-two table would need at most.
//   - displacement: how far past its home a pair sits (linear probing).
//     The slot keeps displacement+1, so 0 means empty and key 0 needs no
//     special place.
//
// # A slot
//
// A slot is a little-endian bit string of whole bytes, stride w bytes, no
// alignment:
//
//	bit 0        b          b+r                      b+r+v     8w
//	    +--------+----------+------------------------+---------+
//	    | disp+1 | remainder| value                  | (zero)  |   keys of 1..8 bytes
//	    +--------+----------+------------------------+---------+
//	    | disp+1 | e (64)   | remainder | value      | (zero)  |   16-byte keys
//
// e is the second word of a 16-byte key's hash, kept whole. b, the
// displacement bits, fills what the bytes leave (at least 6, at most 8);
// w = ceil((r + e + v + 6) / 8). <UInt64,UInt16> at 1e8 pairs: m is
// 1.2e8..1.4e8, r = 64-26 = 38, v = 16, b = 8: 62 bits in 8-byte slots.
// Slots of at most 8 bytes are read with one unaligned 8-byte load and
// masked (bytes.go); wider ones (8-byte values, 16-byte keys) with 2..4.
//
// # The slab
//
//	+------+------+------+-- ... --+------+--------------+----------+------+
//	| slot | slot | slot |         | slot | maxDisp slots | sentinel | pad  |
//	+------+------+------+-- ... --+------+--------------+----------+------+
//	 home 0                         home m-1  (no wrap-around)   empty  < 8 bytes
//
// No probe wraps: a pair whose home is near the end runs into maxDisp tail
// slots, and one more slot that is always empty ends every probe. pad makes
// the last slot's word loads stay inside the slab.
//
// # Order, lookups and inserts
//
// Pairs are kept sorted by (x, e) in slot order, each at or after its home
// with no empty slot between home and pair (ordered linear probing, Amble
// and Knuth 1974: Robin Hood hashing with ties broken by hash). A lookup of
// a key with home H compares slot H+j's displacement field with j+1: larger
// means an earlier home (go on), equal means home H (compare the
// remainder), smaller or empty means the key is absent (stop). An insert
// finds the place in order and shifts the rest of the cluster one slot
// right (a memmove, then +1 on each moved displacement byte).
//
// # Overflow
//
// A displacement the field cannot hold (> 2^b - 2) does not grow the table:
// the pair that would get it (the leftmost in the shifted run) moves to an
// overflow table, a Packed table of whole pairs, which a lookup asks only
// after a miss, and only if it holds anything. Random keys at the default
// mlf almost never need it (see the measurements); keys chosen to collide
// fill it instead of blowing the table up, as growing would.
//
// # Growth
//
// When elements would exceed floor(m * mlf), m grows x2 up to 2^16 home
// slots and x5/4 after. The new slab is written in one pass over the old
// one in slot order: each pair's x is decoded (one 128/64 division), its new
// home computed, and it is placed at max(new home, last placed + 1). The
// placed displacement is at most the old one + 1 (the homes of a run spread
// by the growth factor), so the pass knows before it starts how many pairs
// might not fit their field (they go to the overflow table, room reserved
// beforehand: a growth that cannot get its memory changes nothing). On
// Linux the pass hands the old slab's pages back as it leaves them
// (madvise(MADV_DONTNEED), 2 MiB-aligned), so a growth needs little more
// memory than the new slab: the peak of a load is its final size, not 1.5x.
//
// # Measurements that decided it
//
// <UInt64,UInt16>, random keys, the 2-core lab machine (CPU nanoseconds per
// row from getrusage, medians of 3 interleaved rounds; bytes from
// core.Predict, which TestPredictMatchesTables ties to the tables). What
// was tried and not taken, with its figures, is in docs/performance.md
// ("compact: what was tried").
//
//   - Growth x5/4 at mlf 0.9: any m keeps the slots in hash order
//     (floor(x*m/2^64) is monotone), so the table may grow by less than x2.
//     Bytes a pair over 1e6..1e8 rows (mean, worst), load and read ns at 1e7:
//
//     growth  mlf   mean  worst  load ns  read ns
//     x5/4    0.90  10.28  12.49    292      138
//     x3/2    0.90  11.36  14.99    227      174
//     x2      0.90  13.12  18.88    214      123
//
//     x2's sawtooth (8.9 to 17.8 bytes a pair) shrinks to 8.9..11.1
//     wherever slots are 8 bytes, for a load that moves each pair 4 to 5
//     times (55 of the 273 ns an insert takes at 1e7).
//
//   - Default mlf 0.9 rather than ClickHouse's 0.5: with 8-byte slots the
//     empty slots are the memory; the longer probes cost 10 % of a read.
//
//   - Displacement bits: sorted linear probing over 1e7 random keys has its
//     largest displacement at 23 (load 0.75), 63 (0.9), 113 (0.95), 373
//     (0.99). Hence at least 6 bits to mlf 0.9, 7 to 0.95, 8 above, a byte
//     at most so that a shift adds 1 in place; the rare pair beyond goes to
//     the overflow table, so Predict stays exact and keys chosen to collide
//     cannot blow the table up (TestCompactOverflow).
//
//   - Whole-byte slots, not bit-packed: <UInt64,UInt16> fills 62 of 64 bits
//     at 1e8 and all 64 at 1e7, so packing bits would save 3 % at most, for
//     two loads and shifts a slot.
//
//   - Lookups: what limits a single-key read is how many lookups' cache
//     misses the CPU overlaps, not the work of one. A data-dependent loop
//     exit (mispredicted about once a lookup) stops it running ahead, and
//     every load waiting on the miss holds a load-queue entry. So Get reads
//     a window of 2 slots from home (3 from fill 0.75, 5 from 0.8), picks
//     the match without a branch on what they hold, keeps nothing of the
//     window live past it (no spill to the stack), and only then loops:
//     anchors harness, M lookups/s, the loop alone against the window: 7.2
//     against 7.8 at 1e7 (8.2 once the window was 2 slots below fill
//     0.75), 2.9 against 5.1-5.5 at 3e7 (boost 13.6-14.0 and 11.8); the
//     window without spills, 3.73 against 4.80 at 1e8 (boost 8.23). Get's
//     own comment has the window's figures per fill.
//
//   - The batch path (a bulk load, dictGet over a column): GetMany
//     prefetches the home slot's line and the next a batch of 8 ahead and
//     compares 4 slots from home at once (probeWindow); InsertMany
//     prefetches four lines, as an insert reads on to the end of the run it
//     shifts. Figures in docs/performance.md ("compact on the dictionary's
//     path").
//
//   - Release behind the growth pass: the peak of a load is its final
//     size. 1e8 pairs, the lab's loader: SHARDS 1 RSS 10.50 and peak 10.53
//     bytes a pair; SHARDS 16 RSS 9.26, peak 9.41.

// Compact is a layout no ClickHouse dictionary has: a hash table that stores
// of each key only what its slot does not already say (quotienting, after
// Cleary 1984), in slots of a few whole bytes, sorted by hash so that probes
// stop early and growth is one sequential pass. For 1e8 random
// <UInt64,UInt16> pairs it holds 10.3 bytes a pair where the information
// limit is 6.9 and boost::unordered_flat_map holds 21.5.
//
// Its design, with the measurements that chose it, is the comment at
// the top of compact.go.
type Compact[K, V Bits] struct {
	base   unsafe.Pointer // &slab[0]: slot i is at base + i*w
	m      uint64         // home slots
	s      uint           // remainder = low word of x*m >> s
	sb     uint           // min(s-b, 63): low word of x*m >> sb &^ dmask is remainder<<b
	b      uint           // displacement bits
	w      uintptr        // slot bytes
	kmask  uint64         // the displacement and remainder bits of a narrow slot
	midAt  uint64         // from this size on, Get's window is 3 slots, not 2
	fullAt uint64         // from this size on, Get's window is 5 slots, not 3
	dmask  uint64         // the displacement bits: 2^b - 1
	offV   uint           // the value's first bit
	narrow bool           // w <= 8 (and keys of at most 8 bytes): one word per slot

	size     uint64 // pairs in the slab, not counting the overflow table
	far      uint64 // pairs whose displacement field is >= farField
	farField uint64 // next growth's maxDisp+1 when it may not fit what this one holds, else 0
	geo      compactGeo
	mlf      float64
	vs       int // the value's bytes in a slot: sizeof(V), or a row's (Options.ValueBytes)
	slab     []byte
	ovf      *Packed[K, V] // pairs whose displacement would not fit; nil until one is needed
	closed   bool
	owner    *slabOwner
	cleanup  runtime.Cleanup
}

// Growth and slot parameters; see the design comment.
const (
	compactInitialSlots = 256     // home slots of a new table
	compactFastSlots    = 1 << 16 // below it, m grows x2; from it, x compactGrowNum/compactGrowDen
	compactGrowNum      = 5
	compactGrowDen      = 4
	// DefaultCompactMaxLoadFactor is compact's max load factor when the
	// option is 0: slots are small, so a fuller table saves more than the
	// longer probes cost (see the measurements in compact.go).
	DefaultCompactMaxLoadFactor = 0.9
	compactMidWindowFill        = 0.75    // from this fill on, Get's window is 3 slots, not 2 (see Get)
	compactWideWindowFill       = 0.8     // from this fill on, Get's window is 5 slots, not 3
	compactMaxDispBits          = 8       // displacement fields are at most one byte: a shift adds 1 to it in place
	compactReleaseAlign         = 2 << 20 // the old slab is released in whole huge pages
	compactReleaseEvery         = 2 << 20 // ... at least this much at a time
)

// CompactReadLines is how many cache lines a compact table's GetMany
// prefetches a key, the home slot's and the next (see batch): the planner's
// read model counts CompactReadLines-1 lines less than a lookup touches.
const CompactReadLines = 2

// CompactReleasesBehind reports whether a compact table's growth pass hands
// its old slab back as it goes (Linux): its growths then hold little more
// than the new slab (core.Predict's GrowthBytes is two release steps).
const CompactReleasesBehind = compactStreamRelease

// compactMinDispBits is the fewest displacement bits a slot gets at a max
// load factor: enough that random keys almost never overflow it (measured:
// at 0.9, 3 of 1e7 pairs have a displacement above 62).
func compactMinDispBits(mlf float64) uint {
	switch {
	case mlf <= 0.9:
		return 6
	case mlf <= 0.95:
		return 7
	}
	return 8
}

func compactMLF(opt Options) float64 {
	if opt.MaxLoadFactor == 0 {
		return DefaultCompactMaxLoadFactor
	}
	return opt.MaxLoadFactor
}

// compactGeo is a compact table's shape at one size: what Predict replays
// and what TestCompactSlotsHoldEverything checks for every type pair.
type compactGeo struct {
	m       uint64  // home slots
	maxFill uint64  // floor(m * mlf): the most pairs before a growth
	maxDisp uint64  // 2^b - 2: the largest displacement a slot holds
	slots   uint64  // m + maxDisp + 1; the last is the always-empty sentinel
	w       uintptr // slot bytes
	nw      uintptr // 8-byte words a slot load reads: ceil(w/8)
	pad     uintptr // bytes after the last slot: 8*nw - w
	b, r    uint    // displacement and remainder bits
	e, v    uint    // bits of the extra hash word (64 for 16-byte keys, else 0) and of the value
	s       uint    // remainder shift: floor(log2 m) + 64 - kw (>= 64: no remainder)
	kw      uint    // key bits x carries: 8*sizeof(K), at most 64
}

// compactGeometry is the shape of a table of m home slots for keys and
// values of the given sizes in bytes.
func compactGeometry(keyBytes, valueBytes int, m uint64, mlf float64) compactGeo {
	g := compactGeo{m: m, kw: uint(min(8*keyBytes, 64)), v: uint(8 * valueBytes)}
	if keyBytes == 16 {
		g.e = 64
	}
	lg := uint(bits.Len64(m) - 1)
	g.s = lg + 64 - g.kw
	if g.kw > lg {
		g.r = g.kw - lg
	}
	rest := g.r + g.e + g.v
	g.w = uintptr(rest+compactMinDispBits(mlf)+7) / 8
	g.b = min(uint(8*g.w)-rest, compactMaxDispBits)
	g.maxDisp = 1<<g.b - 2
	g.slots = m + g.maxDisp + 1
	g.nw = (g.w + 7) / 8
	g.pad = 8*g.nw - g.w
	g.maxFill = uint64(float64(m) * mlf)
	return g
}

// bytes is the slab size, or a panic with a *SlabError when it does not fit
// in an address.
func (g compactGeo) bytes() uintptr {
	n := slabBytes(LayoutCompact, g.slots, uint64(g.w))
	if n+g.pad < n {
		panic(&SlabError{Layout: LayoutCompact, Bytes: math.MaxUint64, Err: fmt.Errorf("%d slots of %d bytes do not fit in an address", g.slots, g.w)})
	}
	return n + g.pad
}

// compactNextSlots is the growth rule: the home slots after m.
func compactNextSlots(m uint64) uint64 {
	return growRatio(m, compactFastSlots, compactGrowNum, compactGrowDen)
}

// growRatio is the growth rule of the tables that grow by a ratio (compact,
// iceberg): m doubled below fast, else m x num/den rounded up, without
// overflow.
func growRatio(m, fast, num, den uint64) uint64 {
	if m < fast {
		return 2 * m
	}
	hi, lo := bits.Mul64(m, num)
	q, rem := bits.Div64(hi, lo, den)
	if rem != 0 {
		q++
	}
	return q
}

// compactSlotsFor replays the growth rule: the home slots a table built
// with start home slots has after n distinct inserts, and the ones it had
// before its last growth (0 if it never grew).
func compactSlotsFor(start, n uint64, mlf float64) (final, previous uint64) {
	m := start
	for n > uint64(float64(m)*mlf) {
		previous, m = m, compactNextSlots(m)
	}
	return m, previous
}

// compactReserveSlots is the home slots of a table built for n keys: the
// fewest that hold n below the max load factor (any m will do: see Words),
// at least the 256 a table starts with. Reserved for 1e8 <UInt64,UInt16>
// pairs at mlf 0.9 that is 8.9 bytes a pair; the growth rule's sizes hold
// 8.9 to 11.1.
func compactReserveSlots(n uint64, mlf float64) uint64 {
	m := max(uint64(math.Ceil(float64(n)/mlf)), compactInitialSlots)
	for n > uint64(float64(m)*mlf) { // the float rounding of m*mlf
		m++
	}
	return m
}

// NewCompact returns an empty compact table of 256 home slots, or of as
// many as opt.Reserve needs (compactReserveSlots). It panics with a
// *SlabError if the first slab (about 2 KiB for <UInt64,UInt16>) cannot be
// had; New returns it as an error.
func NewCompact[K, V Bits](opt Options) *Compact[K, V] {
	t := &Compact[K, V]{mlf: compactMLF(opt), vs: int(valueBytes[V](opt))}
	t.owner, t.cleanup = own(t, LayoutCompact)
	g := t.geometry(compactReserveSlots(opt.reserve(), t.mlf))
	slab := mustSlab(LayoutCompact, g.bytes())
	t.owner.add(slab)
	t.setSlab(slab, g)
	return t
}

func (t *Compact[K, V]) geometry(m uint64) compactGeo {
	return compactGeometry(int(sizeOf[K]()), t.vs, m, t.mlf)
}

// setSlab makes slab, of geometry g, the table's.
func (t *Compact[K, V]) setSlab(slab []byte, g compactGeo) {
	t.slab, t.geo = slab, g
	t.base = unsafe.Pointer(unsafe.SliceData(slab))
	t.m, t.s, t.b, t.w = g.m, g.s, g.b, g.w
	t.sb = min(g.s-g.b, 63)
	t.dmask = 1<<g.b - 1
	t.kmask = lowMask(g.b + g.r)
	t.midAt = uint64(float64(g.m) * compactMidWindowFill)
	t.fullAt = uint64(float64(g.m) * compactWideWindowFill)
	t.offV = g.b + g.e + g.r
	t.narrow = g.w <= 8
	t.farField = 0
	if next := t.geometry(compactNextSlots(g.m)); next.maxDisp < g.maxDisp {
		t.farField = next.maxDisp + 1
	}
}

// lowMask is n one bits, 0 <= n <= 64.
func lowMask(n uint) uint64 { return ^uint64(0) >> (64 - n) }

func (t *Compact[K, V]) Layout() Layout { return LayoutCompact }

// home and remainder of a hash.
func (t *Compact[K, V]) place(x uint64) (home, rem uint64) {
	home, lo := bits.Mul64(x, t.m)
	return home, lo >> t.s
}

// decode is the hash of the pair at home with remainder rem: the one x
// whose x*m lies in [home*2^64 + rem<<s, ... + 2^s), rounded up to the
// multiples of 2^(64-kw) that narrow keys' hashes are.
func (t *Compact[K, V]) decode(home, rem uint64) uint64 {
	q, r := bits.Div64(home, rem<<t.s, t.m)
	if r != 0 {
		q++
	}
	low := lowMask(64 - t.geo.kw)
	return (q + low) &^ low
}

// Get returns the value stored for key.
//
// It is one long function on purpose: a lookup's time is how much work
// waits on its miss, and a call is such work (the home line's load behind
// a call read 17.5 M lookups/s where inlined it read 22, in the design
// comment's loop); its window stays inline here, and only the rare paths
// past it (getPast, getWide, getMiss) are calls.
func (t *Compact[K, V]) Get(key K) (V, bool) {
	if sizeOf[K]() <= 8 {
		home, lo := bits.Mul64(compactHashWord(key), t.m)
		// In a narrow table, the 2 slots from home first (3 once the
		// table is 0.75 full, 5 once it is 0.8 full), the match picked
		// without a branch on what they hold; a key the window does not
		// find goes on in getPast, from the first slot past the window.
		// One predictable branch after the window lets the CPU run ahead
		// into the next lookup's miss, where probeWord's data-dependent
		// exit did not; a wider window costs every lookup a load waiting
		// on the miss, a narrower one sends more lookups to the loop.
		// Pairs within 3 and 5 slots of home: 83 and 95 % at fill 0.72
		// (1e7 rows), 49 and 68 % at 0.885 (3e7). ns a lookup in a copy of
		// the harness's loop, windows of 2, 3, 4, 5 slots: 133-147,
		// 144-153, 140-166, 158-172 at fill 0.75; 203-221, 160-173,
		// 150-156, 147-154 at 0.83; 312-314, 238-239, 200-225, 168-171 at
		// 0.88. Nothing of the window is live past it (getPast hashes the
		// key again), so the compiler spills none of it to the stack:
		// 3.73 -> 4.80 M lookups/s at 1e8. What else was tried here is in
		// docs/performance.md ("compact: what was tried"). GetMany has a
		// window of its own (probeWindow), 4 slots whatever the fill.
		//
		// One shift, its count masked so that the compiler need not
		// guard it (s may be 64 for 1-byte keys; s-b never is).
		want, km := lo>>(t.sb&63)&^t.dmask|1, t.kmask
		p := unsafe.Add(t.base, uintptr(home)*t.w)
		var hit uint64
		switch t.window() {
		case 0: // wide slots: getPast alone
		case 2: // the same for every lookup until the table fills past 0.75: predicted
			w0 := loadBitsAt[uint64](p)
			w1 := loadBitsAt[uint64](unsafe.Add(p, t.w))
			if w0&km == want {
				hit = w0
			}
			if w1&km == want+1 {
				hit = w1
			}
		case 3:
			w0 := loadBitsAt[uint64](p)
			w1 := loadBitsAt[uint64](unsafe.Add(p, t.w))
			w2 := loadBitsAt[uint64](unsafe.Add(p, 2*t.w))
			if w0&km == want {
				hit = w0
			}
			if w1&km == want+1 {
				hit = w1
			}
			if w2&km == want+2 {
				hit = w2
			}
		default:
			for j, q := uint64(0), p; j < 5; j, q = j+1, unsafe.Add(q, t.w) {
				if w := loadBitsAt[uint64](q); w&km == want+j {
					hit = w
				}
			}
		}
		if hit != 0 {
			return fromWord[V](hit >> (t.offV & 63)), true
		}
		return t.getPast(key) // from the key again: see above
	}
	x, e := compactHash(key)
	home, rem := t.place(x)
	if v, ok := t.getWide(home, rem, e); ok {
		return v, true
	}
	return t.getMiss(key)
}

// window is how many slots from home Get compares at once: 2 in a narrow
// table under 0.75 full, 3 under 0.8, 5 above; 0 in a wide one.
func (t *Compact[K, V]) window() uint64 {
	switch {
	case !t.narrow:
		return 0
	case t.size < t.midAt:
		return 2
	case t.size < t.fullAt:
		return 3
	}
	return 5
}

// getPast is Get for a key of at most 8 bytes that Get's window did not
// find: the slot-by-slot probe from the first slot past the window, then
// the overflow table.
//
//go:noinline
func (t *Compact[K, V]) getPast(key K) (V, bool) {
	home, lo := bits.Mul64(compactHashWord(key), t.m)
	if p, w := t.probeWord(home, lo>>t.s, t.window()); p != nil && t.narrow {
		return fromWord[V](w >> t.offV), true
	} else if p != nil {
		return t.valueAt(p), true
	}
	return t.getMiss(key)
}

// probeWord finds the slot of a key of at most 8 bytes, by its home and
// remainder: its address and first word, or nil. The slot's displacement
// and remainder are in its first word, whatever its width (b + r <= 8 +
// 56): one load and compare a slot. It starts from slot home+from, the
// slots before it already compared: a match there is the key whatever
// they held (only its pair has its home and remainder), and a run that
// ended before it ends at it too (a displacement grows by at most 1 a
// slot, so one below j+1 at slot j is one below j+2 at slot j+1). It
// inlines into getPast and GetMany.
func (t *Compact[K, V]) probeWord(home, rem, from uint64) (unsafe.Pointer, uint64) {
	want := rem<<t.b | (from + 1)
	p := unsafe.Add(t.base, uintptr(home+from)*t.w)
	for d := from + 1; ; d++ {
		w := loadBitsAt[uint64](p)
		if w&t.kmask == want {
			return p, w
		}
		if w&t.dmask < d {
			return nil, 0
		}
		want++
		p = unsafe.Add(p, t.w)
	}
}

// fromWord is the T (of at most 8 bytes) in the low bits of x: FromUint64
// without its size switch, so that it inlines.
func fromWord[T Bits](x uint64) T {
	// Truncated to an integer of T's size first, T's bits are that
	// integer's on either byte order, and the compiler keeps it in a
	// register: through a U128 on the stack, the value of every lookup was
	// stored and loaded again while it waited on the lookup's miss.
	// (unsafe.Sizeof, not sizeOf: a generic call inlined here still
	// loads and checks its dictionary.)
	var z T
	switch unsafe.Sizeof(z) {
	case 1:
		u := uint8(x)
		return *(*T)(unsafe.Pointer(&u))
	case 2:
		u := uint16(x)
		return *(*T)(unsafe.Pointer(&u))
	case 4:
		u := uint32(x)
		return *(*T)(unsafe.Pointer(&u))
	}
	return *(*T)(unsafe.Pointer(&x))
}

// valueAt is the value of the wide slot at p.
func (t *Compact[K, V]) valueAt(p unsafe.Pointer) V {
	w := t.loadWide(p)
	return t.wideValue(&w)
}

// getMiss is the end of a lookup the slab did not answer: the overflow
// table, and the closed check (a closed table's slab is one empty slot).
func (t *Compact[K, V]) getMiss(key K) (V, bool) {
	if t.ovf != nil && t.ovf.Len() > 0 {
		return t.ovf.Get(key)
	}
	if t.closed {
		closedPanic(LayoutCompact)
	}
	var v V
	return v, false
}

// wideWant is what a wide slot's first two words hold, under the masks
// lo and hi, for a pair of home H at displacement 0, remainder rem and extra
// word e.
func (t *Compact[K, V]) wideWant(rem, e uint64) (want0, want1, mask0, mask1 uint64) {
	b, r := t.b, t.geo.r
	if t.geo.e == 0 {
		return rem<<b | 1, 0, lowMask(b + r), 0
	}
	return e<<b | 1, e>>(64-b) | rem<<b, ^uint64(0), lowMask(b + r)
}

// loadWide reads a wide slot's words (the bits past the slot are the next
// slot's, or padding: only fields inside the slot are read from them).
func (t *Compact[K, V]) loadWide(p unsafe.Pointer) (w [4]uint64) {
	for i := range t.geo.nw {
		w[i] = loadBitsAt[uint64](unsafe.Add(p, 8*i))
	}
	return w
}

// field reads n <= 64 bits at bit off of a slot's words.
func field(w *[4]uint64, off, n uint) uint64 {
	i, sh := off/64, off%64
	v := w[i&3] >> sh
	if sh+n > 64 {
		v |= w[(i+1)&3] << (64 - sh)
	}
	return v & lowMask(n)
}

// setField writes n <= 64 bits at bit off of a slot's words, which are zero there.
func setField(w *[4]uint64, off, n uint, v uint64) {
	v &= lowMask(n)
	i, sh := off/64, off%64
	w[i&3] |= v << sh
	if sh+n > 64 {
		w[(i+1)&3] |= v >> (64 - sh)
	}
}

func (t *Compact[K, V]) wideValue(w *[4]uint64) V { return FromUint64[V](t.wideFields(w)) }

// wideFields is the value of a wide slot's words, as two words.
func (t *Compact[K, V]) wideFields(w *[4]uint64) (lo, hi uint64) {
	if t.geo.v <= 64 {
		return field(w, t.offV, t.geo.v), 0
	}
	return field(w, t.offV, 64), field(w, t.offV+64, t.geo.v-64) // a row's value may end before 128 bits
}

func (t *Compact[K, V]) getWide(home, rem, e uint64) (V, bool) {
	want0, want1, mask0, mask1 := t.wideWant(rem, e)
	p := unsafe.Add(t.base, uintptr(home)*t.w)
	for d := uint64(1); ; d++ {
		w := t.loadWide(p)
		if w[0]&mask0 == want0 && w[1]&mask1 == want1 {
			return t.wideValue(&w), true
		}
		if w[0]&t.dmask < d {
			break
		}
		want0++
		p = unsafe.Add(p, t.w)
	}
	var v V
	return v, false
}

// compactBatch is one batch of keys' home slots (as byte offsets, for the
// prefetches), homes and remainders, and their hashes (x, e).
type compactBatch struct {
	off             homes
	home, rem, x, e [getBatch]uint64
}

// compactInsertLines is how many cache lines from its home slot's an
// InsertMany key prefetches: an insert reads on from its place to the end
// of the run it shifts, (1 + 1/(1-fill)^2)/2 slots past home on average (7
// at fill 0.72, 13 at 0.8, 50 at 0.9; linear probing's unsuccessful
// search), so from fill 0.8 on it runs over several lines, misses a batch
// of one line did not overlap. 1e7 <UInt64,UInt16> pairs into a new table,
// InsertMany in blocks of 65,536 (a throwaway loop as the harness's batch
// mode), user seconds, 3 interleaved rounds: 1 line (2 from fill 0.8)
// 1.55-1.62, 2 lines 1.51-1.61, 3 lines 1.37-1.40, 4 lines 1.35-1.47, 6
// lines 1.35-1.47; as many lines as the fill's average run (at most 4, 6
// or 8) 1.35-1.47. Four it is: fewer leaves the long runs' misses, more
// only adds prefetches.
const compactInsertLines = 4

// batch computes the home slots and remainders of the batch of keys from
// lo, and prefetches the lines of their home slots (prefetch.go), and the
// next lines-1 lines too.
func (t *Compact[K, V]) batch(keys []K, lo, lines int, b *compactBatch) {
	if lo >= len(keys) {
		return
	}
	batch := keys[lo:min(lo+getBatch, len(keys))]
	for j, k := range batch {
		var x, e uint64
		if sizeOf[K]() <= 8 {
			x = compactHashWord(k)
		} else {
			x, e = compactHash(k)
		}
		home, l := bits.Mul64(x, t.m)
		b.off[j], b.home[j], b.rem[j] = uintptr(home)*t.w, home, l>>t.s
		b.x[j], b.e[j] = x, e
	}
	prefetchOffsets(t.base, &b.off, len(batch))
	// A read prefetches the line after the home slot's too
	// (CompactReadLines): a pair sits 2.5 slots past its home on average at
	// fill 0.8, 5.5 at 0.9 (linear probing's (1 + 1/(1-fill))/2), and Get's
	// window reads 2 to 5 slots from home, so a probe often runs into the
	// next line, a second miss the batch did not overlap. `packlab run
	// --layout compact`, reads in M rows/s, 2 rounds of 3 repeats, one line
	// against two: fill 0.9 (1e7 --preallocate) 19.4, 18.8 against 28.0,
	// 30.2; 0.885 (3e7) 16.2, 17.4 against 27.1, 23.9; 0.83 (1e7
	// --preallocate --max-load-factor 0.83) 25.8, 27.8 against 33.9, 31.2.
	// Below fill 0.8 it was first measured to gain nothing (at 0.77: 33.3,
	// 30.0 against 35.2, 30.5) and left out there; measured again with the
	// anchors harness's batch reads (a throwaway loop, 2 reads each of 2
	// loads), it gains there too: 1e7 (fill 0.72) 31.8-32.6 against
	// 34.9-36.4, 1e8 (0.77) 16.8-19.5 against 19.2-21.1. The prefetch stops
	// at the last slot: past it prefetch_other's plain loads would leave
	// the slab.
	last := uintptr(t.geo.slots-1) * t.w
	for range lines - 1 {
		for j := range batch {
			b.off[j] = min(b.off[j]+64, last)
		}
		prefetchOffsets(t.base, &b.off, len(batch))
	}
}

// GetMany is Get for every key of keys, the cache misses of the next
// batch's home slots overlapped with the probes of this one (prefetch.go);
// values and found must be at least as long as keys.
func (t *Compact[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.closed {
		closedPanic(LayoutCompact)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	var b [2]compactBatch
	t.batch(keys, 0, CompactReadLines, &b[0])
	n := 0
	for lo, cur := 0, 0; lo < len(keys); lo, cur = lo+getBatch, cur^1 {
		t.batch(keys, lo+getBatch, CompactReadLines, &b[cur^1])
		for j, key := range keys[lo:min(lo+getBatch, len(keys))] {
			var v V
			ok := false
			home, rem := b[cur].home[j], b[cur].rem[j]
			if sizeOf[K]() <= 8 && t.narrow {
				var w uint64
				if w, ok = t.probeWindow(home, rem); ok {
					v = fromWord[V](w >> t.offV)
				}
			} else if sizeOf[K]() <= 8 {
				if p, _ := t.probeWord(home, rem, 0); p != nil {
					v, ok = t.valueAt(p), true
				}
			} else {
				v, ok = t.getWide(home, rem, b[cur].e[j])
			}
			if !ok && t.ovf != nil && t.ovf.Len() > 0 {
				v, ok = t.ovf.Get(key)
			}
			values[lo+j], found[lo+j] = v, ok
			n += b2i(ok)
		}
	}
	return n
}

// probeWindow is probeWord from slot 0 for GetMany in a narrow table: the 4
// slots from home compared at once, the match picked with masks, no branch
// on what they hold; only a key that may lie past them (its run goes on
// past slot 3) takes probeWord's loop, a branch that goes one way for most
// lookups. probeWord's loop alone exits at a data-dependent point, so it
// was mispredicted about once a key, and each misprediction threw away the
// work the CPU had run ahead into. GetMany over the anchors harness's
// read order in a throwaway loop beside this file, one table read
// alternately (M rows/s, 4 rounds): at 1e7 (fill 0.72) 3 slots
// 41.9-45.5, 4 slots 44.4-46.7, 6 slots 43.1-46.4, the loop 36.2-37.7; at
// 1e8 (0.77) 26.3-30.4, 28.8-32.0, 28.2-31.0, 25.0-27.0. Four slots lie
// within the two lines the batch prefetched (CompactReadLines), and hold
// 91 % of the pairs at fill 0.72 (1e7 rows). The 4th slot's word ends at
// most 3 slots past the last home slot, inside the maxDisp tail.
func (t *Compact[K, V]) probeWindow(home, rem uint64) (uint64, bool) {
	p := unsafe.Add(t.base, uintptr(home)*t.w)
	km, want := t.kmask, rem<<t.b|1
	w0 := loadBitsAt[uint64](p)
	w1 := loadBitsAt[uint64](unsafe.Add(p, t.w))
	w2 := loadBitsAt[uint64](unsafe.Add(p, 2*t.w))
	w3 := loadBitsAt[uint64](unsafe.Add(p, 3*t.w))
	e0, e1, e2, e3 := uint64(b2i(w0&km == want)), uint64(b2i(w1&km == want+1)), uint64(b2i(w2&km == want+2)), uint64(b2i(w3&km == want+3))
	if e0|e1|e2|e3 != 0 {
		// At most one matches: only one pair has this home and remainder.
		return w0&-e0 | w1&-e1 | w2&-e2 | w3&-e3, true
	}
	if w3&t.dmask < 4 {
		return 0, false // the run ended within the window
	}
	p, w := t.probeWord(home, rem, 4)
	return w, p != nil
}

// InsertMany is Insert for every pair of keys and values, the cache misses
// of the next batch's home slots overlapped with the inserts of this one
// (prefetch.go): inserted[i] = Insert(keys[i], values[i]). It returns how
// many were inserted; values and inserted must be at least as long as keys.
// The loader's workers insert their blocks with it. A growth in the middle
// moves the slots: the prefetches are only hints.
func (t *Compact[K, V]) InsertMany(keys []K, values []V, inserted []bool) int {
	values, inserted = values[:len(keys)], inserted[:len(keys)]
	var b [2]compactBatch
	t.batch(keys, 0, compactInsertLines, &b[0])
	n := 0
	// The same batch loop as GetMany's, kept written out in each: a shared one would make an indirect call per key.
	for lo, cur := 0, 0; lo < len(keys); lo, cur = lo+getBatch, cur^1 {
		t.batch(keys, lo+getBatch, compactInsertLines, &b[cur^1])
		for j, k := range keys[lo:min(lo+getBatch, len(keys))] {
			// The hash the batch computed for its prefetch (it does not
			// change when the table grows, as homes do), not computed
			// again: 1e7 pairs into a new table, the 2nd and 3rd loads of
			// a process (fresh memory aside), 171 against 176 ns a pair
			// over 7 rounds.
			ok := t.insertHashed(k, values[lo+j], b[cur].x[j], b[cur].e[j])
			inserted[lo+j] = ok
			n += b2i(ok)
		}
	}
	return n
}

func (t *Compact[K, V]) Has(key K) bool { _, ok := t.Get(key); return ok }

// find looks for the place of (x, e) in the slab: the slot i where it is
// (dup) or where it belongs in order, and d, the displacement+1 it has or
// would have there (d-1 > maxDisp: it does not fit).
func (t *Compact[K, V]) find(x, e uint64) (i, d uint64, dup bool) {
	home, rem := t.place(x)
	if sizeOf[K]() <= 8 {
		want := rem<<t.b | 1
		p := unsafe.Add(t.base, uintptr(home)*t.w)
		for d = 1; ; d++ {
			k := loadBitsAt[uint64](p) & t.kmask
			if k == want {
				return home + d - 1, d, true
			}
			if df := k & t.dmask; df < d || df == d && k > want {
				return home + d - 1, d, false
			}
			want++
			p = unsafe.Add(p, t.w)
		}
	}
	want0, want1, mask0, mask1 := t.wideWant(rem, e)
	p := unsafe.Add(t.base, uintptr(home)*t.w)
	for d = 1; ; d++ {
		w := t.loadWide(p)
		k0, k1 := w[0]&mask0, w[1]&mask1
		if k0 == want0 && k1 == want1 {
			return home + d - 1, d, true
		}
		if df := k0 & t.dmask; df < d || df == d && (k1 > want1 || k1 == want1 && k0 > want0) {
			return home + d - 1, d, false
		}
		want0++
		p = unsafe.Add(p, t.w)
	}
}

// Insert stores (key, value) if key is absent and reports whether it did.
func (t *Compact[K, V]) Insert(key K, value V) bool {
	var x, e uint64
	if sizeOf[K]() <= 8 {
		x = compactHashWord(key)
	} else {
		x, e = compactHash(key)
	}
	return t.insertHashed(key, value, x, e)
}

// insertHashed is Insert for a key whose hash is x (and e, 16-byte keys).
func (t *Compact[K, V]) insertHashed(key K, value V, x, e uint64) bool {
	for {
		i, d, dup := t.find(x, e)
		if dup {
			return false
		}
		if t.closed {
			closedPanic(LayoutCompact)
		}
		if t.ovf != nil && t.ovf.Len() > 0 && t.ovf.Has(key) {
			return false
		}
		// Grow before placing, so that a growth that cannot get its slab
		// leaves the table as it was.
		if t.size+t.ovfLen()+1 > t.geo.maxFill {
			t.grow()
			continue
		}
		if d-1 > t.geo.maxDisp {
			t.overflow(key, value)
			return true
		}
		t.place1(i, d, x, e, value)
		return true
	}
}

func (t *Compact[K, V]) ovfLen() uint64 {
	if t.ovf == nil {
		return 0
	}
	return uint64(t.ovf.Len())
}

// overflow puts a pair into the overflow table, which may grow first (and
// panic with a *SlabError, changing nothing).
func (t *Compact[K, V]) overflow(key K, value V) {
	if t.ovf == nil {
		t.ovf = NewPacked[K, V](Options{ValueBytes: t.vs})
	}
	t.ovf.Insert(key, value)
}

// place1 puts (x, e, value) at slot i with displacement field d, shifting
// the run from i one slot right up to its first empty slot, or up to the
// first pair already at the largest displacement, which goes to the
// overflow table instead.
func (t *Compact[K, V]) place1(i, d, x, e uint64, value V) {
	j := i
	for ; ; j++ {
		df := loadBitsAt[uint64](unsafe.Add(t.base, uintptr(j)*t.w)) & t.dmask
		if df == 0 {
			break
		}
		if df == t.dmask {
			// Moving it would overflow its field: it leaves the slab.
			k, v := t.pairAt(j)
			t.overflow(k, v) // may panic: nothing has changed yet
			if t.farField != 0 {
				t.far--
			}
			t.size--
			break
		}
	}
	w := t.w
	_, rem := t.place(x)
	vlo, vhi := ToUint64(value)
	if t.narrow && w >= 4 {
		t.shiftNarrow(i, j, d|rem<<t.b|vlo<<t.offV)
	} else {
		copy(t.slab[uintptr(i+1)*w:uintptr(j+1)*w], t.slab[uintptr(i)*w:uintptr(j)*w])
		for q := uintptr(i+1) * w; q <= uintptr(j)*w; q += w {
			c := t.slab[q] + 1
			t.slab[q] = c
			if uint64(c) == t.farField {
				t.far++
			}
		}
		t.store(unsafe.Add(t.base, uintptr(i)*w), d, rem, e, vlo, vhi)
	}
	if t.farField != 0 && d >= t.farField {
		t.far++
	}
	t.size++
}

// shiftNarrow writes slot word cur at slot i and moves slots i..j-1 one
// slot right, their displacement fields +1, in one forward pass (slots of
// 4 to 8 bytes). Each 8-byte store runs into the next slot's first 8-w <= w
// bytes, which the pass has already read and writes next; the last store,
// into slot j, keeps the bytes past it.
func (t *Compact[K, V]) shiftNarrow(i, j, cur uint64) {
	w, mask, far := uintptr(t.w), lowMask(uint(8*t.w)), t.farField
	p := unsafe.Add(t.base, uintptr(i)*w)
	next := loadBitsAt[uint64](p)
	for range j - i {
		old := next & mask
		next = loadBitsAt[uint64](unsafe.Add(p, w))
		storeBitsAt(p, cur)
		cur = old + 1
		if cur&t.dmask == far {
			t.far++
		}
		p = unsafe.Add(p, w)
	}
	storeBitsAt(p, next&^mask|cur)
}

// store writes a slot's fields at p, keeping the bytes past the slot.
func (t *Compact[K, V]) store(p unsafe.Pointer, d, rem, e, vlo, vhi uint64) {
	g := &t.geo
	if t.narrow {
		word := d | rem<<t.b | vlo<<t.offV
		keep := ^lowMask(uint(8 * t.w))
		storeBitsAt(p, loadBitsAt[uint64](p)&keep|word)
		return
	}
	var w [4]uint64
	w[0] = d
	setField(&w, t.b, g.e, e)
	setField(&w, t.b+g.e, g.r, rem)
	setField(&w, t.offV, min(g.v, 64), vlo)
	if g.v > 64 {
		setField(&w, t.offV+64, 64, vhi)
	}
	for k := uintptr(0); k+1 < g.nw; k++ {
		storeBitsAt(unsafe.Add(p, 8*k), w[k])
	}
	last := unsafe.Add(p, 8*(g.nw-1))
	keep := ^lowMask(uint(8 * (t.w - 8*(g.nw-1))))
	storeBitsAt(last, loadBitsAt[uint64](last)&keep|w[g.nw-1])
}

// slotAt decodes slot i: its displacement field (0: empty), hash and value.
func (t *Compact[K, V]) slotAt(i uint64) (d, x, e, vlo, vhi uint64) {
	g := &t.geo
	p := unsafe.Add(t.base, uintptr(i)*t.w)
	var rem uint64
	if t.narrow {
		w := loadBitsAt[uint64](p)
		d, rem, vlo = w&t.dmask, w>>t.b&lowMask(g.r), w>>t.offV&lowMask(g.v)
	} else {
		w := t.loadWide(p)
		d = w[0] & t.dmask
		e, rem = field(&w, t.b, g.e), field(&w, t.b+g.e, g.r)
		vlo, vhi = t.wideFields(&w)
	}
	if d != 0 {
		x = t.decode(i-(d-1), rem)
	}
	return d, x, e, vlo, vhi
}

// pairAt is the key and value of the occupied slot i.
func (t *Compact[K, V]) pairAt(i uint64) (K, V) {
	_, x, e, vlo, vhi := t.slotAt(i)
	return compactKey[K](x, e), FromUint64[V](vlo, vhi)
}

// grow moves every pair into a slab of the next size in one pass (see the
// design comment) and releases the old slab as the pass leaves it.
func (t *Compact[K, V]) grow() {
	if t.closed {
		closedPanic(LayoutCompact)
	}
	g := t.geometry(compactNextSlots(t.m))
	// Room in the overflow table for every pair that may not fit its new
	// field (at most t.far: a displacement grows by at most 1), then the
	// new slab: either may panic with a *SlabError, changing nothing.
	if t.far > 0 {
		if t.ovf == nil {
			t.ovf = NewPacked[K, V](Options{ValueBytes: t.vs})
		}
		for t.ovf.g.overflow(t.ovf.size + t.far) {
			t.ovf.grow()
		}
	}
	slab := mustSlab(LayoutCompact, g.bytes())
	t.owner.add(slab)
	old, overflowed := *t, t.ovfLen()
	t.setSlab(slab, g)
	t.size, t.far = 0, 0
	rel := newSlabReleaser(old.slab)
	if sizeOf[K]() <= 8 && sizeOf[V]() <= 8 {
		t.moveWord(&old, &rel)
	} else {
		t.moveWide(&old, &rel)
	}
	if moved := t.ovfLen() - overflowed; moved > old.far {
		panic(fmt.Sprintf("core: compact growth moved %d pairs to the overflow table, %d were reserved", moved, old.far))
	}
	if compactGrowHook != nil {
		compactGrowHook(rel.done, uintptr(len(old.slab)))
	}
	t.owner.releaseRest(old.slab, rel.done)
}

// compactGrowHook, when set (tests only), hears at the end of every growth
// pass how much of the old slab it had released, and the slab's size.
var compactGrowHook func(released, slab uintptr)

// moveWord is grow's pass for keys and values of at most 8 bytes, the hot
// case, written out with the geometry in locals: a slot is one word
// (narrow) or two, its displacement and remainder in the first, its value
// from bit offV on, reaching into the second word when offV + v > 64.
// Slots are written in increasing order into a zeroed slab, so a plain
// 8-byte store may run into the next slot's bytes: they are written later
// or stay zero.
func (t *Compact[K, V]) moveWord(old *Compact[K, V], rel *slabReleaser) {
	ob, ow, oslots := old.base, old.w, old.geo.slots
	ob0, odmask, ormask := old.b, old.dmask, lowMask(old.geo.r)
	oOffV, oTwo, vmask := old.offV, !old.narrow, lowMask(old.geo.v)
	om, os, olow := old.m, old.s, lowMask(64-old.geo.kw)
	nb, nw, nm, ns, nb0, nOffV := t.base, t.w, t.m, t.s, t.b, t.offV
	nTwo, maxD, farField := !t.narrow, t.geo.maxDisp, t.farField
	var size, far uint64
	cursor := uint64(0)
	for i := uint64(0); i < oslots; i++ {
		if i&0xffff == 0 {
			rel.upTo(uintptr(i) * ow)
		}
		p := unsafe.Add(ob, uintptr(i)*ow)
		w := loadBitsAt[uint64](p)
		df := w & odmask
		if df == 0 {
			continue
		}
		// decode, inline: the x whose x*m starts at home<<64 | rem<<s.
		q, r := bits.Div64(i-(df-1), (w>>ob0&ormask)<<os, om)
		if r != 0 {
			q++
		}
		x := (q + olow) &^ olow
		v := w >> oOffV
		if oTwo {
			v |= loadBitsAt[uint64](unsafe.Add(p, 8)) << (64 - oOffV)
		}
		v &= vmask
		home, lo := bits.Mul64(x, nm)
		pos := max(home, cursor)
		d := pos - home + 1
		if d-1 > maxD {
			t.overflow(compactKey[K](x, 0), fromWord[V](v)) // room reserved: no growth
			continue
		}
		np := unsafe.Add(nb, uintptr(pos)*nw)
		storeBitsAt(np, d|lo>>ns<<nb0|v<<nOffV)
		if nTwo {
			storeBitsAt(unsafe.Add(np, 8), v>>(64-nOffV))
		}
		if farField != 0 && d >= farField {
			far++
		}
		size++
		cursor = pos + 1
	}
	t.size, t.far = size, far
}

// moveWide is grow's pass for every other case.
func (t *Compact[K, V]) moveWide(old *Compact[K, V], rel *slabReleaser) {
	cursor := uint64(0)
	for i := uint64(0); i < old.geo.slots; i++ {
		if i&0xffff == 0 {
			rel.upTo(uintptr(i) * old.w)
		}
		df, x, e, vlo, vhi := old.slotAt(i)
		if df == 0 {
			continue
		}
		home, rem := t.place(x)
		pos := max(home, cursor)
		d := pos - home + 1
		if d-1 > t.geo.maxDisp {
			t.overflow(compactKey[K](x, e), FromUint64[V](vlo, vhi)) // room reserved
			continue
		}
		t.store(unsafe.Add(t.base, uintptr(pos)*t.w), d, rem, e, vlo, vhi)
		if t.farField != 0 && d >= t.farField {
			t.far++
		}
		t.size++
		cursor = pos + 1
	}
}

func (t *Compact[K, V]) Len() int {
	if t.closed {
		closedPanic(LayoutCompact)
	}
	return int(t.size + t.ovfLen())
}

func (t *Compact[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.closed {
			closedPanic(LayoutCompact)
		}
		for i := uint64(0); i < t.geo.slots; i++ {
			if t.dispAt(i) == 0 {
				continue
			}
			if k, v := t.pairAt(i); !yield(k, v) {
				return
			}
		}
		if t.ovf != nil {
			for k, v := range t.ovf.All() {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

// dispAt is slot i's displacement field: 0 when it is empty.
func (t *Compact[K, V]) dispAt(i uint64) uint64 {
	return loadBitsAt[uint64](unsafe.Add(t.base, uintptr(i)*t.w)) & t.dmask
}

// Close releases the slab (and the overflow table) at once; see Hashed.Close.
func (t *Compact[K, V]) Close() {
	if t.closed {
		return
	}
	t.owner.close(&t.cleanup)
	closeOverflow(&t.ovf)
	t.closed, t.size, t.far = true, 0, 0
	// Every probe of a closed table reads one empty slot (home 0 of m = 0,
	// slots of 0 bytes: probeWord reads it once) and ends on the miss
	// path, which panics.
	t.slab = unsafe.Slice((*byte)(unsafe.Pointer(&closedMemory)), unsafe.Sizeof(closedMemory))
	t.base = unsafe.Pointer(&closedMemory)
	t.m, t.geo, t.narrow, t.w = 0, compactGeo{}, true, 0
}

// Stats: payload is the remainder, extra-word and value bits the slots hold
// (less than sizeof K + sizeof V a pair: the home says the rest), padding
// the unused bits of occupied slots, empty the unoccupied slots, metadata
// the displacement fields, the sentinel, the pad, the header, and the bits
// the byte rounding of the others leaves.
func (t *Compact[K, V]) Stats() Stats {
	if t.closed {
		closedPanic(LayoutCompact)
	}
	g := &t.geo
	n := int64(t.size)
	slotBits := int64(8 * g.w)
	used := int64(g.r + g.e + g.v)
	header := int64(unsafe.Sizeof(*t))
	s := Stats{
		ElementCount:   n,
		BucketCount:    int64(g.m + g.maxDisp),
		BytesAllocated: int64(len(t.slab)) + header,
		PayloadBytes:   n * used / 8,
		PaddingBytes:   n * (slotBits - used - int64(g.b)) / 8,
		EmptyBytes:     (int64(g.m+g.maxDisp) - n) * int64(g.w),
	}
	return withOverflow(s, t.ovf)
}

// The overflow table of a compact or an iceberg table (ovf) is a packed
// table of the pairs its slots cannot hold, nil until one is needed.

// withOverflow finishes the Stats of a compact or an iceberg table, s
// without its metadata: metadata is what the other parts leave of
// BytesAllocated; then the overflow table's stats are added, if it has one,
// and the load factor is the sum's.
func withOverflow[K, V Bits](s Stats, ovf *Packed[K, V]) Stats {
	s.MetadataBytes = s.BytesAllocated - s.PayloadBytes - s.PaddingBytes - s.EmptyBytes
	if ovf != nil {
		s = s.Add(ovf.Stats())
	}
	s.LoadFactor = loadFactor(s.ElementCount, s.BucketCount)
	return s
}

// closeOverflow closes the overflow table *ovf, if there is one, and
// forgets it.
func closeOverflow[K, V Bits](ovf **Packed[K, V]) {
	if *ovf != nil {
		(*ovf).Close()
		*ovf = nil
	}
}

// CompactSlot is what one pair of a compact table of m home slots holds:
// its slot's bytes, and of its bits the remainder (and extra hash word), the
// value and the displacement field.
type CompactSlot struct {
	SlotBytes        int   `json:"slot_bytes"`
	RemainderBits    int   `json:"remainder_bits"` // including a 16-byte key's whole second word
	ValueBits        int   `json:"value_bits"`
	DisplacementBits int   `json:"displacement_bits"`
	MaxDisplacement  int   `json:"max_displacement"`
	HomeSlots        int64 `json:"home_slots"`
}

// Slot reports the table's slot format at its current size.
func (t *Compact[K, V]) Slot() CompactSlot {
	g := &t.geo
	return CompactSlot{int(g.w), int(g.r + g.e), int(g.v), int(g.b), int(g.maxDisp), int64(g.m)}
}

// CheckInvariants checks every slot against the design comment's rules: an
// invariant checker for tests, one pass that says which rule broke where.
func (t *Compact[K, V]) CheckInvariants() error {
	if t.closed {
		return fmt.Errorf("compact: closed")
	}
	g := t.geo
	if want := g.bytes(); uintptr(len(t.slab)) != want {
		return fmt.Errorf("compact: slab of %d bytes, want %d (%d slots of %d bytes + %d)", len(t.slab), want, g.slots, g.w, g.pad)
	}
	if len(t.owner.slabs) != 1 || &t.owner.slabs[0][0] != &t.slab[0] {
		return fmt.Errorf("compact: owns %d slabs, want exactly its slab", len(t.owner.slabs))
	}
	if g != t.geometry(t.m) {
		return fmt.Errorf("compact: geometry %+v, want %+v", g, t.geometry(t.m))
	}
	n, far, err := t.checkSlots()
	if err != nil {
		return err
	}
	if n != t.size {
		return fmt.Errorf("compact: %d occupied slots, size says %d", n, t.size)
	}
	if far != t.far {
		return fmt.Errorf("compact: %d pairs at displacement fields >= %d, far says %d", far, t.farField, t.far)
	}
	if t.size+t.ovfLen() > g.maxFill {
		return fmt.Errorf("compact: %d pairs exceed max fill %d", t.size+t.ovfLen(), g.maxFill)
	}
	if t.ovf != nil {
		if err := t.ovf.CheckInvariants(); err != nil {
			return fmt.Errorf("compact overflow: %w", err)
		}
		for k, v := range t.ovf.All() {
			if got, ok := t.Get(k); !ok || got != v {
				return fmt.Errorf("compact: Get(%v) = %v, %v; the overflow table holds %v", k, got, ok, v)
			}
		}
	}
	return t.Stats().check()
}

// checkSlots checks every slot in order (checkSlot), and returns how many
// hold a pair and how many of those sit at a far displacement field.
func (t *Compact[K, V]) checkSlots() (n, far uint64, err error) {
	var px, pe uint64
	prev := false
	for i := uint64(0); i < t.geo.slots; i++ {
		d, x, e, vlo, vhi := t.slotAt(i)
		if d == 0 {
			// An empty slot is all zero, so that its bytes read as empty
			// under every mask.
			p := t.slab[uintptr(i)*t.geo.w : uintptr(i+1)*t.geo.w]
			for _, c := range p {
				if c != 0 {
					return 0, 0, fmt.Errorf("compact: empty slot %d holds % x", i, p)
				}
			}
			prev = false
			continue
		}
		if err := t.checkSlot(i, d, x, e, vlo, vhi, prev, px, pe); err != nil {
			return 0, 0, err
		}
		if t.farField != 0 && d >= t.farField {
			far++
		}
		n++
		px, pe, prev = x, e, true
	}
	return n, far, nil
}

// checkSlot checks occupied slot i (displacement field d, hash x and its
// extension e, value vlo:vhi) against its home, its order after the slot
// before it (prev: occupied, holding px, pe), its padding and a lookup.
func (t *Compact[K, V]) checkSlot(i, d, x, e, vlo, vhi uint64, prev bool, px, pe uint64) error {
	if i == t.geo.slots-1 {
		return fmt.Errorf("compact: the sentinel slot %d is occupied", i)
	}
	if d-1 > i || i-(d-1) >= t.geo.m {
		return fmt.Errorf("compact: slot %d has displacement %d: home %d outside 0..%d", i, d-1, int64(i)-int64(d-1), t.geo.m-1)
	}
	if d > 1 && !prev {
		return fmt.Errorf("compact: slot %d has displacement %d after an empty slot", i, d-1)
	}
	if home, rem := t.place(x); home != i-(d-1) || t.decode(home, rem) != x {
		return fmt.Errorf("compact: slot %d decodes to hash %#x, whose home is %d, not %d", i, x, home, i-(d-1))
	}
	if prev && (x < px || x == px && e <= pe) {
		return fmt.Errorf("compact: slot %d (hash %#x,%#x) is not after slot %d (%#x,%#x)", i, x, e, i-1, px, pe)
	}
	if t.narrow {
		if w := loadBitsAt[uint64](unsafe.Add(t.base, uintptr(i)*t.geo.w)); w&lowMask(uint(8*t.geo.w))>>(t.offV+t.geo.v) != 0 {
			return fmt.Errorf("compact: slot %d has padding bits set: %#x", i, w)
		}
	}
	k := compactKey[K](x, e)
	if v, ok := t.Get(k); !ok || v != FromUint64[V](vlo, vhi) {
		return fmt.Errorf("compact: Get(%v) = %v, %v; slot %d holds %v", k, v, ok, i, FromUint64[V](vlo, vhi))
	}
	if t.ovf != nil && t.ovf.Has(k) {
		return fmt.Errorf("compact: key %v is both in slot %d and in the overflow table", k, i)
	}
	return nil
}

// InformationLimitBits is the fewest bits any structure can hold n distinct
// keys of keyBits bits each, with a value of valueBits bits per key, in:
// log2 C(2^keyBits, n) + n*valueBits. No layout can be smaller for keys
// drawn at random; compact's bytes per pair is measured against it.
// For 1e8 keys of 64 bits with 16-bit values it is 6.86 bytes a pair.
func InformationLimitBits(keyBits, valueBits int, n int64) float64 {
	if n <= 0 {
		return 0
	}
	N := math.Ldexp(1, keyBits)
	nf := float64(n)
	if nf > N {
		return math.NaN()
	}
	lgN1 := func() float64 { // ln(N!/(N-n)!)
		if N <= 1<<40 {
			a, _ := math.Lgamma(N + 1)
			b, _ := math.Lgamma(N - nf + 1)
			return a - b
		}
		// Stirling for both factorials, the difference taken analytically:
		// ln N!/(N-n)! = n ln N - (N-n) ln(1-n/N) - n + ln(N/(N-n))/2 + ...
		return nf*math.Log(N) - (N-nf)*math.Log1p(-nf/N) - nf - 0.5*math.Log1p(-nf/N)
	}
	lnf, _ := math.Lgamma(nf + 1)
	return (lgN1()-lnf)/math.Ln2 + nf*float64(valueBits)
}

// InformationLimitBytes is InformationLimitBits for a pair of types, in bytes
// per pair.
func InformationLimitBytes(key, value Type, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return InformationLimitBits(8*key.Size, 8*value.Size, n) / 8 / float64(n)
}
