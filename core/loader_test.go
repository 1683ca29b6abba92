package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sliceSource is a real source over rows held in memory: what a file source
// yields, without the parsing. With unknown set, Rows is -1 and it is not
// an IndexedSource (see plainSource).
type sliceSource[K, V Bits] struct {
	keys []K
	vals []V
	pos  int
}

func newSliceSource[K, V Bits](keys []K, vals []V) *sliceSource[K, V] {
	return &sliceSource[K, V]{keys: keys, vals: vals}
}

func (s *sliceSource[K, V]) Next(b *Block[K, V], max int) error {
	b.Reset()
	if s.pos >= len(s.keys) {
		return io.EOF
	}
	end := min(s.pos+max, len(s.keys))
	b.Keys = append(b.Keys, s.keys[s.pos:end]...)
	b.Values = append(b.Values, s.vals[s.pos:end]...)
	s.pos = end
	return nil
}
func (s *sliceSource[K, V]) Rows() int64        { return int64(len(s.keys)) }
func (s *sliceSource[K, V]) Skipped() int64     { return 0 }
func (s *sliceSource[K, V]) Close() error       { return nil }
func (s *sliceSource[K, V]) Row(i int64) (K, V) { return s.keys[i], s.vals[i] }

// plainSource hides Row and the row count, as a file source would.
type plainSource[K, V Bits] struct{ inner Source[K, V] }

func (p plainSource[K, V]) Next(b *Block[K, V], max int) error { return p.inner.Next(b, max) }
func (p plainSource[K, V]) Rows() int64                        { return -1 }
func (p plainSource[K, V]) Skipped() int64                     { return p.inner.Skipped() }
func (p plainSource[K, V]) Close() error                       { return p.inner.Close() }

// genSource computes row i on demand: key(i) and value = low bits of i. With
// random set the keys are intHash64(i), a bijection, so they are distinct
// and uniform; otherwise they are i (sequential, key 0 included). With span
// set the keys are those modulo span: span keys, each repeated (as
// core/source's range:M).
type genSource struct {
	rows   int64
	random bool
	span   uint64
	pos    int64
}

func (g *genSource) key(i int64) uint64 {
	k := uint64(i)
	if g.random {
		k = intHash64(k + 0x51ed)
	}
	if g.span > 0 {
		k %= g.span
	}
	return k
}
func (g *genSource) Next(b *Block[uint64, uint16], max int) error {
	b.Reset()
	if g.pos >= g.rows {
		return io.EOF
	}
	n := int(min(int64(max), g.rows-g.pos))
	for i := g.pos; i < g.pos+int64(n); i++ {
		b.Append(g.key(i), uint16(i))
	}
	g.pos += int64(n)
	return nil
}
func (g *genSource) Rows() int64    { return g.rows }
func (g *genSource) Skipped() int64 { return 0 }
func (g *genSource) Close() error   { return nil }
func (g *genSource) Row(i int64) (uint64, uint16) {
	return g.key(i), uint16(i)
}

// failingSource passes its inner source's blocks through and fails, or
// panics, on block number failAt.
type failingSource[K, V Bits] struct {
	Source[K, V]
	failAt, block int
	err           error
	panics        bool
}

func (f *failingSource[K, V]) Next(b *Block[K, V], max int) error {
	if f.block++; f.block-1 == f.failAt {
		if f.panics {
			panic("source exploded")
		}
		return f.err
	}
	return f.Source.Next(b, max)
}

// loadSeq loads the keys 0..n-1 (genSource, not random) into a packed map
// of the given shards.
func loadSeq(t *testing.T, n, shards int) (*Sharded[uint64, uint16], LoadReport, error) {
	t.Helper()
	return Load[uint64, uint16](context.Background(), &genSource{rows: int64(n)}, LoadConfig{Layout: LayoutPacked, Shards: shards})
}

// noLeaks fails the test if goroutines started during it are still running
// after a grace period of 2 s, as goleak does.
func noLeaks(t *testing.T, before int) { t.Helper(); noLeaksWithin(t, before, 2*time.Second) }

