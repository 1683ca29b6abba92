package core

import (
	"fmt"
	"iter"
	"math"
	"math/bits"
	"runtime"
	"unsafe"
)

// The iceberg layout: buckets of whole cache lines, quotiented slots packed
// bit to bit, a front yard found by one hash and a small back yard of
// two-choice buckets for the pairs a full front bucket turns away (after
// Bender, Conway, Farach-Colton, Kuszmaul and Tagliavini's Iceberg hashing,
// JACM 2023, and Pandey et al.'s IcebergHT, SIGMOD 2023). A pair never moves
// once placed, except when the table grows.
//
// # Words
//
//   - x: the key's hash, compact's bijection (compact_hash.go): the key can
//     be computed back from it. A key of kw < 64 bits hashes into the top kw
//     bits of x; u = x >> (64-kw) is those bits.
//   - home: floor(x*m / 2^64), the front bucket of x among m (any m).
//   - remainder: the low L = kw - floor(log2 m) bits of u. The u of one home
//     lie in an interval of at most 2^kw/m <= 2^L values, so the home and
//     the remainder give u back: u0, the interval's first, is one division a
//     bucket, and u = u0 + ((remainder - u0) mod 2^L).
//
// # A bucket
//
// A bucket is `lines` cache lines (64 bytes each), a little-endian bit
// string:
//
//	byte 0  1     2           C    C+1 = bit sbase  so     so+st        so+C*st    8*64*lines
//	    +-----+-----+-----+-- ... --+------+-------+--------+--------+-- ... --+----------+--------+
//	    |count| fp 0| fp 1|         |fp C-1| spill | slot 0 | slot 1 |         | slot C-1 | (zero) |
//	    +-----+-----+-----+-- ... --+------+-------+--------+--------+-- ... --+----------+--------+
//
//	fp s:   the low 8 bits of slot s's remainder (its fingerprint)
//	spill:  a front bucket's spill bits (see the back yard), sk bits: the bits the slots leave free
//	a slot: | the remainder's other L-8 bits | choice (back yard: 1) | e (16-byte keys: 64) | value (8*vs) |
//
// A pair takes sb = L + choice + e + value bits: 8 in the header, st = sb-8
// in its slot. count (byte 0's low 6 bits: a bucket has at most 63 slots)
// is how many slots from slot 0 hold a pair; the others' fingerprints and
// slots are zero. A back bucket, and a front bucket whose slots leave two
// bits or fewer free, have no spill field (slot 0 follows the
// fingerprints); a front one then keeps its spill bits in byte 0's top
// two. Pairs go into a bucket in arrival order
// (no deletions: a count is enough). The front yard's buckets have at least
// 24 slots (three lines for <UInt64,UInt16>: 26 slots of 58 bits at 1e8
// pairs, 20 bits left, 13 of them its spill bits), the back yard's at least 6 (one
// line: 8 slots of 62 bits). A remainder under 8 bits (keys of 1 or 2 bytes in many
// buckets) has no fingerprint: its whole L bits are in the slot, slot 0 at
// bit 8, and a lookup reads every slot.
//
// The fingerprints buy the lookup: it compares the key's byte with all of
// them at once (icebergMatch: 16 bytes an SSE2 compare on amd64,
// iceberg_amd64.s; 8 in a word elsewhere, icebergMatchWords) and reads only
// the slots that match, one a hit and 1/256 of the others, in place of a
// loop over up to C slots whose exit was mispredicted once a lookup (single
// Get at 1e7, against compact's in the same process: 0.62-0.67x, from
// 0.39-0.46x; and in cache, at 1e5: 1.8x compact's, from 0.97x). They cost
// no bits: they are 8 of the remainder's.
//
// # One-word slots
//
// Once a table has 2^15 front buckets (<UInt64,UInt16>; fewer for narrower
// keys or values) a slot past its fingerprint is at most 57 bits, so one
// 8-byte load at its first byte holds it whole (icebergYard.word): a lookup
// reads the candidate's key bits and value in that one load (findWord), and
// an insert appends a pair with one store (appendWord: it reads only the
// slot's first byte, not the word the previous pair's store just wrote,
// which store forwarding cannot serve). What bounds a loop of single Gets
// is how many of them the CPU keeps in flight: a Get that waits on its
// header's miss holds every operation that depends on it, so the fewer
// those are, the more Gets overlap. A chain of dependent Gets at 1e7 took
// 285 CPU ns a Get, independent ones 130. In one process at 1e7, alternating
// (CPU ns an independent Get): the word-at-a-time match 153, with a
// prefetch of the bucket's three lines as the Get starts 147, the SSE2
// match 123, both 108; single Get through core.Map, side-by-side harness,
// 4.60 M rows/s before these (one-word slots, SSE2, the prefetches, the
// back buckets' two misses at once in getBack) and 9.44 after, boost's
// read 24.30 in the same rounds. A single Get now does all of its
// front-yard lookup in one assembly call (icebergGetWord, see Get):
// where the time of a hit goes, in one process at 1e7 (CPU ns a Get,
// loops of independent keys that do part of its work): the hash and a
// load of each of the bucket's three lines 25-32; the hash, the prefetch
// and the SSE2 match in one assembly call 42-55, with the first
// candidate's slot read 56-65; the same calls through a func value 59-67
// and 82-95; Get through core.Map 92-97. What runs out first is the
// CPU's integer registers: an instruction that writes one holds it until
// it retires, behind the oldest Get's miss (64 more such instructions in
// icebergGetWord cost 41-49 ns a Get at 1e7, 64 NOPs or compares
// nothing). So icebergGetWord writes as few as it can, and the pairs with
// one-word slots get a Get that is not generic (no dictionary wrapper:
// icebergWords): through core.Map 64-68 CPU ns, against 80-84 for the
// same assembly through the generic method and 82-87 for the assembly
// before it (one process, 1e7, loops in turn, load 3); a loop of the
// hash and one line of the bucket alone, called the same way, 39-44.
//
// # The slabs
//
//	front: | bucket 0 | bucket 1 | ... | bucket m-1 | 16 bytes of pad |
//	back:  | bucket 0 | ... | bucket mb-1 | 16 bytes of pad |
//
// The pad lets a slot's 8-byte loads (and the ninth byte of a field that
// straddles them) stay inside the slab, and the SSE2 match's 16-byte loads
// of the last bucket's header (up to byte 64 of a bucket of 64 slots).
//
// # The back yard
//
// A pair whose front bucket is full goes to the back yard: mb buckets, the
// first choice floor(x*mb / 2^64), the second that plus 1 + a hash of the
// back-yard remainder mod mb-1 (so that the slot's bucket and remainder give
// the first choice back), the less full of the two; the slot's choice bit
// says which it is. The back yard is sized with the front yard (see
// icebergBackSlots): for as many pairs as a front yard at the max load
// factor sends there on average (Poisson), at 0.85 of its slots. A pair
// whose two back buckets are both full goes to an overflow table (a Packed
// table of whole pairs, as compact's), so that keys chosen to collide fill
// it instead of blowing the table up; random keys all but never reach it.
//
// A pair goes to the back yard only past a full front bucket, and sets one
// of that bucket's spill bits, the one a hash of its remainder picks
// (spillAt). They are the bits the bucket's slots leave free, up to 64,
// placed after the fingerprints so that they are in the header's line
// (the line a miss reads, and the one GetMany's pipeline has in cache
// when it decides on the back yard), as many as move no more slots'
// 8-byte loads across a line boundary (icebergStraddles): for
// <UInt64,UInt16>, 37 of 40 free at 1e7 pairs, 13 of 20 at 1e8, 7 to 43
// over the sizes from 1e7 to 1e9 except 3 between 1.14e7 and 2.39e7
// pairs; where that leaves two or fewer, the count byte's top two, and
// where it leaves fewer than 8, those and the count byte's two (3 + 2
// there: misses 1.15x a hit's time at 1.32e7, from 1.23x; spillBit). A lookup
// reads its front bucket, and the two back buckets only when its own
// spill bit there is set: a miss reads them for 2.6 % of absent keys at
// 1e7 (with two spill bits: 23 %; any spill bit set: 28 %; the buckets
// full: 36 %). A Poisson bucket of 25 slots at the max load factor sends
// 20 % of absent keys there with 3 bits, 24 % with 2. Misses cost 0.91x a
// hit's time at 1e7 (see the measurements).
//
// # Growth
//
// When the pairs would exceed floor(mlf * C * m), m grows (x2 below
// icebergFastBuckets, x icebergGrowNum/icebergGrowDen after), to the first
// size of that sequence that holds more pairs (icebergGrowTo: where a
// bucket loses a line, the next size may hold fewer). The new front
// yard is written in one pass over the old one in bucket order: homes are
// monotone in x, so the pass writes the new front yard in order too, and
// hands the old one's pages back behind it (Linux, as compact does). Then
// the old back yard goes in, and the overflow table. The pairs placed out
// of order (the old back yard's, and the pass's pairs whose new front
// bucket is full) wait in batches of 8 whose buckets are prefetched
// (icebergMoves). The peak of a growth is the new slabs, the old back yard
// and two release steps.
//
// # Measurements that decided it
//
// <UInt64,UInt16>, random keys, this 2-core machine shared with four other
// helpers (load average 8 to 16 on 2 cores while these ran: absolute times
// are 5 to 20 times the quiet machine's, only ratios within one run count).
//
//   - Bucket size and max load factor (core.Predict, which
//     TestPredictMatchesTables ties to the tables; bytes a pair after the
//     load and at its peak, 1e8 one shard, 1e9 two shards): two lines (17
//     slots) at mlf 0.9 9.32 and 9.87, 8.63 and 9.10; three lines (26
//     slots) at 0.92 8.65 and 9.08, 9.00 and 9.42; three at 0.9 9.65 and
//     10.06; four lines (34 slots) at 0.9 8.94 and 9.25, 8.92 and 9.28.
//     A Poisson bucket at the max load factor turns away (to the back
//     yard) 5.7 % of its pairs at 17 slots and 0.9, 4.6 % at 26 and 0.92,
//     3.1 % at 34 and 0.9. Three lines at 0.92 meet issue 47's memory
//     targets with the fewest lines a lookup may read.
//   - Growth x9/8 (from 4096 front buckets; x2 below): bytes a pair over
//     1e7..1e9 rows, mean and worst, two lines: x9/8 at mlf 0.9 9.45 and
//     10.65; x5/4 at mlf 0.9 9.98 and 11.91, at 0.95 9.67 and 11.40. Three
//     lines at 0.92, x9/8: 9.12 and 10.24. The sawtooth is the memory.
//   - The back yard at 0.85 of its slots, with one cuckoo step (a pair of a
//     full back bucket moves to its other one): without it the tables of
//     TestPredictMatchesTables reserved for their keys sent pairs to the
//     overflow table (bytes off Predict's by 0.13 %).
//   - Three lines at 0.92 against two at 0.9, side by side (the anchors
//     harness's binaries built from both, interleaved with boost, the
//     machine at load 8-14: times swing 2-5x between rounds, ratios within
//     a round count), batch mode (InsertMany, GetMany, 65,536 keys a
//     call): RSS and peak at 1e7 10.06 and 10.98 B/pair before, 9.33 and
//     10.12 after; at 1e8 9.33 and 9.85 before, 8.65-8.67 and 9.07 after
//     (issue 47's targets 9.0 and 9.5); at 1e9 in the lab, two shards,
//     RSS 9.02 and peak 9.44, the peak 0.03 % over core.Predict's. Batch
//     read after/before in the same rounds: 1.39, 1.43, 1.01 at 1e7;
//     1.27, 1.41, 0.36 at 1e8 (against boost 1.40x, 1.68x, 0.23x; load
//     2.11x, 2.11x, 0.86x): three-line reads at 1e8 fell to 2.5-3.6 M
//     rows/s in four rounds of nine, two lines' read 7.0-10.0 beside them
//     (a bucket read whole is 192 bytes against 128; not settled). In one process at 4e7 pairs (CPU ns a row): GetMany 75-89 against 73-85, no loss; single-key Get
//     256-309 against 201-264, about 15 % slower (the matched slot is in
//     another line than the header three times in four). The figures,
//     and their commands, are in docs/performance.md.
//   - On a quiet machine (load average under 3, one process at a time):
//     at 1e7 batch load and read 0.86x and 0.80x boost's (two lines 0.77x
//     and 0.96x), single Get 0.20x (0.28x); at 1e8 0.93x and 0.69x (0.84x
//     and 0.61x). The loaded rounds above flattered iceberg; the memory
//     targets are met, the speed targets are not, at either geometry.
//   - GetMany's three-stage pipeline (see GetMany): the first line of
//     the buckets three batches ahead, the header matched once a batch
//     ahead, its candidates kept, the matched slot's line (or, for a key
//     with no candidate behind its spill bit, its two back buckets)
//     prefetched. A profile of the pipeline without the back buckets
//     put 17 % of GetMany in getBack's two misses one after the other; with
//     them, in one process at 1e7 (CPU ns a row, alternating, load 10-13):
//     41.8-47.7 against 50.3-53.6 for the former pipeline (every line
//     of the next batch's buckets, then Get's lookup), which the buckets
//     without fingerprints keep (getManyLines). InsertMany runs the same
//     stages (prefetchFree: the next free slot's line, or the two back
//     buckets); with a reservation (no growth) 56.6-90.2 CPU ns a row
//     against 67.6-107.0; without one, growth is three quarters of a load.
//   - GetMany's instructions (at 1e7 about half of its time): the last
//     stage for one-word slots in a loop that makes no call
//     (lookupWords), the batch match prefetching the first candidate's
//     lines itself (icebergMatchBatch), the hash written into the batch's
//     loop, batches of 16 keys (icebergKeys). GetMany against the code
//     before them, test binaries in turn, CPU ns a row, 8 rounds: at 1e7
//     0.80x-0.93x (median 0.84x), in cache 0.61x-0.76x; the load
//     unchanged (median 1.00x over 18 rounds). Side-by-side harness at
//     1e7, 9 rounds in three runs: batch read 1.69x boost's at the median
//     (at least 1.49x in 8 rounds; 1.16x in a disturbed one), 1.17x
//     main's; batch load 0.94x main's time.
//   - Tried and dropped (docs/performance.md): a batch pipeline that
//     prefetches only the lines it will read but matched each header twice
//     and left the back buckets to Get; deeper pipelines (the first lines
//     2 to 8 batches ahead, the match 1 to 3): no change.
//   - One-word slots and the SSE2 match (above), side-by-side harness at
//     1e7 against the code before them, one run, medians of 3, load 4-5:
//     batch read 23.69 -> 32.08 M rows/s (boost 24.30: 0.97x -> 1.32x),
//     batch load 3.03 -> 2.83 s (boost 2.57: 0.85x -> 0.91x). On the idle
//     machine after them: read 1.15x-1.22x boost's (1.04x before), load
//     0.86x-0.88x (0.90x), Get 0.38x-0.42x (0.22x).
//   - The spill bits (the back yard), measured beside the code before
//     them: misses, single Get at 1e7, 1.10x-1.32x a hit's time in one
//     process (1.32x-1.49x before); BenchmarkMiss, medians of 4
//     alternating runs, 1.33x against 1.42x. Hits, the memory (1e8:
//     8.71 and 9.13 B/pair after the load and at its peak) and compact
//     unchanged within the noise (side-by-side harness, beside afbc85e).
//   - The free bits as spill bits (37 at 1e7 in place of the count
//     byte's two), beside the code before them: BenchmarkMiss at 1e7,
//     binaries run in turn, 6 rounds, misses 0.91x a hit's time (median;
//     0.90x-0.95x) against 1.23x (1.16x-1.31x), lower in every round (all
//     40 free bits, 12 rounds: 0.91x against 1.20x); 2.6 % of absent keys
//     read the back yard, from 23 %. In one process, tables of both
//     geometries read in turn (CPU ns, medians): misses 81-84 against
//     101-122 in three runs; hits, two tables of each, 101.2 and 100.5
//     against 102.7 and 97.8 (tables of one geometry differ by up to 5 %).
//     GetMany and the load (BenchmarkIcebergBatch, CPU ns a row, quiet
//     machine: 27.8 and 181.7 against 27.6 and 180.4), the side-by-side
//     harness (medians of 3: batch read 29.46 against 29.08 M rows/s,
//     Get 9.09 against 9.16) and the memory unchanged. Tried beside it
//     (docs/performance.md): the count byte's two and the free bits as one field (1.20x, not
//     understood), the free bits at the bucket's end (0.94x, but GetMany
//     would wait on the last line to decide on the back yard).
//   - The growth rule past a bucket's lost line (icebergGrowTo): a 1e7
//     load grew from 124,755 front buckets of four lines (31 slots) to
//     140,349 of three (24), which hold fewer pairs than it had: 207,476
//     of them went through the back yard to the overflow table, and two
//     more growths followed at once. Growing straight to the first size
//     that holds more: BenchmarkIcebergBatch at 1e7, load CPU ns a row,
//     5 rounds alternating with the binary before (load 3): 215, 198,
//     200, 225, 231 against 305, 224, 329, 236, 242 (medians 215 and 242,
//     better in every round); the memory after the load and core.Predict's
//     tables unchanged (the final size is the same; the peak differs only
//     for a load whose last growth crosses the drop).
//   - Tried and dropped on the way (docs/performance.md): a Get in one
//     assembly call (match, prefetches and slot reads: 84-100 CPU ns a
//     hit against 86-105, within the noise; taken since, as
//     icebergGetWord: 1.15x-1.25x in the harness, see Get); misses without the branch
//     on the spill (a dummy bucket chosen by a conditional move: slower,
//     the back buckets' addresses then wait on the count); the growth
//     pass faulting the new yard's pages in by a write (nothing).
//   - What is left: the batch load (0.94x boost's at 1e7 on the idle
//     machine before the growth rule above, 1.06x and 1.22x in two shared
//     runs after it, target 1.0x): three quarters of it is the growth passes, x9/8
//     moving each pair about 8 times, page faults 15 % (perf: 7 % zeroing
//     the new yards' pages); the batch read (1.20x-1.41x boost's at 1e7
//     after the batch match, 0.86x at 1e8, target 1.3x: at 1e8 it waits
//     on memory, 1.8 lines a hit); single-key Get (about 0.54x boost's
//     read at 1e7 after the register-lean icebergGetWord and New's
//     non-generic Get, 1.28x the code before it in the harness; target
//     0.8x): a loop of the hash and one line, called as the harness
//     calls Get, is already near what 0.8x allows (see "One-word slots"
//     above and docs/performance.md);
//     a header array apart from the slots (count and 31 fingerprints in
//     32 bytes, the slots in a second slab), measured as a prototype before
//     building it (BenchmarkIcebergSplit, iceberg_split_probe_test.go):
//     0.87x-0.98x today's Get, 0.97x-1.18x with its slots prefetched as
//     it starts; not built. This VM's caches hold about 4 MB of random
//     lines (BenchmarkCacheLatency: 9 ns a dependent load at 1 MB, 76-122
//     at 8 MB), so an 11 MB header array is a miss from memory too, and
//     the split reads its slot after it where today's Get asks for its
//     bucket's three lines at once; misses where the slots leave few
//     bits free (3 from 1.0e7 to 2.4e7 pairs: 20 % of absent keys read
//     the back yard at the max load factor, 24 % with two bits; misses
//     there near the 1.2x target, not measured); the old back yard held to the end of a
//     growth (about 0.4 B a pair of the peak at 1e8: interleaved with the
//     pass it faulted in the new front yard early, see grow).

