package experiments

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
)

// TestSeedClaimsConfigs: the sweep runs what each claim is about: packed at
// 8 shards by modulo and by mask, with blocks of 65536 x 8, at every shard
// count on every thread count, and hashed, packed and sparse at --rows; it
// refuses the settings it makes itself.
func TestSeedClaimsConfigs(t *testing.T) {
	sw, err := FindSweep("seed-claims")
	if err != nil {
		t.Fatal(err)
	}
	cfgs, err := sw.Configs(Config{Rows: 1e6}, SweepOptions{})
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
	want := len(seedClaimsShards) * len(threadCounts(hostInfo().CPUs))
	if !modulo || !mask || !big || !memory || len(points) != want || !points[[2]int{1, 1}] {
		t.Errorf("configs: modulo %v mask %v big blocks %v memory %v, %d (threads, shards) points (want %d, with 1 and 1)", modulo, mask, big, memory, len(points), want)
	}
	for _, bad := range []struct {
		cfg  Config
		flag string
	}{
		{Config{Shards: 4}, "--shards"}, {Config{Layouts: []string{"hashed"}}, "--layout"}, {Config{ShardSelect: "mask"}, "--shard-select"},
		{Config{BlockRows: 10}, "--block-rows"}, {Config{Threads: 1}, "--threads"}, {Config{MaxLoadFactor: 0.9}, "--max-load-factor"},
		{Config{Key: "UInt32"}, "--key"}, {Config{Keys: "sequential"}, "--keys"},
	} {
		_, err := sw.Configs(bad.cfg, SweepOptions{})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Flag != bad.flag {
			t.Errorf("seed-claims with %+v: got %v, want a refusal naming %s", bad.cfg, err, bad.flag)
		}
	}
}

// TestSeedClaimsReport runs the sweep's configs at a small size, in this
// process, and checks that every claim finds its runs and the report shows
// the claims table and their charts.
func TestSeedClaimsReport(t *testing.T) {
	if testing.Short() {
		t.Skip("measures about 16 small loads")
	}
	sw, _ := FindSweep("seed-claims")
	cfgs, err := sw.Configs(Config{Rows: 200_000}, SweepOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		cfgs[i].Rows, cfgs[i].Repeats = 200_000, 1
		cfgs[i].InProcess = !memoryMeasurable || raceEnabled || i < len(cfgs)-1 // the memory runs isolated, as the sweep makes them
	}
	runs, err := prepare(context.Background(), cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	job := NewJob(SweepJobName("seed-claims", Config{Rows: 200_000}), FaceCLI, time.Now())
	res, err := execute(context.Background(), runs, RunOptions{Job: &job})
	if err != nil {
		t.Fatal(err)
	}
	claims := SeedClaims(res)
	var names []string
	for _, c := range claims {
		names = append(names, c.Claim)
		if c.Seed == "" || c.Measured == "" || c.Agrees == "" {
			t.Errorf("claim %+v is missing a part", c)
		}
	}
	for _, want := range []string{"shard selection by a mask instead of modulo", "blocks of max_block_size x shards", "load speed with more threads",
		"memory of hashed at 1e9", "memory of packed at 1e9", "memory of sparse at 1e9"} {
		if !strings.Contains(strings.Join(names, "\n"), want) && (memoryMeasurable && !raceEnabled || !strings.HasPrefix(want, "memory")) {
			t.Errorf("no claim %q among %q", want, names)
		}
	}
	// Runs not made by the sweep are not taken for claims.
	plain := slices.Clone(res)
	for i := range plain {
		plain[i].Job = nil
	}
	if c := SeedClaims(plain); c != nil {
		t.Errorf("runs of no seed-claims job gave claims %+v", c)
	}
	var buf bytes.Buffer
	if err := WriteReport(&buf, res, ""); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"<h2>The seed's claims, measured here</h2>", `id="packlab-seed-claims`, `id="packlab-load-scaling`} {
		if !strings.Contains(page, want) {
			t.Errorf("the report has no %q", want)
		}
	}
	buf.Reset()
	if err := WriteClaims(&buf, res, "markdown"); err != nil || !strings.Contains(buf.String(), "| claim | the seed says | measured here | agrees |") {
		t.Errorf("markdown claims: %v\n%s", err, buf.String())
	}
}
