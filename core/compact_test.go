package core

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestCompactHashInverts: every key width's hash is a bijection that
// compactKey undoes, and keeps a narrow key's hash in the top bits.
func TestCompactHashInverts(t *testing.T) {
	check := func(name string, f func(rng *rand.Rand) (ok bool, what string)) {
		rng := rand.New(rand.NewPCG(1, 2))
		for range 20000 {
			if ok, what := f(rng); !ok {
				t.Fatalf("%s: %s", name, what)
			}
		}
	}
	check("UInt64", func(rng *rand.Rand) (bool, string) {
		k := rng.Uint64()
		x, e := compactHash(k)
		return compactKey[uint64](x, e) == k && e == 0 && x == intHash64(k), fmt.Sprintf("key %#x: hash %#x (intHash64 %#x), back %#x", k, x, intHash64(k), compactKey[uint64](x, e))
	})
	check("UInt32", func(rng *rand.Rand) (bool, string) {
		k := rng.Uint32()
		x, _ := compactHash(k)
		return compactKey[uint32](x, 0) == k && x<<32 == 0, fmt.Sprintf("key %#x: hash %#x, back %#x", k, x, compactKey[uint32](x, 0))
	})
	check("UUID", func(rng *rand.Rand) (bool, string) {
		k := U128{rng.Uint64(), rng.Uint64()}
		if rng.IntN(4) == 0 {
			k[1] = 0
		}
		x, e := compactHash(k)
		return compactKey[U128](x, e) == k, fmt.Sprintf("key %#x: hash %#x,%#x, back %#x", k, x, e, compactKey[U128](x, e))
	})
	// The narrow widths, exhaustively: every value has its own hash.
	seen8 := map[uint64]bool{}
	for k := range 256 {
		x, _ := compactHash(uint8(k))
		if compactKey[uint8](x, 0) != uint8(k) || x<<8 != 0 || seen8[x] {
			t.Fatalf("UInt8 key %d: hash %#x, back %d, seen %v", k, x, compactKey[uint8](x, 0), seen8[x])
		}
		seen8[x] = true
	}
	seen16 := map[uint64]bool{}
	for k := range 1 << 16 {
		x, _ := compactHash(uint16(k))
		if compactKey[uint16](x, 0) != uint16(k) || x<<16 != 0 || seen16[x] {
			t.Fatalf("UInt16 key %d: hash %#x, back %d, seen %v", k, x, compactKey[uint16](x, 0), seen16[x])
		}
		seen16[x] = true
	}
	// Sequential keys spread over the homes of a table (the top bits).
	for _, w := range []int{16, 32, 64} {
		homes := make([]int, 64)
		for k := range uint64(1 << 14) {
			var x uint64
			switch w {
			case 16:
				x, _ = compactHash(uint16(k))
			case 32:
				x, _ = compactHash(uint32(k))
			default:
				x, _ = compactHash(k)
			}
			homes[x>>58]++
		}
		for h, c := range homes {
			if c < 128 || c > 384 { // 256 expected
				t.Errorf("%d-bit sequential keys: %d of 16384 in home %d of 64, want about 256", w, c, h)
			}
		}
	}
}

// compactTypeSizes are the key and value sizes packlab has.
var compactTypeSizes = []int{1, 2, 4, 8, 16}

