package core

import (
	"math/rand/v2"
	"testing"
)

// TestHashedArrayGrowsAsClickHouseReserves: packlab's hashed_array ends a
// load at the key index ClickHouse's HASHED_ARRAY ends at, which reserves
// the index for the rows read so far before each block of its FILE source
// (8,192 rows) and never lets its HashMap grow x4 on its own; the plain
// HashMap's x4 rule (HashMapCells) is what a sharded ClickHouse keeps. At
// 1e6 <UInt64,UInt16> keys the table is within 1 % of what ClickHouse
// 26.7's memory tracker gained over its load.
func TestHashedArrayGrowsAsClickHouseReserves(t *testing.T) {
	const block = 8192
	for _, n := range []int64{1, 255, 256, 300, 8192, 8193, 100_000, 524_288, 524_289, 1_000_000, 5_000_000, 3e9} {
		// ClickHouse: HashMap's grower, set(rows so far) before each block.
		g := newGrower(DefaultMaxLoadFactor, hashMapFastDegree)
		for read := min(int64(block), n); ; read = min(read+block, n) {
			g.reserve(uint64(read))
			if g.overflow(uint64(read)) {
				t.Fatalf("n=%d: ClickHouse's reservation for %d rows overflows", n, read)
			}
			if read == n {
				break
			}
		}
		p, err := Predict(LayoutHashedArray, MustType("UInt64"), MustType("UInt16"), n, Options{}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.BucketCount != int64(g.cells()) {
			t.Errorf("n=%d: hashed_array's index has %d cells, ClickHouse's reserved one %d", n, p.BucketCount, g.cells())
		}
	}

	const n = 1_000_000
	m := NewHashedArray[uint64, uint16]()
	defer m.Close()
	rng := rand.New(rand.NewPCG(44, 1))
	for m.Len() < n {
		m.Insert(rng.Uint64(), uint16(rng.Uint64()))
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	st := m.Stats()
	if st.BucketCount != 1<<21 {
		t.Errorf("1e6 keys: index of %d cells, want 2^21 (ClickHouse's reserve(1e6))", st.BucketCount)
	}
	// ClickHouse 26.7 through chDB, LAYOUT(HASHED_ARRAY()), 1e6 random
	// UInt64 keys with UInt16 values from a file: its memory tracker gained
	// 35,751,640 bytes over the load (packlab run --layout ch_hashed_array).
	const clickHouse = 35_751_640
	if r := float64(st.BytesAllocated) / clickHouse; r < 0.99 || r > 1.01 {
		t.Errorf("1e6 keys: %d bytes, %.3fx ClickHouse's %d (want within 1 %%)", st.BytesAllocated, r, clickHouse)
	}
	if p, _ := Predict(LayoutHashedArray, MustType("UInt64"), MustType("UInt16"), n, Options{}, 1); p.FinalBytes != st.BytesAllocated {
		t.Errorf("1e6 keys: predicted %d bytes, the table has %d", p.FinalBytes, st.BytesAllocated)
	}
	if hm, _ := HashMapCells(n, 0); hm != 1<<22 {
		t.Errorf("HashMapCells(1e6) = %d, want 2^22 (x4 from 2^8: 2^20 holds 524,288)", hm)
	}
}
