package sweep

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/result"
)

func TestSweepConfigs(t *testing.T) {
	configs := func(name string, base config.Config, opt Options) []config.Config {
		t.Helper()
		s, err := Find(name)
		if err != nil {
			t.Fatal(err)
		}
		cfgs, err := s.Configs(base, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return cfgs
	}
	seed := configs("seed-table", config.Config{}, Options{})
	if len(seed) != 1 || len(seed[0].Layouts) != len(core.Layouts()) || seed[0].Rows != 1_000_000 || seed[0].Key != "UInt64" || seed[0].Value != "UInt16" {
		t.Errorf("seed-table: %+v, want every layout at 1M <UInt64,UInt16>", seed)
	}
	var shards []int
	for _, c := range configs("shards", config.Config{}, Options{MaxShards: 6}) {
		shards = append(shards, c.Shards)
	}
	if !slices.Equal(shards, []int{1, 2, 4, 6}) {
		t.Errorf("shards up to 6: %v, want 1 2 4 6", shards)
	}
	if n := len(configs("shards", config.Config{}, Options{})); n != 4 {
		t.Errorf("shards by default: %d configs, want 1 2 4 8", n)
	}
	types := configs("types", config.Config{Layouts: []string{"packed"}}, Options{})
	if len(types) != 15*15 || types[0].Rows != 100_000 || types[16].Key != "UInt16" || types[16].Value != "UInt16" {
		t.Errorf("types: %d configs, want 225 at 100K rows", len(types))
	}
	var rows []int64
	for _, c := range configs("growth", config.Config{Rows: 100_000}, Options{}) {
		rows = append(rows, c.Rows)
	}
	if want := []int64{10000, 14142, 20000, 28284, 40000, 56569, 80000, 100000}; !slices.Equal(rows, want) {
		t.Errorf("growth to 100K: %v, want %v", rows, want)
	}
	lf := configs("load-factor", config.Config{Layouts: []string{"hashed", "gomap"}}, Options{})
	if len(lf) != 7 || lf[5].MaxLoadFactor != 0.99 || !slices.Equal(lf[0].Layouts, []string{"hashed"}) || !slices.Equal(lf[6].Layouts, []string{"gomap"}) || lf[6].MaxLoadFactor != 0 {
		t.Errorf("load-factor: %+v, want hashed at 6 values and gomap once", lf)
	}

	for _, c := range []struct {
		name string
		base config.Config
		opt  Options
		want string
	}{
		{"shards", config.Config{Shards: 4}, Options{}, "shards 4: the shards sweep sets the shard count itself (allowed: max_shards N)"},
		{"shards", config.Config{}, Options{MaxShards: 200}, "max_shards 200: out of range (allowed: 1 to 128)"},
		{"growth", config.Config{}, Options{MaxShards: 4}, "max_shards 4: applies only to the shards sweep (allowed: sweep shards)"},
		{"types", config.Config{Key: "UInt32"}, Options{}, "key UInt32: the types sweep runs every key type (allowed: no key)"},
		{"load-factor", config.Config{MaxLoadFactor: 0.7}, Options{}, "max_load_factor 0.7: the load-factor sweep sets it itself (allowed: no max_load_factor)"},
		{"seed-table", config.Config{Shards: 300}, Options{}, "shards 300: out of range (allowed: 1 to 128)"},
	} {
		s, _ := Find(c.name)
		_, err := s.Configs(c.base, c.opt)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %+v: err\n got %v\nwant %s", c.name, c.base, err, c.want)
		}
	}
	if _, err := Find("nope"); err == nil || err.Error() != "sweep nope: unknown sweep (allowed: seed-table, shards, types, growth, load-factor, seed-claims)" {
		t.Errorf("Find(nope) = %v", err)
	}
}

// TestShardsSweepRuns measures the shards sweep for real, small: one result
// per shard count, each with a worker per shard.
func TestShardsSweepRuns(t *testing.T) {
	res, err := find(t, "shards").Run(context.Background(), config.Config{Layouts: []string{"packed"}, Rows: 40_000, NoRead: true}, Options{MaxShards: 4}, jobOf("shards"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results, want shards 1, 2, 4", len(res))
	}
	for i, r := range res {
		if r.Shards != 1<<i || len(r.Workers) != r.Shards || !r.Isolated {
			t.Errorf("result %d: shards %d, %d workers, isolated %v", i, r.Shards, len(r.Workers), r.Isolated)
		}
	}
}

// TestTypesSweepPadding runs the types sweep for hashed, in-process and
// small, and checks each pair's padding against the padded cell's layout.
func TestTypesSweepPadding(t *testing.T) {
	res, err := find(t, "types").Run(context.Background(), config.Config{Layouts: []string{"hashed"}, Rows: 500, NoRead: true, InProcess: true}, Options{}, jobOf("types"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 225 {
		t.Fatalf("%d results, want 225", len(res))
	}
	for _, r := range res {
		k, v := core.MustType(r.KeyType), core.MustType(r.ValueType)
		pad := int64(core.PaddedCellBytes(k, v) - core.PairBytes(k, v))
		if r.PaddingBytes != r.ElementCount*pad {
			t.Errorf("%s/%s: padding_bytes %d, want %d elements x %d", r.KeyType, r.ValueType, r.PaddingBytes, r.ElementCount, pad)
		}
		if k.Size == 1 && r.ElementCount > 256 {
			t.Errorf("%s/%s: %d distinct one-byte keys", r.KeyType, r.ValueType, r.ElementCount)
		}
	}
}

// find is the sweep of that name.
func find(t *testing.T, name string) Sweep {
	t.Helper()
	s, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jobOf is the run options of a sweep's job, as usecase.Sweep names it.
func jobOf(name string) experiments.RunOptions {
	j := result.NewJob(name, "", time.Now())
	return experiments.RunOptions{Job: &j}
}