func noLeaksWithin(t *testing.T, before int, grace time.Duration) {
	t.Helper()
	deadline := time.Now().Add(grace)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines before, %d now:\n%s", before, runtime.NumGoroutine(), buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// setHook installs a load hook for the duration of a test.
func setHook(t *testing.T, h func(shard, rows int)) {
	loadHook = h
	t.Cleanup(func() { loadHook = nil })
}

// firstWins is the oracle: the builtin map where each key keeps its first value.
func firstWins[K, V Bits](keys []K, vals []V) map[K]V {
	m := make(map[K]V, len(keys))
	for i, k := range keys {
		if _, ok := m[k]; !ok {
			m[k] = vals[i]
		}
	}
	return m
}

// checkAgainstOracle compares a loaded map and its report with the oracle.
func checkAgainstOracle[K, V Bits](t *testing.T, m *Sharded[K, V], r LoadReport, oracle map[K]V, rows int) {
	t.Helper()
	if m.Len() != len(oracle) {
		t.Fatalf("Len() = %d, want %d", m.Len(), len(oracle))
	}
	var sum uint64
	for k, want := range oracle {
		sum += PairChecksum(k, want)
		if got, ok := m.Get(k); !ok || got != want {
			t.Fatalf("Get(%v) = %v, %v; want %v, true (the first value loaded)", k, got, ok, want)
		}
	}
	seen := 0
	for k, v := range m.All() {
		if want, ok := oracle[k]; !ok || want != v {
			t.Fatalf("All() yielded (%v, %v), the oracle has (%v, %v)", k, v, want, ok)
		}
		seen++
	}
	if seen != len(oracle) {
		t.Fatalf("All() yielded %d pairs, want %d", seen, len(oracle))
	}
	dups := int64(rows - len(oracle))
	if r.Rows != int64(rows) || r.Elements != int64(len(oracle)) || r.Duplicates != dups || r.Checksum != sum {
		t.Fatalf("report rows %d, elements %d, duplicates %d, checksum %#x; want %d, %d, %d, %#x",
			r.Rows, r.Elements, r.Duplicates, r.Checksum, rows, len(oracle), dups, sum)
	}
	if err := m.Verify(r); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatal(err)
	}
	if got := m.Stats().ElementCount; got != int64(len(oracle)) {
		t.Fatalf("stats element_count %d, want %d", got, len(oracle))
	}
	if len(r.Workers) != m.Shards() {
		t.Fatalf("%d worker reports for %d shards", len(r.Workers), m.Shards())
	}
	var wr, we int64
	for s, w := range r.Workers {
		if w.Shard != s || w.Rows != w.Elements+w.Duplicates || w.Elements != int64(m.Shard(s).Len()) {
			t.Fatalf("worker %d report %+v, its table holds %d", s, w, m.Shard(s).Len())
		}
		if w.BusySeconds < 0 || w.WaitSeconds < 0 || (w.Rows > 0 && (w.BusySeconds == 0 || w.RowsPerSecond <= 0)) {
			t.Fatalf("worker %d times: %+v", s, w)
		}
		wr += w.Rows
		we += w.Elements
	}
	if wr != r.Rows || we != r.Elements {
		t.Fatalf("workers sum to %d rows, %d elements; report says %d, %d", wr, we, r.Rows, r.Elements)
	}
}

func loadOracle[K, V Bits](t *testing.T, layout Layout, opt Options, shards, blockRows int, keys []K, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	vals := make([]V, len(keys))
	for i := range vals {
		vals[i] = FromUint64[V](rng.Uint64(), rng.Uint64())
	}
	m, r, err := Load[K, V](context.Background(), newSliceSource(keys, vals),
		LoadConfig{Layout: layout, Options: opt, Shards: shards, BlockRows: blockRows})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstOracle(t, m, r, firstWins(keys, vals), len(keys))
}

// TestLoadAgainstBuiltinMap loads every layout into 1, 2, 7 and 16 shards
// and compares with the builtin map, for keys with repeats, 0 and the
// maximum value.
func TestLoadAgainstBuiltinMap(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 4000
	}
	for _, l := range Layouts() {
		for _, shards := range []int{1, 2, 7, 16} {
			t.Run(fmt.Sprintf("%s/shards=%d", l, shards), func(t *testing.T) {
				t.Run("Key=UInt64/Value=UInt16", func(t *testing.T) {
					loadOracle[uint64, uint16](t, l, Options{}, shards, 1000, testKeys[uint64](n, 1), 1)
				})
				t.Run("Key=UUID/Value=UInt8", func(t *testing.T) {
					loadOracle[U128, uint8](t, l, Options{MaxLoadFactor: 0.9}, shards, 777, testKeys[U128](n, 2), 2)
				})
				t.Run("Key=UInt8/Value=Float64", func(t *testing.T) {
					loadOracle[uint8, uint64](t, l, Options{}, shards, 64, testKeys[uint8](n/4, 3), 3)
				})
				t.Run("Key=UInt32/Value=Int128/default-blocks", func(t *testing.T) {
					loadOracle[uint32, U128](t, l, Options{}, shards, 0, testKeys[uint32](n, 4), 4)
				})
			})
		}
	}
}

