package core

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"unsafe"
)

// Issue 47's untried candidate, measured before building it: a front yard
// split into a header array and a slab of slots (see docs/performance.md,
// iceberg, "What was tried"). Not a layout: BenchmarkIcebergSplit reads it
// beside today's Iceberg, and BenchmarkCacheLatency says how large a
// working set this machine's caches hold.

// splitProbe is the front yard of a split geometry, for measuring only:
// a header array of 32 bytes a bucket (fingerprints at bytes 0..C-1, the
// count at byte 31), and the slots in a separate slab, C of st bits a
// bucket packed bit to bit in sb bytes (byte-aligned, not line-aligned).
// It has no back yard: the pairs a full bucket turns away (3.8 % at 1e7)
// are left out, and a lookup of one ends in a stub (back_), so what it
// measures is the front yard's path, the path of 96 % of hits.
type splitProbe struct {
	hdr, slots   unsafe.Pointer
	hs, ss       []byte
	m, sb        uint64
	c            uint64
	st, kf       uint
	lmask, kmask uint64
	back         int
}

func newSplitProbe(keys []uint64, vals []uint16, m, c uint64) *splitProbe {
	s := &splitProbe{m: m, c: c}
	l := uint(64 - (bits.Len64(m) - 1))
	s.lmask = lowMask(l)
	s.st = l - 8 + 16
	s.kf = l - 8
	s.kmask = lowMask(s.kf)
	s.sb = (c*uint64(s.st) + 7) / 8
	s.hs = mustSlab(LayoutIceberg, uintptr(32*m+16))
	s.ss = mustSlab(LayoutIceberg, uintptr(s.sb*m+16))
	s.hdr, s.slots = unsafe.Pointer(&s.hs[0]), unsafe.Pointer(&s.ss[0])
	for i, k := range keys {
		x := compactHashWord(k)
		home := mulHi(x, m)
		h := unsafe.Add(s.hdr, home*32)
		n := uint64(*(*byte)(unsafe.Add(h, 31)) & 0x3f)
		rem := x & s.lmask
		if n >= c {
			*(*byte)(unsafe.Add(h, 31)) |= 0x40
			s.back++
			continue
		}
		*(*byte)(unsafe.Add(h, n)) = byte(rem)
		orBits(unsafe.Add(s.slots, home*s.sb), uint(n)*s.st, s.st, rem>>8|uint64(vals[i])<<s.kf)
		*(*byte)(unsafe.Add(h, 31)) = byte(n + 1)
	}
	return s
}

var splitZero uint64 // 0, read at run time: a dependent chain of lookups

//go:noinline
func (s *splitProbe) backYard() (uint16, bool) { return 0, false }

func (s *splitProbe) get(key uint64, pf bool) (uint16, bool) {
	x := compactHashWord(key)
	home := mulHi(x, s.m)
	h := unsafe.Add(s.hdr, home*32)
	q := unsafe.Add(s.slots, home*s.sb)
	if pf {
		prefetchLines(q, 4)
	}
	rem := x & s.lmask
	cb := *(*byte)(unsafe.Add(h, 31))
	cand := icebergMatch(unsafe.Add(h, -1), byte(rem), uint64(cb&0x3f), s.c)
	want := rem >> 8
	for ; cand != 0; cand &= cand - 1 {
		off := uint(bits.TrailingZeros64(cand)) * s.st
		w := le64At(unsafe.Add(q, off>>3)) >> (off & 7)
		if w&s.kmask == want {
			return uint16(w >> s.kf), true
		}
	}
	if cb&0x40 != 0 {
		return s.backYard()
	}
	return 0, false
}

// BenchmarkIcebergSplit reads len random <UInt64,UInt16> keys (1e7 with
// -large) with single-key lookups, independent keys (dep-: each key waits
// for the one before), one round of every variant per b.N, alternating,
// and reports each one's median CPU ns a lookup: today's Iceberg Get and
// its header's match alone; the split geometry (31 slots a bucket at
// today's fill; PACKLAB_SPLIT_C for another C) whole, with its slots'
// four lines prefetched as it starts (+pf), its header's match alone, one
// slot load alone, and header then slot with no branch (chain).
//
//	go test ./core -run NONE -bench IcebergSplit -large -benchtime 4x
func BenchmarkIcebergSplit(b *testing.B) {
	c := uint64(31)
	if v := os.Getenv("PACKLAB_SPLIT_C"); v != "" {
		x, _ := strconv.Atoi(v)
		c = uint64(x)
	}
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("len=%s", lenName(n)), func(b *testing.B) { benchIcebergSplit(b, n, c) })
	}
}