// TestCompactSlotsHoldEverything proves, for every key and value size, every
// class of max load factor and every table size a table can reach, that a
// slot holds the remainder, the value and the displacement, so no key type
// can overflow a slot: the fields fit the slot's bytes and the words a
// load reads, the displacement field has its minimum bits, the slot is as
// narrow as that allows, and the remainder tells every hash of a home apart
// (decode inverts place at the edges of homes and at random).
func TestCompactSlotsHoldEverything(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, ks := range compactTypeSizes {
		for _, vs := range compactTypeSizes {
			for _, mlf := range []float64{0.5, 0.9, 0.91, 0.95, 0.96, 0.99} {
				var sizes []uint64
				for m := uint64(compactInitialSlots); m < 1<<62; m = compactNextSlots(m) {
					sizes = append(sizes, m)
				}
				for k := 9; k < 63; k++ { // and sizes the rule does not reach (from 256 up)
					sizes = append(sizes, 1<<k, 1<<k-1, 1<<k+1, 3<<(k-1))
				}
				for _, m := range sizes {
					g := compactGeometry(ks, vs, m, mlf)
					where := fmt.Sprintf("key %d B, value %d B, mlf %v, m %d: %+v", ks, vs, mlf, m, g)
					bmin := compactMinDispBits(mlf)
					used := g.b + g.r + g.e + g.v
					lg := uint(bits.Len64(m) - 1)
					switch {
					case g.b < bmin || g.b > compactMaxDispBits:
						t.Fatalf("%s: %d displacement bits, want %d..%d", where, g.b, bmin, compactMaxDispBits)
					case used > uint(8*g.w):
						t.Fatalf("%s: %d bits do not fit %d bytes", where, used, g.w)
					case g.r+g.e+g.v+bmin <= uint(8*(g.w-1)):
						t.Fatalf("%s: a slot of %d bytes would do", where, g.w-1)
					case g.v != uint(8*vs) || g.e != map[bool]uint{true: 64}[ks == 16]:
						t.Fatalf("%s: value or extra word bits wrong", where)
					case g.r < uint(max(0, min(8*ks, 64)-int(lg))):
						t.Fatalf("%s: %d remainder bits cannot tell %d-bit hashes of one home apart", where, g.r, min(8*ks, 64))
					case ks <= 8 && g.b+g.r > 64:
						t.Fatalf("%s: displacement and remainder are not in the first word", where)
					case g.nw > 4 || used > uint(64*g.nw) || g.pad != 8*g.nw-g.w:
						t.Fatalf("%s: the slot does not fit the words a load reads", where)
					case g.maxDisp != 1<<g.b-2 || g.slots != m+g.maxDisp+1:
						t.Fatalf("%s: tail slots wrong", where)
					}
					// The remainder inverts: x -> (home, rem) -> x.
					c := &Compact[uint8, uint8]{m: m, s: g.s, geo: g}
					step := uint64(1) << (64 - g.kw)
					xs := []uint64{0, -step, step}
					for _, home := range []uint64{1, 2, m / 2, m - 1} {
						// the first hash of a home and the last of the one before
						q, r := bits.Div64(home, 0, m)
						if r != 0 {
							q++
						}
						q = (q + step - 1) &^ (step - 1)
						xs = append(xs, q, q-step)
					}
					for range 20 {
						xs = append(xs, rng.Uint64()&^(step-1))
					}
					for _, x := range xs {
						home, rem := c.place(x)
						if rem>>g.r != 0 && g.r < 64 {
							t.Fatalf("%s: hash %#x has remainder %#x wider than %d bits", where, x, rem, g.r)
						}
						if back := c.decode(home, rem); back != x {
							t.Fatalf("%s: hash %#x -> home %d, remainder %#x -> %#x", where, x, home, rem, back)
						}
					}
				}
			}
		}
	}
}

// collidingKeys are n keys whose compact hashes are consecutive: the same
// home in any table of fewer than 2^w/n home slots, as keys chosen to
// collide would be.
func collidingKeys[K Bits](n int, seed uint64) []K {
	keys := make([]K, n)
	if sizeOf[K]() > 8 {
		for i := range keys {
			keys[i] = compactKey[K](seed, uint64(i)) // one hash word, n extra words
		}
		return keys
	}
	step := uint64(1) << (64 - 8*sizeOf[K]())
	for i := range keys {
		keys[i] = compactKey[K](seed&^(step-1)+uint64(i)*step, 0)
	}
	return keys
}

// TestCompactOverflow loads keys chosen to collide (displacements beyond
// any field) among random ones: the pairs that do not fit go to the
// overflow table, every growth pass reserves room for those it moves
// there, the table agrees with the builtin map throughout, and Close
// releases the overflow table's slab with the table's.
func TestCompactOverflow(t *testing.T) {
	settledSlabBytes()
	t.Run("Key=UInt64/Value=UInt16", func(t *testing.T) { compactOverflowRun[uint64, uint16](t, 600, 30000) })
	// UInt32 keys cross from 8 displacement bits to 6 at 2^14 home slots:
	// the growth pass there moves pairs with displacements above 62.
	t.Run("Key=UInt32/Value=UInt16", func(t *testing.T) { compactOverflowRun[uint32, uint16](t, 600, 20000) })
	t.Run("Key=UUID/Value=UInt8", func(t *testing.T) { compactOverflowRun[U128, uint8](t, 500, 20000) })
	t.Run("Key=UInt16/Value=UInt128", func(t *testing.T) { compactOverflowRun[uint16, U128](t, 300, 20000) })
}