// TestLoadShardSelect: dividing and masking give every row the shard
// ShardOf gives it (checkAgainstOracle checks each key's shard through
// CheckInvariants), at power-of-two shard counts and, dividing, at others;
// masking refuses a count that is not a power of two.
func TestLoadShardSelect(t *testing.T) {
	keys := testKeys[uint64](5000, 9)
	vals := make([]uint16, len(keys))
	for _, c := range []struct {
		sel    ShardSelect
		shards int
	}{{ShardSelectModulo, 8}, {ShardSelectModulo, 6}, {ShardSelectMask, 8}, {ShardSelectMask, 1}, {ShardSelectAuto, 6}, {"", 16}} {
		m, r, err := Load[uint64, uint16](context.Background(), newSliceSource(keys, vals),
			LoadConfig{Layout: LayoutPacked, Shards: c.shards, BlockRows: 512, ShardSelect: c.sel})
		if err != nil {
			t.Fatalf("%q shards %d: %v", c.sel, c.shards, err)
		}
		checkAgainstOracle(t, m, r, firstWins(keys, vals), len(keys))
	}
}

func TestLoadEmptySource(t *testing.T) {
	for _, shards := range []int{1, 3} {
		m, r, err := Load[uint64, uint16](context.Background(), newSliceSource[uint64, uint16](nil, nil), LoadConfig{Layout: LayoutHashed, Shards: shards})
		if err != nil || m.Len() != 0 || r.Rows != 0 || r.Elements != 0 || len(r.Workers) != shards {
			t.Fatalf("shards=%d: empty source gave %v, %+v, %v", shards, m, r, err)
		}
	}
}

// TestLoadRaceNoRowLost runs many shards with one-block queues, tiny blocks
// and random delays in the producer and the workers (run it with -race):
// every row must arrive once, proven by the element count and the checksum
// against the builtin map.
func TestLoadRaceNoRowLost(t *testing.T) {
	n := 30000
	if testing.Short() {
		n = 8000
	}
	setHook(t, func(shard, rows int) {
		switch r := rand.IntN(100); {
		case r < 2:
			time.Sleep(time.Duration(rand.IntN(200)) * time.Microsecond)
		case r < 30:
			runtime.Gosched()
		}
	})
	keys := testKeys[uint64](n, 7)
	for _, c := range []struct {
		shards, blockRows int
		layout            Layout
	}{{32, 7, LayoutPacked}, {128, 5, LayoutHashed}, {5, 3, LayoutSparse}, {1, 2, LayoutGoMap}} {
		t.Run(fmt.Sprintf("%s/shards=%d/block=%d", c.layout, c.shards, c.blockRows), func(t *testing.T) {
			before := runtime.NumGoroutine()
			vals := make([]uint16, len(keys))
			for i := range vals {
				vals[i] = uint16(i * 7)
			}
			m, r, err := Load[uint64, uint16](context.Background(), newSliceSource(keys, vals),
				LoadConfig{Layout: c.layout, Shards: c.shards, BlockRows: c.blockRows, Backlog: 1})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstOracle(t, m, r, firstWins(keys, vals), len(keys))
			noLeaks(t, before)
		})
	}
}