func benchIcebergSplit(b *testing.B, n int, c uint64) {
	keys := benchKeys(n)
	order, vals := benchOrder(keys), benchValues(keys)
	ice := NewIceberg[uint64, uint16](Options{})
	defer ice.Close()
	ice.InsertMany(keys, vals, make([]bool, n))
	fill := float64(n) / float64(ice.front.m*ice.front.c)
	m := uint64(math.Ceil(float64(n) / (fill * float64(c))))
	s := newSplitProbe(keys, vals, m, c)
	defer freeSlab(s.hs)
	defer freeSlab(s.ss)
	b.Logf("today: %d front buckets of %d slots (%d bytes), fill %.3f; split: %d buckets of %d slots, header %.1f MB, slots %d B a bucket (%.1f MB), %.2f%% to the back yard",
		ice.front.m, ice.front.c, ice.front.bb, fill, m, c, float64(32*m)/1e6, s.sb, float64(s.sb*m)/1e6, 100*float64(s.back)/float64(n))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	type variant struct {
		name string
		run  func() uint64
	}
	vs := []variant{
		{"today", func() (sum uint64) {
			for _, k := range order {
				v, _ := ice.Get(k)
				sum += uint64(v)
			}
			return
		}},
		{"split", func() (sum uint64) {
			for _, k := range order {
				v, _ := s.get(k, false)
				sum += uint64(v)
			}
			return
		}},
		{"today-hdr", func() (sum uint64) {
			f := &ice.front
			for _, k := range order {
				x := compactHashWord(k)
				p := f.bucket(mulHi(x, f.m))
				sum += icebergMatch(p, byte(f.rem(x)), icebergCount(p), f.c)
			}
			return
		}},
		{"split-hdr", func() (sum uint64) {
			for _, k := range order {
				x := compactHashWord(k)
				h := unsafe.Add(s.hdr, mulHi(x, s.m)*32)
				sum += icebergMatch(unsafe.Add(h, -1), byte(x&s.lmask), uint64(*(*byte)(unsafe.Add(h, 31))&0x3f), s.c)
			}
			return
		}},
		{"split-slot", func() (sum uint64) {
			for _, k := range order {
				x := compactHashWord(k)
				q := unsafe.Add(s.slots, mulHi(x, s.m)*s.sb+(x&127))
				sum += le64At(q)
			}
			return
		}},
		{"split-chain", func() (sum uint64) {
			for _, k := range order {
				x := compactHashWord(k)
				home := mulHi(x, s.m)
				h := unsafe.Add(s.hdr, home*32)
				cand := icebergMatch(unsafe.Add(h, -1), byte(x&s.lmask), uint64(*(*byte)(unsafe.Add(h, 31))&0x3f), s.c)
				off := uint(bits.TrailingZeros64(cand|1<<40)&31) * s.st
				sum += le64At(unsafe.Add(s.slots, home*s.sb+uint64(off>>3)))
			}
			return
		}},
		{"dep-today", func() (sum uint64) {
			var prev uint64
			for _, k := range order {
				v, _ := ice.Get(k ^ prev&splitZero)
				prev = uint64(v)
				sum += prev
			}
			return
		}},
		{"dep-today-hdr", func() (sum uint64) {
			f := &ice.front
			var prev uint64
			for _, k := range order {
				x := compactHashWord(k ^ prev&splitZero)
				p := f.bucket(mulHi(x, f.m))
				prev = icebergMatch(p, byte(f.rem(x)), icebergCount(p), f.c)
				sum += prev
			}
			return
		}},
		{"dep-split-hdr", func() (sum uint64) {
			var prev uint64
			for _, k := range order {
				x := compactHashWord(k ^ prev&splitZero)
				h := unsafe.Add(s.hdr, mulHi(x, s.m)*32)
				prev = icebergMatch(unsafe.Add(h, -1), byte(x&s.lmask), uint64(*(*byte)(unsafe.Add(h, 31))&0x3f), s.c)
				sum += prev
			}
			return
		}},
		{"dep-split", func() (sum uint64) {
			var prev uint64
			for _, k := range order {
				v, _ := s.get(k^prev&splitZero, false)
				prev = uint64(v)
				sum += prev
			}
			return
		}},
		{"split+pf", func() (sum uint64) {
			for _, k := range order {
				v, _ := s.get(k, true)
				sum += uint64(v)
			}
			return
		}},
	}
	res := make([][]float64, len(vs))
	b.ResetTimer()
	for range b.N {
		for i, v := range vs {
			cpu := threadCPU()
			if v.run() == 0 {
				b.Fatal("found nothing")
			}
			res[i] = append(res[i], float64((threadCPU()-cpu).Nanoseconds())/float64(n))
		}
	}
	for i, v := range vs {
		x := append([]float64(nil), res[i]...)
		sort.Float64s(x)
		b.ReportMetric(x[len(x)/2], v.name+"-cpu-ns/get")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkCacheLatency is dependent random loads, one a cache line, over
// slabs of 1 to 128 MB (huge-page slabs, as the tables'): CPU ns a load,
// where the caches end.
//
//	go test ./core -run NONE -bench CacheLatency -benchtime 1x
func BenchmarkCacheLatency(b *testing.B) {
	for _, mb := range []int{1, 4, 8, 12, 16, 24, 32, 64, 128} {
		n := mb << 20 / 64
		s := mustSlab(LayoutIceberg, uintptr(n*64))
		// A random cycle through the lines.
		perm := benchOrder(func() []uint64 {
			k := make([]uint64, n)
			for i := range k {
				k[i] = uint64(i)
			}
			return k
		}())
		for i := range n {
			*(*uint64)(unsafe.Pointer(&s[perm[i]*64])) = perm[(i+1)%n] * 64
		}
		b.Run(fmt.Sprintf("MB=%d", mb), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			const steps = 1 << 20
			cpu := threadCPU()
			o := uint64(0)
			for range b.N * steps {
				o = *(*uint64)(unsafe.Pointer(&s[o]))
			}
			b.ReportMetric(float64((threadCPU()-cpu).Nanoseconds())/float64(b.N*steps), "cpu-ns/load")
			b.ReportMetric(float64(o&0), "ns/op")
		})
		freeSlab(s)
	}
}
