package planner

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/planner/speed"
)

// BenchmarkReadInterleaved measures how a read's speed follows the shards
// and the fill, for the planner's read models (speed.ShardReadCost,
// speed.ReadCost; docs/plan.md): it builds every variant's table at once,
// then reads them in turn, pass after pass (2^16 keys a pass, each pass the
// next of 2^22 keys drawn from each table's at random, looked up 4096 at a
// time with GetMany as core.Read does), and logs each variant's tenth
// percentile and median time a lookup against the first variant's. A busy
// moment of a shared machine slows a pass of every variant alike, where
// separate runs each meet their own moment.
//
//	PACKLAB_RI_SHARDS=1,2,4,8,32,128 PACKLAB_RI_LAYOUT=compact go test ./experiments/planner -run '^$' -bench ReadInterleaved -benchtime 1x -v
//	PACKLAB_RI_FILLS=0.3,0.5,0.7,0.85,0.95 PACKLAB_RI_LAYOUT=packed go test ... (the same)
//
// PACKLAB_RI_ROWS sets the rows (default 1e7; with fills, the table's cells
// are the power of two at or above them). Without PACKLAB_RI_SHARDS or
// PACKLAB_RI_FILLS it is make test's bench-once: 1e5 rows, shards 1 and 4,
// three passes, to prove it runs.
func BenchmarkReadInterleaved(b *testing.B) {
	layout := envLayout(b, "PACKLAB_RI_LAYOUT", core.LayoutCompact)
	rows, passes, sample, window := int64(envNumber(b, "PACKLAB_RI_ROWS", 1e7)), 320, 1<<22, 1<<16
	shards, fills := envNumbers(b, "PACKLAB_RI_SHARDS"), envNumbers(b, "PACKLAB_RI_FILLS")
	if shards == nil && fills == nil {
		rows, passes, sample, window, shards = 100_000, 4, 1<<14, 1<<12, []float64{1, 4}
	}
	type variant struct {
		name  string
		m     *core.Sharded[uint64, uint16]
		keys  []uint64
		ns    []float64
		lf    float64
		cell  float64
		shard int
	}
	var vs []*variant
	ctx := context.Background()
	build := func(name string, n int64, shards int, opt core.Options) {
		src := randomSource(b, n)
		defer src.Close()
		m, _, err := core.Load(ctx, src, core.LoadConfig{Layout: layout, Shards: shards, Options: opt})
		if err != nil {
			b.Fatal(err)
		}
		is := src.(core.IndexedSource[uint64, uint16])
		rng := rand.New(rand.NewPCG(uint64(n), 7))
		keys := make([]uint64, sample)
		for i := range keys {
			keys[i], _ = is.Row(rng.Int64N(n))
		}
		st := m.Stats()
		vs = append(vs, &variant{name: name, m: m, keys: keys, lf: st.LoadFactor, cell: float64(st.BytesAllocated) / float64(max(st.BucketCount, 1)), shard: shards})
	}
	for _, s := range shards {
		build("SHARDS "+strconv.Itoa(int(s)), rows, int(s), core.Options{})
	}
	if fills != nil {
		cells := int64(1) << bits.Len64(uint64(rows-1))
		for _, f := range fills {
			// Reserved for 0.99 x cells at max load factor 0.99: every
			// fill in the one table size.
			build("fill "+strconv.FormatFloat(f, 'f', 2, 64), int64(f*float64(cells)), 1, core.Options{MaxLoadFactor: 0.99, Reserve: int64(0.99 * float64(cells))})
		}
	}
	defer func() {
		for _, v := range vs {
			v.m.Close()
		}
	}()
	vals, found := make([]uint16, 4096), make([]bool, 4096)
	for range b.N {
		for pass := range passes {
			lo := pass * window % sample
			for _, v := range vs {
				t := time.Now()
				for k := lo; k < lo+window; k += 4096 {
					v.m.GetMany(v.keys[k:k+4096], vals, found)
				}
				v.ns = append(v.ns, float64(time.Since(t).Nanoseconds())/float64(window))
			}
		}
	}
	// The tenth percentile of the passes: a pass the scheduler took the
	// core from in the middle is slow for that, not for its table.
	pct := func(x []float64, p float64) float64 {
		y := slices.Clone(x)
		slices.Sort(y)
		return y[int(p*float64(len(y)-1))]
	}
	p0, m0 := pct(vs[0].ns, 0.1), pct(vs[0].ns, 0.5)
	for _, v := range vs {
		p10, med := pct(v.ns, 0.1), pct(v.ns, 0.5)
		model := speed.ReadCost(layout, v.lf, v.cell) / speed.ReadCost(layout, vs[0].lf, vs[0].cell)
		b.Logf("%s %s: fill %.3f, %.1f ns a lookup (x%.3f; the median %.1f, x%.3f); the fill's model x%.3f, so the rest x%.3f",
			layout, v.name, v.lf, p10, p10/p0, med, med/m0, model, p10/p0/model)
	}
}