// TestLoadCancel cancels a load of 10^8 rows midway: Load must return within
// 100 ms with the context's error and a nil map, and leave no goroutine.
func TestLoadCancel(t *testing.T) {
	for _, shards := range []int{1, 2, 16} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var cancelled atomic.Int64 // UnixNano of the cancel
			src := &genSource{rows: 1e8, random: true}
			var rowsAtCancel int64
			cancelAt := int64(1_000_000)
			if testing.Short() {
				cancelAt = 200_000
			}
			cfg := LoadConfig{Layout: LayoutPacked, Shards: shards, ProgressEvery: 5 * time.Millisecond,
				Progress: func(p LoadProgress) {
					if p.Rows > cancelAt && cancelled.Load() == 0 {
						rowsAtCancel = p.Rows
						cancelled.Store(time.Now().UnixNano())
						cancel()
					}
				}}
			m, _, err := Load[uint64, uint16](ctx, src, cfg)
			took := time.Duration(time.Now().UnixNano() - cancelled.Load())
			if cancelled.Load() == 0 {
				t.Fatalf("the load ended (%v) before it could be cancelled", err)
			}
			if m != nil || !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled load returned map %v, error %v; want nil, context.Canceled", m, err)
			}
			// Promptly: workers look every 1024 rows, the producer every
			// block (a few ms); the bound leaves room for a busy machine
			// and -race, and is still a thousandth of the load.
			if took > cancelBound {
				t.Errorf("Load returned %v after the cancel (at %d of 1e8 rows), want <= %v", took, rowsAtCancel, cancelBound)
			}
			t.Logf("cancelled at %d rows; Load returned %v later: %v", rowsAtCancel, took, err)
			noLeaks(t, before)
		})
	}
}

// TestLoadCancelDeep cancels a load of 10^8 random rows deep into it, in
// the middle of a table growth that moves tens of millions of cells (seen
// as a stall of the row count just after a growth threshold), and checks
// that Load still returns within 100 ms; the stuck worker exits once its
// growth is done. It needs -loadrows 1e8 (a minute, a few GB of memory).
func TestLoadCancelDeep(t *testing.T) {
	if *loadRows < 1e8 {
		t.Skip("needs -loadrows 1e8")
	}
	for _, c := range []struct {
		shards int
		grows  int64 // total rows at which the tables grow (cells*0.5 per shard)
	}{{1, 1 << 24}, {1, 1 << 25}, {4, 1 << 25}} {
		t.Run(fmt.Sprintf("shards=%d/growth-at=%d", c.shards, c.grows), func(t *testing.T) {
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var at time.Time
			var rows, last int64
			stalled := 0
			src := &genSource{rows: int64(*loadRows), random: true}
			m, _, err := Load[uint64, uint16](ctx, src, LoadConfig{Layout: LayoutPacked, Shards: c.shards, ProgressEvery: time.Millisecond,
				Progress: func(p LoadProgress) {
					if p.Rows == last && p.Rows > c.grows*99/100 {
						stalled++
					} else {
						stalled = 0
					}
					last = p.Rows
					if stalled == 20 && at.IsZero() {
						at, rows = time.Now(), p.Rows
						go cancel() // from another goroutine, as a caller would
					}
				}})
			took := time.Since(at)
			if m != nil || !errors.Is(err, context.Canceled) || at.IsZero() {
				t.Fatalf("got %v, %v (cancelled: %v); want a cancelled load", m, err, !at.IsZero())
			}
			if took > cancelBound {
				t.Errorf("Load returned %v after the cancel at %d rows, want <= %v", took, rows, cancelBound)
			}
			// The worker caught in the growth finishes it (seconds at this
			// size on the lab machine), then exits.
			wait := time.Now()
			noLeaksWithin(t, before, time.Minute)
			t.Logf("cancel 20ms into a stall at %d rows: Load returned after %v; the last goroutine exited %v later", rows, took, time.Since(wait))
			runtime.GC()
		})
	}
}

// cancelBound is how soon a cancelled load must return: 10x what it takes
// on a quiet machine (under 100 ms), so that -race on a loaded 2-core
// machine passes, and still far below any load it could be confused with.
const cancelBound = time.Second

// TestLoadCancelStuckWorker: a worker stuck inside one long insert (here a
// hook that sleeps, standing for the growth of a huge table) does not hold
// Load back past stopGrace; it exits by itself once the insert returns.
func TestLoadCancelStuckWorker(t *testing.T) {
	before := runtime.NumGoroutine()
	var once atomic.Bool
	const stuck = 3 * time.Second
	setHook(t, func(shard, rows int) {
		if shard == 1 && once.CompareAndSwap(false, true) {
			time.Sleep(stuck)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	m, _, err := Load[uint64, uint16](ctx, &genSource{rows: 1e8, random: true}, LoadConfig{Layout: LayoutPacked, Shards: 2})
	took := time.Since(start)
	if m != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got map %v, error %v; want nil, context.DeadlineExceeded", m, err)
	}
	if took > stuck/2 {
		t.Errorf("Load returned after %v; the deadline was 30ms and the grace for workers %v, but a worker was stuck for %v: Load waited for it", took, stopGrace, stuck)
	}
	t.Logf("returned after %v", took)
	noLeaksWithin(t, before, stuck+2*time.Second) // the stuck worker exits once its insert returns
}

func TestLoadCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m, _, err := Load[uint64, uint16](ctx, &genSource{rows: 10}, LoadConfig{Layout: LayoutPacked})
	if m != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Load with a cancelled context = %v, %v", m, err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	m, _, err = Load[uint64, uint16](ctx, &genSource{rows: 1e8, random: true}, LoadConfig{Layout: LayoutHashed, Shards: 3})
	if m != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Load past its deadline = %v, %v", m, err)
	}
}

