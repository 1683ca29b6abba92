package core_test

import (
	"context"
	"fmt"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
)

// A table of one layout: first value wins, as in a ClickHouse dictionary,
// and its memory is exactly what Stats says (packed cells are 10 bytes, no
// padding; 1000 keys at max load factor 0.5 take 4096 cells: ClickHouse's
// grower goes x4 while small).
func ExampleNew() {
	m, err := core.New[uint64, uint16](core.LayoutPacked, core.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close() // the slab goes back to the OS at once
	for k := range uint64(1000) {
		m.Insert(k*k, uint16(k))
	}
	fmt.Println(m.Insert(4, 99)) // 4 = 2*2 is there: not stored again
	v, ok := m.Get(49)
	fmt.Println(v, ok)
	s := m.Stats()
	fmt.Println(s.ElementCount, s.BucketCount, s.PayloadBytes, s.PaddingBytes)
	// Output:
	// false
	// 7 true
	// 1000 4096 10000 0
}

// compact stores of each key only what its slot does not say: for random
// UInt64 keys with UInt16 values, about 10 bytes a pair against the 10 a
// pair takes written out and the information limit below it.
func ExampleNew_compact() {
	m, err := core.New[uint64, uint16](core.LayoutCompact, core.Options{})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	x := uint64(1)
	for i := range 1_000_000 {
		x = x*6364136223846793005 + 1442695040888963407 // a 64-bit LCG: distinct keys
		m.Insert(x, uint16(i))
	}
	s := m.Stats()
	limit := core.InformationLimitBytes(core.MustType("UInt64"), core.MustType("UInt16"), s.ElementCount)
	fmt.Printf("%d pairs, %.2f bytes a pair, information limit %.2f\n", s.ElementCount, float64(s.BytesAllocated)/float64(s.ElementCount), limit)
	// Output: 1000000 pairs, 10.73 bytes a pair, information limit 7.69
}

// SHARDS(4): one producer splits the source's blocks by shard, one worker
// goroutine owns each table.
func ExampleLoad() {
	src, err := source.Open[uint64, uint16](source.Spec{Kind: source.Random, Rows: 100_000, Seed: 1},
		core.MustType("UInt64"), core.MustType("UInt16"))
	if err != nil {
		panic(err)
	}
	defer src.Close()
	m, report, err := core.Load(context.Background(), src, core.LoadConfig{Layout: core.LayoutHashed, Shards: 4})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	fmt.Println(report.Elements, report.Duplicates, len(report.Workers), m.Len())
	// Output: 100000 0 4 100000
}

// Predict works out a load's memory before it is done: 1e9 random
// <UInt64,UInt16> pairs in PackedHashMap (ClickHouse's SPARSE_HASHED for
// these types) at its default max load factor.
func ExamplePredict() {
	p, err := core.Predict(core.LayoutPacked, core.MustType("UInt64"), core.MustType("UInt16"), 1e9, core.Options{}, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%.1f GiB after the load, %.2f bytes a pair\n", float64(p.FinalBytes)/(1<<30), float64(p.FinalBytes)/1e9)
	// Output: 20.0 GiB after the load, 21.47 bytes a pair
}
