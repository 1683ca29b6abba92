package core

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

var (
	large     = flag.Bool("large", false, "benchmarks: add the 1e7-row sizes")
	benchRows = flag.Float64("benchrows", 0, "layout benchmarks: also run this many pairs (e.g. 1.32e7, where iceberg's slots leave 3 bits free)")
)

func benchSizes() []int {
	sizes := []int{1e5}
	if *large {
		sizes = append(sizes, 1e7)
	}
	if *benchRows > 0 {
		sizes = append(sizes, int(*benchRows))
	}
	return sizes
}

func benchKeys(n int) []uint64 {
	rng := rand.New(rand.NewPCG(42, 42))
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = rng.Uint64() | 1
	}
	return keys
}

// benchOrder is keys in a scattered order, the same every time: the order
// a read looks them up in.
func benchOrder(keys []uint64) []uint64 {
	order := append([]uint64(nil), keys...)
	rand.New(rand.NewPCG(7, 7)).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// benchValues is a UInt16 value for each key (k * 31).
func benchValues(keys []uint64) []uint16 {
	vals := make([]uint16, len(keys))
	for i, k := range keys {
		vals[i] = uint16(k * 31)
	}
	return vals
}

// readEach looks every key of order up in m once (Get), adding up the
// values found so that no read can be left out.
func readEach(m Map[uint64, uint16], order []uint64) (sum uint64) {
	for _, k := range order {
		v, _ := m.Get(k)
		sum += uint64(v)
	}
	return sum
}

func lenName(n int) string {
	e := 0
	for m := n; m >= 10 && m%10 == 0; m /= 10 {
		e++
	}
	if n == pow10(e) {
		return fmt.Sprintf("1e%d", e)
	}
	return fmt.Sprint(n)
}

func pow10(e int) int {
	r := 1
	for range e {
		r *= 10
	}
	return r
}

// BenchmarkInsert loads len random <UInt64,UInt16> pairs into an empty table,
// with no reservation as a dictionary load does (Reserve=0) and reserved for
// them (Reserve=len), and reports rows/s and the table's bytes per entry.
func BenchmarkInsert(b *testing.B) {
	for _, n := range benchSizes() {
		keys := benchKeys(n)
		for _, l := range Layouts() {
			for _, reserve := range []int{0, n} {
				b.Run(fmt.Sprintf("Layout=%s/Key=UInt64/Value=UInt16/len=%s/Reserve=%s", l, lenName(n), lenName(reserve)), func(b *testing.B) {
					benchInsert(b, l, keys, Options{Reserve: int64(reserve)})
				})
			}
		}
	}
}

func benchInsert(b *testing.B, l Layout, keys []uint64, opt Options) {
	n := len(keys)
	var m Map[uint64, uint16]
	start := time.Now()
	for range b.N {
		m, _ = New[uint64, uint16](l, opt)
		for _, k := range keys {
			m.Insert(k, uint16(k))
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
	b.ReportMetric(m.Stats().BytesPerEntry(), "bytes/entry")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkLookup finds every key of a loaded table once, in a random order;
// Reserve=len reads a table that was reserved for its keys (for compact a
// fuller one: exactly its max load factor).
func BenchmarkLookup(b *testing.B) {
	for _, n := range benchSizes() {
		keys := benchKeys(n)
		order := benchOrder(keys)
		for _, l := range Layouts() {
			for _, reserve := range []int{0, n} {
				b.Run(fmt.Sprintf("Layout=%s/Key=UInt64/Value=UInt16/len=%s/Reserve=%s", l, lenName(n), lenName(reserve)), func(b *testing.B) {
					m, _ := New[uint64, uint16](l, Options{Reserve: int64(reserve)})
					for _, k := range keys {
						m.Insert(k, uint16(k))
					}
					b.ResetTimer()
					var sum uint64
					start := time.Now()
					for range b.N {
						sum += readEach(m, order)
					}
					b.ReportMetric(float64(n)*float64(b.N)/time.Since(start).Seconds(), "rows/s")
					b.ReportMetric(m.Stats().BytesPerEntry(), "bytes/entry")
					b.ReportMetric(0, "ns/op")
					if sum == 0 {
						b.Fatal("lookups found nothing")
					}
				})
			}
		}
	}
}

// BenchmarkMiss reads a table of len random <UInt64,UInt16> pairs with Get,
// every key once in a scattered order, then the same number of absent keys
// (each key with its low bit cleared: the loaded keys are odd), alternately,
// and reports both speeds and the miss time over the hit time.
func BenchmarkMiss(b *testing.B) {
	for _, n := range benchSizes() {
		keys := benchKeys(n)
		order := benchOrder(keys)
		absent := make([]uint64, n)
		for i, k := range order {
			absent[i] = k &^ 1
		}
		for _, l := range Layouts() {
			b.Run(fmt.Sprintf("Layout=%s/Key=UInt64/Value=UInt16/len=%s", l, lenName(n)), func(b *testing.B) {
				m, _ := New[uint64, uint16](l, Options{})
				defer m.Close()
				for _, k := range keys {
					m.Insert(k, uint16(k))
				}
				b.ResetTimer()
				var hit, miss time.Duration
				found := 0
				for range b.N {
					start := time.Now()
					for _, k := range order {
						_, ok := m.Get(k)
						found += b2i(ok)
					}
					hit += time.Since(start)
					start = time.Now()
					for _, k := range absent {
						_, ok := m.Get(k)
						found -= b2i(ok)
					}
					miss += time.Since(start)
				}
				if found != n*b.N {
					b.Fatalf("found %d of %d keys and absent keys", found, n*b.N)
				}
				b.ReportMetric(float64(n*b.N)/hit.Seconds(), "hits/s")
				b.ReportMetric(float64(n*b.N)/miss.Seconds(), "misses/s")
				b.ReportMetric(miss.Seconds()/hit.Seconds(), "miss/hit")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}
