package core

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
)

// loadSparse inserts random keys into t until it holds n.
func loadSparse(t *Sparse[uint64, uint16], n int, seed uint64) map[uint64]uint16 {
	rng := rand.New(rand.NewPCG(seed, seed))
	keys := map[uint64]uint16{}
	for t.Len() < n {
		k := rng.Uint64() | 1
		if t.Insert(k, uint16(k)) {
			keys[k] = uint16(k)
		}
	}
	return keys
}

// TestSparseIsSmall checks the design's claim that a sparse table at mlf 0.5
// holds <UInt64,UInt16> in under 0.4x the bytes of a hashed one, and that
// its metadata is the 16-byte groups (2.67 bits per bucket), one 4-byte
// owner entry per vector, and the Go-side header.
func TestSparseIsSmall(t *testing.T) {
	h, s := NewHashed[uint64, uint16](Options{}), NewSparse[uint64, uint16](Options{})
	defer h.Close()
	defer s.Close()
	for i := uint64(1); i <= 300_000; i++ {
		h.Insert(i, 1)
		s.Insert(i, 1)
	}
	r := float64(s.Stats().BytesAllocated) / float64(h.Stats().BytesAllocated)
	if r > 0.4 {
		t.Errorf("sparse/hashed bytes_allocated = %.3f, want <= 0.4", r)
	}
}

// TestSparseMemory: random keys cost little more than their cells and
// groups (the ideal: what exact vectors with nothing between them would
// take). A size-class free-list allocator would hold 1.5-1.9x that (see the
// design comment in sparse.go); the dense classes hold a few percent more.
func TestSparseMemory(t *testing.T) {
	cases := []struct {
		n    int
		most float64 // bytes_allocated / ideal
	}{{200_000, 1.10}, {1_000_000, 1.07}}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		s := NewSparse[uint64, uint16](Options{})
		loadSparse(s, c.n, 1)
		st := s.Stats()
		ideal := float64(c.n)*16 + float64(len(s.groupSlab))
		if r := float64(st.BytesAllocated) / ideal; r > c.most {
			t.Errorf("%d keys: bytes_allocated %d is %.3f x the cells and groups (%0.f), want <= %.2f; %+v", c.n, st.BytesAllocated, r, ideal, c.most, st)
		}
		if err := s.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

// TestSparseGrowthPeak: a growth that keeps the page size moves the
// elements through the arena's pool, so the memory held during it is the
// old table plus the new groups and a small reserve, never two tables.
func TestSparseGrowthPeak(t *testing.T) {
	defer func(s uint8) { sparseFixedPageShift = s }(sparseFixedPageShift)
	sparseFixedPageShift = 12
	defer func() { slabAllocHook = nil }()
	base := settledSlabBytes()
	peak := int64(0)
	slabAllocHook = func(b uintptr) error { peak = max(peak, SlabBytes()+int64(b)-base); return nil }
	s := NewSparse[uint64, uint16](Options{})
	defer s.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	growths := 0
	for s.Len() < 140_000 {
		buckets, before := s.buckets(), SlabBytes()-base
		peak = 0
		s.Insert(rng.Uint64()|1, 1)
		if s.buckets() == buckets || buckets < 1<<14 {
			continue
		}
		growths++
		groups := int64(len(s.groupSlab))
		if most := before + groups + before/5; peak > most {
			t.Errorf("growth to %d buckets: %d bytes held at the peak, want <= %d (the table held %d, its new groups are %d)", s.buckets(), peak, most, before, groups)
		}
		if after := SlabBytes() - base; after > before+groups/2+before/5 {
			t.Errorf("growth to %d buckets: %d bytes after, %d before (new groups %d): the old pages were not reused", s.buckets(), after, before, groups)
		}
	}
	if growths != 5 {
		t.Fatalf("saw %d growths from 2^14 buckets, want 5", growths)
	}
	if err := s.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
}

// TestSparseGrowthRefused: every allocation a growth makes after its groups
// (the reserve of pages for the move, shared arena or new one) can be
// refused, and the table stays as it was.
func TestSparseGrowthRefused(t *testing.T) {
	for _, fixed := range []uint8{0, 11} {
		t.Run(fmt.Sprintf("fixed page shift %d", fixed), func(t *testing.T) {
			defer func(s uint8) { sparseFixedPageShift = s }(sparseFixedPageShift)
			sparseFixedPageShift = fixed
			defer func() { slabAllocHook = nil }()
			before := settledSlabBytes()
			s := NewSparse[uint64, uint16](Options{})
			keys := loadSparse(s, 5000, 2)
			refused := 0
			rng := rand.New(rand.NewPCG(4, 4))
			for refused < 3 && s.Len() < 200_000 {
				groups := 0 // let the growth's groups through, refuse what follows
				newGroups := slabBytes(LayoutSparse, (2*s.buckets()+sparseGroupSize-1)/sparseGroupSize, sparseGroupBytes)
				slabAllocHook = func(b uintptr) error {
					if groups++; groups == 1 && b == newGroups {
						return nil
					}
					return syscall.ENOMEM
				}
				held, st := SlabBytes(), s.Stats()
				k := rng.Uint64() | 1
				err := func() (err error) {
					defer func() {
						if r := recover(); r != nil {
							var ok bool
							if err, ok = r.(error); !ok {
								panic(r)
							}
						}
					}()
					if s.Insert(k, uint16(k)) {
						keys[k] = uint16(k)
					}
					return nil
				}()
				slabAllocHook = nil
				if err == nil {
					if groups > 1 {
						t.Fatalf("%d allocations were refused, yet the insert succeeded", groups-1)
					}
					continue
				}
				var se *SlabError
				if !errors.As(err, &se) || se.Layout != LayoutSparse {
					t.Fatalf("insert failed with %v, want a *SlabError of sparse", err)
				}
				if groups == 2 { // the growth had its groups: what it reserved was refused
					refused++
				}
				if got := s.Stats(); got != st || SlabBytes() != held {
					t.Fatalf("a refused growth changed the table: stats %+v -> %+v, slabs %d -> %d", st, got, held, SlabBytes())
				}
				if err := s.CheckInvariants(); err != nil {
					t.Fatal(err)
				}
				for k, v := range keys {
					if got, ok := s.Get(k); !ok || got != v {
						t.Fatalf("after a refused growth Get(%d) = %d, %v; want %d", k, got, ok, v)
					}
				}
				if s.Insert(k, uint16(k)) { // now with memory: the same insert grows
					keys[k] = uint16(k)
				}
			}
			if refused == 0 {
				t.Fatal("no growth asked for more than its groups: nothing was refused")
			}
			if s.Len() != len(keys) {
				t.Fatalf("Len %d, want %d", s.Len(), len(keys))
			}
			s.Close()
			if got := SlabBytes() - before; got != 0 {
				t.Fatalf("%d bytes held after Close", got)
			}
		})
	}
}
