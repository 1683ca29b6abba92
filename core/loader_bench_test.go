package core

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// By default the loader benchmarks use 1e5 rows, cheap at -benchtime=1x.
// -loadrows N adds N rows (e.g. -loadrows 1e7); -large adds 1e7.
var loadRows = flag.Float64("loadrows", 0, "BenchmarkLoad, BenchmarkBacklog, BenchmarkRead: also run this many rows (e.g. 1e7)")

func loadSizes() []int64 {
	sizes := []int64{1e5}
	if *loadRows > 0 {
		sizes = append(sizes, int64(*loadRows))
	} else if *large {
		sizes = append(sizes, 1e7)
	}
	return sizes
}

// backlogSizes leaves -large out: 12 configurations of 1e7 rows are minutes.
func backlogSizes() []int64 {
	if *loadRows > 0 {
		return []int64{1e5, int64(*loadRows)}
	}
	return []int64{1e5}
}

// sizeName writes 100000 as 1e5, 3000000 as 3e6 and 12345 as 12345.
func sizeName(n int64) string {
	e := 0
	for n >= 10 && n%10 == 0 {
		n /= 10
		e++
	}
	if e > 0 && n < 10 {
		return fmt.Sprintf("%de%d", n, e)
	}
	for ; e > 0; e-- {
		n *= 10
	}
	return fmt.Sprint(n)
}

// randomRows is the benchmarks' source: n rows of distinct random UInt64
// keys and UInt16 values (genSource; core cannot use core/source's
// generators, which import it).
func randomRows(n int64) Source[uint64, uint16] {
	return &genSource{rows: n, random: true}
}

// runLoads loads n rows b.N times and reports rows/s (from the load's own
// wall time), busy% (mean worker busy time / wall) and minbusy% (the least
// busy worker), and the producer's share of the wall time.
func runLoads(b *testing.B, n int64, cfg LoadConfig) {
	var rows, wall, busy, producer float64
	minBusy := math.Inf(1)
	for range b.N {
		_, r, err := Load[uint64, uint16](context.Background(), randomRows(n), cfg)
		if err != nil {
			b.Fatal(err)
		}
		rows += float64(r.Rows)
		wall += r.Seconds
		producer += r.Producer.ReadSeconds + r.Producer.SplitSeconds
		for _, w := range r.Workers {
			busy += w.BusySeconds / float64(len(r.Workers))
			minBusy = min(minBusy, w.BusySeconds/r.Seconds)
		}
	}
	b.ReportMetric(rows/wall, "rows/s")
	b.ReportMetric(100*busy/wall, "busy%")
	b.ReportMetric(100*minBusy, "minbusy%")
	b.ReportMetric(100*producer/wall, "producer%")
}

// BenchmarkLoad loads random UInt64 keys with UInt16 values through the
// parallel loader. The targets (2 cores): packed, 1e7 rows, Shards=2 at
// >= 1.6x the rows/s of Shards=1 with every worker busy >= 85 % of the wall
// time, and Shards=8 at >= 0.9x Shards=2.
func BenchmarkLoad(b *testing.B) {
	for _, l := range Layouts() {
		for _, shards := range []int{1, 2, 8} {
			for _, n := range loadSizes() {
				if n > 1e5 && l != LayoutPacked {
					continue // the large size is for the targets, set on packed
				}
				name := fmt.Sprintf("Layout=%s/Key=UInt64/Value=UInt16/Shards=%d/len=%s", l, shards, sizeName(n))
				b.Run(name, func(b *testing.B) { runLoads(b, n, LoadConfig{Layout: l, Shards: shards}) })
			}
		}
	}
}

