package core

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestIcebergMatch checks the fingerprint match (icebergMatch, SIMD on
// amd64, and icebergMatchWords) against a slot-by-slot loop for every count
// of buckets of 6 to 64 slots, fingerprints drawn from a few values so that
// many slots match, and the probe's byte equal to the free slots' zero;
// and the batch match (icebergMatchBatch, icebergMatchBatchWords) beside it. The
// buffer is a bucket of 64 bytes and a slab's pad: the SIMD match reads 16,
// 32 or 64 bytes past the count.
func TestIcebergMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []uint64{6, 8, 9, 16, 17, 24, 26, 32, 33, 48, 63, 64} {
		buf := make([]byte, 64+icebergPad)
		for range 200 {
			n := rng.Uint64N(c + 1)
			for i := range buf {
				buf[i] = byte(rng.IntN(256))
			}
			for s := range c {
				buf[1+s] = byte(rng.IntN(3))
				if s >= n {
					buf[1+s] = 0
				}
			}
			for _, fp := range []byte{0, 1, 2, 3} {
				want := uint64(0)
				for s := range n {
					if buf[1+s] == fp {
						want |= 1 << s
					}
				}
				if got := icebergMatch(unsafe.Pointer(&buf[0]), fp, n, c); got != want {
					t.Fatalf("c %d n %d fp %d: icebergMatch %b, want %b (header % x)", c, n, fp, got, want, buf[:1+c])
				}
				if got := icebergMatchWords(unsafe.Pointer(&buf[0]), fp, n, c); got != want {
					t.Fatalf("c %d n %d fp %d: icebergMatchWords %b, want %b (header % x)", c, n, fp, got, want, buf[:1+c])
				}
				if n == 64 {
					continue // a count byte holds at most 63
				}
				// The batch match reads the count from the header (its
				// spill bits set or not) and the fingerprint from a hash.
				buf[0] = byte(n) | byte(rng.IntN(4))<<6
				shift := rng.Uint64N(57)
				var offs icebergHomes
				var xs, cands, wants [icebergKeys]uint64
				for j := range xs {
					xs[j] = (rng.Uint64()&^0xff | uint64(fp)) << shift
				}
				// none: the keys with no candidate, all of them or none.
				wantNone := uint64(0)
				if want == 0 {
					wantNone = 1<<icebergKeys - 1
				}
				for j := range wants {
					wants[j] = want
				}
				so, st := 8+c*8, uint64(8+rng.IntN(49))
				none := icebergMatchBatch(unsafe.Pointer(&buf[0]), &offs, &xs, &cands, icebergKeys, shift, lowMask(64-uint(shift)), c, so, st, st-8)
				if cands != wants || none != wantNone {
					t.Fatalf("c %d n %d fp %d: icebergMatchBatch %b, none %b, want %b each, none %b", c, n, fp, cands, none, want, wantNone)
				}
				none = icebergMatchBatchWords(unsafe.Pointer(&buf[0]), &offs, &xs, &cands, icebergKeys, shift, lowMask(64-uint(shift)), c, so, st, st-8)
				if cands != wants || none != wantNone {
					t.Fatalf("c %d n %d fp %d: icebergMatchBatchWords %b, none %b, want %b each, none %b", c, n, fp, cands, none, want, wantNone)
				}
			}
		}
	}
}