// TestLoadSourceError: an error from the source on block 5 ends the load
// with that error, wrapped with where it happened.
func TestLoadSourceError(t *testing.T) {
	errDisk := errors.New("disk on fire")
	for _, shards := range []int{1, 3, 64} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			before := runtime.NumGoroutine()
			src := &failingSource[uint64, uint16]{Source: &genSource{rows: 1e6, random: true}, failAt: 5, err: errDisk}
			m, _, err := Load[uint64, uint16](context.Background(), src, LoadConfig{Layout: LayoutSparse, Shards: shards, BlockRows: 1000})
			if m != nil || !errors.Is(err, errDisk) {
				t.Fatalf("got map %v, error %v; want nil and %v", m, err, errDisk)
			}
			if want := "block 5 (rows 5000 and on)"; !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			noLeaks(t, before)
		})
	}
}

// loadWithin runs Load and fails the test if it hangs.
func loadWithin[K, V Bits](t *testing.T, src Source[K, V], cfg LoadConfig) (*Sharded[K, V], error) {
	t.Helper()
	type result struct {
		m   *Sharded[K, V]
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, _, err := Load[K, V](context.Background(), src, cfg)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-time.After(20 * time.Second):
		t.Fatal("Load hung")
		return nil, nil
	}
}

// TestLoadPanics: a panic in a worker, in the producer or in the source ends
// the load with an error naming it; no hang, no leak.
func TestLoadPanics(t *testing.T) {
	cases := []struct {
		name   string
		hook   func(shard, rows int)
		src    Source[uint64, uint16]
		shards int
		want   string
	}{
		{"worker", func(shard, rows int) {
			if shard == 2 {
				panic("worker boom")
			}
		}, &genSource{rows: 1e6, random: true}, 4, "the worker of shard 2 panicked: worker boom"},
		{"producer", func(shard, rows int) {
			if shard == -1 {
				panic("producer boom")
			}
		}, &genSource{rows: 1e6, random: true}, 4, "the producer panicked: producer boom"},
		{"source", nil, &failingSource[uint64, uint16]{Source: &genSource{rows: 1e6}, failAt: 3, panics: true}, 1,
			"the producer panicked: source exploded"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			setHook(t, c.hook)
			m, err := loadWithin(t, c.src, LoadConfig{Layout: LayoutPacked, Shards: c.shards, BlockRows: 1000})
			if m != nil || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got map %v, error %v; want nil and an error containing %q", m, err, c.want)
			}
			if !strings.Contains(err.Error(), "loader_test.go:") {
				t.Errorf("error %q does not say where the panic happened", err)
			}
			noLeaks(t, before)
		})
	}
}

// badBlockSource returns more keys than values.
type badBlockSource struct{ genSource }

func (b *badBlockSource) Next(blk *Block[uint64, uint16], max int) error {
	err := b.genSource.Next(blk, max)
	if len(blk.Keys) > 0 {
		blk.Values = blk.Values[:len(blk.Values)-1]
	}
	return err
}

// shortSource announces more rows than it yields.
type shortSource struct{ genSource }

func (s *shortSource) Rows() int64 { return s.rows + 1 }

