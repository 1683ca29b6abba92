package sweep

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
)

// TestSeedClaimsConfigs: the sweep runs what each claim is about: packed at
// 8 shards by modulo and by mask, with blocks of 65536 x 8, at every shard
// count on every thread count, and hashed, packed and sparse at --rows; it
// refuses the settings it makes itself.
func TestSeedClaimsConfigs(t *testing.T) {
	sw, err := Find("seed-claims")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := sw.Configs(config.Config{Rows: 1e6}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var modulo, mask, big, memory bool
	points := map[[2]int]bool{}
	for _, c := range cfgs {
		switch {
		case c.ShardSelect == "modulo" && c.Shards == 8:
			modulo = true
		case c.ShardSelect == "mask" && c.Shards == 8 && c.BlockRows == 0:
			mask = true
		case c.BlockRows == core.DefaultBlockRows*8 && c.Shards == 8:
			big = true
		case c.Threads > 0:
			points[[2]int{c.Threads, c.Shards}] = true
		case len(c.Layouts) == 3 && c.Rows == 1e6 && c.Shards == 1:
			memory = strings.Join(c.Layouts, ",") == "hashed,packed,sparse"
		}
		if c.Rows != 1e6 && (c.Rows != SeedClaimsSpeedRows || c.Repeats < 3 || !c.NoRead) {
			t.Errorf("speed run %+v: want %d rows, at least 3 repeats, no read phase", c, SeedClaimsSpeedRows)
		}
	}
	want := len(SeedClaimsShards) * len(threadCounts(runtime.NumCPU()))
	if !modulo || !mask || !big || !memory || len(points) != want || !points[[2]int{1, 1}] {
		t.Errorf("configs: modulo %v mask %v big blocks %v memory %v, %d (threads, shards) points (want %d, with 1 and 1)", modulo, mask, big, memory, len(points), want)
	}
	for _, bad := range []struct {
		cfg  config.Config
		flag string
	}{
		{config.Config{Shards: 4}, "shards"}, {config.Config{Layouts: []string{"hashed"}}, "layouts"}, {config.Config{ShardSelect: "mask"}, "shard_select"},
		{config.Config{BlockRows: 10}, "block_rows"}, {config.Config{Threads: 1}, "threads"}, {config.Config{MaxLoadFactor: 0.9}, "max_load_factor"},
		{config.Config{Key: "UInt32"}, "key"}, {config.Config{Keys: "sequential"}, "keys"},
	} {
		_, err := sw.Configs(bad.cfg, Options{})
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != bad.flag {
			t.Errorf("seed-claims with %+v: got %v, want a refusal naming %s", bad.cfg, err, bad.flag)
		}
	}
}
