package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestFeistelIsABijection(t *testing.T) {
	for _, n := range []uint64{0, 1, 2, 3, 4, 5, 7, 8, 100, 1000, 4097, 65537} {
		for _, seed := range []uint64{0, 1, 99} {
			f := newFeistel(n, seed)
			seen := make([]bool, n)
			fixed := 0
			for i := range n {
				x := f.at(i)
				if x >= n {
					t.Fatalf("n=%d seed=%d: at(%d) = %d, out of range", n, seed, i, x)
				}
				if seen[x] {
					t.Fatalf("n=%d seed=%d: %d is reached twice", n, seed, x)
				}
				seen[x] = true
				if x == i {
					fixed++
				}
			}
			// A random permutation has one fixed point on average.
			if n >= 100 && fixed > 10 {
				t.Errorf("n=%d seed=%d: %d fixed points; the order is hardly shuffled", n, seed, fixed)
			}
		}
	}
	a, b := newFeistel(1000, 1), newFeistel(1000, 2)
	same := 0
	for i := range uint64(1000) {
		if a.at(i) == b.at(i) {
			same++
		}
	}
	if same > 10 {
		t.Errorf("seeds 1 and 2 agree on %d of 1000 positions", same)
	}
}

func loadForRead(t *testing.T, src Source[uint64, uint16], shards int) *Sharded[uint64, uint16] {
	t.Helper()
	m, _, err := Load[uint64, uint16](context.Background(), src, LoadConfig{Layout: LayoutPacked, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestReadFindsEveryKey looks every loaded key up, through an indexed source
// (the permutation) and through one that is not (the shuffled key list).
func TestReadFindsEveryKey(t *testing.T) {
	const rows = 50_000
	keys := testKeys[uint64](rows, 8) // repeats included: rows > distinct keys
	vals := make([]uint16, len(keys))
	m := loadForRead(t, newSliceSource(keys, vals), 3)
	for _, c := range []struct {
		name    string
		src     Source[uint64, uint16]
		lookups int64
	}{
		{"indexed", newSliceSource(keys, vals), int64(len(keys))},
		{"not-indexed", plainSource[uint64, uint16]{newSliceSource(keys, vals)}, int64(m.Len())},
	} {
		r, err := Read(context.Background(), m, c.src, ReadOptions{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Lookups != c.lookups || r.Found != c.lookups || r.FoundRate != 1 {
			t.Errorf("%s: %+v; want %d lookups, all found", c.name, r, c.lookups)
		}
		if r.Seconds <= 0 || r.RowsPerSecond <= 0 {
			t.Errorf("%s: times %+v", c.name, r)
		}
	}
	// A source whose rows were not all loaded: the found rate says so.
	half := loadForRead(t, newSliceSource(keys[:len(keys)/2], vals[:len(keys)/2]), 2)
	r, err := Read(context.Background(), half, newSliceSource(keys, vals), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.FoundRate > 0.9 || r.FoundRate < 0.4 {
		t.Errorf("reading all rows from a map of half of them: found rate %.3f", r.FoundRate)
	}
}

func TestReadMissRate(t *testing.T) {
	src := &genSource{rows: 40_000, random: true}
	m := loadForRead(t, src, 4)
	for _, rate := range []float64{0, 0.25, 1} {
		r, err := Read(context.Background(), m, src, ReadOptions{Seed: 3, MissRate: rate})
		if err != nil {
			t.Fatal(err)
		}
		misses := int64(math.Round(rate * 40_000))
		if r.Lookups != 40_000+misses || r.Found != 40_000 {
			t.Errorf("miss_rate %v: %d lookups, %d found; want %d, 40000", rate, r.Lookups, r.Found, 40_000+misses)
		}
		if want := 40_000 / float64(40_000+misses); math.Abs(r.FoundRate-want) > 1e-12 {
			t.Errorf("miss_rate %v: found rate %v, want %v", rate, r.FoundRate, want)
		}
	}
}

// TestReadNarrowKeys: absent keys of a one-byte type come from the values
// not loaded, and a full type cannot give any.
func TestReadNarrowKeys(t *testing.T) {
	keys := make([]uint8, 0, 256)
	for k := range 256 {
		keys = append(keys, uint8(k))
	}
	vals := make([]uint8, 256)
	load := func(keys []uint8) *Sharded[uint8, uint8] {
		m, _, err := Load[uint8, uint8](context.Background(), newSliceSource(keys, vals[:len(keys)]), LoadConfig{Layout: LayoutHashed, Shards: 2})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := load(keys[:200])
	r, err := Read[uint8, uint8](context.Background(), m, newSliceSource(keys[:200], vals[:200]), ReadOptions{MissRate: 0.5})
	if err != nil || r.Lookups != 300 || r.Found != 200 {
		t.Errorf("200 of 256 UInt8 keys loaded, miss rate 0.5: %+v, %v; want 300 lookups, 200 found", r, err)
	}
	full := load(keys)
	_, err = Read[uint8, uint8](context.Background(), full, newSliceSource(keys, vals), ReadOptions{MissRate: 0.1})
	if err == nil || !strings.Contains(err.Error(), "every one of the 256 values") {
		t.Errorf("every UInt8 key loaded, miss rate 0.1: error %v, want one saying no key is absent", err)
	}
	if r, err := Read[uint8, uint8](context.Background(), full, newSliceSource(keys, vals), ReadOptions{}); err != nil || r.FoundRate != 1 {
		t.Errorf("every UInt8 key loaded, no misses: %+v, %v", r, err)
	}
}

func TestReadErrors(t *testing.T) {
	src := &genSource{rows: 100}
	m := loadForRead(t, src, 1)
	for _, rate := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		_, err := Read(context.Background(), m, src, ReadOptions{MissRate: rate})
		if want := fmt.Sprintf("miss_rate %v is out of range (allowed: 0 to 1)", rate); err == nil || err.Error() != want {
			t.Errorf("miss rate %v: error %v, want %q", rate, err, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, m, src, ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled read: error %v", err)
	}
	empty := loadForRead(t, &genSource{}, 2)
	r, err := Read(context.Background(), empty, &genSource{}, ReadOptions{MissRate: 0.5})
	if err != nil || r != (ReadReport{}) {
		t.Errorf("reading an empty map: %+v, %v; want a zero report (no NaN)", r, err)
	}
}

// TestReadOrderIsRandom: the read order is a seeded shuffle. Checked through
// a source that records which rows it is asked for.
func TestReadOrderIsRandom(t *testing.T) {
	const n = 10_000
	rec := &recordingSource{genSource: genSource{rows: n, random: true}}
	m := loadForRead(t, &genSource{rows: n, random: true}, 2)
	order := func(seed uint64) []int64 {
		rec.asked = rec.asked[:0]
		if _, err := Read(context.Background(), m, rec, ReadOptions{Seed: seed}); err != nil {
			t.Fatal(err)
		}
		return append([]int64(nil), rec.asked...)
	}
	a, b, a2 := order(1), order(2), order(1)
	if len(a) != n {
		t.Fatalf("%d rows asked for, want %d", len(a), n)
	}
	ascending, same, again := 0, 0, 0
	for i := range a {
		if i > 0 && a[i] > a[i-1] {
			ascending++
		}
		if a[i] == b[i] {
			same++
		}
		if a[i] == a2[i] {
			again++
		}
	}
	// A random order rises about half the time.
	if ascending < n*4/10 || ascending > n*6/10 || same > 20 || again != n {
		t.Errorf("order: %d rises of %d, %d positions equal across seeds, %d equal for the same seed", ascending, n, same, again)
	}
}

type recordingSource struct {
	genSource
	asked []int64
}

func (r *recordingSource) Row(i int64) (uint64, uint16) {
	r.asked = append(r.asked, i)
	return r.genSource.Row(i)
}

func TestReadWithoutSource(t *testing.T) {
	m := loadForRead(t, &genSource{rows: 3000, random: true}, 3)
	r, err := Read[uint64, uint16](context.Background(), m, nil, ReadOptions{MissRate: 0.5})
	if err != nil || r.Lookups != 4500 || r.Found != 3000 {
		t.Errorf("Read with a nil source: %+v, %v; want 4500 lookups, 3000 found", r, err)
	}
}
