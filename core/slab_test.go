package core

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slabLayouts are the layouts whose memory is slabs (gomap's is the Go
// runtime's): those whose tables hold slab bytes after some inserts.
func slabLayouts() []Layout {
	var ls []Layout
	for _, l := range Layouts() {
		before := SlabBytes()
		m := must(New[uint64, uint16](l, Options{}))
		for k := range uint64(1000) {
			m.Insert(k, 1)
		}
		if SlabBytes() > before {
			ls = append(ls, l)
		}
		m.Close()
	}
	return ls
}

// headerBytes is what a table holds on the Go heap: its header (and for
// hashed_array its index's header), the part of bytes_allocated that is not
// slabs.
func headerBytes(m Map[uint64, uint16]) int64 {
	switch t := m.(type) {
	case *Hashed[uint64, uint16]:
		return int64(unsafeSizeof(*t))
	case *Packed[uint64, uint16]:
		return int64(unsafeSizeof(*t))
	case *HashedArray[uint64, uint16]:
		return int64(unsafeSizeof(*t)) + int64(unsafeSizeof(*t.index))
	case *Sparse[uint64, uint16]:
		return t.goBytes() // the header, the class and slab tables, the page pool
	case *Compact[uint64, uint16]:
		h := int64(unsafeSizeof(*t))
		if t.ovf != nil {
			h += int64(unsafeSizeof(*t.ovf))
		}
		return h
	}
	return -1
}

func wantPanic(t *testing.T, what, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic, want one saying %q", what, want)
			return
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, want) {
			t.Errorf("%s: panic %q, want one saying %q", what, msg, want)
		}
	}()
	f()
}

