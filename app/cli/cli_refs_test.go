package cli

import (
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/drivertest"
	"github.com/packlab/packlab/experiments/refdriver"
)

// needRefs points the command at packlab-refs, the C++ maps: as
// needClickHouse does packlab-ch.
func needRefs(t *testing.T) {
	t.Helper()
	drivertest.NeedWorker(t, "bin", refdriver.WorkerEnv, refdriver.WorkerName, refdriver.BuildCommand, func() (bool, string) {
		st := refdriver.Status()
		return st.Available, st.Problem
	})
}

// TestReferenceRunAndReport is the target at 1e6 rows (the README
// has 1e7): packed, boost_flat and sparse_hash_map in one run, and the
// report's charts name all three, the references as C++.
func TestReferenceRunAndReport(t *testing.T) {
	needRefs(t)
	if testing.Short() {
		t.Skip("loads 1e6 rows three times")
	}
	dir := t.TempDir()
	res := packlabResults(t, 3, "run", "--layout", "packed,boost_flat,sparse_hash_map", "--rows", "1e6", "--results", dir, "--format", "json")
	for _, r := range res[1:] {
		if r.ElementCount != res[0].ElementCount || r.Checksum != res[0].Checksum || r.RSSBytes <= 0 {
			t.Errorf("%s: element_count %d, checksum %s, rss %d; packed %d, %s", r.Layout, r.ElementCount, r.Checksum, r.RSSBytes, res[0].ElementCount, res[0].Checksum)
		}
	}
	html := reportHTML(t, dir)
	mustSay(t, "the report", html, "packed", "boost_flat (C++)", "sparse_hash_map (C++)", "hatched: C++ map", "C++ reference maps, measured the same way", "~15.93 MiB")
}

// TestSweepWithReferences: the seed table, then the maps people pick
// instead, in one sweep.
func TestSweepWithReferences(t *testing.T) {
	needRefs(t)
	res := packlabResults(t, -1, "sweep", "seed-table", "--with-references", "--rows", "2e4", "--format", "json", "--no-save")
	var got, want []string
	for _, r := range res {
		got = append(got, r.Layout)
	}
	for _, l := range core.Layouts() {
		want = append(want, string(l))
	}
	for _, r := range refdriver.References() {
		want = append(want, r.Name)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("sweep seed-table --with-references measured %v, want %v", got, want)
	}
}

// TestReferenceFlagsRefused: one line and exit 2 for a reference map where
// it cannot run, or a flag it does not take.
func TestReferenceFlagsRefused(t *testing.T) {
	t.Setenv(refdriver.WorkerEnv, "/nonexistent/packlab-refs")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--layout", "packed,boost_flat", "--no-save"},
			"--layout boost_flat: unavailable: PACKLAB_REFS_WORKER=/nonexistent/packlab-refs: no such file or directory; build the C++ reference maps with: make refs"},
		{[]string{"sweep", "seed-table", "--with-references", "--no-save"},
			"--with-references: unavailable: PACKLAB_REFS_WORKER=/nonexistent/packlab-refs: no such file or directory; build the C++ reference maps with: make refs"},
		{[]string{"sweep", "growth", "--with-references", "--no-save"},
			"--with-references: applies only to the seed-table sweep (allowed: sweep seed-table --with-references)"},
		{[]string{"run", "--layout", "bogus", "--no-save"},
			"--layout bogus: unknown layout (allowed: " + config.LayoutNames() + ")"},
	} {
		_, _, err := packlab(t, c.args...)
		if err == nil || err.Error() != c.want || exitCode(err) != 2 {
			t.Errorf("packlab %s: %v (exit %d)\nwant %s (exit 2)", strings.Join(c.args, " "), err, exitCode(err), c.want)
		}
	}
}
