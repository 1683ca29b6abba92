package core

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkIcebergBatch is the side-by-side harness's batch mode for
// iceberg alone, for profiles (-cpuprofile): len random <UInt64,UInt16>
// pairs loaded with InsertMany into an empty table as New gives it (no
// reservation), then
// every key read once in a scattered order with GetMany, 65,536 keys a call.
// It reports the load's and the read's rows/s, their CPU time a row (this
// thread's user and system time: less bent than the wall clock by other
// processes on a shared machine), and the table's bytes a pair.
func BenchmarkIcebergBatch(b *testing.B) {
	for _, n := range benchSizes() {
		keys := benchKeys(n)
		order, vals := benchOrder(keys), benchValues(keys)
		b.Run(fmt.Sprintf("len=%s", lenName(n)), func(b *testing.B) {
			const block = 65536
			ins := make([]bool, block)
			got := make([]uint16, block)
			found := make([]bool, block)
			var load, read, loadCPU, readCPU time.Duration
			var bpe float64
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			for range b.N {
				t, _ := New[uint64, uint16](LayoutIceberg, Options{})
				start, cpu := time.Now(), threadCPU()
				for lo := 0; lo < n; lo += block {
					hi := min(lo+block, n)
					InsertMany(t, keys[lo:hi], vals[lo:hi], ins)
				}
				load += time.Since(start)
				loadCPU += threadCPU() - cpu
				start, cpu = time.Now(), threadCPU()
				hits := 0
				for lo := 0; lo < n; lo += block {
					hi := min(lo+block, n)
					hits += t.GetMany(order[lo:hi], got, found)
				}
				read += time.Since(start)
				readCPU += threadCPU() - cpu
				if hits != n {
					b.Fatalf("GetMany found %d of %d keys", hits, n)
				}
				bpe = t.Stats().BytesPerEntry()
				t.Close()
			}
			b.ReportMetric(float64(n*b.N)/load.Seconds(), "load-rows/s")
			b.ReportMetric(float64(n*b.N)/read.Seconds(), "read-rows/s")
			b.ReportMetric(float64(loadCPU.Nanoseconds())/float64(n*b.N), "load-cpu-ns/row")
			b.ReportMetric(float64(readCPU.Nanoseconds())/float64(n*b.N), "read-cpu-ns/row")
			b.ReportMetric(bpe, "bytes/entry")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkIcebergGet reads a table of len random <UInt64,UInt16> pairs
// (loaded once with InsertMany) with single-key Get through core.Map, every
// key once a round in a scattered order: the table as New gives it (its
// Get not generic), the generic *Iceberg (through the dictionary
// wrapper), and compact's Get of the same keys: rows/s.
func BenchmarkIcebergGet(b *testing.B) {
	for _, n := range benchSizes() {
		keys := benchKeys(n)
		order, vals := benchOrder(keys), benchValues(keys)
		ice := NewIceberg[uint64, uint16](Options{})
		com := NewCompact[uint64, uint16](Options{})
		ice.InsertMany(keys, vals, make([]bool, n))
		com.InsertMany(keys, vals, make([]bool, n))
		for _, v := range []struct {
			name string
			m    Map[uint64, uint16]
		}{{"iceberg", icebergWords(ice)}, {"iceberg-generic", ice}, {"compact", com}} {
			m := v.m
			b.Run(fmt.Sprintf("Layout=%s/len=%s", v.name, lenName(n)), func(b *testing.B) {
				var sum uint64
				start := time.Now()
				for range b.N {
					sum += readEach(m, order)
				}
				b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "rows/s")
				b.ReportMetric(0, "ns/op")
				if sum == 0 {
					b.Fatal("found nothing")
				}
			})
		}
		ice.Close()
		com.Close()
	}
}