func compactOverflowRun[K, V Bits](t *testing.T, colliding, random int) {
	for _, mlf := range []float64{0.5, 0.9, 0.99} {
		before := SlabBytes()
		m := NewCompact[K, V](Options{MaxLoadFactor: mlf})
		oracle := map[K]V{}
		rng := rand.New(rand.NewPCG(uint64(colliding), 9))
		keys := collidingKeys[K](colliding, rng.Uint64())
		for range random {
			keys = append(keys, FromUint64[K](rng.Uint64(), rng.Uint64()))
		}
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		keys = append(keys, keys[:100]...) // and some again
		growths, moved := 0, 0
		for i, k := range keys {
			v := FromUint64[V](rng.Uint64(), rng.Uint64())
			_, had := oracle[k]
			if !had {
				oracle[k] = v
			}
			before, ovf := m.Slot().HomeSlots, m.ovfLen()
			if m.Insert(k, v) == had {
				t.Fatalf("mlf %v: insert #%d of %v returned %v, present %v", mlf, i, k, !had, had)
			}
			if m.Slot().HomeSlots != before {
				growths++
				if m.ovfLen() > ovf+1 {
					moved++
				}
				if err := m.CheckInvariants(); err != nil {
					t.Fatalf("mlf %v: after growing to %d home slots: %v", mlf, m.Slot().HomeSlots, err)
				}
			}
		}
		if err := m.CheckInvariants(); err != nil {
			t.Fatalf("mlf %v: %v", mlf, err)
		}
		// Keys of 4 bytes and more can be chosen to collide beyond any
		// displacement field; 2^16 keys in 256 home slots and more cannot.
		if m.Len() != len(oracle) || m.ovfLen() == 0 && sizeOf[K]() >= 4 {
			t.Fatalf("mlf %v: Len %d (%d in the overflow table), want %d with some in the overflow table", mlf, m.Len(), m.ovfLen(), len(oracle))
		}
		got := map[K]V{}
		for k, v := range m.All() {
			got[k] = v
		}
		for k, v := range oracle {
			if g, ok := m.Get(k); !ok || g != v || got[k] != v {
				t.Fatalf("mlf %v: Get(%v) = %v, %v; All gave %v; want %v", mlf, k, g, ok, got[k], v)
			}
		}
		vals, found := make([]V, len(keys)), make([]bool, len(keys))
		if n := m.GetMany(keys, vals, found); n != len(keys) {
			t.Fatalf("mlf %v: GetMany found %d of %d", mlf, n, len(keys))
		}
		for i, k := range keys {
			if vals[i] != oracle[k] {
				t.Fatalf("mlf %v: GetMany gave %v for %v, want %v", mlf, vals[i], k, oracle[k])
			}
		}
		st := m.Stats()
		if st.ElementCount != int64(len(oracle)) || st.check() != nil {
			t.Fatalf("mlf %v: stats %+v", mlf, st)
		}
		t.Logf("mlf %v: %d pairs, %d in the overflow table, %d growths (%d moved pairs to it)", mlf, m.Len(), m.ovfLen(), growths, moved)
		if sizeOf[K]() == 4 && mlf == 0.9 && moved == 0 {
			t.Errorf("mlf %v: no growth pass moved a pair to the overflow table; the test does not reach that path", mlf)
		}
		inOverflow := m.ovfLen()
		m.Close()
		if got := SlabBytes() - before; got != 0 {
			t.Errorf("mlf %v: after Close %d bytes are still held in slabs (%d pairs were in the overflow table)", mlf, got, inOverflow)
		}
	}
}