// BenchmarkLoadScaling measures the shard targets as ratios from one run:
// each of the b.N rounds loads packed <UInt64,UInt16> with 1, 2 and 8
// shards back to back, so a noisy neighbour on the shared machine hits all
// three alike; the ratios are of the medians over the rounds.
//
//	x2/x1        rows/s of Shards=2 over Shards=1 (target >= 1.6)
//	x8/x2        rows/s of Shards=8 over Shards=2 (target >= 0.9)
//	minbusy2%    the least busy worker of Shards=2, % of wall (target >= 85)
//	cpus(N)      CPU seconds the process got per wall second during the
//	             Shards=N loads (from /proc/self/stat; 2 is the whole machine)
//	bare-x2/x1   the machine's own ceiling: the same keys, split by ShardOf
//	             beforehand, inserted by 1 goroutine into 1 table and by 2
//	             goroutines into 2 tables, with no loader at all
//
// Source=random makes every insert a cache (and TLB) miss into tables of
// hundreds of MB; Source=range:65536 repeats 65,536 keys, so the tables stay
// in cache and the figures show the loader's own cost and scaling.
func BenchmarkLoadScaling(b *testing.B) {
	for _, source := range []struct {
		name string
		span uint64 // genSource's: 0 for distinct keys
	}{{"random", 0}, {"range:65536", 65536}} {
		for _, n := range loadSizes() {
			b.Run(fmt.Sprintf("Layout=packed/Key=UInt64/Value=UInt16/Source=%s/len=%s", source.name, sizeName(n)), func(b *testing.B) {
				open := func() Source[uint64, uint16] {
					return &genSource{rows: n, random: true, span: source.span}
				}
				split := splitRows(b, open(), 2)
				shardCounts := []int{1, 2, 8}
				speed := make([][]float64, len(shardCounts))
				cpus := make([][]float64, len(shardCounts))
				var minBusy2, bare1, bare2 []float64
				for range b.N {
					for i, shards := range shardCounts {
						warmPages(n)
						cpu0 := processCPUSeconds()
						_, r, err := Load[uint64, uint16](context.Background(), open(), LoadConfig{Layout: LayoutPacked, Shards: shards})
						if err != nil {
							b.Fatal(err)
						}
						cpus[i] = append(cpus[i], (processCPUSeconds()-cpu0)/r.Seconds)
						speed[i] = append(speed[i], float64(r.Rows)/r.Seconds)
						if shards == 2 {
							least := math.Inf(1)
							for _, w := range r.Workers {
								least = min(least, w.BusySeconds/r.Seconds)
							}
							minBusy2 = append(minBusy2, 100*least)
						}
					}
					warmPages(n)
					bare1 = append(bare1, bareInserts(split[0]))
					warmPages(n)
					bare2 = append(bare2, bareInserts(split[1]))
				}
				b.ReportMetric(median(speed[0]), "rows/s(1)")
				b.ReportMetric(median(speed[1]), "rows/s(2)")
				b.ReportMetric(median(speed[2]), "rows/s(8)")
				b.ReportMetric(median(speed[1])/median(speed[0]), "x2/x1")
				b.ReportMetric(median(speed[2])/median(speed[1]), "x8/x2")
				b.ReportMetric(median(minBusy2), "minbusy2%")
				b.ReportMetric(median(bare2)/median(bare1), "bare-x2/x1")
				if processCPUSeconds() > 0 {
					for i, shards := range shardCounts {
						b.ReportMetric(median(cpus[i]), fmt.Sprintf("cpus(%d)", shards))
					}
				}
			})
		}
	}
}