func TestLoadSourceContract(t *testing.T) {
	_, err := loadWithin[uint64, uint16](t, &badBlockSource{genSource{rows: 100}}, LoadConfig{Layout: LayoutPacked, Shards: 2})
	if err == nil || !strings.Contains(err.Error(), "has 100 keys and 99 values") {
		t.Errorf("a block of 100 keys and 99 values: error %v", err)
	}
	_, err = loadWithin[uint64, uint16](t, &shortSource{genSource{rows: 100}}, LoadConfig{Layout: LayoutPacked})
	if err == nil || !strings.Contains(err.Error(), "announced 101 rows but produced 100") {
		t.Errorf("a source one row short: error %v", err)
	}
	// A source that does not know its count is fine.
	m, r, err := Load[uint64, uint16](context.Background(), plainSource[uint64, uint16]{&genSource{rows: 100}}, LoadConfig{Layout: LayoutPacked, Shards: 2})
	if err != nil || m.Len() != 100 || r.Rows != 100 {
		t.Errorf("a source of unknown length: %v, %+v, %v", m, r, err)
	}
	if _, _, err := Load[uint64, uint16](context.Background(), nil, LoadConfig{Layout: LayoutPacked}); err == nil {
		t.Error("Load accepted a nil source")
	}
}

func TestLoadConfigErrors(t *testing.T) {
	cases := []struct {
		cfg  LoadConfig
		want string
	}{
		{LoadConfig{Layout: LayoutPacked, Shards: 500}, "shards 500 is out of range (allowed: 1 to 128)"},
		{LoadConfig{Layout: LayoutPacked, Shards: -1}, "shards -1 is out of range (allowed: 1 to 128)"},
		{LoadConfig{Layout: LayoutPacked, Shards: 129}, "shards 129 is out of range (allowed: 1 to 128)"},
		{LoadConfig{Layout: LayoutPacked, BlockRows: -5}, "block_rows -5 is out of range (allowed: 1 to 16777216)"},
		{LoadConfig{Layout: LayoutPacked, BlockRows: MaxBlockRows + 1}, "block_rows 16777217 is out of range"},
		{LoadConfig{Layout: LayoutPacked, Backlog: -1}, "backlog -1 is out of range (allowed: 1 to 100000 blocks)"},
		{LoadConfig{Layout: LayoutPacked, ProgressEvery: time.Microsecond}, "progress_every 1µs is out of range (allowed: at least 1ms)"},
		{LoadConfig{Layout: "dense"}, `unknown layout "dense"`},
		{LoadConfig{Layout: LayoutPacked, Shards: 6, ShardSelect: ShardSelectMask}, "shard_select mask needs a power-of-two shard count, not 6"},
		{LoadConfig{Layout: LayoutPacked, ShardSelect: "crc"}, `shard_select "crc" is unknown (allowed: auto, modulo, mask)`},
		{LoadConfig{Layout: LayoutPacked, Options: Options{MaxLoadFactor: 2}}, "max_load_factor 2 is out of range"},
	}
	for _, c := range cases {
		m, _, err := Load[uint64, uint16](context.Background(), &genSource{rows: 10}, c.cfg)
		if m != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, %v; want an error containing %q", c.cfg, m, err, c.want)
		}
	}
	m, _, err := Load[uint64, uint16](context.Background(), &genSource{rows: 10}, LoadConfig{Layout: LayoutPacked, Shards: 0})
	if err != nil || m.Shards() != 1 {
		t.Errorf("shards 0 should mean 1: %v, %v", m, err)
	}
}