// TestCompactGrowthReleasesBehindIt: a growth pass hands the old slab back
// as it goes, all but the last release steps (Linux), and touches none of
// it afterwards (released pages are made inaccessible).
func TestCompactGrowthReleasesBehindIt(t *testing.T) {
	if !compactStreamRelease || !poisonable {
		t.Skip("no streaming release on this platform")
	}
	if testing.Short() {
		t.Skip("loads 1.5 million keys")
	}
	slabPoison.Store(true)
	defer func() { slabPoison.Store(false); unpoison() }()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	type growth struct{ released, slab uintptr }
	var seen []growth
	compactGrowHook = func(released, slab uintptr) { seen = append(seen, growth{released, slab}) }
	defer func() { compactGrowHook = nil }()
	m := NewCompact[uint64, uint16](Options{})
	defer m.Close()
	rng := rand.New(rand.NewPCG(1, 1))
	for m.Len() < 1_500_000 {
		m.Insert(rng.Uint64(), 1)
	}
	big := 0
	for _, g := range seen {
		if g.slab < 4*compactReleaseEvery {
			continue
		}
		big++
		if left := g.slab - g.released; left > 2*compactReleaseEvery {
			t.Errorf("a growth out of a slab of %d bytes released %d of it during its pass, leaving %d; want at most %d", g.slab, g.released, left, 2*compactReleaseEvery)
		}
	}
	if big == 0 {
		t.Fatalf("no growth out of a slab of %d bytes or more: %+v", 4*compactReleaseEvery, seen)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestInformationLimit pins the limit to the research table and to exact
// small cases.
func TestInformationLimit(t *testing.T) {
	u64, u16 := MustType("UInt64"), MustType("UInt16")
	for _, c := range []struct {
		n    int64
		want float64 // bytes a pair
	}{{1e6, 7.69}, {1e7, 7.27}, {1e8, 6.86}, {1e9, 6.44}} {
		if got := InformationLimitBytes(u64, u16, c.n); math.Abs(got-c.want) > 0.005 {
			t.Errorf("n=%d: %.4f bytes a pair, want %.2f", c.n, got, c.want)
		}
	}
	// log2 C(256, n) exactly: every 8-bit key present says nothing.
	for _, c := range []struct {
		n    int64
		want float64
	}{{1, 8}, {255, 8}, {256, 0}, {2, math.Log2(256 * 255 / 2)}} {
		if got := InformationLimitBits(8, 0, c.n); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("log2 C(256, %d) = %v, want %v", c.n, got, c.want)
		}
	}
	// The Stirling branch agrees with lgamma where both are exact enough.
	a := InformationLimitBits(40, 0, 1e6)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	if b := (lg(1<<40+1) - lg(1<<40-1e6+1) - lg(1e6+1)) / math.Ln2; math.Abs(a-b) > 1e-3*a {
		t.Errorf("log2 C(2^40, 1e6): %v, lgamma says %v", a, b)
	}
	if !math.IsNaN(InformationLimitBits(8, 0, 257)) || InformationLimitBits(64, 16, 0) != 0 {
		t.Error("more keys than values, or none, are not handled")
	}
}

// TestCompactStats: 1e6 random <UInt64,UInt16> pairs in the geometry the
// growth rule gives, every byte accounted for, payload the stored bits.
func TestCompactStats(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	m := NewCompact[uint64, uint16](Options{})
	defer m.Close()
	rng := rand.New(rand.NewPCG(2, 2))
	for m.Len() < n {
		m.Insert(rng.Uint64(), uint16(rng.Uint32()))
	}
	final, _ := compactSlotsFor(compactInitialSlots, uint64(n), DefaultCompactMaxLoadFactor)
	g := compactGeometry(8, 2, final, DefaultCompactMaxLoadFactor)
	st := m.Stats()
	header := int64(unsafeSizeof(*m))
	if m.ovf != nil { // random keys almost never need it; the formula below is for the slab alone
		t.Logf("%d pairs in the overflow table: not compared", m.ovfLen())
	}
	inSlab := int64(m.size)
	want := Stats{
		ElementCount:   int64(n),
		BucketCount:    int64(g.m + g.maxDisp),
		BytesAllocated: int64(g.slots)*int64(g.w) + int64(g.pad) + header,
		PayloadBytes:   inSlab * int64(g.r+g.v) / 8,
		EmptyBytes:     (int64(g.m+g.maxDisp) - inSlab) * int64(g.w),
	}
	if m.ovf == nil && (st.ElementCount != want.ElementCount || st.BucketCount != want.BucketCount ||
		st.BytesAllocated != want.BytesAllocated || st.PayloadBytes != want.PayloadBytes || st.EmptyBytes != want.EmptyBytes) {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if err := st.check(); err != nil {
		t.Error(err)
	}
	limit := InformationLimitBytes(MustType("UInt64"), MustType("UInt16"), int64(n))
	t.Logf("%d pairs: %d home slots of %d bytes (r=%d b=%d), %.2f bytes a pair, limit %.2f", n, g.m, g.w, g.r, g.b, st.BytesPerEntry(), limit)
	if bpe := st.BytesPerEntry(); bpe < limit || bpe > float64(g.w)*1.25/DefaultCompactMaxLoadFactor+0.01 {
		t.Errorf("%.2f bytes a pair: below the information limit %.2f, or above the growth rule's worst case", bpe, limit)
	}
	runtime.KeepAlive(m)
}

// TestCompactGetWindow: Get and GetMany find every pair and no absent key
// on each of their paths in a table of narrow slots (<UInt64,UInt8>: 8-byte
// slots at this size; <UInt64,UInt16> has them from 4.2M home slots): Get's
// 2-slot window (a table under 0.75 full), its 3-slot one (under 0.8), its
// 5-slot one (at least 0.8 full), GetMany's 4-slot one (probeWindow) and the
// slot-by-slot loop past each (pairs at least 2, 3, 4 or 5 slots from
// home), which the test makes sure it has pairs for.
func TestCompactGetWindow(t *testing.T) {
	for _, fill := range []float64{0.73, 0.77, 0.89} {
		m := NewCompact[uint64, uint8](Options{})
		rng := rand.New(rand.NewPCG(9, 9))
		oracle := map[uint64]uint8{}
		// Grow to a table of 128000 home slots (65536 x5/4 x5/4 x5/4), then
		// fill it to fill without another growth.
		const slots = 128000
		for len(oracle) < int(fill*slots) {
			k, v := rng.Uint64(), uint8(rng.Uint32())
			if m.Insert(k, v) {
				oracle[k] = v
			}
		}
		if m.m != slots || m.ovfLen() != 0 || !m.narrow {
			t.Fatalf("fill %v: %d home slots (narrow %v), %d pairs in the overflow table; want %d narrow ones and none", fill, m.m, m.narrow, m.ovfLen(), slots)
		}
		window := m.window()
		want := uint64(2)
		switch {
		case fill >= compactWideWindowFill:
			want = 5
		case fill >= compactMidWindowFill:
			want = 3
		}
		if window != want {
			t.Fatalf("fill %v: Get's window is %d slots, want %d", fill, window, want)
		}
		var inWindow, past, pastMany int
		for i := range m.geo.slots {
			d := m.dispAt(i)
			if d > window {
				past++
			} else if d > 0 {
				inWindow++
			}
			if d > 4 {
				pastMany++
			}
		}
		if inWindow == 0 || past == 0 || pastMany == 0 {
			t.Fatalf("fill %v: %d pairs in the %d-slot window, %d past it, %d past GetMany's 4; the test needs each", fill, inWindow, window, past, pastMany)
		}
		keys := make([]uint64, 0, 2*len(oracle))
		for k := range oracle {
			keys = append(keys, k, rng.Uint64()) // a hit, then (almost surely) a miss
		}
		vals, found := make([]uint8, len(keys)), make([]bool, len(keys))
		hits := m.GetMany(keys, vals, found)
		for i, k := range keys {
			v, in := oracle[k]
			if found[i] != in || vals[i] != v {
				t.Fatalf("fill %v: GetMany gave %#x %d, %v; want %d, %v", fill, k, vals[i], found[i], v, in)
			}
		}
		if hits != len(oracle) {
			t.Fatalf("fill %v: GetMany found %d, want %d", fill, hits, len(oracle))
		}
		for k, v := range oracle {
			if got, ok := m.Get(k); !ok || got != v {
				t.Fatalf("fill %v: Get(%#x) = %d, %v; want %d", fill, k, got, ok, v)
			}
		}
		for range 100000 {
			if k := rng.Uint64(); m.Has(k) {
				if _, in := oracle[k]; !in {
					t.Fatalf("fill %v: Has(%#x) for a key never inserted", fill, k)
				}
			}
		}
		m.Close()
	}
}