// Iceberg is packlab's layout nearest the information limit at a hash
// table's speed: quotiented slots packed bit to bit into buckets of whole
// cache lines, a front yard found by one hash and a small two-choice back
// yard. Its design is the comment at the top of iceberg.go.
type Iceberg[K, V Bits] struct {
	front, back icebergYard
	mlf         float64
	vs          int // the value's bytes in a slot
	size        uint64
	maxFill     uint64
	ovf         *Packed[K, V] // pairs neither yard took; nil until one is needed
	closed      bool
	owner       *slabOwner
	cleanup     runtime.Cleanup
}

// icebergYard is one yard's geometry and slab.
type icebergYard struct {
	base  unsafe.Pointer
	slab  []byte
	m     uint64  // buckets
	bb    uintptr // bucket bytes
	c     uint64  // slots a bucket
	cmask uint64  // lowMask(c): the fingerprints' bits of a match
	sb    uint    // bits a pair: its fingerprint byte and its slot
	fb    uint    // fingerprint bits a slot in the bucket's header: 8, or 0 when l < 8
	lr    uint    // remainder bits in the slot: l - fb
	st    uint    // the slot's bits past the header: sb - fb
	so    uint    // bit offset of slot 0: 8 + c*fb, + sk when the spill bits are between them
	l     uint    // remainder bits
	ch    uint    // choice bits: 0 front, 1 back
	e, v  uint    // extra hash word bits (64 for 16-byte keys), value bits
	kw    uint    // key bits in x
	rs    uint    // 64 - kw: rem's shift
	lmask uint64  // lowMask(l)
	n     uint64  // pairs held
	sbase uint    // a front bucket's first spill bit past its fingerprints, or 6: the count byte's (see spillAt)
	sk    uint64  // how many spill bits a front bucket has
	sc    uint64  // of them, the count byte's two (2) beside the ones from sbase, or none (0)
	word  bool    // fingerprints, no extra word, and a slot past its fingerprint read by one 8-byte load at its byte (st+7 <= 64)
	kf    uint    // lr + ch: the key's bits in a slot past its fingerprint
	kmask uint64  // lowMask(kf)
	vmask uint64  // lowMask(v)
}

// Growth and bucket parameters; see the design comment.
const (
	icebergInitialBuckets = 4
	icebergFastBuckets    = 1 << 12
	icebergGrowNum        = 9
	icebergGrowDen        = 8
	// DefaultIcebergMaxLoadFactor is iceberg's max load factor when the
	// option is 0.
	DefaultIcebergMaxLoadFactor = 0.92
	icebergFrontSlots           = 24   // a front bucket has at least this many slots
	icebergBackSlotsMin         = 6    // a back bucket at least this many
	icebergBackFill             = 0.85 // the back yard is sized to be this full at the max load factor
	icebergPad                  = 16
	icebergSpillMax             = 64 // a front bucket's spill bits at most
	// Where the free bits give a front bucket fewer spill bits than this,
	// the count byte's two are added to them (see spillAt).
	icebergSpillCountBelow = 8
)

func icebergMLF(opt Options) float64 {
	if opt.MaxLoadFactor == 0 {
		return DefaultIcebergMaxLoadFactor
	}
	return opt.MaxLoadFactor
}