// TestLoadProgress: progress comes from one goroutine at a time, never
// goes backwards, and ends with the full count.
func TestLoadProgress(t *testing.T) {
	setHook(t, func(shard, rows int) {
		if shard == -1 {
			time.Sleep(200 * time.Microsecond) // stretch the load over many periods
		}
	})
	const rows, every = 200_000, 2 * time.Millisecond
	var calls []LoadProgress
	var inFlight atomic.Int32
	start := time.Now()
	var stamps []time.Duration
	m, r, err := Load[uint64, uint16](context.Background(), &genSource{rows: rows, random: true}, LoadConfig{
		Layout: LayoutPacked, Shards: 3, BlockRows: 1000, ProgressEvery: every,
		Progress: func(p LoadProgress) {
			if inFlight.Add(1) != 1 {
				t.Error("Progress called concurrently")
			}
			calls = append(calls, p)
			stamps = append(stamps, time.Since(start))
			inFlight.Add(-1)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 5 {
		t.Fatalf("%d progress calls over %v at a period of %v", len(calls), time.Since(start), every)
	}
	for i, p := range calls {
		var sum int64
		for _, s := range p.ShardRows {
			sum += s
		}
		if len(p.ShardRows) != 3 || sum != p.Rows || p.SourceRows != rows {
			t.Fatalf("call %d: %+v", i, p)
		}
		if i > 0 && (p.Rows < calls[i-1].Rows || p.Elapsed < calls[i-1].Elapsed) {
			t.Fatalf("progress went backwards: %+v then %+v", calls[i-1], p)
		}
	}
	last := calls[len(calls)-1]
	if last.Rows != rows || r.Rows != rows || m.Len() != rows {
		t.Fatalf("last progress %+v, report %d rows, map %d; want %d", last, r.Rows, m.Len(), rows)
	}
	// Gaps: a loaded machine can delay a tick now and then, but the typical
	// gap is the period.
	gaps := make([]float64, 0, len(stamps))
	for i := 1; i < len(stamps); i++ {
		gaps = append(gaps, (stamps[i] - stamps[i-1]).Seconds())
	}
	if med := time.Duration(median(gaps) * 1e9); med > 5*every {
		t.Errorf("median progress gap %v, period %v", med, every)
	}
}

// TestLoadSteadyStateAllocs: sub-blocks are recycled, so loading twice the
// rows costs only the tables' extra growth, not an allocation per block.
func TestLoadSteadyStateAllocs(t *testing.T) {
	allocs := func(rows int64) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		_, _, err := Load[uint64, uint16](context.Background(), &genSource{rows: rows, random: true},
			LoadConfig{Layout: LayoutPacked, Shards: 4, BlockRows: 256, Backlog: 2})
		runtime.ReadMemStats(&b)
		if err != nil {
			t.Fatal(err)
		}
		return b.Mallocs - a.Mallocs
	}
	small, big := allocs(100_000), allocs(200_000)
	// 100,000 more rows are 390 more source blocks and 1,560 sub-blocks.
	if big > small+50 {
		t.Errorf("loading 200,000 rows made %d allocations, 100,000 made %d: %d more, want <= 50 (sub-blocks not recycled?)", big, small, big-small)
	}
	t.Logf("allocations: %d for 1e5 rows, %d for 2e5", small, big)
}

// TestLoadDuplicateHeavy loads range-like keys (many repeats) and checks
// that rows == elements + duplicates and that the first value wins.
func TestLoadDuplicateHeavy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	keys := make([]uint32, 50000)
	vals := make([]uint8, len(keys))
	for i := range keys {
		keys[i] = uint32(rng.IntN(1000))
		vals[i] = uint8(i)
	}
	for _, shards := range []int{1, 6} {
		m, r, err := Load[uint32, uint8](context.Background(), newSliceSource(keys, vals), LoadConfig{Layout: LayoutHashedArray, Shards: shards, BlockRows: 333})
		if err != nil {
			t.Fatal(err)
		}
		checkAgainstOracle(t, m, r, firstWins(keys, vals), len(keys))
		if r.Duplicates < 40000 {
			t.Errorf("shards=%d: %d duplicates of 50000 rows over 1000 keys", shards, r.Duplicates)
		}
	}
}

func TestVerifyCatchesTampering(t *testing.T) {
	m, r, err := loadSeq(t, 5000, 4)
	if err != nil {
		t.Fatal(err)
	}
	m.Shard(0).Insert(1<<40, 7)
	if err := m.Verify(r); err == nil || !strings.Contains(err.Error(), "5001 elements") {
		t.Errorf("Verify after an extra insert = %v", err)
	}
	r.Elements++
	r.Checksum++
	if err := m.Verify(r); err == nil {
		t.Error("Verify accepted a wrong checksum")
	}
}

func TestPanicSite(t *testing.T) {
	stack := []byte("goroutine 7 [running]:\nruntime/debug.Stack()\n\t/go/src/runtime/debug/stack.go:26 +0x5e\n" +
		"github.com/packlab/packlab/core.(*loader[...]).recoverAs(0xc0, {0xc1, 0x2})\n\t/w/core/loader.go:250 +0x45\n" +
		"panic({0x5, 0x6})\n\t/go/src/runtime/panic.go:787 +0x132\n" +
		"github.com/packlab/packlab/core.boom(...)\n\t/w/core/x.go:12 +0x9\n")
	if got, want := panicSite(stack), "github.com/packlab/packlab/core.boom at /w/core/x.go:12"; got != want {
		t.Errorf("panicSite = %q, want %q", got, want)
	}
	if got := panicSite(bytes.Repeat([]byte("x"), 10)); got != "unknown site" {
		t.Errorf("panicSite(garbage) = %q", got)
	}
}