// processCPUSeconds is the user+system CPU time of this process, from
// /proc/self/stat (Linux; 0 elsewhere), in ticks of 10 ms.
func processCPUSeconds() float64 {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses: state is
	// field 3, utime 14, stime 15.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

// splitRows reads src into memory: element 0 is every row as one part,
// elements 1.. the rows split into parts by ShardOf(key, parts).
func splitRows(b *testing.B, src Source[uint64, uint16], parts int) [][]Block[uint64, uint16] {
	all := Block[uint64, uint16]{}
	by := make([]Block[uint64, uint16], parts)
	var blk Block[uint64, uint16]
	for {
		err := src.Next(&blk, DefaultBlockRows)
		for i, k := range blk.Keys {
			all.Append(k, blk.Values[i])
			s := ShardOf(k, parts)
			by[s].Append(k, blk.Values[i])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	return [][]Block[uint64, uint16]{{all}, by}
}

// bareInserts inserts each block into its own packed table on its own
// goroutine, with no loader, and returns rows/s.
func bareInserts(blocks []Block[uint64, uint16]) float64 {
	rows := 0
	for _, p := range blocks {
		rows += p.Len()
	}
	tables := make([]*Packed[uint64, uint16], len(blocks))
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range blocks {
		wg.Go(func() {
			t := NewPacked[uint64, uint16](Options{})
			inserted := make([]bool, insertChunk)
			for lo := 0; lo < p.Len(); lo += insertChunk {
				hi := min(lo+insertChunk, p.Len())
				t.InsertMany(p.Keys[lo:hi], p.Values[lo:hi], inserted[:hi-lo])
			}
			tables[i] = t
		})
	}
	wg.Wait()
	speed := float64(rows) / time.Since(start).Seconds()
	for _, t := range tables {
		t.Close()
	}
	return speed
}

// warmPages touches and frees a slab for a load of rows rows (48 bytes a
// row covers packed's last slab) just before the load is timed. The lab
// machines are KVM guests with free page reporting: about 2 s after memory
// is freed the guest hands it back to the host, and the next touch of each
// page costs a host fault. A 1e7-row packed load on one shard that starts
// after a pause took 1.5-2.5x the time of one that follows another at once
// (5.2-9.5 against 14.8 M rows/s), more than any difference between shard
// counts. The slab is the tables' own kind (huge pages where they get
// them): warming with the Go heap instead freed scattered 4 KiB pages, and
// the next table's huge pages then waited on the kernel's compaction (5.9
// M rows/s). Warmed, each load starts alike, as on a machine without the
// reporting.
func warmPages(rows int64) {
	b := mustSlab(LayoutPacked, uintptr(48*rows))
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	freeSlab(b)
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkBacklog measures the per-shard queue capacity, which picks
// DefaultBacklog. Each of the b.N rounds loads with every backlog in turn,
// so a noisy neighbour hits them alike; the metrics are medians over the
// rounds: rows/s(B=x) and the least busy worker minbusy%(B=x).
func BenchmarkBacklog(b *testing.B) {
	backlogs := []int{1, 2, 4, 8, 16, 64}
	for _, shards := range []int{2, 8} {
		for _, n := range backlogSizes() {
			name := fmt.Sprintf("Layout=packed/Key=UInt64/Value=UInt16/Shards=%d/len=%s", shards, sizeName(n))
			b.Run(name, func(b *testing.B) {
				speed := make([][]float64, len(backlogs))
				busy := make([][]float64, len(backlogs))
				for range b.N {
					for i, backlog := range backlogs {
						_, r, err := Load[uint64, uint16](context.Background(), randomRows(n), LoadConfig{Layout: LayoutPacked, Shards: shards, Backlog: backlog})
						if err != nil {
							b.Fatal(err)
						}
						least := math.Inf(1)
						for _, w := range r.Workers {
							least = min(least, w.BusySeconds/r.Seconds)
						}
						speed[i] = append(speed[i], float64(r.Rows)/r.Seconds)
						busy[i] = append(busy[i], 100*least)
					}
				}
				for i, backlog := range backlogs {
					b.ReportMetric(median(speed[i]), fmt.Sprintf("rows/s(B=%d)", backlog))
					b.ReportMetric(median(busy[i]), fmt.Sprintf("minbusy%%(B=%d)", backlog))
				}
			})
		}
	}
}

// BenchmarkRead looks every loaded key up once in a random order (the read
// phase); the load is not timed.
func BenchmarkRead(b *testing.B) {
	for _, l := range []Layout{LayoutPacked, LayoutHashed, LayoutSparse, LayoutGoMap} {
		for _, shards := range []int{1, 8} {
			for _, n := range loadSizes() {
				if n > 1e5 && l != LayoutPacked {
					continue
				}
				name := fmt.Sprintf("Layout=%s/Key=UInt64/Value=UInt16/Shards=%d/len=%s", l, shards, sizeName(n))
				b.Run(name, func(b *testing.B) {
					src := randomRows(n)
					m, _, err := Load[uint64, uint16](context.Background(), src, LoadConfig{Layout: l, Shards: shards})
					if err != nil {
						b.Fatal(err)
					}
					var lookups, secs float64
					b.ResetTimer()
					for i := range b.N {
						r, err := Read(context.Background(), m, src, ReadOptions{Seed: uint64(i), MissRate: 0.1})
						if err != nil {
							b.Fatal(err)
						}
						lookups += float64(r.Lookups)
						secs += r.Seconds
					}
					b.ReportMetric(lookups/secs, "rows/s")
				})
			}
		}
	}
}

// BenchmarkSplit is the producer's per-row cost of dealing a block of
// random keys into per-shard sub-blocks (with the row checks), on one
// goroutine; a second goroutine returns the sent sub-blocks to the free list.
func BenchmarkSplit(b *testing.B) {
	for _, shards := range []int{2, 7, 8, 64} {
		b.Run(fmt.Sprintf("Key=UInt64/Value=UInt16/Shards=%d", shards), func(b *testing.B) {
			m, _ := NewSharded[uint64, uint16](LayoutPacked, Options{}, shards)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			cfg, _ := LoadConfig{Layout: LayoutPacked, Shards: shards}.normalize()
			l := newLoader(m, randomRows(1), cfg, ctx, cancel)
			var blk Block[uint64, uint16]
			randomRows(DefaultBlockRows).Next(&blk, DefaultBlockRows)
			for s := range shards {
				go func() {
					for {
						select {
						case sub := <-l.queues[s]:
							l.put(s, sub)
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			d := l.newDealer()
			b.ResetTimer()
			for range b.N {
				if !d.deal(&blk) {
					b.Fatal("deal stopped")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(blk.Len()), "ns/row")
		})
	}
}
