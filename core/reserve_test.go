package core

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestReserveLoadsWithoutGrowth: a table of every layout built with
// Options{Reserve: n} takes n distinct keys without a growth (its bucket
// count and, but for sparse's vectors, its bytes stay what they were when
// it was built), finds every one of them, and still grows, holds its
// invariants and finds them all past the reservation.
func TestReserveLoadsWithoutGrowth(t *testing.T) {
	reserveHolds[uint64, uint16](t)
	reserveHolds[U128, uint8](t)
	reserveHolds[uint16, uint64](t)
}

func reserveHolds[K, V Bits](t *testing.T) {
	for _, l := range Layouts() {
		for _, n := range []int{1, 700, 50_000} {
			m, err := New[K, V](l, Options{Reserve: int64(n)})
			if err != nil {
				t.Fatal(err)
			}
			built := m.Stats()
			rng := rand.New(rand.NewPCG(uint64(n), 9))
			want := map[K]V{}
			add := func(count int) {
				for len(want) < count {
					k, v := FromUint64[K](rng.Uint64(), rng.Uint64()), FromUint64[V](rng.Uint64(), 0)
					if _, dup := want[k]; dup {
						continue
					}
					want[k] = v
					if !m.Insert(k, v) {
						t.Fatalf("%s: reserved for %d, Insert of new key %v refused", l, n, k)
					}
				}
			}
			// A 2-byte key has 65536 values: reserve what exists.
			n = min(n, 1<<(8*sizeOf[K]())-1)
			add(n)
			st := m.Stats()
			// Go's map takes a hint of 8 or less as none: its first insert
			// allocates the one group anyway (internal/runtime/maps.NewMap).
			if l == LayoutGoMap && n <= 8 {
				built = st
			}
			grew := st.BucketCount != built.BucketCount || (l != LayoutSparse && st.BytesAllocated != built.BytesAllocated)
			if l == LayoutGoMap {
				// Go's map sizes its tables by the hint, but a table splits
				// by its keys' hashes under a seed random per map, so one
				// that fills early splits: 65,536 slots became 66,560 once
				// for 50,000 uint16 keys. A split or two, not a growth.
				grew = st.BucketCount > built.BucketCount+built.BucketCount/32
			}
			if grew {
				t.Errorf("%s %T: reserved for %d keys, grew while taking them: built with %d buckets, %d bytes; now %d, %d",
					l, m, n, built.BucketCount, built.BytesAllocated, st.BucketCount, st.BytesAllocated)
			}
			add(min(3*n+300, 1<<(8*sizeOf[K]())-1))
			// Grown from a size the growth rule never makes (compact:
			// n/mlf home slots), the table still holds its invariants.
			if err := m.CheckInvariants(); err != nil {
				t.Fatalf("%s reserved for %d, grown to %d keys: %v", l, n, len(want), err)
			}
			for k, v := range want {
				if got, ok := m.Get(k); !ok || got != v {
					t.Fatalf("%s reserved for %d, %d keys in: Get(%v) = %v, %v; want %v", l, n, len(want), k, got, ok, v)
				}
			}
			m.Close()
		}
	}
}

// TestReserveOne: a reservation smaller than the first table builds the
// first table (hashed_array also maps its first value page, as
// PODArray::reserve does, a page the first insert maps unreserved).
func TestReserveOne(t *testing.T) {
	for _, l := range Layouts() {
		a, _ := New[uint64, uint16](l, Options{})
		b, _ := New[uint64, uint16](l, Options{Reserve: 1})
		if a.Stats().BucketCount != b.Stats().BucketCount || (l != LayoutHashedArray && a.Stats() != b.Stats()) {
			t.Errorf("%s: Reserve 1 built %+v, unreserved %+v", l, b.Stats(), a.Stats())
		}
		a.Close()
		b.Close()
	}
}

// TestReserveOutOfRange: a negative or too large reservation is refused
// with its name, value and range by Validate, New, NewSharded and Predict,
// and one the machine cannot map is a *SlabError from New, not a panic.
func TestReserveOutOfRange(t *testing.T) {
	k, v := MustType("UInt64"), MustType("UInt16")
	for _, r := range []int64{-1, MaxReserve + 1} {
		opt := Options{Reserve: r}
		for what, err := range map[string]error{
			"Validate":   opt.Validate(),
			"New":        func() error { _, err := New[uint64, uint16](LayoutCompact, opt); return err }(),
			"NewSharded": func() error { _, err := NewSharded[uint64, uint16](LayoutPacked, opt, 4); return err }(),
			"Predict":    func() error { _, err := Predict(LayoutHashed, k, v, 10, opt, 1); return err }(),
		} {
			if err == nil || !strings.Contains(err.Error(), "reserve") || !strings.Contains(err.Error(), "allowed: 0 to") {
				t.Errorf("%s with reserve %d: %v; want an error naming reserve and its range", what, r, err)
			}
		}
	}
	if !slabsMapped {
		t.Skip("slabs are Go allocations here: a reservation too large for the machine is the runtime's fatal error")
	}
	for _, l := range Layouts() {
		m, err := New[uint64, uint16](l, Options{Reserve: 1 << 46})
		var se *SlabError
		if !errors.As(err, &se) || se.Layout != l {
			t.Errorf("%s reserved for 2^46 keys: %v, %v; want a *SlabError naming the layout", l, m, err)
		}
	}
}

// TestShardedReserve: a Sharded table reserved for n keys in all gives each
// shard a share with room for what random keys send it, so a load of n
// random keys grows no shard.
func TestShardedReserve(t *testing.T) {
	const n = 200_000
	for _, l := range []Layout{LayoutCompact, LayoutPacked} {
		for _, shards := range []int{1, 3, 16} {
			s, err := NewSharded[uint64, uint16](l, Options{Reserve: n}, shards)
			if err != nil {
				t.Fatal(err)
			}
			built := s.Stats()
			rng := rand.New(rand.NewPCG(1, uint64(shards)))
			for s.Len() < n {
				s.Insert(rng.Uint64(), 1)
			}
			if st := s.Stats(); st.BytesAllocated != built.BytesAllocated {
				t.Errorf("%s SHARDS %d reserved for %d: %d bytes built, %d after the load", l, shards, n, built.BytesAllocated, st.BytesAllocated)
			}
			p, _ := Predict(l, MustType("UInt64"), MustType("UInt16"), n, Options{Reserve: n}, shards)
			if p.FinalBytes != built.BytesAllocated {
				t.Errorf("%s SHARDS %d reserved for %d: predicted %d bytes, the table has %d", l, shards, n, p.FinalBytes, built.BytesAllocated)
			}
			s.Close()
		}
	}
	if got := ShardReserve(1e8, 16); got != 6_250_000+15_000 {
		t.Errorf("ShardReserve(1e8, 16) = %d; want 6,265,000 (the share and 6 sqrt(share))", got)
	}
}