// TestIcebergFingerprintCollisions fills one front bucket, and the back
// yard behind it, with keys whose remainders share their fingerprint byte
// (and keys one bit apart in the rest of it), and reads them back beside
// absent keys of the same bucket and fingerprint, before and after growth.
func TestIcebergFingerprintCollisions(t *testing.T) {
	tb := NewIceberg[uint64, uint16](Options{})
	defer tb.Close()
	f := &tb.front
	x0 := uint64(0x9e3779b97f4a7c15)
	home := mulHi(x0, f.m)
	var in, out []uint64
	for k := uint64(1); len(in) < 2*int(f.c) || len(out) < 20; k++ {
		x := x0 ^ k<<8 // the same low byte: the same fingerprint
		if mulHi(x, f.m) != home {
			continue
		}
		if k%3 == 0 {
			out = append(out, compactKey[uint64](x, 0))
		} else {
			in = append(in, compactKey[uint64](x, 0))
		}
	}
	check := func(when string) {
		t.Helper()
		for i, k := range in {
			if v, ok := tb.Get(k); !ok || v != uint16(i) {
				t.Fatalf("%s: Get(%#x) = %d, %v; want %d, true", when, k, v, ok, i)
			}
		}
		for _, k := range out {
			if v, ok := tb.Get(k); ok {
				t.Fatalf("%s: Get(%#x) = %d, true for an absent key", when, k, v)
			}
		}
		// GetMany: the keys of the full bucket, found in it or in the back
		// yard (a batch later), and the absent ones, in batches of 16 and a
		// part one.
		keys := append(append([]uint64(nil), in...), out...)
		vals, found := make([]uint16, len(keys)), make([]bool, len(keys))
		if n := tb.GetMany(keys, vals, found); n != len(in) {
			t.Fatalf("%s: GetMany found %d of %d keys", when, n, len(in))
		}
		for i := range keys {
			if found[i] != (i < len(in)) || i < len(in) && vals[i] != uint16(i) {
				t.Fatalf("%s: GetMany key %d (%#x): %d, %v", when, i, keys[i], vals[i], found[i])
			}
		}
		if err := tb.CheckInvariants(); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
	}
	for i, k := range in {
		if !tb.Insert(k, uint16(i)) {
			t.Fatalf("Insert(%#x) reported a duplicate", k)
		}
	}
	if b := tb.Buckets(); b.BackPairs == 0 || icebergCount(f.bucket(home)) != f.c {
		t.Fatalf("the bucket did not fill: %+v", b)
	}
	check("one bucket full")
	m := f.m
	rng := rand.New(rand.NewPCG(3, 4))
	for tb.front.m == m {
		tb.Insert(rng.Uint64(), 7)
	}
	check("grown")
}

// TestIcebergGetManyTypes compares GetMany with Get for every fixed key
// width (1 and 2 bytes: buckets without fingerprints; 16: the extra hash
// word in the slot) and a 16-byte value, hits and misses mixed, in tables
// with full front buckets and a back yard, over key slices that end
// inside a batch; every value read is the one inserted. UInt32 and
// UInt64/UInt8 have slots of one word (findWord, appendWord).
func TestIcebergGetManyTypes(t *testing.T) {
	testIcebergGetMany[uint64, uint8](t, "UInt64/UInt8", func(i uint64) uint64 { return i * 0x9e3779b97f4a7c15 }, 20000)
	testIcebergGetMany[uint8, uint16](t, "UInt8", func(i uint64) uint8 { return uint8(i) }, 200)
	testIcebergGetMany[uint16, uint16](t, "UInt16", func(i uint64) uint16 { return uint16(i * 7) }, 5000)
	testIcebergGetMany[uint32, uint16](t, "UInt32", func(i uint64) uint32 { return uint32(i * 0x9e3779b9) }, 20000)
	testIcebergGetMany[uint64, U128](t, "UInt64/U128", func(i uint64) uint64 { return i * 0x9e3779b97f4a7c15 }, 20000)
	testIcebergGetMany[U128, uint8](t, "U128", func(i uint64) U128 { return U128{i * 0x9e3779b97f4a7c15, i >> 3} }, 20000)
}