// icebergGeo is the shape of a yard of m buckets with at least minSlots
// slots a bucket.
func icebergGeo(keyBytes, valueBytes int, m uint64, ch uint, minSlots uint64) icebergYard {
	y := icebergYard{m: m, ch: ch, kw: uint(min(8*keyBytes, 64)), v: uint(8 * valueBytes)}
	y.rs = 64 - y.kw
	if keyBytes == 16 {
		y.e = 64
	}
	lg := uint(0)
	if m > 0 {
		lg = uint(bits.Len64(m) - 1)
	}
	if y.kw > lg {
		y.l = y.kw - lg
	}
	y.lmask = lowMask(y.l)
	y.sb = y.l + ch + y.e + y.v
	if y.l >= 8 {
		y.fb = 8
	}
	y.lr, y.st = y.l-y.fb, y.sb-y.fb
	for lines := uintptr(1); ; lines++ {
		c := (512*uint64(lines) - 8) / uint64(y.sb)
		if c >= minSlots || lines == 64 {
			y.bb, y.c = 64*lines, min(c, icebergCountMask)
			y.cmask = lowMask(uint(y.c))
			break
		}
	}
	y.so = 8 + uint(y.c)*y.fb
	// The spill bits (see spillAt): the bits a front bucket's slots leave
	// free, moved to just after its fingerprints, in the header's line, as
	// many as move no more slots across a line boundary; where that is two
	// or fewer, the count byte's top two; where it is fewer than
	// icebergSpillCountBelow, those and the count byte's two.
	y.sbase, y.sk = 6, 2
	if free := 8*uint64(y.bb) - 8 - y.c*uint64(y.sb); ch == 0 && free > 2 {
		straddle := icebergStraddles(y.so, y.st, y.c)
		for sk := min(free, icebergSpillMax); sk > 2; sk-- {
			if icebergStraddles(y.so+uint(sk), y.st, y.c) <= straddle {
				y.sbase, y.sk = y.so, sk
				y.so += uint(sk)
				if sk < icebergSpillCountBelow {
					y.sk, y.sc = sk+2, 2
				}
				break
			}
		}
	}
	y.word = y.fb == 8 && y.c <= 64 && y.e == 0 && y.st+7 <= 64
	y.kf = y.lr + y.ch
	y.kmask, y.vmask = lowMask(y.kf), lowMask(min(y.v, 64))
	return y
}

// icebergStraddles is how many of c slots of st bits from bit so are read
// by an 8-byte load that crosses a cache line: it waits on both lines, and
// is split in two. The spill bits take no more free bits than keep it
// (the 40 free bits at 1e7 <UInt64,UInt16> moved four slots across, not
// two: hits 86.3 CPU ns against 83.4, one table each in one process; but
// two tables of one geometry differ by up to 5 %, so it is a precaution,
// not a measured gain).
func icebergStraddles(so, st uint, c uint64) int {
	n := 0
	for s := range uint(c) {
		n += b2i((so+s*st)>>3&63 > 56)
	}
	return n
}

// off is the bit offset of slot s's bits past the header.
func (y *icebergYard) off(s uint64) uint { return y.so + uint(s)*y.st }

func (y *icebergYard) bytes() uintptr {
	n := slabBytes(LayoutIceberg, y.m, uint64(y.bb))
	if n+icebergPad < n {
		panic(&SlabError{Layout: LayoutIceberg, Bytes: math.MaxUint64, Err: fmt.Errorf("%d buckets of %d bytes do not fit in an address", y.m, y.bb)})
	}
	return n + icebergPad
}

// icebergShape is a table's two yards and max fill at m front buckets.
type icebergShape struct {
	front, back icebergYard
	maxFill     uint64
}

func icebergShapeOf(keyBytes, valueBytes int, m uint64, mlf float64) icebergShape {
	f := icebergGeo(keyBytes, valueBytes, m, 0, icebergFrontSlots)
	maxFill := icebergFill(f, m, mlf)
	want := icebergBackSlots(m, f.c, mlf)
	// The back yard's geometry depends on its bucket count (the remainder
	// shrinks as it grows): a fixed point of at most a few steps.
	mb := uint64(1)
	var b icebergYard
	for range 4 {
		b = icebergGeo(keyBytes, valueBytes, mb, 1, icebergBackSlotsMin)
		next := max((want+b.c-1)/b.c, 1)
		if next == mb {
			break
		}
		mb = next
	}
	b = icebergGeo(keyBytes, valueBytes, mb, 1, icebergBackSlotsMin)
	return icebergShape{front: f, back: b, maxFill: maxFill}
}

// icebergMaxFill is the pairs a table of m front buckets holds before it
// grows (icebergShapeOf's maxFill without the back yard, which the growth
// rule does not need: a replay of a 1e9-key table's growths asks it some
// hundred times, and icebergBackSlots' Poisson tail was 80 % of its time).
func icebergMaxFill(keyBytes, valueBytes int, m uint64, mlf float64) uint64 {
	return icebergFill(icebergGeo(keyBytes, valueBytes, m, 0, icebergFrontSlots), m, mlf)
}

func icebergFill(front icebergYard, m uint64, mlf float64) uint64 {
	return uint64(mlf * float64(front.c) * float64(m))
}

// icebergBackSlots is the back yard's slots for m front buckets of c slots
// at max load factor mlf: the pairs a front yard that full turns away on
// average, E[(X-c)+] for X ~ Poisson(mlf*c) a bucket, over icebergBackFill,
// plus a margin of 4 standard deviations of that count (small tables).
func icebergBackSlots(m, c uint64, mlf float64) uint64 {
	mu := mlf * float64(c)
	over, p := 0.0, math.Exp(-mu)
	for k := 1; k < int(c)+int(12*math.Sqrt(mu))+40; k++ {
		p *= mu / float64(k)
		if uint64(k) > c {
			over += float64(uint64(k)-c) * p
		}
	}
	mean := over * float64(m)
	return uint64(math.Ceil((mean + 4*math.Sqrt(mean) + 4) / icebergBackFill))
}

// icebergNextBuckets is the growth sequence: the front buckets after m.
func icebergNextBuckets(m uint64) uint64 {
	return growRatio(m, icebergFastBuckets, icebergGrowNum, icebergGrowDen)
}

// icebergGrowTo is the growth rule: the front buckets a full table of m
// grows to, the first of the sequence after m whose max fill is above m's.
// A bucket loses a line where a slot gets short enough for fewer lines to
// hold icebergFrontSlots (<UInt64,UInt16>: four lines of 31 slots of 64
// bits below 2^17 buckets, three of 24 of 63 bits from there), so the next
// size may hold fewer pairs than the table has: a growth into it sent the
// excess (207,476 pairs of a 1e7 load) through the back yard to the
// overflow table, and two more growths followed at once.
func icebergGrowTo(keyBytes, valueBytes int, m uint64, mlf float64) uint64 {
	fill := icebergMaxFill(keyBytes, valueBytes, m, mlf)
	next := icebergNextBuckets(m)
	for icebergMaxFill(keyBytes, valueBytes, next, mlf) <= fill {
		next = icebergNextBuckets(next)
	}
	return next
}

// icebergBucketsFor replays the growth rule: the front buckets of a table
// built with start buckets after n distinct inserts, and the ones before
// its last growth (0 if it never grew).
func icebergBucketsFor(keyBytes, valueBytes int, start, n uint64, mlf float64) (final, previous uint64) {
	m := start
	for n > icebergMaxFill(keyBytes, valueBytes, m, mlf) {
		previous, m = m, icebergGrowTo(keyBytes, valueBytes, m, mlf)
	}
	return m, previous
}

