package core

import (
	"math/rand/v2"
	"testing"
)

// TestRows: packed and compact keep a row of Options.ValueBytes bytes (a
// dictionary's attributes side by side) in a wider V: every pair reads
// back, through growths, the overflow table and the sharded map; the
// cells are the row's bytes and no more, as Predict computes for a value
// type of the row's size; and a row for another layout, or wider than V,
// is refused. 300,000 pairs a table; 30,000 with -short (the race stage,
// where single-threaded inserts run eight times slower).
func TestRows(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 30_000
	}
	for _, c := range []struct {
		layout Layout
		vs     int
		shards int
	}{{LayoutPacked, 14, 1}, {LayoutCompact, 14, 1}, {LayoutPacked, 9, 4}, {LayoutCompact, 12, 2}, {LayoutPacked, 3, 1}, {LayoutCompact, 6, 1}} {
		opt := Options{ValueBytes: c.vs, MaxLoadFactor: 0.9}
		m, err := NewSharded[uint64, U128](c.layout, opt, c.shards)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, uint64(c.vs)))
		want := map[uint64]U128{}
		row := func() U128 {
			lo, hi := rng.Uint64(), rng.Uint64()
			if c.vs < 8 {
				return U128{lo & (1<<(8*c.vs) - 1), 0}
			}
			return U128{lo, hi & (1<<(8*(c.vs-8)) - 1)}
		}
		for len(want) < n {
			k, v := rng.Uint64()>>uint(rng.IntN(40)), row() // clustered keys reach compact's overflow
			if _, ok := want[k]; !ok {
				want[k] = v
				if !m.Insert(k, v) {
					t.Fatalf("%s row %d: Insert(%d) of a new key refused", c.layout, c.vs, k)
				}
			}
		}
		for k, v := range want {
			if got, ok := m.Get(k); !ok || got != v {
				t.Fatalf("%s row %d: Get(%d) = %v, %v; want %v", c.layout, c.vs, k, got, ok, v)
			}
		}
		n := 0
		for k, v := range m.All() {
			if want[k] != v {
				t.Fatalf("%s row %d: All gives %d -> %v, want %v", c.layout, c.vs, k, v, want[k])
			}
			n++
		}
		if err := m.CheckInvariants(); err != nil || n != len(want) {
			t.Fatalf("%s row %d: %d pairs, invariants: %v", c.layout, c.vs, n, err)
		}
		m.Close()
	}
	// A table of exactly the rows' bytes: what Predict computes for a
	// value of the row's size, here 8 + 14 bytes a packed cell.
	row14 := Type{Name: "row", Size: 14, Align: 1}
	for _, l := range []Layout{LayoutPacked, LayoutCompact} {
		m, err := New[uint64, U128](l, Options{ValueBytes: 14})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for m.Len() < 100_000 {
			m.Insert(rng.Uint64()|1, U128{1, 1})
		}
		p, err := Predict(l, MustType("UInt64"), row14, 100_000, Options{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if st := m.Stats(); st.BytesAllocated != p.FinalBytes || (l == LayoutPacked && st.PayloadBytes != 100_000*22) {
			t.Errorf("%s row 14: %d bytes (payload %d), Predict %d: want equal, 22 bytes a packed pair", l, st.BytesAllocated, st.PayloadBytes, p.FinalBytes)
		}
		m.Close()
	}
	if _, err := New[uint64, uint32](LayoutPacked, Options{ValueBytes: 6}); err == nil {
		t.Error("a row of 6 bytes in a 4-byte value: built, want refused")
	}
	if _, err := New[uint64, U128](LayoutHashed, Options{ValueBytes: 14}); err == nil {
		t.Error("a row in hashed: built, want refused (rows are packed's and compact's)")
	}
}
