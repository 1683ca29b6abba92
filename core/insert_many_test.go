package core

import (
	"math/rand/v2"
	"testing"
)

// TestInsertManyIsInsert: every layout's InsertMany (hashed, packed, sparse
// and compact have their own, pipelined) agrees with Insert pair by pair:
// inserted[i], the count and then every value, with duplicates inside one
// batch and across batches, key 0, and growths in the middle of a batch,
// for an 8-byte and a 16-byte key; and it panics on a closed table.
func TestInsertManyIsInsert(t *testing.T) {
	for _, l := range Layouts() {
		t.Run(string(l), func(t *testing.T) {
			insertManyRun[uint64, uint16](t, l, 1)
			insertManyRun[U128, uint64](t, l, 2)
		})
	}
}

func insertManyRun[K, V Bits](t *testing.T, l Layout, seed uint64) {
	m, err := New[K, V](l, Options{})
	if err != nil {
		t.Fatal(err)
	}
	oracle := map[K]V{}
	rng := rand.New(rand.NewPCG(seed, 3))
	for round := range 40 {
		n := 1 + rng.IntN(3000)
		keys, vals := make([]K, n), make([]V, n)
		for i := range keys {
			keys[i] = FromUint64[K](rng.Uint64N(60000), rng.Uint64N(2))
			if i > 0 && rng.IntN(8) == 0 {
				keys[i] = keys[rng.IntN(i)] // a duplicate inside the batch
			}
			vals[i] = FromUint64[V](rng.Uint64(), rng.Uint64())
		}
		if round%10 == 3 {
			keys[n/2] = *new(K) // key 0, which most layouts keep apart from the cells
		}
		inserted := make([]bool, n)
		got := InsertMany(m, keys, vals, inserted)
		want := 0
		for i, k := range keys {
			_, had := oracle[k]
			if !had {
				oracle[k] = vals[i]
				want++
			}
			if inserted[i] == had {
				t.Fatalf("round %d: InsertMany's inserted[%d] for key %v is %v, want %v", round, i, k, inserted[i], !had)
			}
		}
		if got != want || m.Len() != len(oracle) {
			t.Fatalf("round %d: InsertMany returned %d (Len %d), want %d (Len %d)", round, got, m.Len(), want, len(oracle))
		}
	}
	if _, ok := oracle[*new(K)]; !ok {
		t.Fatal("the keys never held key 0")
	}
	for k, v := range oracle {
		if got, ok := m.Get(k); !ok || got != v {
			t.Fatalf("Get(%v) = %v, %v; want %v", k, got, ok, v)
		}
	}
	if c, ok := m.(interface{ CheckInvariants() error }); ok {
		if err := c.CheckInvariants(); err != nil {
			t.Fatal(err)
		}
	}
	m.Close()
	if mi, ok := m.(ManyInserter[K, V]); ok {
		wantPanic(t, "InsertMany", "used after Close", func() { mi.InsertMany([]K{*new(K)}, []V{*new(V)}, []bool{false}) })
	}
}