// icebergReserveBuckets is the front buckets of a table built for n keys:
// the fewest that hold n below the max load factor.
func icebergReserveBuckets(keyBytes, valueBytes int, n uint64, mlf float64) uint64 {
	// max fill grows with m, except where a bucket loses a line (see
	// icebergGrowTo): an m that holds n and whose m-1 does not, by
	// bisection; past such a drop it may be the first m after it, not the
	// fewest.
	lo, hi := uint64(icebergInitialBuckets), max(n, icebergInitialBuckets)
	if icebergMaxFill(keyBytes, valueBytes, lo, mlf) >= n {
		return lo
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if icebergMaxFill(keyBytes, valueBytes, mid, mlf) >= n {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// NewIceberg returns an empty iceberg table of 4 front buckets, or of as
// many as opt.Reserve needs. It panics with a *SlabError if the first slabs
// cannot be had; New returns it as an error.
func NewIceberg[K, V Bits](opt Options) *Iceberg[K, V] {
	t := &Iceberg[K, V]{mlf: icebergMLF(opt), vs: int(valueBytes[V](opt))}
	t.owner, t.cleanup = own(t, LayoutIceberg)
	sh := t.shape(icebergReserveBuckets(int(sizeOf[K]()), t.vs, opt.reserve(), t.mlf))
	t.setShape(sh, t.alloc(sh))
	return t
}

func (t *Iceberg[K, V]) shape(m uint64) icebergShape {
	return icebergShapeOf(int(sizeOf[K]()), t.vs, m, t.mlf)
}

// alloc gets the slabs of a shape (front, back), panicking with a
// *SlabError, nothing allocated, when either cannot be had.
func (t *Iceberg[K, V]) alloc(sh icebergShape) [2][]byte {
	f := mustSlab(LayoutIceberg, sh.front.bytes())
	b, err := newSlab(LayoutIceberg, sh.back.bytes())
	if err != nil {
		freeSlab(f)
		panic(err)
	}
	t.owner.add(f)
	t.owner.add(b)
	return [2][]byte{f, b}
}

func (t *Iceberg[K, V]) setShape(sh icebergShape, slabs [2][]byte) {
	t.front, t.back, t.maxFill = sh.front, sh.back, sh.maxFill
	t.front.slab, t.back.slab = slabs[0], slabs[1]
	t.front.base = unsafe.Pointer(unsafe.SliceData(slabs[0]))
	t.back.base = unsafe.Pointer(unsafe.SliceData(slabs[1]))
}

func (t *Iceberg[K, V]) Layout() Layout { return LayoutIceberg }

// le64At reads 8 bytes at p as a little-endian word.
func le64At(p unsafe.Pointer) uint64 {
	w := loadBitsAt[uint64](p)
	if hostBigEndian {
		w = bits.ReverseBytes64(w)
	}
	return w
}

func storeLE64At(p unsafe.Pointer, w uint64) {
	if hostBigEndian {
		w = bits.ReverseBytes64(w)
	}
	storeBitsAt(p, w)
}

// getBits reads n <= 64 bits at bit off of the bucket at p.
func getBits(p unsafe.Pointer, off, n uint) uint64 {
	q := unsafe.Add(p, off>>3)
	sh := off & 7
	w := le64At(q) >> sh
	if sh+n > 64 {
		w |= uint64(*(*byte)(unsafe.Add(q, 8))) << (64 - sh)
	}
	return w & lowMask(n)
}

// orBits writes n <= 64 bits of v at bit off of the bucket at p, where the
// bits are zero.
func orBits(p unsafe.Pointer, off, n uint, v uint64) {
	v &= lowMask(n)
	q := unsafe.Add(p, off>>3)
	sh := off & 7
	storeLE64At(q, le64At(q)|v<<sh)
	if sh+n > 64 {
		b := (*byte)(unsafe.Add(q, 8))
		*b |= byte(v >> (64 - sh))
	}
}

// appendWord writes the st <= 57 bits of v at bit off of the bucket at p,
// where they and every bit after them are zero (the next free slot of a
// yard of one-word slots): the slot's first byte is read (the previous
// slot's last bits may share it) and the word stored, no read of the
// word the previous slot's store just wrote (an 8-byte load overlapping
// part of an 8-byte store in flight cannot take its bytes from it, and
// waits for it to reach the cache). The word may run past the slot into
// zero bits; near the bucket's end, where it would run into the next
// bucket, orBits. appendWord itself makes no call, so that it inlines
// into the growth pass's loop (moveFrontBucket), which calls orBits near
// a bucket's end: called, it took 5 % of a 1e7 load's profile.
func (y *icebergYard) appendWord(p unsafe.Pointer, off uint, v uint64) bool {
	if uintptr(off>>3)+8 > y.bb {
		return false
	}
	q := unsafe.Add(p, off>>3)
	storeLE64At(q, uint64(*(*byte)(q))|(v&lowMask(y.st))<<(off&7))
	return true
}

// bucket is the address of bucket i.
func (y *icebergYard) bucket(i uint64) unsafe.Pointer {
	return unsafe.Add(y.base, uintptr(i)*y.bb)
}

// icebergCount is the count of the bucket at p: the low 6 bits of its
// first byte (a bucket has at most 63 slots: a value is at least 8 bits,
// and a bucket has more than one line only while it has fewer than 24).
func icebergCount(p unsafe.Pointer) uint64 { return uint64(*(*byte)(p) & icebergCountMask) }

// A front bucket's spill bits say which of its pairs went on to the back
// yard (or the overflow table): a pair sets the bit its remainder picks
// (spillAt), and a lookup that finds no slot in its front bucket reads the
// back yard only when its own bit is set. They are the sk bits from bit
// sbase: the bits the slots leave free (up to icebergSpillMax, and no
// more than move no slot across a line, see icebergStraddles), between
// the fingerprints and slot 0, in the header's line; or, where that is two
// or fewer, the count byte's top two (a bucket has at most 63
// slots); where the free bits are fewer than icebergSpillCountBelow, those
// and the count byte's two (spillBit). <UInt64,UInt16> has 37 at 1e7
// pairs, 13 at 1e8, 3 + 2 from 1.14e7 to 2.39e7, and the count byte's at
// 4096 to 7382 front buckets (see the design comment). A bucket is full before any is set, so put, which fills
// buckets that are not (and rewrites the count byte), never meets them.
const (
	icebergCountMask = 0x3f
	icebergSpill     = 0xc0
)

// spillPick is which of a front bucket's sk spill bits a pair of remainder
// rem sets when it goes on to the back yard: a multiplicative hash of the
// remainder scaled to sk, which waits on no load (a Get computes it while
// its bucket's line is on the way).
func (y *icebergYard) spillPick(rem uint64) uint {
	return uint(mulHi(rem*0x9e3779b97f4a7c15, y.sk))
}

// spillAt is the bit of a front bucket that a pair of remainder rem sets
// when it goes on to the back yard.
func (y *icebergYard) spillAt(rem uint64) uint { return y.spillBit(y.spillPick(rem)) }

// spillBit is where a front bucket's spill bit j is: the count byte's top
// two first where the yard adds them (sc), then the sk-sc from sbase.
// Where the slots leave 3 bits free (<UInt64,UInt16> from 1.14e7 to
// 2.39e7 pairs) the count byte's two make 5: absent keys reading the back
// yard at 1.32e7 14.1 % from 19.0 (2.39e7: 14.5 % from 19.6), misses
// 1.15x a hit's time from 1.23x (medians of 8 rounds in turn, lower in
// 7; 2.39e7, 3 rounds: 1.21x from 1.27x); at 1e7 (37 free bits, sc 0)
// misses unchanged (icebergGetWord branches around the select).
func (y *icebergYard) spillBit(j uint) uint {
	b := y.sbase + j - uint(y.sc)
	if j < uint(y.sc) {
		b = 6 + j
	}
	return b
}

// spilled reports whether the front bucket at p has the spill bit of
// remainder rem set.
func (y *icebergYard) spilled(p unsafe.Pointer, rem uint64) bool {
	i := y.spillAt(rem)
	return *(*byte)(unsafe.Add(p, i>>3))>>(i&7)&1 != 0
}

// spill sets the spill bit of remainder rem in the front bucket at p.
func (y *icebergYard) spill(p unsafe.Pointer, rem uint64) {
	i := y.spillAt(rem)
	*(*byte)(unsafe.Add(p, i>>3)) |= 1 << (i & 7)
}

// rem is x's remainder in y.
func (y *icebergYard) rem(x uint64) uint64 { return x >> y.rs & y.lmask }

// decode is the x of remainder rem in bucket home of y.
func (y *icebergYard) decode(home, rem uint64) uint64 {
	return y.decodeFrom(y.first(home), rem)
}

// first is the first u of bucket home's interval (one division).
func (y *icebergYard) first(home uint64) uint64 {
	q, r := bits.Div64(home, 0, y.m)
	if r != 0 {
		q++
	}
	if y.kw == 64 {
		return q
	}
	s, c := bits.Add64(q, lowMask(64-y.kw), 0)
	return c<<y.kw | s>>(64-y.kw)
}

func (y *icebergYard) decodeFrom(u0, rem uint64) uint64 {
	u := u0 + (rem-u0)&y.lmask
	return u << (64 - y.kw)
}

// alt is the other back bucket of a pair in bucket b with remainder rem
// and choice c: its second choice when c is 0, its first when c is 1.
func (y *icebergYard) alt(b, rem, c uint64) uint64 {
	if y.m < 2 {
		return b
	}
	d := 1 + mulHi(rem*0x9e3779b97f4a7c15^rem>>29, y.m-1)
	if c == 0 {
		b += d
		if b >= y.m {
			b -= y.m
		}
		return b
	}
	if b < d {
		b += y.m
	}
	return b - d
}

func mulHi(a, b uint64) uint64 { h, _ := bits.Mul64(a, b); return h }

// slot reads slot i of the bucket at p: remainder, choice, e, value.
func (y *icebergYard) slot(p unsafe.Pointer, i uint64) (rem, c, e, vlo, vhi uint64) {
	off := y.off(i)
	fp := uint64(0)
	if y.fb != 0 {
		fp = uint64(*(*byte)(unsafe.Add(p, 1+i)))
	}
	if y.st <= 64 && y.e == 0 && y.v <= 64 {
		w := getBits(p, off, y.st)
		return fp | (w&lowMask(y.lr))<<y.fb, w >> y.lr & lowMask(y.ch), 0, w >> (y.lr + y.ch), 0
	}
	rem = fp | getBits(p, off, y.lr)<<y.fb
	off += y.lr
	if y.ch != 0 {
		c = getBits(p, off, 1)
		off++
	}
	if y.e != 0 {
		e = getBits(p, off, 64)
		off += 64
	}
	vlo = getBits(p, off, min(y.v, 64))
	if y.v > 64 {
		vhi = getBits(p, off+64, y.v-64)
	}
	return
}

// put writes a pair into the next free slot of the bucket at p (count < c).
func (y *icebergYard) put(p unsafe.Pointer, rem, c, e, vlo, vhi uint64) {
	n := icebergCount(p)
	if y.word {
		*(*byte)(unsafe.Add(p, 1+n)) = byte(rem)
		if w := rem>>8 | c<<y.lr | vlo<<y.kf; !y.appendWord(p, y.off(n), w) {
			orBits(p, y.off(n), y.st, w)
		}
	} else {
		y.write(p, n, rem, c, e, vlo, vhi)
	}
	*(*byte)(p) = byte(n + 1)
	y.n++
}

// write writes a pair into slot s of the bucket at p, whose bits are zero.
func (y *icebergYard) write(p unsafe.Pointer, s, rem, c, e, vlo, vhi uint64) {
	off := y.off(s)
	if y.fb != 0 {
		*(*byte)(unsafe.Add(p, 1+s)) = byte(rem)
		rem >>= 8
	}
	if y.st <= 64 && y.e == 0 && y.v <= 64 {
		// One word: the remainder's rest, the choice bit and the value.
		orBits(p, off, y.st, rem|c<<y.lr|vlo<<(y.lr+y.ch))
		return
	}
	orBits(p, off, y.lr, rem)
	off += y.lr
	if y.ch != 0 {
		orBits(p, off, 1, c)
		off++
	}
	if y.e != 0 {
		orBits(p, off, 64, e)
		off += 64
	}
	orBits(p, off, min(y.v, 64), vlo)
	if y.v > 64 {
		orBits(p, off+64, y.v-64, vhi)
	}
}

// find looks for (rem, c, e) in the bucket at p: its slot's bit offset
// past the key fields (where the value starts), or 0. With fingerprints it
// reads only the slots whose fingerprint byte matches (1 in 256 of the
// others, so about one slot a hit): see icebergMatch.
func (y *icebergYard) find(p unsafe.Pointer, rem, c, e uint64) uint {
	n := icebergCount(p)
	if y.matches() {
		return y.findIn(p, icebergMatch(p, byte(rem), n, y.c), rem, c, e)
	}
	// No fingerprints (remainders under 8 bits), or more than 64 slots:
	// every slot.
	kf := y.lr + y.ch
	for s := range n {
		if r, sc, se, _, _ := y.slot(p, s); r == rem && sc == c && se == e {
			return y.off(s) + kf + y.e
		}
	}
	return 0
}

// matches reports whether the yard's buckets have fingerprints that
// icebergMatch can compare (8 bits each, at most 64 slots).
func (y *icebergYard) matches() bool { return y.fb != 0 && y.c <= 64 }

// findIn is find among the candidate slots cand (icebergMatch's) of the
// bucket at p, in a yard whose buckets have fingerprints.
func (y *icebergYard) findIn(p unsafe.Pointer, cand, rem, c, e uint64) uint {
	kf := y.lr + y.ch
	want := rem>>8 | c<<y.lr
	for ; cand != 0; cand &= cand - 1 {
		off := y.off(uint64(bits.TrailingZeros64(cand)))
		if kf <= 57 {
			if le64At(unsafe.Add(p, off>>3))>>(off&7)&lowMask(kf) != want {
				continue
			}
		} else if getBits(p, off, y.lr) != rem>>8 || (y.ch != 0 && getBits(p, off+y.lr, 1) != c) {
			continue
		}
		if y.e != 0 && getBits(p, off+kf, 64) != e {
			continue
		}
		return off + kf + y.e
	}
	return 0
}

// findWord is findIn for a yard of one-word slots (y.word): want is the
// remainder past its fingerprint and the choice bit (lr+ch bits); it
// returns the slot's value bits and whether it found one. One load a
// candidate, which gives the key's bits and the value together.
func (y *icebergYard) findWord(p unsafe.Pointer, cand, want uint64) (uint64, bool) {
	return icebergFindWord(p, cand, want, y.so, y.st, y.kf, y.kmask, y.vmask)
}

// icebergFindWord is findWord with the yard's fields as arguments, so that
// a loop over many keys (lookupWords) keeps them in registers.
func icebergFindWord(p unsafe.Pointer, cand, want uint64, so, st, kf uint, kmask, vmask uint64) (uint64, bool) {
	for ; cand != 0; cand &= cand - 1 {
		off := so + uint(bits.TrailingZeros64(cand))*st
		w := le64At(unsafe.Add(p, off>>3)) >> (off & 7)
		if w&kmask == want {
			return w >> (kf & 63) & vmask, true
		}
	}
	return 0, false
}

// icebergMatchWords is icebergMatch where there is no SIMD version (on
// amd64, iceberg_amd64.s compares 16 bytes at a time): the slots among the
// first n (of c <= 64) of the bucket at p whose fingerprint byte is fp, one
// bit a slot, the header's bytes 1..c compared 8 at a time in a word (a zero byte of w^fp's broadcast, found
// without carries between bytes), each word's 8 flags gathered into a byte
// by one multiply. No branch on the bucket's contents.
func icebergMatchWords(p unsafe.Pointer, fp byte, n, c uint64) uint64 {
	b := uint64(fp) * 0x0101010101010101
	var cand uint64
	for j := uint(0); j < uint(c); j += 8 {
		x := le64At(unsafe.Add(p, 1+j)) ^ b
		cand |= (^((x&0x7f7f7f7f7f7f7f7f + 0x7f7f7f7f7f7f7f7f) | x) & 0x8080808080808080 >> 7) * 0x0102040810204080 >> 56 << j
	}
	return cand & (1<<n - 1)
}

// icebergMatchBatchWords is icebergMatchBatch (see iceberg_match_amd64.go)
// in Go, with icebergMatchWords.
func icebergMatchBatchWords(base unsafe.Pointer, offs *icebergHomes, xs, cands *[icebergKeys]uint64, n int, shift, lmask, c, so, st, kb uint64) (none uint64) {
	var s1, s2 icebergHomes
	for j := range n {
		p := unsafe.Add(base, offs[j])
		cand := icebergMatchWords(p, byte(xs[j]>>shift&lmask), icebergCount(p), c)
		cands[j] = cand
		// The slot's first byte and the last byte its value is read from.
		bit := so + uint64(bits.TrailingZeros64(cand|1<<63))*st
		s1[j], s2[j] = offs[j]+uintptr(bit>>3), offs[j]+uintptr((bit+kb)>>3)+7
		if cand == 0 {
			s1[j], s2[j] = offs[j], offs[j]
			none |= 1 << j
		}
	}
	s1.prefetch(base, n)
	s2.prefetch(base, n)
	return none
}

// value reads the value at bit off of the bucket at p.
func (t *Iceberg[K, V]) value(y *icebergYard, p unsafe.Pointer, off uint) V {
	if y.v <= 64 {
		return fromWord[V](getBits(p, off, y.v))
	}
	return FromUint64[V](getBits(p, off, 64), getBits(p, off+64, y.v-64))
}

// What a single Get's front-yard lookup (icebergGetWord) found.
const (
	icebergMiss  = 0 // no slot, and the bucket's spill bit for the key is clear (0 and 1: Get returns both with one test)
	icebergHit   = 1 // the slot: w is its value bits
	icebergBack  = 2 // no slot, and the spill bit set: the back yard
	icebergSlots = 3 // not a yard of one-word slots: find
)

// icebergGetWordGo is a single Get's lookup of hash x in the front yard f
// (what icebergGetWord computes, in one assembly call on amd64): the
// bucket's lines prefetched, its header's c fingerprints matched, the
// candidates' slots read (findWord), then the spill bit. It does not read
// the count: a slot past it is zero, and matches only a zero fingerprint
// with a zero remainder past it, so a remainder of 0 goes to icebergSlots
// (getHashed, which reads the count).
func icebergGetWordGo(f *icebergYard, x uint64) (w, r uint64) {
	rem := f.rem(x)
	if !f.word || rem == 0 {
		return 0, icebergSlots
	}
	p := f.bucket(mulHi(x, f.m))
	prefetchLines(p, f.bb/64)
	if w, ok := f.findWord(p, icebergMatch(p, byte(rem), f.c, f.c), rem>>8); ok {
		return w, icebergHit
	}
	if f.spilled(p, rem) {
		return 0, icebergBack
	}
	return 0, icebergMiss
}

// Get returns the value stored for key.
//
// A key of up to 8 bytes in a table of one-word slots (from 2^15 front
// buckets, <UInt64,UInt16>) is looked up in one assembly call on amd64
// (icebergGetWord: prefetch, match, the candidates' slots and the spill
// bit), the rest (getFront) out of line. Before, the hit path made three
// calls below Get (prefetchLines and icebergMatch, which take their
// arguments on the stack, and findWord) and spilled its values around
// each. That bought, in the side-by-side harness at 1e7 (the code before
// it in the same rounds, medians of 3): Get through core.Map 10.80 M
// rows/s against 9.36 (1.15x-1.25x a round), boost 24.44; misses
// (BenchmarkMiss) 11.0 against 7.75 M/s. A pure-Go match in its place
// (icebergMatchWords inline, no call) was slower: see docs/performance.md.
//
// Called through an interface (core.Map), a generic method is a wrapper
// that passes the instantiation's dictionary to the shape's function: one
// more call a Get. New gives the pairs whose front yard has one-word slots
// a type of their own whose Get is not generic (icebergWords); see there
// what that buys.
func (t *Iceberg[K, V]) Get(key K) (V, bool) {
	if sizeOf[K]() <= 8 {
		w, r := icebergGetWord(&t.front, compactHashWord(key))
		if r == icebergHit {
			return fromWord[V](w), true
		}
		return t.getFront(key, r)
	}
	x, e := compactHash(key)
	return t.getHashed(key, x, e)
}

// getFront is the end of a Get of a key of up to 8 bytes that
// icebergGetWord did not find (r): a miss, the back yard, or a yard whose
// slots are not one word (find).
//
//go:noinline
func (t *Iceberg[K, V]) getFront(key K, r uint64) (V, bool) {
	switch r {
	case icebergBack:
		return t.getBack(key, compactHashWord(key), 0)
	case icebergSlots:
		return t.getHashed(key, compactHashWord(key), 0)
	}
	return t.getMiss()
}

// The pairs of key and value types whose front yard has one-word slots
// (icebergYard.word) at some size, as New gives them: each a type of its
// own whose Get is not generic, so that core.Map calls it with no
// dictionary wrapper between (the other methods are Iceberg's, promoted).
// In one process at 1e7 <UInt64,UInt16> (CPU ns a Get, through an
// interface as the side-by-side harness calls it, loops in turn, medians
// of 5, four runs at load 3-11): with today's icebergGetWord, through the
// generic method 80.6-94.7, through a non-generic one 64.3-74.1; with the
// icebergGetWord before it, 93.1 against 89.4 (one run). What bounds a
// loop of single Gets is how many the CPU holds in flight while their
// lines come from memory (see icebergGetWord): the wrapper's call, frame
// and dictionary were what tipped it. In the side-by-side harness, both
// together: 1.28x the code before them (median of 12 rounds). The five
// Gets are written out: a generic helper called from them is compiled
// as its shape's function (the inliner's cost 193 with the hash, over
// its 80) and puts the call back.
//
// A miss that stops at its front bucket returns from Get itself, not
// through getFront and getMiss (two calls; a closed table's yard is not
// of one-word slots, so its lookups still reach getMiss): BenchmarkMiss at 1e7, test
// binaries in turn, 5 rounds, misses 0.94x-0.99x a hit's time against
// 1.17x-1.23x, 14.6-15.6 M misses/s against 11.4-12.0; at 1.32e7 (where
// 14 % of misses read the back yard, see spillBit) 1.24x-1.45x against
// 1.36x-1.65x, medians 1.38x and 1.45x.
type (
	icebergU64U8  struct{ *Iceberg[uint64, uint8] }
	icebergU64U16 struct{ *Iceberg[uint64, uint16] }
	icebergU32U8  struct{ *Iceberg[uint32, uint8] }
	icebergU32U16 struct{ *Iceberg[uint32, uint16] }
	icebergU32U32 struct{ *Iceberg[uint32, uint32] }
)

func (t icebergU64U8) Get(key uint64) (uint8, bool) {
	w, r := icebergGetWord(&t.front, compactHashWord(key))
	if r <= icebergHit {
		return uint8(w), r == icebergHit
	}
	return t.getFront(key, r)
}

func (t icebergU64U16) Get(key uint64) (uint16, bool) {
	w, r := icebergGetWord(&t.front, compactHashWord(key))
	if r <= icebergHit {
		return uint16(w), r == icebergHit
	}
	return t.getFront(key, r)
}

func (t icebergU32U8) Get(key uint32) (uint8, bool) {
	w, r := icebergGetWord(&t.front, compactHashWord(key))
	if r <= icebergHit {
		return uint8(w), r == icebergHit
	}
	return t.getFront(key, r)
}

func (t icebergU32U16) Get(key uint32) (uint16, bool) {
	w, r := icebergGetWord(&t.front, compactHashWord(key))
	if r <= icebergHit {
		return uint16(w), r == icebergHit
	}
	return t.getFront(key, r)
}

func (t icebergU32U32) Get(key uint32) (uint32, bool) {
	w, r := icebergGetWord(&t.front, compactHashWord(key))
	if r <= icebergHit {
		return uint32(w), r == icebergHit
	}
	return t.getFront(key, r)
}

// icebergWords is t as New gives it: for the pairs above, their own type.
func icebergWords[K, V Bits](t *Iceberg[K, V]) Map[K, V] {
	var m any = t
	switch t := m.(type) {
	case *Iceberg[uint64, uint8]:
		m = icebergU64U8{t}
	case *Iceberg[uint64, uint16]:
		m = icebergU64U16{t}
	case *Iceberg[uint32, uint8]:
		m = icebergU32U8{t}
	case *Iceberg[uint32, uint16]:
		m = icebergU32U16{t}
	case *Iceberg[uint32, uint32]:
		m = icebergU32U32{t}
	}
	return m.(Map[K, V])
}

// iceberg is the table itself (through New's types above too).
func (t *Iceberg[K, V]) iceberg() *Iceberg[K, V] { return t }

// getHashed is Get for a key whose hash is x (and e).
func (t *Iceberg[K, V]) getHashed(key K, x, e uint64) (V, bool) {
	f := &t.front
	p := f.bucket(mulHi(x, f.m))
	if f.word {
		rem, n := f.rem(x), icebergCount(p)
		if w, ok := f.findWord(p, icebergMatch(p, byte(rem), n, f.c), rem>>8); ok {
			return fromWord[V](w), true
		}
		if !f.spilled(p, rem) {
			return t.getMiss()
		}
		return t.getBack(key, x, e)
	}
	if off := f.find(p, f.rem(x), 0, e); off != 0 {
		return t.value(f, p, off), true
	}
	if !f.spilled(p, f.rem(x)) {
		return t.getMiss()
	}
	return t.getBack(key, x, e)
}

// getBack is the end of a lookup whose front bucket has its spill bit set
// (and no slot of it): the back yard's two buckets, then the overflow
// table.
//
//go:noinline
func (t *Iceberg[K, V]) getBack(key K, x, e uint64) (V, bool) {
	b := &t.back
	rem := b.rem(x)
	b1 := mulHi(x, b.m)
	p, p2 := b.bucket(b1), b.bucket(b.alt(b1, rem, 0))
	// Both buckets' misses at once, not one after the other.
	prefetchLines(p2, b.bb/64)
	if off := b.find(p, rem, 0, e); off != 0 {
		return t.value(b, p, off), true
	}
	p = p2
	if off := b.find(p, rem, 1, e); off != 0 {
		return t.value(b, p, off), true
	}
	if t.ovf != nil && t.ovf.Len() > 0 {
		return t.ovf.Get(key)
	}
	return t.getMiss()
}

// getMiss is a lookup that found nothing: the closed check (a closed
// table's front yard is one empty bucket).
func (t *Iceberg[K, V]) getMiss() (V, bool) {
	if t.closed {
		closedPanic(LayoutIceberg)
	}
	var v V
	return v, false
}

func (t *Iceberg[K, V]) Has(key K) bool { _, ok := t.Get(key); return ok }

func (t *Iceberg[K, V]) Len() int {
	if t.closed {
		closedPanic(LayoutIceberg)
	}
	return int(t.size)
}

func (t *Iceberg[K, V]) hash(key K) (x, e uint64) {
	if sizeOf[K]() <= 8 {
		return compactHashWord(key), 0
	}
	return compactHash(key)
}

// Insert stores (key, value) if key is absent and reports whether it did.
func (t *Iceberg[K, V]) Insert(key K, value V) bool {
	x, e := t.hash(key)
	return t.insertHashed(key, value, x, e)
}

func (t *Iceberg[K, V]) insertHashed(key K, value V, x, e uint64) bool {
	if _, ok := t.getHashed(key, x, e); ok {
		return false
	}
	if t.closed {
		closedPanic(LayoutIceberg)
	}
	// Grow before placing, so that a growth that cannot get its slabs
	// leaves the table as it was.
	if t.size+1 > t.maxFill {
		t.grow()
	}
	vlo, vhi := ToUint64(value)
	t.place(key, x, e, vlo, vhi)
	t.size++
	return true
}

// place puts a pair known to be absent into its front bucket, else the
// back yard, else the overflow table (which may grow, or panic with a
// *SlabError before it changes anything).
func (t *Iceberg[K, V]) place(key K, x, e, vlo, vhi uint64) {
	if !t.placeYards(x, e, vlo, vhi) {
		t.placeOverflow(key, x, vlo, vhi)
	}
}

// placeYards puts a pair known to be absent into its front bucket, else
// the back yard (setting the front bucket's spill bit for it), and reports
// whether either took it.
func (t *Iceberg[K, V]) placeYards(x, e, vlo, vhi uint64) bool {
	f := &t.front
	p := f.bucket(mulHi(x, f.m))
	if icebergCount(p) < f.c {
		f.put(p, f.rem(x), 0, e, vlo, vhi)
		return true
	}
	b := &t.back
	rem := b.rem(x)
	b1 := mulHi(x, b.m)
	b2 := b.alt(b1, rem, 0)
	p1, p2 := b.bucket(b1), b.bucket(b2)
	n1, n2 := icebergCount(p1), icebergCount(p2)
	switch {
	case n1 <= n2 && n1 < b.c:
		b.put(p1, rem, 0, e, vlo, vhi)
	case n2 < b.c:
		b.put(p2, rem, 1, e, vlo, vhi)
	case !b.kick(p1, b1, rem, e, vlo, vhi, 0) && !b.kick(p2, b2, rem, e, vlo, vhi, 1):
		return false
	}
	f.spill(p, f.rem(x))
	return true
}

// placeOverflow puts a pair of hash x neither yard took into the overflow
// table, and then sets its front bucket's spill bit (not before: an
// overflow table that cannot grow panics, and the table stays as it was).
func (t *Iceberg[K, V]) placeOverflow(key K, x, vlo, vhi uint64) {
	if t.ovf == nil {
		t.ovf = NewPacked[K, V](Options{ValueBytes: t.vs})
	}
	t.ovf.Insert(key, FromUint64[V](vlo, vhi))
	f := &t.front
	f.spill(f.bucket(mulHi(x, f.m)), f.rem(x))
}

// kick makes room in the full back bucket p (number i) for a pair of
// remainder rem and choice c: the first pair of p whose other bucket has a
// free slot moves there (its choice bit flipped), and the new pair takes
// its slot. It reports whether it found one (one step of cuckoo hashing:
// two-choice buckets of 8 slots then fill past 0.95 before a pair has
// nowhere to go).
func (y *icebergYard) kick(p unsafe.Pointer, i, rem, e, vlo, vhi, c uint64) bool {
	for s := range icebergCount(p) {
		r, oc, oe, olo, ohi := y.slot(p, s)
		j := y.alt(i, r, oc)
		q := y.bucket(j)
		if icebergCount(q) >= y.c {
			continue
		}
		y.put(q, r, oc^1, oe, olo, ohi) // counts the new pair: the moved one only changed buckets
		y.clear(p, s)
		y.write(p, s, rem, c, e, vlo, vhi)
		return true
	}
	return false
}

// clear zeroes slot s of the bucket at p.
func (y *icebergYard) clear(p unsafe.Pointer, s uint64) {
	if y.fb != 0 {
		*(*byte)(unsafe.Add(p, 1+s)) = 0
	}
	off := y.off(s)
	for n := y.st; n > 0; {
		k := min(n, 56)
		q := unsafe.Add(p, off>>3)
		sh := off & 7
		storeLE64At(q, le64At(q)&^(lowMask(k)<<sh))
		off, n = off+k, n-k
	}
}

// icebergKeys is the keys of a batch of GetMany's and InsertMany's
// pipeline: twice the other layouts' getBatch, which halves the calls and
// the set-up a key of the pipeline's stages. Against 8 a batch, test
// binaries run in turn, CPU ns a row: GetMany at 1e7 0.73x-0.99x (median
// 0.93x, lower in 8 rounds of 8; in cache, median 9.8 against 10.3), the
// load (InsertMany, growth and all) 0.89x-1.07x (median 1.00x).
const icebergKeys = 2 * getBatch

// icebergHomes is a batch's bucket (or line) offsets.
type icebergHomes [icebergKeys]uintptr

// prefetch asks for the lines at base+h[i], i < n, getBatch a call
// (prefetchOffsets).
func (h *icebergHomes) prefetch(base unsafe.Pointer, n int) {
	prefetchOffsets(base, (*homes)(h[:getBatch]), min(n, getBatch))
	if n > getBatch {
		prefetchOffsets(base, (*homes)(h[getBatch:]), n-getBatch)
	}
}

// icebergBatch is one batch of keys' hashes and front bucket offsets and,
// in GetMany's pipeline, their candidate slots.
type icebergBatch struct {
	off  icebergHomes
	x, e [icebergKeys]uint64
	cand [icebergKeys]uint64 // icebergMatch's slots of the key's fingerprint
}

// batch hashes the keys of the batch from lo and prefetches the first
// `lines` lines of their front buckets (all of them when lines is 0).
func (t *Iceberg[K, V]) batch(keys []K, lo int, b *icebergBatch, lines uintptr) {
	if lo >= len(keys) {
		return
	}
	batch := keys[lo:min(lo+icebergKeys, len(keys))]
	f := &t.front
	for j, k := range batch {
		// compactHashWord written here, where t.hash would be a call a key
		// (with lookupWords, about 1 % of GetMany in cache: 11.88 against
		// 12.10 and 11.83 against 11.99 CPU ns a row, medians of 9).
		var x, e uint64
		if unsafe.Sizeof(k) <= 8 {
			x = compactHashWord(k)
		} else {
			x, e = compactHash(k)
		}
		b.x[j], b.e[j] = x, e
		b.off[j] = uintptr(mulHi(x, f.m)) * f.bb
	}
	b.off.prefetch(f.base, len(batch))
	if lines == 0 {
		lines = f.bb / 64
	}
	if lines == 1 {
		return
	}
	next := b.off
	for range lines - 1 {
		for j := range batch {
			next[j] += 64
		}
		next.prefetch(f.base, len(batch))
	}
}

// match is GetMany's second stage for the batch from lo, whose front
// buckets' first lines were prefetched two batches ago: it matches each
// key's fingerprint in its bucket's header (icebergMatchBatch: one
// assembly call a batch; a call a key had the loop spill its values around
// each, and read 1e7 keys at 29.13 M rows/s in the side-by-side harness
// against 31.75 now, medians of 5 rounds in one run), keeps the
// candidates, and prefetches the lines of the first candidate's slot (in
// the same call, which returns the keys with no candidate, in place of a
// Go loop over the batch and two prefetch calls more: GetMany in cache,
// test binaries in turn, CPU ns a row, 9.6 with this and lookupWords
// against main's 12.7, where lookupWords alone was 0.90x main's in one
// process), or, for a key with no candidate in a bucket whose
// spill bit for it is set (a key of the back yard, or a miss), its two
// back buckets. A lookup then reads the one or two lines
// it needs in place of the bucket's three, and a back-yard key's two
// buckets no longer cost two cache misses one after the other.
func (t *Iceberg[K, V]) match(keys []K, lo int, b *icebergBatch) {
	if lo >= len(keys) {
		return
	}
	n := min(icebergKeys, len(keys)-lo)
	f, bk := &t.front, &t.back
	none := icebergMatchBatch(f.base, &b.off, &b.x, &b.cand, n, uint64(64-f.kw), f.lmask, f.c, uint64(f.so), uint64(f.st), uint64(f.st-f.v))
	if none == 0 {
		return
	}
	var b1, b2 icebergHomes
	k := 0
	for ; none != 0; none &= none - 1 {
		j := bits.TrailingZeros64(none) & (icebergKeys - 1)
		p, x := unsafe.Add(f.base, b.off[j]), b.x[j]
		if f.spilled(p, f.rem(x)) {
			h1 := mulHi(x, bk.m)
			b1[k&(icebergKeys-1)], b2[k&(icebergKeys-1)] = uintptr(h1)*bk.bb, uintptr(bk.alt(h1, bk.rem(x), 0))*bk.bb // k <= j
			k++
		}
	}
	b1.prefetch(bk.base, k)
	b2.prefetch(bk.base, k)
}

// prefetchFree is InsertMany's second stage for the batch from lo, whose
// front buckets' first lines were prefetched two batches ago: for each key
// it prefetches the lines the insert will write, its front bucket's next
// free slot's, or, when that bucket is full, its two back buckets (an
// insert must look in both before it places a pair: two cache misses one
// after the other without them). The bucket is found again from the hash,
// as a growth may have come between the stages.
func (t *Iceberg[K, V]) prefetchFree(keys []K, lo int, b *icebergBatch) {
	if lo >= len(keys) {
		return
	}
	n := min(icebergKeys, len(keys)-lo)
	f, bk := &t.front, &t.back
	var s1, s2, b1, b2 icebergHomes
	k, ks := 0, 0
	for j := range n {
		x := b.x[j]
		o := uintptr(mulHi(x, f.m)) * f.bb
		if cnt := icebergCount(unsafe.Add(f.base, o)); cnt < f.c {
			off := f.off(cnt)
			s1[ks], s2[ks] = o+uintptr(off>>3), o+uintptr((off+f.st-f.v)>>3)+7
			ks++
			continue
		}
		h1 := mulHi(x, bk.m)
		b1[k], b2[k] = uintptr(h1)*bk.bb, uintptr(bk.alt(h1, bk.rem(x), 0))*bk.bb
		k++
	}
	s1.prefetch(f.base, ks)
	s2.prefetch(f.base, ks)
	b1.prefetch(bk.base, k)
	b2.prefetch(bk.base, k)
}

// GetMany is Get for every key of keys, software-pipelined in batches of
// icebergKeys keys, three stages apart: the batch three ahead is hashed and
// its buckets' first lines prefetched (batch), the batch one ahead is
// matched against those headers and the lines it will read prefetched
// (match), and this batch is looked up from its candidates. Against the
// pipeline it replaced (every line of the next batch's buckets prefetched,
// then Get's lookup), in one process at 1e7 <UInt64,UInt16>, alternating,
// the machine at load 10-13: 41-45 CPU ns a row against 51-66.
func (t *Iceberg[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if t.closed {
		closedPanic(LayoutIceberg)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	f := &t.front
	if !f.matches() {
		return t.getManyLines(keys, values, found)
	}
	const ahead = 3
	var b [4]icebergBatch
	for i := range ahead {
		t.batch(keys, i*icebergKeys, &b[i], 1)
	}
	t.match(keys, 0, &b[0])
	n := 0
	for lo, i := 0, 0; lo < len(keys); lo, i = lo+icebergKeys, i+1 {
		t.batch(keys, lo+ahead*icebergKeys, &b[(i+ahead)&3], 1)
		t.match(keys, lo+icebergKeys, &b[(i+1)&3])
		hi := min(lo+icebergKeys, len(keys))
		if f.word {
			n += t.lookupWords(keys[lo:hi], values[lo:hi], found[lo:hi], &b[i&3])
		} else {
			n += t.lookupSlots(keys[lo:hi], values[lo:hi], found[lo:hi], &b[i&3])
		}
	}
	return n
}

// lookupWords is GetMany's last stage for one batch of keys (at most
// icebergKeys) in a yard of one-word slots: each key's candidates read
// (icebergFindWord, the yard's fields in locals), and the keys found in no
// slot looked up in the back yard after the loop, so that the loop makes no
// call and keeps more of its values in registers. Against the loop over
// the batch with getBack, findIn and value calls in it (one table read
// alternately, CPU ns a row, medians): 11.0 against 12.2 in cache (9
// rounds), 34.2 against 39.8 at 1e7 (7 rounds, lower in every one).
func (t *Iceberg[K, V]) lookupWords(keys []K, values []V, found []bool, q *icebergBatch) int {
	f := &t.front
	base, so, st, kf, kmask, vmask := f.base, f.so, f.st, f.kf, f.kmask, f.vmask
	// x>>wshift & kmask is f.rem(x)>>8: the remainder past its fingerprint
	// (a front slot has no choice bit, and l >= 8 in a yard of one-word
	// slots); f.kw is K's bits up to 64, a constant.
	var k0 K
	wshift := 64 + 8 - min(8*uint(unsafe.Sizeof(k0)), 64)
	keys = keys[:min(len(keys), icebergKeys)]
	values, found = values[:len(keys)], found[:len(keys)]
	var miss [icebergKeys]uint8
	nm := 0
	for j := range keys {
		w, ok := icebergFindWord(unsafe.Add(base, q.off[j]), q.cand[j], q.x[j]>>wshift&kmask, so, st, kf, kmask, vmask)
		values[j], found[j] = fromWord[V](w), ok
		miss[nm&(icebergKeys-1)] = uint8(j) // nm <= j
		nm += b2i(!ok)
	}
	n := len(keys) - nm
	for _, j := range miss[:nm] {
		x := q.x[j]
		if f.spilled(unsafe.Add(base, q.off[j]), f.rem(x)) {
			v, ok := t.getBack(keys[j], x, q.e[j])
			values[j], found[j] = v, ok
			n += b2i(ok)
		}
	}
	return n
}

// lookupSlots is lookupWords for a yard whose slots are not one word.
func (t *Iceberg[K, V]) lookupSlots(keys []K, values []V, found []bool, q *icebergBatch) int {
	f := &t.front
	values, found = values[:len(keys)], found[:len(keys)]
	n := 0
	for j, key := range keys {
		p := unsafe.Add(f.base, q.off[j])
		x, e := q.x[j], q.e[j]
		var v V
		ok := false
		if off := f.findIn(p, q.cand[j], f.rem(x), 0, e); off != 0 {
			v, ok = t.value(f, p, off), true
		} else if f.spilled(p, f.rem(x)) {
			v, ok = t.getBack(key, x, e)
		}
		values[j], found[j] = v, ok
		n += b2i(ok)
	}
	return n
}

// getManyLines is GetMany for buckets without fingerprints: every line of
// the next batch's buckets prefetched, then Get's lookup.
func (t *Iceberg[K, V]) getManyLines(keys []K, values []V, found []bool) int {
	var b [2]icebergBatch
	t.batch(keys, 0, &b[0], 0)
	n := 0
	for lo, cur := 0, 0; lo < len(keys); lo, cur = lo+icebergKeys, cur^1 {
		t.batch(keys, lo+icebergKeys, &b[cur^1], 0)
		for j, key := range keys[lo:min(lo+icebergKeys, len(keys))] {
			v, ok := t.getHashed(key, b[cur].x[j], b[cur].e[j])
			values[lo+j], found[lo+j] = v, ok
			n += b2i(ok)
		}
	}
	return n
}

// InsertMany is Insert for every pair, in GetMany's three stages: the
// first lines of the batch three ahead, the lines the batch one ahead will
// write (prefetchFree), the inserts of this one. Against every line of the
// next batch's buckets and then the back buckets of this batch's full ones,
// in one process (a table reserved for 1e7 <UInt64,UInt16>, so no growth,
// CPU ns a row, alternating, load 12-15): 56.6-90.2 against 67.6-107.0,
// better in 5 rounds of 6; a load without reservation spends about three
// quarters of its time in the growth passes, which this does not touch.
func (t *Iceberg[K, V]) InsertMany(keys []K, values []V, inserted []bool) int {
	values, inserted = values[:len(keys)], inserted[:len(keys)]
	const ahead = 3
	var b [4]icebergBatch
	for i := range ahead {
		t.batch(keys, i*icebergKeys, &b[i], 1)
	}
	t.prefetchFree(keys, 0, &b[0])
	n := 0
	for lo, i := 0, 0; lo < len(keys); lo, i = lo+icebergKeys, i+1 {
		t.batch(keys, lo+ahead*icebergKeys, &b[(i+ahead)&3], 1)
		t.prefetchFree(keys, lo+icebergKeys, &b[(i+1)&3])
		q := &b[i&3]
		for j, k := range keys[lo:min(lo+icebergKeys, len(keys))] {
			ok := t.insertHashed(k, values[lo+j], q.x[j], q.e[j])
			inserted[lo+j] = ok
			n += b2i(ok)
		}
	}
	return n
}

// grow moves every pair into yards of the next size (see the design
// comment), releasing the old yards behind the pass.
func (t *Iceberg[K, V]) grow() {
	if t.closed {
		closedPanic(LayoutIceberg)
	}
	sh := t.shape(icebergGrowTo(int(sizeOf[K]()), t.vs, t.front.m, t.mlf))
	slabs := t.alloc(sh)
	oldF, oldB, oldOvf := t.front, t.back, t.ovf
	t.setShape(sh, slabs)
	t.ovf = nil
	rel := newSlabReleaser(oldF.slab)
	var mv icebergMoves
	fast := oldF.fb == 8 && t.front.fb == 8 && oldF.st <= 64 && oldF.e == 0 && oldF.v <= 64 && t.front.st <= 64
	for i := uint64(0); i < oldF.m; i++ {
		if i&0xfff == 0 {
			rel.upTo(uintptr(i) * oldF.bb)
		}
		p := oldF.bucket(i)
		n := icebergCount(p)
		if n == 0 {
			continue
		}
		u0 := oldF.first(i)
		if fast {
			t.moveFrontBucket(&oldF, p, n, u0, &mv)
			continue
		}
		for s := range n {
			rem, _, e, vlo, vhi := oldF.slot(p, s)
			t.placeMoved(oldF.decodeFrom(u0, rem), e, vlo, vhi)
		}
	}
	// The old back yard goes in after the pass: its pairs land anywhere in
	// the new front yard, and a write ahead of the pass faults in the 2 MiB
	// page it falls in, which the old front yard's pages, not yet released,
	// would sit beside (the back yard interleaved with the pass and released
	// behind it: peak 18.9 bytes a pair at 1e7, against 11.0).
	for i := range oldB.m {
		t.moveBackBucket(&oldB, i, &mv)
	}
	mv.flush(t)
	if icebergGrowHook != nil {
		icebergGrowHook(rel.done, uintptr(len(oldF.slab)))
	}
	t.owner.releaseRest(oldF.slab, rel.done)
	t.owner.release(oldB.slab)
	if oldOvf != nil {
		for k, v := range oldOvf.All() {
			x, e := t.hash(k)
			vlo, vhi := ToUint64(v)
			t.place(k, x, e, vlo, vhi)
		}
		oldOvf.Close()
	}
}

// moveFrontBucket moves the n pairs of the old front bucket at p (its
// first u u0) into the new yards: the growth pass written out for slots of
// one word with fingerprints, so that a pair costs a decode, a multiply and
// one word written into the new front bucket, which the pass fills in order
// (homes are monotone in the hash); a pair whose new bucket is full goes
// through place. With icebergMoves, against every pair through place:
// BenchmarkIcebergBatch loads 1e7 in 306-322 CPU ns a row, from 390-400
// (alternating runs, the machine at load 12-15).
func (t *Iceberg[K, V]) moveFrontBucket(o *icebergYard, p unsafe.Pointer, n, u0 uint64, mv *icebergMoves) {
	f := &t.front
	for s := range n {
		w := getBits(p, o.off(s), o.st)
		rem := uint64(*(*byte)(unsafe.Add(p, 1+s))) | (w&lowMask(o.lr))<<8
		v := w >> o.lr
		x := o.decodeFrom(u0, rem)
		q := f.bucket(mulHi(x, f.m))
		c := icebergCount(q)
		if c >= f.c {
			mv.add(t, x, 0, v, 0)
			continue
		}
		r := f.rem(x)
		*(*byte)(unsafe.Add(q, 1+c)) = byte(r)
		if !f.word || !f.appendWord(q, f.off(c), r>>8|v<<f.lr) {
			orBits(q, f.off(c), f.st, r>>8|v<<f.lr)
		}
		*(*byte)(q) = byte(c + 1)
		f.n++
	}
}

// moveBackBucket moves the pairs of bucket i of the old back yard o.
func (t *Iceberg[K, V]) moveBackBucket(o *icebergYard, i uint64, mv *icebergMoves) {
	p := o.bucket(i)
	for s := range icebergCount(p) {
		rem, c, e, vlo, vhi := o.slot(p, s)
		home := i
		if c == 1 {
			home = o.alt(i, rem, 1)
		}
		mv.add(t, o.decode(home, rem), e, vlo, vhi)
	}
}

// icebergMoves holds the pairs a growth pass places out of its order (a
// pair whose new front bucket is full, bound for two back buckets, and the
// old back yard's pairs, bound for any front bucket), 8 at a time: their
// buckets' lines are prefetched when a batch is full and the batch placed
// when the next one is, so that their cache misses overlap instead of
// stopping the pass once a pair (placeYards and its two back-bucket
// misses were 38 % of the load's profile without it; its gain with
// moveFrontBucket's is measured there).
type icebergMoves struct {
	n                   int
	cur                 [2][4][getBatch]uint64 // x, e, vlo, vhi of the filling and the prefetched batch
	prev                int                    // pairs in the prefetched batch (cur[1])
	front, back1, back2 homes
}

func (mv *icebergMoves) add(t icebergPlacer, x, e, vlo, vhi uint64) {
	b := &mv.cur[0]
	b[0][mv.n], b[1][mv.n], b[2][mv.n], b[3][mv.n] = x, e, vlo, vhi
	mv.n++
	if mv.n < getBatch {
		return
	}
	f, bk := t.yards()
	for j := range getBatch {
		x := b[0][j]
		mv.front[j] = uintptr(mulHi(x, f.m)) * f.bb
		b1 := mulHi(x, bk.m)
		mv.back1[j] = uintptr(b1) * bk.bb
		mv.back2[j] = uintptr(bk.alt(b1, bk.rem(x), 0)) * bk.bb
	}
	prefetchOffsets(f.base, &mv.front, getBatch)
	prefetchOffsets(bk.base, &mv.back1, getBatch)
	prefetchOffsets(bk.base, &mv.back2, getBatch)
	mv.place(t)
	mv.cur[1], mv.prev, mv.n = mv.cur[0], getBatch, 0
}

// place places the prefetched batch.
func (mv *icebergMoves) place(t icebergPlacer) {
	b := &mv.cur[1]
	for j := range mv.prev {
		t.placeMoved(b[0][j], b[1][j], b[2][j], b[3][j])
	}
	mv.prev = 0
}

// flush places every pair held.
func (mv *icebergMoves) flush(t icebergPlacer) {
	mv.place(t)
	mv.cur[1], mv.prev, mv.n = mv.cur[0], mv.n, 0
	mv.place(t)
}

// icebergPlacer is what icebergMoves needs of a table (it is not generic,
// so that its code is not stenciled per key and value type).
type icebergPlacer interface {
	yards() (front, back *icebergYard)
	placeMoved(x, e, vlo, vhi uint64)
}

func (t *Iceberg[K, V]) yards() (front, back *icebergYard) { return &t.front, &t.back }

// icebergGrowHook, when set (tests only), hears at the end of every growth
// pass how much of the old front yard it had released, and its size.
var icebergGrowHook func(released, slab uintptr)

// placeMoved is place for a pair a growth moves, known by its hash: its key
// is computed only if it goes to the overflow table.
func (t *Iceberg[K, V]) placeMoved(x, e, vlo, vhi uint64) {
	if !t.placeYards(x, e, vlo, vhi) {
		t.placeOverflow(compactKey[K](x, e), x, vlo, vhi)
	}
}

func (t *Iceberg[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if t.closed {
			closedPanic(LayoutIceberg)
		}
		for k, v := range t.yardPairs(&t.front) {
			if !yield(k, v) {
				return
			}
		}
		for k, v := range t.yardPairs(&t.back) {
			if !yield(k, v) {
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

// yardPairs yields every pair of a yard.
func (t *Iceberg[K, V]) yardPairs(y *icebergYard) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for i := uint64(0); i < y.m; i++ {
			p := y.bucket(i)
			for s := range icebergCount(p) {
				rem, c, e, vlo, vhi := y.slot(p, s)
				home := i
				if c == 1 {
					home = y.alt(i, rem, 1)
				}
				if !yield(compactKey[K](y.decode(home, rem), e), FromUint64[V](vlo, vhi)) {
					return
				}
			}
		}
	}
}

// Close releases the slabs (and the overflow table) at once.
func (t *Iceberg[K, V]) Close() {
	if t.closed {
		return
	}
	t.owner.close(&t.cleanup)
	closeOverflow(&t.ovf)
	t.closed, t.size = true, 0
	// Every lookup of a closed table reads one empty bucket of closedMemory
	// (count 0) and ends on the miss path, which panics.
	for _, y := range []*icebergYard{&t.front, &t.back} {
		y.base = unsafe.Pointer(&closedMemory)
		y.slab = nil
		y.m, y.n, y.bb, y.c, y.cmask = 1, 0, 64, 0, 0
		y.sbase, y.sk = 6, 2
		// Not a yard of one-word slots: icebergGetWord sends every lookup
		// to getFront, whose miss panics (a miss it finds itself, Get
		// returns).
		y.word = false
	}
}

// Stats: payload is the remainder, extra-word and value bits of occupied
// slots (less than sizeof K + sizeof V a pair: the bucket says the rest),
// empty the bits of unoccupied slots, metadata the counts, the back yard's
// choice bits, the bits past a bucket's last slot, the pads, the header,
// and the byte rounding of the others.
func (t *Iceberg[K, V]) Stats() Stats {
	if t.closed {
		closedPanic(LayoutIceberg)
	}
	header := int64(unsafe.Sizeof(*t))
	var payload, empty int64 // bits
	slots := int64(0)
	for _, y := range []*icebergYard{&t.front, &t.back} {
		used := int64(y.l + y.e + y.v)
		payload += int64(y.n) * used
		s := int64(y.m * y.c)
		slots += s
		empty += (s - int64(y.n)) * int64(y.sb)
	}
	s := Stats{
		ElementCount:   int64(t.front.n + t.back.n),
		BucketCount:    slots,
		BytesAllocated: int64(len(t.front.slab)+len(t.back.slab)) + header,
		PayloadBytes:   payload / 8,
		EmptyBytes:     empty / 8,
	}
	return withOverflow(s, t.ovf)
}

// IcebergBuckets is what an iceberg table holds at its current size.
type IcebergBuckets struct {
	FrontBuckets  int64 `json:"front_buckets"`
	FrontSlots    int   `json:"front_slots"` // slots a front bucket
	FrontLines    int   `json:"front_lines"` // cache lines a front bucket
	BackBuckets   int64 `json:"back_buckets"`
	BackSlots     int   `json:"back_slots"`
	SlotBits      int   `json:"slot_bits"`
	RemainderBits int   `json:"remainder_bits"`
	FrontPairs    int64 `json:"front_pairs"`
	BackPairs     int64 `json:"back_pairs"`
	OverflowPairs int64 `json:"overflow_pairs"`
	MaxFill       int64 `json:"max_fill"`
}

// Buckets reports the table's yards.
func (t *Iceberg[K, V]) Buckets() IcebergBuckets {
	return IcebergBuckets{int64(t.front.m), int(t.front.c), int(t.front.bb / 64), int64(t.back.m), int(t.back.c),
		int(t.front.sb), int(t.front.l), int64(t.front.n), int64(t.back.n), int64(t.size - t.front.n - t.back.n), int64(t.maxFill)}
}

// CheckInvariants checks every bucket against the design comment's rules.
func (t *Iceberg[K, V]) CheckInvariants() error {
	if t.closed {
		return fmt.Errorf("iceberg: closed")
	}
	want := t.shape(t.front.m)
	for i, y := range []*icebergYard{&t.front, &t.back} {
		w := [2]icebergYard{want.front, want.back}[i]
		if y.m != w.m || y.c != w.c || y.sb != w.sb || y.bb != w.bb || y.l != w.l {
			return fmt.Errorf("iceberg: yard %d has %d buckets of %d slots of %d bits, want %d of %d of %d", i, y.m, y.c, y.sb, w.m, w.c, w.sb)
		}
		if uintptr(len(y.slab)) != y.bytes() {
			return fmt.Errorf("iceberg: yard %d slab of %d bytes, want %d", i, len(y.slab), y.bytes())
		}
	}
	if t.maxFill != want.maxFill {
		return fmt.Errorf("iceberg: max fill %d, want %d", t.maxFill, want.maxFill)
	}
	if len(t.owner.slabs) != 2 {
		return fmt.Errorf("iceberg: owns %d slabs, want 2", len(t.owner.slabs))
	}
	var n [2]uint64
	spills := map[uint64]uint64{} // front bucket: the spill bits its keys set (spillPick)
	for yi, y := range []*icebergYard{&t.front, &t.back} {
		for i := uint64(0); i < y.m; i++ {
			p := y.bucket(i)
			cnt := icebergCount(p)
			if cnt > y.c {
				return fmt.Errorf("iceberg: yard %d bucket %d counts %d pairs, it has %d slots", yi, i, cnt, y.c)
			}
			if yi == 1 && *(*byte)(p)&icebergSpill != 0 {
				return fmt.Errorf("iceberg: back bucket %d has spill bits set (%#x)", i, *(*byte)(p))
			}
			// The bits past the last pair are zero.
			for s := cnt; s < y.c && y.fb != 0; s++ {
				if fp := *(*byte)(unsafe.Add(p, 1+s)); fp != 0 {
					return fmt.Errorf("iceberg: yard %d bucket %d has fingerprint %#x in its free slot %d", yi, i, fp, s)
				}
			}
			for off := y.off(cnt); off < uint(8*y.bb); off += min(64, uint(8*y.bb)-off) {
				if v := getBits(p, off, min(64, uint(8*y.bb)-off)); v != 0 {
					return fmt.Errorf("iceberg: yard %d bucket %d has bits set past its %d pairs at bit %d: %#x", yi, i, cnt, off, v)
				}
			}
			for s := range cnt {
				rem, c, e, vlo, vhi := y.slot(p, s)
				home := i
				if c == 1 {
					home = y.alt(i, rem, 1)
				}
				x := y.decode(home, rem)
				if mulHi(x, y.m) != home || y.rem(x) != rem {
					return fmt.Errorf("iceberg: yard %d bucket %d slot %d decodes to hash %#x, whose bucket is %d, not %d", yi, i, s, x, mulHi(x, y.m), home)
				}
				k := compactKey[K](x, e)
				if yi == 1 {
					if fp := t.front.bucket(mulHi(x, t.front.m)); icebergCount(fp) < t.front.c || !t.front.spilled(fp, t.front.rem(x)) {
						return fmt.Errorf("iceberg: key %v is in the back yard, its front bucket is not full or not marked spilled", k)
					}
					spills[mulHi(x, t.front.m)] |= 1 << t.front.spillPick(t.front.rem(x))
				}
				if v, ok := t.Get(k); !ok || v != FromUint64[V](vlo, vhi) {
					return fmt.Errorf("iceberg: Get(%v) = %v, %v; yard %d bucket %d slot %d holds %v", k, v, ok, yi, i, s, FromUint64[V](vlo, vhi))
				}
				if t.ovf != nil && t.ovf.Has(k) {
					return fmt.Errorf("iceberg: key %v is both in yard %d and in the overflow table", k, yi)
				}
			}
			n[yi] += cnt
		}
		if n[yi] != y.n {
			return fmt.Errorf("iceberg: yard %d holds %d pairs, its count says %d", yi, n[yi], y.n)
		}
	}
	ov := uint64(0)
	if t.ovf != nil {
		if err := t.ovf.CheckInvariants(); err != nil {
			return fmt.Errorf("iceberg overflow: %w", err)
		}
		ov = uint64(t.ovf.Len())
		for k, v := range t.ovf.All() {
			x, _ := t.hash(k)
			if !t.front.spilled(t.front.bucket(mulHi(x, t.front.m)), t.front.rem(x)) {
				return fmt.Errorf("iceberg: key %v is in the overflow table, its front bucket is not marked spilled", k)
			}
			spills[mulHi(x, t.front.m)] |= 1 << t.front.spillPick(t.front.rem(x))
			if got, ok := t.Get(k); !ok || got != v {
				return fmt.Errorf("iceberg: Get(%v) = %v, %v; the overflow table holds %v", k, got, ok, v)
			}
		}
	}
	// A front bucket's spill bits are set exactly where one of its keys
	// went on to the back yard or the overflow table.
	f := &t.front
	for i := uint64(0); i < f.m; i++ {
		p := f.bucket(i)
		set := uint64(0)
		for j := range uint(f.sk) {
			set |= getBits(p, f.spillBit(j), 1) << j
		}
		if set != spills[i] {
			return fmt.Errorf("iceberg: front bucket %d (%d pairs of %d) has spill bits %#x, its keys in the back yard and the overflow table set %#x", i, icebergCount(p), f.c, set, spills[i])
		}
	}
	if n[0]+n[1]+ov != t.size {
		return fmt.Errorf("iceberg: %d + %d + %d pairs, size says %d", n[0], n[1], ov, t.size)
	}
	if t.size > t.maxFill {
		return fmt.Errorf("iceberg: %d pairs exceed max fill %d", t.size, t.maxFill)
	}
	return t.Stats().check()
}