// TestSlabsAreStats checks, after every insert, that the bytes the process
// holds in slabs are exactly the table's bytes_allocated less its header:
// every growth releases the old slab at once, and nothing else is held.
func TestSlabsAreStats(t *testing.T) {
	settledSlabBytes()
	for _, l := range slabLayouts() {
		if headerBytes(must(New[uint64, uint16](l, Options{}))) < 0 {
			continue // a layout whose slabs the test does not know yet
		}
		t.Run(string(l), func(t *testing.T) {
			before := SlabBytes()
			m := must(New[uint64, uint16](l, Options{}))
			rng := rand.New(rand.NewPCG(3, 3))
			for i := range 50_000 {
				m.Insert(rng.Uint64N(80_000), uint16(i))
				if got, want := SlabBytes()-before, m.Stats().BytesAllocated-headerBytes(m); got != want {
					t.Fatalf("after %d inserts the slabs hold %d bytes, bytes_allocated less the header says %d", i+1, got, want)
				}
			}
			m.Close()
			if got := SlabBytes() - before; got != 0 {
				t.Fatalf("after Close %d bytes are still held in slabs", got)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestClose: Close releases everything, a second Close does nothing, and
// any other use panics with a message saying the table is closed; also in
// a table reserved for 2^20 keys (iceberg's one-word slots, whose Get
// returns a miss without a call).
func TestClose(t *testing.T) {
	settledSlabBytes()
	for _, l := range Layouts() {
		for _, reserve := range []int64{0, 1 << 20} {
			t.Run(fmt.Sprintf("%s/reserve=%d", l, reserve), func(t *testing.T) { testClose(t, l, reserve) })
		}
	}
	s := must(NewSharded[uint64, uint16](LayoutPacked, Options{}, 4))
	s.Insert(1, 1)
	s.Close()
	s.Close()
	wantPanic(t, "Sharded.Get", "packed table used after Close", func() { s.Get(1) })
}

func testClose(t *testing.T, l Layout, reserve int64) {
	before := SlabBytes()
	m := must(New[uint64, uint16](l, Options{Reserve: reserve}))
	for k := range uint64(5000) {
		m.Insert(k, uint16(k))
	}
	m.Close()
	m.Close()
	if l != LayoutGoMap && SlabBytes() != before {
		t.Errorf("Close left %d bytes in slabs", SlabBytes()-before)
	}
	want := "used after Close"
	wantPanic(t, "Get", want, func() { m.Get(7) })
	wantPanic(t, "Get(0)", want, func() { m.Get(0) })
	wantPanic(t, "Has", want, func() { m.Has(123456) })
	wantPanic(t, "Insert", want, func() { m.Insert(99999, 1) })
	wantPanic(t, "Insert(0)", want, func() { m.Insert(0, 1) })
	wantPanic(t, "GetMany", want, func() { m.GetMany([]uint64{1, 2}, make([]uint16, 2), make([]bool, 2)) })
	wantPanic(t, "Len", want, func() { m.Len() })
	wantPanic(t, "Stats", want, func() { m.Stats() })
	wantPanic(t, "All", want, func() {
		for range m.All() {
		}
	})
	if err := m.CheckInvariants(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("CheckInvariants on a closed table = %v, want an error saying closed", err)
	}
}

// TestDroppedTableIsReleased: a table nobody closes is released once it is
// unreachable, when the collector runs.
func TestDroppedTableIsReleased(t *testing.T) {
	before := settledSlabBytes()
	func() {
		m := NewPacked[uint64, uint16](Options{})
		for k := range uint64(100_000) {
			m.Insert(k+1, 1)
		}
		if SlabBytes() == before {
			t.Fatal("the table holds no slab")
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for SlabBytes() != before {
		if time.Now().After(deadline) {
			t.Fatalf("a dropped table still holds %d bytes of slabs after 10 s of collections", SlabBytes()-before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// TestNoSlabTouchedAfterRelease runs tables through growth, lookups, Close
// and a sharded load with every released slab made inaccessible instead of
// unmapped: a table that touched a slab after releasing it would fault, and
// the fault panics (SetPanicOnFault) instead of reading a new mapping that
// happened to reuse the address.
func TestNoSlabTouchedAfterRelease(t *testing.T) {
	if !poisonable {
		t.Skip("slabs are Go memory on this platform")
	}
	slabPoison.Store(true)
	defer func() { slabPoison.Store(false); unpoison() }()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))

	// The mechanism works: a read of a poisoned slab faults.
	b := must(newSlab(LayoutPacked, 4096))
	freeSlab(b)
	wantPanic(t, "reading a released slab", "invalid memory address", func() { sinkByte = b[100] })

	for _, l := range slabLayouts() {
		t.Run(string(l), func(t *testing.T) {
			oracleRun[uint64, uint16](t, l, Options{}, testKeys[uint64](20_000, 11), 11)
			oracleRun[U128, uint8](t, l, Options{MaxLoadFactor: 0.9}, testKeys[U128](5_000, 12), 12)
			src := &genSource{rows: 200_000, random: true}
			m, r, err := Load(context.Background(), src, LoadConfig{Layout: l, Shards: 3})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Verify(r); err != nil {
				t.Fatal(err)
			}
			keys := make([]uint64, 0, 1000)
			for k := range m.All() {
				if keys = append(keys, k); len(keys) == cap(keys) {
					break
				}
			}
			if n := m.GetMany(keys, make([]uint16, len(keys)), make([]bool, len(keys))); n != len(keys) {
				t.Fatalf("GetMany found %d of %d loaded keys", n, len(keys))
			}
			m.Close()
		})
	}
}

// TestSlabFailure: a growth that cannot get its slab panics with a
// *SlabError naming the layout and the size; the table is as it was before
// that insert, and can still be read and closed. Load returns the error.
func TestSlabFailure(t *testing.T) {
	defer func() { slabAllocHook = nil }()
	const limit = 1 << 20
	slabAllocHook = func(bytes uintptr) error {
		if bytes > limit {
			return syscall.ENOMEM
		}
		return nil
	}
	for _, l := range slabLayouts() {
		t.Run(string(l), func(t *testing.T) {
			m := must(New[uint64, uint16](l, Options{}))
			defer m.Close()
			oracle := map[uint64]uint16{}
			var failed *SlabError
			func() {
				defer func() {
					if r := recover(); r != nil {
						var ok bool
						if failed, ok = r.(*SlabError); !ok {
							panic(r)
						}
					}
				}()
				for k := uint64(1); k < 1e7; k++ {
					m.Insert(k*0x9e3779b97f4a7c15, uint16(k))
					oracle[k*0x9e3779b97f4a7c15] = uint16(k)
				}
			}()
			if failed == nil || failed.Layout != l || failed.Bytes <= limit {
				t.Fatalf("got %v, want a *SlabError of layout %s above %d bytes", failed, l, limit)
			}
			msg := failed.Error()
			for _, want := range []string{string(l), fmt.Sprint(failed.Bytes), "cannot allocate memory"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if m.Len() != len(oracle) {
				t.Fatalf("after the failed insert Len = %d, want %d", m.Len(), len(oracle))
			}
			for k, v := range oracle {
				if got, ok := m.Get(k); !ok || got != v {
					t.Fatalf("after the failed insert Get(%d) = %d, %v; want %d", k, got, ok, v)
				}
			}
			if err := m.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			src := &genSource{rows: 1_000_000, random: true}
			before := settledSlabBytes()
			_, _, err := Load(context.Background(), src, LoadConfig{Layout: l, Shards: 2})
			var se *SlabError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), string(l)) {
				t.Fatalf("Load = %v, want an error wrapping a *SlabError of %s", err, l)
			}
			for deadline := time.Now().Add(5 * time.Second); SlabBytes() != before && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if got := SlabBytes() - before; got != 0 {
				t.Errorf("a failed load left %d bytes in slabs", got)
			}
		})
	}
}

// TestGetMany compares GetMany with Get, hits, misses and key 0 mixed, for
// every layout, direct and through Sharded of several shard counts.
func TestGetMany(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	keys := make([]uint64, 3000)
	for i := range keys {
		keys[i] = rng.Uint64N(4000) // about half of them loaded
	}
	keys[17], keys[2500] = 0, 0
	check := func(t *testing.T, name string, m interface {
		Get(uint64) (uint16, bool)
		GetMany([]uint64, []uint16, []bool) int
	}) {
		vals, found := make([]uint16, len(keys)+3), make([]bool, len(keys)+3)
		n := m.GetMany(keys, vals, found)
		hits := 0
		for i, k := range keys {
			v, ok := m.Get(k)
			if ok != found[i] || v != vals[i] {
				t.Fatalf("%s: GetMany gave key %d (#%d) %d, %v; Get gives %d, %v", name, k, i, vals[i], found[i], v, ok)
			}
			hits += b2i(ok)
		}
		if n != hits || hits == 0 || hits == len(keys) {
			t.Fatalf("%s: GetMany returned %d, Get found %d of %d", name, n, hits, len(keys))
		}
	}
	for _, l := range Layouts() {
		for _, shards := range []int{1, 2, 7, 128} {
			s := must(NewSharded[uint64, uint16](l, Options{}, shards))
			for k := uint64(0); k < 4000; k += 2 {
				s.Insert(k, uint16(k*3))
			}
			check(t, fmt.Sprintf("%s/shards=%d", l, shards), s)
			if shards == 1 {
				check(t, fmt.Sprintf("%s/direct", l), s.Shard(0))
			}
			s.Close()
		}
	}
}

func unsafeSizeof[T any](t T) uintptr { return sizeOf[T]() }

var sinkByte byte

// settledSlabBytes is SlabBytes once the tables earlier tests dropped have
// been released: collections until it stops changing.
func settledSlabBytes() int64 {
	last := SlabBytes()
	for range 100 {
		runtime.GC()
		time.Sleep(2 * time.Millisecond)
		if n := SlabBytes(); n == last {
			return n
		} else {
			last = n
		}
	}
	return last
}

// TestGrowthInPlace grows tables whose keys all hash to the last cells of
// the table, so that every chain wraps around the end, and checks after
// every insert that every key is where a lookup finds it: the in-place
// rehash of a growth must carry wrapped chains over (see Hashed.rehash).
func TestGrowthInPlace(t *testing.T) {
	var keys []uint64
	for k := uint64(1); len(keys) < 4000; k++ {
		if hashKey(k)&255 >= 250 && hashKey(k)&1023 >= 1000 {
			keys = append(keys, k)
		}
	}
	for _, l := range []Layout{LayoutHashed, LayoutPacked, LayoutHashedArray} {
		for _, mlf := range []float64{0.5, 0.99} {
			m := must(New[uint64, uint16](l, Options{MaxLoadFactor: mlf}))
			cells := m.Stats().BucketCount
			for i, k := range keys {
				m.Insert(k, uint16(i))
				if c := m.Stats().BucketCount; c != cells {
					cells = c
					if err := m.CheckInvariants(); err != nil {
						t.Fatalf("%s mlf %v after %d inserts, grown to %d cells: %v", l, mlf, i+1, c, err)
					}
				}
			}
			if err := m.CheckInvariants(); err != nil {
				t.Fatal(err)
			}
			for i, k := range keys {
				if v, ok := m.Get(k); !ok || v != uint16(i) {
					t.Fatalf("%s mlf %v: Get(%d) = %d, %v; want %d", l, mlf, k, v, ok, i)
				}
			}
			m.Close()
		}
	}
}
