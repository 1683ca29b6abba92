package report

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/sweep"
)

// TestSeedClaimsReport runs the sweep's configs at a small size, in this
// process, and checks that every claim finds its runs and the report shows
// the claims table and their charts.
func TestSeedClaimsReport(t *testing.T) {
	if testing.Short() {
		t.Skip("measures about 16 small loads")
	}
	sw, _ := sweep.Find("seed-claims")
	cfgs, err := sw.Configs(config.Config{Rows: 200_000}, sweep.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cfgs {
		cfgs[i].Rows, cfgs[i].Repeats = 200_000, 1
		cfgs[i].InProcess = !machine.MemoryMeasurable || raceEnabled || i < len(cfgs)-1 // the memory runs isolated, as the sweep makes them
	}
	job := result.NewJob(config.SweepJobName("seed-claims", config.Config{Rows: 200_000}), result.FaceCLI, time.Now())
	res, err := experiments.RunConfigs(context.Background(), cfgs, experiments.RunOptions{Job: &job})
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
		if !strings.Contains(strings.Join(names, "\n"), want) && (machine.MemoryMeasurable && !raceEnabled || !strings.HasPrefix(want, "memory")) {
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