func testIcebergGetMany[K, V Bits](t *testing.T, name string, key func(uint64) K, n uint64) {
	tb := NewIceberg[K, V](Options{})
	defer tb.Close()
	for i := uint64(0); i < n; i += 2 {
		tb.Insert(key(i), FromUint64[V](i, ^i))
	}
	if b := tb.Buckets(); b.BackPairs == 0 && sizeOf[K]() >= 4 {
		t.Fatalf("%s: no pair in the back yard: %+v", name, b)
	}
	if (sizeOf[K]() == 4 || name == "UInt64/UInt8") && !tb.front.word {
		t.Fatalf("%s: the front yard's slots are not of one word", name)
	}
	if err := tb.CheckInvariants(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, m := range []uint64{n, n - 3, 5} {
		keys := make([]K, 0, m)
		for i := range m {
			keys = append(keys, key(i))
		}
		vals, found := make([]V, m), make([]bool, m)
		got := tb.GetMany(keys, vals, found)
		hits := 0
		for i, k := range keys {
			v, ok := tb.Get(k)
			if ok != found[i] || v != vals[i] {
				t.Fatalf("%s: GetMany gave key #%d %v, %v; Get gives %v, %v", name, i, vals[i], found[i], v, ok)
			}
			if want := FromUint64[V](uint64(i), ^uint64(i)); ok && v != want {
				t.Fatalf("%s: key #%d reads %v, was inserted with %v", name, i, v, want)
			}
			hits += b2i(ok)
		}
		if got != hits || hits == 0 || hits == len(keys) {
			t.Fatalf("%s: GetMany returned %d, Get found %d of %d", name, got, hits, len(keys))
		}
	}
}

// TestIcebergOverflow loads keys chosen to collide (one front bucket, and
// back buckets full beyond what a kick frees) among random ones: the pairs
// neither yard takes go to the overflow table, which every figure of Stats
// counts with the yards' (its bytes_allocated, elements and buckets
// added, the parts still summing to the whole), and Close releases its
// slab with the yards'.
func TestIcebergOverflow(t *testing.T) {
	settledSlabBytes()
	before := SlabBytes()
	m := NewIceberg[uint64, uint16](Options{})
	rng := rand.New(rand.NewPCG(5, 5))
	var keys []uint64
	for range 3000 {
		keys = append(keys, rng.Uint64())
	}
	// After the random ones: a growth would re-place the colliding ones.
	keys = append(keys, collidingKeys[uint64](1000, rng.Uint64())...)
	oracle := map[uint64]uint16{}
	for i, k := range keys {
		if _, had := oracle[k]; !had {
			oracle[k] = uint16(i)
		}
		m.Insert(k, uint16(i))
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	b := m.Buckets()
	if m.ovf == nil || b.OverflowPairs == 0 || m.Len() != len(oracle) {
		t.Fatalf("%d pairs (%d in the overflow table), want %d with some in the overflow table: %+v", m.Len(), b.OverflowPairs, len(oracle), b)
	}
	for k, v := range oracle {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get(%#x) = %v, %v; want %v", k, got, ok, v)
		}
	}
	st, ovf := m.Stats(), m.ovf.Stats()
	yards := int64(len(m.front.slab)+len(m.back.slab)) + int64(unsafe.Sizeof(*m))
	if st.BytesAllocated != yards+ovf.BytesAllocated || st.ElementCount != int64(len(oracle)) ||
		st.BucketCount != int64(b.FrontBuckets)*int64(b.FrontSlots)+int64(b.BackBuckets)*int64(b.BackSlots)+ovf.BucketCount ||
		st.LoadFactor != float64(st.ElementCount)/float64(st.BucketCount) || st.check() != nil {
		t.Errorf("stats %+v (%v); want the yards' %d bytes and the overflow table's %+v added", st, st.check(), yards, ovf)
	}
	m.Close()
	if got := SlabBytes() - before; got != 0 {
		t.Errorf("after Close %d bytes are still held in slabs (%d pairs were in the overflow table)", got, b.OverflowPairs)
	}
}

// TestIcebergGrowthMakesRoom checks the growth rule for every key and value
// width: a full table grows to front buckets whose max fill is above its
// own, also where a bucket loses a line (<UInt64,UInt16> at 2^17 buckets:
// four lines of 31 slots, then three of 24), where the next size of the
// sequence holds fewer pairs and a growth into it would send the excess
// to the overflow table. The replay core.Predict reads takes the same
// steps.
func TestIcebergGrowthMakesRoom(t *testing.T) {
	skipped := 0
	for _, kb := range []int{1, 2, 4, 8, 16} {
		for _, vb := range []int{1, 2, 4, 8, 16} {
			mlf := DefaultIcebergMaxLoadFactor
			for m := uint64(icebergInitialBuckets); m < 1<<32; {
				fill := icebergShapeOf(kb, vb, m, mlf).maxFill
				next := icebergGrowTo(kb, vb, m, mlf)
				if got := icebergShapeOf(kb, vb, next, mlf).maxFill; got <= fill {
					t.Fatalf("key %d value %d bytes: %d front buckets (max fill %d) grow to %d (max fill %d)", kb, vb, m, fill, next, got)
				}
				if next != icebergNextBuckets(m) {
					skipped++
				}
				if final, prev := icebergBucketsFor(kb, vb, icebergInitialBuckets, fill+1, mlf); final != next || prev != m {
					t.Fatalf("key %d value %d bytes: the replay after %d pairs ends at %d from %d, the table at %d from %d", kb, vb, fill+1, final, prev, next, m)
				}
				m = next
			}
		}
	}
	if skipped == 0 {
		t.Fatal("no growth skipped a size: the rule was not exercised")
	}
}

// TestIcebergSpillGeometry checks where the spill bits are for every key
// and value width over the growth sequence: the bits a front bucket's
// slots leave free (at most icebergSpillMax), between the fingerprints and
// slot 0, in the header's line, as many as move no more slots across a
// line boundary, or, where that is two or fewer, the count byte's top
// two; and that the remainders pick every one of them. The
// <UInt64,UInt16> shapes that spillAt's comment names are checked by name.
func TestIcebergSpillGeometry(t *testing.T) {
	for _, kb := range []int{1, 2, 4, 8, 16} {
		for _, vb := range []int{1, 2, 4, 8, 16} {
			for m := uint64(icebergInitialBuckets); m < 1<<32; m = icebergGrowTo(kb, vb, m, DefaultIcebergMaxLoadFactor) {
				f := icebergShapeOf(kb, vb, m, DefaultIcebergMaxLoadFactor).front
				free := 8*uint64(f.bb) - 8 - f.c*uint64(f.sb)
				where := fmt.Sprintf("key %d value %d bytes, %d front buckets of %d slots of %d bits, %d bits free", kb, vb, m, f.c, f.sb, free)
				if end := uint64(f.so) + f.c*uint64(f.st); end > 8*uint64(f.bb) {
					t.Fatalf("%s: the slots end at bit %d of a bucket of %d", where, end, 8*f.bb)
				}
				header := 8 + uint(f.c)*f.fb
				most, straddle := min(free, icebergSpillMax), icebergStraddles(header, f.st, f.c)
				// fk: the spill bits from sbase (the free bits); the count
				// byte's two beside them where fewer than icebergSpillCountBelow.
				fk := f.sk - f.sc
				if f.sbase == 6 && (f.sk != 2 || f.sc != 0 || f.so != header) || f.sbase != 6 && (f.sbase != header || fk < 3 || fk > most || f.so != header+uint(fk) || f.so > 512 || (f.sc == 2) != (fk < icebergSpillCountBelow) || f.sc != 0 && f.sc != 2) {
					t.Fatalf("%s: %d spill bits (%d of the count byte's) from bit %d, slot 0 at bit %d", where, f.sk, f.sc, f.sbase, f.so)
				}
				if got := icebergStraddles(f.so, f.st, f.c); got > straddle {
					t.Fatalf("%s: %d spill bits move %d slots across a line boundary, %d before", where, f.sk, got, straddle)
				}
				for sk := max(fk+1, 3); sk <= most; sk++ { // none more (the count byte's: none of 3 or more)
					if icebergStraddles(header+uint(sk), f.st, f.c) <= straddle {
						t.Fatalf("%s: %d spill bits, where %d would move no slot across a line boundary", where, f.sk, sk)
					}
				}
				picked := uint64(0)
				for rem := range uint64(4096) {
					picked |= 1 << f.spillPick(rem&f.lmask)
				}
				if f.l >= 12 && picked != lowMask(uint(f.sk)) {
					t.Fatalf("%s: remainders pick spill bits %b of %d", where, picked, f.sk)
				}
				for _, s := range []struct{ m, sk uint64 }{{4096, 2}, {455767, 37}, {576831, 5}, {4806134, 13}} {
					if kb == 8 && vb == 2 && m == s.m && f.sk != s.sk {
						t.Fatalf("%s: %d spill bits, want %d", where, f.sk, s.sk)
					}
				}
			}
		}
	}
}

// TestIcebergSpillBits fills tables to their max fill (reserved, so no
// growth) with both kinds of spill bits, reads every key with Get and
// GetMany, and counts the absent keys whose Get reads the back yard: with
// 25 spill bits a front bucket, far fewer than with the count byte's two
// (about one in four at the max fill). A spill bit cleared by hand loses its
// back-yard key, and CheckInvariants says so.
func TestIcebergSpillBits(t *testing.T) {
	for _, tc := range []struct {
		reserve uint64
		spill   uint64 // spill bits a front bucket
		absent  float64
	}{{120000, 2, 0.30}, {1000000, 25, 0.08}} {
		tb := NewIceberg[uint64, uint16](Options{Reserve: int64(tc.reserve)})
		f := &tb.front
		if f.sk != tc.spill {
			t.Fatalf("reserved for %d: %d spill bits a front bucket, want %d", tc.reserve, f.sk, tc.spill)
		}
		rng := rand.New(rand.NewPCG(tc.reserve, 5))
		var keys []uint64
		for m := f.m; tb.Len() < int(tb.maxFill); {
			k := rng.Uint64() | 1
			if tb.Insert(k, uint16(k)) {
				keys = append(keys, k)
			}
			if f.m != m {
				t.Fatalf("reserved for %d: grew at %d pairs", tc.reserve, tb.Len())
			}
		}
		if err := tb.CheckInvariants(); err != nil {
			t.Fatalf("reserved for %d: %v", tc.reserve, err)
		}
		vals, found := make([]uint16, len(keys)), make([]bool, len(keys))
		if n := tb.GetMany(keys, vals, found); n != len(keys) {
			t.Fatalf("reserved for %d: GetMany found %d of %d keys", tc.reserve, n, len(keys))
		}
		spilled := 0
		for i := range f.m {
			spilled += b2i(getBits(f.bucket(i), f.sbase, uint(f.sk)) != 0)
		}
		// An absent key reads the back yard when its front bucket's spill
		// bit for it is set (Get's test, after no slot matched).
		back := 0
		for _, k := range keys {
			if _, ok := tb.Get(k &^ 1); ok {
				t.Fatalf("reserved for %d: absent key %#x found", tc.reserve, k&^1)
			}
			x := compactHashWord(k &^ 1)
			back += b2i(f.spilled(f.bucket(mulHi(x, f.m)), f.rem(x)))
		}
		share, buckets := float64(back)/float64(len(keys)), float64(spilled)/float64(f.m)
		t.Logf("reserved for %d: %d spill bits, %.1f %% of front buckets with one set, %.1f %% of absent keys read the back yard", tc.reserve, f.sk, 100*buckets, 100*share)
		if share > tc.absent || buckets < 0.2 {
			t.Fatalf("reserved for %d: %.1f %% of absent keys read the back yard (want at most %.0f %%), %.1f %% of front buckets spilled", tc.reserve, 100*share, 100*tc.absent, 100*buckets)
		}
		// A back-yard key whose spill bit is cleared is lost.
		for k, v := range tb.yardPairs(&tb.back) {
			x := compactHashWord(k)
			p, rem := f.bucket(mulHi(x, f.m)), f.rem(x)
			i := f.spillAt(rem)
			*(*byte)(unsafe.Add(p, i>>3)) &^= 1 << (i & 7)
			if got, ok := tb.Get(k); ok {
				t.Fatalf("reserved for %d: back-yard key %#x found (%d) with its spill bit cleared", tc.reserve, k, got)
			}
			if err := tb.CheckInvariants(); err == nil {
				t.Fatalf("reserved for %d: CheckInvariants passes a cleared spill bit", tc.reserve)
			}
			f.spill(p, rem)
			if got, ok := tb.Get(k); !ok || got != v {
				t.Fatalf("reserved for %d: Get(%#x) = %d, %v; want %d", tc.reserve, k, got, ok, v)
			}
			break
		}
		tb.Close()
	}
}

// TestIcebergGetWord checks a single Get's front-yard lookup
// (icebergGetWord: assembly on amd64) against icebergGetWordGo for every key of tables
// filled to their max fill and as many absent keys: one-word yards whose
// spill bits are the free bits and ones whose spill bits are the count
// byte's top two (which the count's mask must leave out), and a yard that
// is not one word.
func TestIcebergGetWord(t *testing.T) {
	checkIcebergGetWord[uint64, uint16](t, 1000000, true, "free")
	checkIcebergGetWord[uint32, uint16](t, 0, true, "count")
	checkIcebergGetWord[uint32, uint8](t, 0, true, "free")
	checkIcebergGetWord[uint32, uint16](t, 0, true, "both")
	checkIcebergGetWord[uint64, uint16](t, 0, false, "count")
}

// TestIcebergGetZeroRemainder checks the keys whose remainder is 0 in a
// table of one-word slots: the one kind of key whose fingerprint and bits
// past it an empty slot's zeros match. icebergGetWord does not read a
// bucket's count (its mask keeps all c fingerprints), so it hands them to
// getHashed (icebergSlots), which does; without that, an absent one would
// be found in any bucket that is not full, with the value 0.
func TestIcebergGetZeroRemainder(t *testing.T) {
	tb := NewIceberg[uint64, uint16](Options{Reserve: 1000000})
	defer tb.Close()
	f := &tb.front
	if !f.word || f.kw != 64 {
		t.Fatalf("%d front buckets: not a yard of one-word slots of 64-bit keys", f.m)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for tb.Len() < 500000 {
		tb.Insert(rng.Uint64(), uint16(rng.Uint64()))
	}
	notFull, seen := 0, map[uint64]bool{}
	for len(seen) < 2000 {
		x := rng.Uint64() &^ f.lmask // remainder 0: one x a front bucket at most
		if seen[x] {
			continue
		}
		seen[x] = true
		key := compactKey[uint64](x, 0)
		if compactHashWord(key) != x || f.rem(x) != 0 {
			t.Fatalf("key %#x: hash %#x, not %#x with remainder 0", key, compactHashWord(key), x)
		}
		if icebergCount(f.bucket(mulHi(x, f.m))) < f.c {
			notFull++
		}
		for _, get := range []func(*icebergYard, uint64) (uint64, uint64){icebergGetWord, icebergGetWordGo} {
			if w, r := get(f, x); r != icebergSlots || w != 0 {
				t.Fatalf("key %#x (remainder 0): %#x, %d, want icebergSlots (%d)", key, w, r, icebergSlots)
			}
		}
		if v, ok := tb.Get(key); ok {
			t.Fatalf("absent key %#x (remainder 0) found, value %d", key, v)
		}
		if !tb.Insert(key, 7) {
			t.Fatalf("key %#x (remainder 0) not inserted", key)
		}
		if v, ok := tb.Get(key); !ok || v != 7 {
			t.Fatalf("key %#x (remainder 0): Get = %d, %v, want 7, true", key, v, ok)
		}
	}
	if notFull < 1000 {
		t.Fatalf("only %d of 2000 keys' buckets had a free slot", notFull)
	}
}

// icebergSpillKind is where a front yard's spill bits are: the free bits
// ("free"), the count byte's two ("count"), or both.
func icebergSpillKind(f *icebergYard) string {
	switch {
	case f.sbase == 6:
		return "count"
	case f.sc != 0:
		return "both"
	}
	return "free"
}

// checkIcebergGetWord fills a table reserved for reserve pairs (0: for the
// first size whose yard has the word and count-byte spill geometry asked)
// to its max fill with random keys, and compares icebergGetWord with
// icebergGetWordGo on them and on as many absent keys.
func checkIcebergGetWord[K, V Bits](t *testing.T, reserve uint64, word bool, spills string) {
	kb, vb := int(sizeOf[K]()), int(sizeOf[V]())
	if reserve == 0 {
		for m := uint64(icebergInitialBuckets); m < 1<<24; m = icebergGrowTo(kb, vb, m, DefaultIcebergMaxLoadFactor) {
			sh := icebergShapeOf(kb, vb, m, DefaultIcebergMaxLoadFactor)
			if sh.front.word == word && icebergSpillKind(&sh.front) == spills && sh.maxFill > 20000 {
				reserve = sh.maxFill
				break
			}
		}
	}
	tb := NewIceberg[K, V](Options{Reserve: int64(reserve)})
	defer tb.Close()
	f := &tb.front
	where := fmt.Sprintf("<%d,%d bytes> reserved for %d: %d front buckets, word %v, %d spill bits from bit %d", kb, vb, reserve, f.m, f.word, f.sk, f.sbase)
	if f.word != word || icebergSpillKind(f) != spills {
		t.Fatalf("%s: not the geometry asked (word %v, spill bits %s)", where, word, spills)
	}
	rng := rand.New(rand.NewPCG(reserve, 9))
	var keys []K
	for m := f.m; tb.Len() < int(tb.maxFill); {
		k := FromUint64[K](rng.Uint64()|1, 0)
		if tb.Insert(k, FromUint64[V](rng.Uint64(), 0)) {
			keys = append(keys, k)
		}
		if f.m != m {
			t.Fatalf("%s: grew at %d pairs", where, tb.Len())
		}
	}
	low := func(k K) uint64 { lo, _ := ToUint64(k); return lo }
	seen := [4]int{}
	for _, k := range keys {
		for _, k := range []K{k, FromUint64[K](low(k)&^1, 0)} {
			x := compactHashWord(k)
			w, r := icebergGetWord(f, x)
			ww, wr := icebergGetWordGo(f, x)
			if w != ww || r != wr {
				t.Fatalf("%s: key %#x: icebergGetWord %#x, %d; icebergGetWordGo %#x, %d", where, k, w, r, ww, wr)
			}
			seen[r]++
			if got, ok := tb.Get(k); ok != (low(k)&1 == 1) {
				t.Fatalf("%s: Get(%#x) = %v, %v", where, k, got, ok)
			}
		}
	}
	t.Logf("%s: %d pairs, lookups by result (miss, hit, back, slots): %v", where, len(keys), seen)
	if word && spills != "free" {
		// A full bucket with its spill bits set, whose bytes past its
		// fingerprints (slot 0's first bits) equal the key's fingerprint
		// and whose slots are zero: only the yard's mask of its c
		// fingerprints (cmask) keeps the match from taking them for
		// candidates, and a zero remainder past the fingerprint from
		// matching their zero bits.
		buf := make([]byte, f.bb+icebergPad)
		buf[0] = byte(f.c) | icebergSpill
		for s := range f.c {
			buf[1+s] = 0xaa
		}
		for i := 1 + f.c; i < 64; i++ {
			buf[i] = 0xbb
		}
		y := *f
		y.base, y.m = unsafe.Pointer(&buf[0]), 1
		for j := range uint(y.sk) { // every spill bit set, the count byte's and the others
			orBits(y.base, y.spillBit(j), 1, 1)
		}
		x := uint64(0xbb) << (64 - y.kw)
		if w, r := icebergGetWord(&y, x); r != icebergBack || w != 0 {
			t.Fatalf("%s: a full bucket's bytes past its fingerprints matched: %#x, %d", where, w, r)
		}
	}
	if word && (seen[icebergHit] == 0 || seen[icebergBack] == 0 || seen[icebergMiss] == 0) || !word && seen[icebergSlots] == 0 {
		t.Fatalf("%s: lookups by result %v: a path not taken", where, seen)
	}
}

// TestIcebergNewWords checks the tables New gives the pairs whose front
// yard has one-word slots (their Get not generic, see icebergWords): each
// is its own type, not *Iceberg, and, reserved for a yard of one-word
// slots, agrees with the builtin map on every key it holds and as many
// absent ones, through core.Map.
func TestIcebergNewWords(t *testing.T) {
	checkIcebergNewWords[uint64, uint8](t)
	checkIcebergNewWords[uint64, uint16](t)
	checkIcebergNewWords[uint32, uint8](t)
	checkIcebergNewWords[uint32, uint16](t)
	checkIcebergNewWords[uint32, uint32](t)
}

func checkIcebergNewWords[K, V Bits](t *testing.T) {
	m, err := New[K, V](LayoutIceberg, Options{Reserve: 1000000})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	where := fmt.Sprintf("<%d,%d bytes>", sizeOf[K](), sizeOf[V]())
	if _, ok := m.(*Iceberg[K, V]); ok {
		t.Fatalf("%s: New gave the generic *Iceberg", where)
	}
	tb := m.(interface{ iceberg() *Iceberg[K, V] }).iceberg()
	if !tb.front.word {
		t.Fatalf("%s: %d front buckets: not a yard of one-word slots", where, tb.front.m)
	}
	rng := rand.New(rand.NewPCG(uint64(sizeOf[K]()), uint64(sizeOf[V]())))
	oracle := map[K]V{}
	for len(oracle) < 50000 {
		k, v := FromUint64[K](rng.Uint64(), 0), FromUint64[V](rng.Uint64(), 0)
		if _, had := oracle[k]; !had {
			oracle[k] = v
		}
		m.Insert(k, v)
	}
	for k, want := range oracle {
		if got, ok := m.Get(k); !ok || got != want {
			t.Fatalf("%s: Get(%v) = %v, %v; want %v, true", where, k, got, ok, want)
		}
		absent := FromUint64[K](rng.Uint64(), 0)
		if _, in := oracle[absent]; !in {
			if got, ok := m.Get(absent); ok {
				t.Fatalf("%s: Get(%v) of an absent key = %v, true", where, absent, got)
			}
		}
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
}
