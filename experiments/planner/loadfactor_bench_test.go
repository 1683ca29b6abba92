package planner

import (
	"context"
	"testing"

	"github.com/packlab/packlab/core"
)

// BenchmarkLoadFactor measures what speed's compactReadSlope, compactLoadSlope
// and probingLoadSlope are fitted to (docs/plan.md, "Speed against the load
// factor"): PACKLAB_LF_LAYOUT (default compact) <UInt64,UInt16> at
// PACKLAB_LF_ROWS rows (1e7 for the fit, past the caches), one shard, at the
// max load factors PACKLAB_LF_MLFS (comma-separated; default 0.7 to 0.97), read at each load factor exactly (a table
// reserved for the rows: rows/mlf home slots) and loaded growing at each max
// load factor, as the lab's run does (core.Load, then core.Read of every key
// once in random order). The load factors take turns, round after round,
// and each keeps its fastest time, so that a busy moment of a shared
// machine slows one round, not one load factor. Run with
//
//	PACKLAB_LF_ROWS=1e7 go test ./experiments/planner -run '^$' -bench LoadFactor -benchtime 1x -timeout 30m -v
//	PACKLAB_LF_ROWS=1e7 PACKLAB_LF_LAYOUT=packed PACKLAB_LF_MLFS=0.5,0.7,0.8,0.9,0.95,0.98 go test ... (the same)
func BenchmarkLoadFactor(b *testing.B) {
	// Without PACKLAB_LF_ROWS it is make test's bench-once: 1e5 rows, one
	// round, to prove it runs (1e7 and five rounds took 163 s there).
	rows, rounds := int64(100_000), 1
	if n := envNumber(b, "PACKLAB_LF_ROWS", 0); n != 0 {
		rows, rounds = int64(n), 5
	}
	mlfs := []float64{0.7, 0.75, 0.8, 0.85, 0.9, 0.92, 0.95, 0.97}
	if m := envNumbers(b, "PACKLAB_LF_MLFS"); m != nil {
		mlfs = m
	}
	layout := envLayout(b, "PACKLAB_LF_LAYOUT", core.LayoutCompact)
	type best struct{ read, load, readLF, loadLF float64 }
	bests := make([]best, len(mlfs))
	ctx := context.Background()
	run := func(mlf float64, reserve int64) (load, read, lf float64) {
		src := randomSource(b, rows)
		defer src.Close()
		m, rep, err := core.Load(ctx, src, core.LoadConfig{Layout: layout, Options: core.Options{MaxLoadFactor: mlf, Reserve: reserve}})
		if err != nil {
			b.Fatal(err)
		}
		defer m.Close()
		rr, err := core.Read(ctx, m, src, core.ReadOptions{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		return rep.Seconds, rr.Seconds, m.Stats().LoadFactor
	}
	for range b.N {
		for round := range rounds {
			for i, mlf := range mlfs {
				_, read, lf := run(mlf, rows)
				load, _, glf := run(mlf, 0)
				x := &bests[i]
				if round == 0 || read < x.read {
					x.read, x.readLF = read, lf
				}
				if round == 0 || load < x.load {
					x.load, x.loadLF = load, glf
				}
			}
		}
	}
	for i, mlf := range mlfs {
		x := bests[i]
		b.Logf("%s mlf %.2f: read %.3f s (%.2f M rows/s) at load factor %.3f; load growing %.3f s (%.2f M rows/s), load factor %.3f after it",
			layout, mlf, x.read, float64(rows)/x.read/1e6, x.readLF, x.load, float64(rows)/x.load/1e6, x.loadLF)
	}
}
