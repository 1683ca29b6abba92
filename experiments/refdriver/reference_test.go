package refdriver

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/drivertest"
	"github.com/packlab/packlab/experiments/fault"
)

// needRefs points the lab at the C++ worker for a test: $PACKLAB_REFS_WORKER
// (make test sets it, and then the worker must work), or else bin/packlab-refs
// of this checkout; a test skips when neither is built.
func needRefs(t *testing.T) string {
	t.Helper()
	return drivertest.NeedWorker(t, drivertest.DriverBin, WorkerEnv, WorkerName, BuildCommand, func() (bool, string) {
		st := Status()
		return st.Available, st.Problem
	})
}

func referenceLayouts() []string {
	var names []string
	for _, r := range References() {
		names = append(names, r.Name)
	}
	return names
}

func TestMain(m *testing.M) { os.Exit(drivertest.Main(m, Register)) }

// TestReferencesHoldWhatPackedHolds: every reference map loads the same
// pairs as packlab's packed from the same source (element count and the
// order-independent checksum), duplicates included, reads every key back,
// and reports its geometry, its memory and a timeline like a core layout.
func TestReferencesHoldWhatPackedHolds(t *testing.T) {
	needRefs(t)
	for _, keys := range []string{"random", "range:30000"} {
		cfg := config.Config{Layouts: append([]string{"packed"}, referenceLayouts()...), Rows: 50_000, Keys: keys, Seed: 7}
		got := drivertest.RunOrFail(t, cfg)
		want := got["packed"]
		if want.Checksum == "" || len(want.Checksum) != 16 {
			t.Fatalf("%s: packed's checksum %q, want 16 hex digits", keys, want.Checksum)
		}
		for _, name := range referenceLayouts() {
			r, ok := got[name]
			if !ok {
				t.Errorf("%s: no result for %s", keys, name)
				continue
			}
			ctx := fmt.Sprintf("%s over %s", name, keys)
			if r.ElementCount != want.ElementCount || r.Duplicates != want.Duplicates || r.Checksum != want.Checksum {
				t.Errorf("%s: element_count %d, duplicates %d, checksum %s; packed: %d, %d, %s",
					ctx, r.ElementCount, r.Duplicates, r.Checksum, want.ElementCount, want.Duplicates, want.Checksum)
			}
			if r.Rows != 50_000 || r.FoundRate != 1 || r.ReadRowsPerSecond <= 0 {
				t.Errorf("%s: rows %d, found_rate %v, read rows/s %v; want 50000, 1, > 0", ctx, r.Rows, r.FoundRate, r.ReadRowsPerSecond)
			}
			if !r.Isolated || r.Runtime != "native" || !strings.Contains(r.Reference, "::") || r.Shards != 1 || r.ClickHouseLayout != "" {
				t.Errorf("%s: isolated %v, runtime %q, reference %q, shards %d, clickhouse %q", ctx, r.Isolated, r.Runtime, r.Reference, r.Shards, r.ClickHouseLayout)
			}
			if r.BucketCount < r.ElementCount || r.SlotBytes < int64(core.PaddedCellBytes(core.MustType("UInt64"), core.MustType("UInt16"))) {
				t.Errorf("%s: bucket_count %d for %d elements, slot_bytes %d", ctx, r.BucketCount, r.ElementCount, r.SlotBytes)
			}
			if sum := r.PayloadBytes + r.PaddingBytes + r.EmptyBytes + r.MetadataBytes; sum != r.BytesAllocated || r.PayloadBytes != 10*r.ElementCount || r.PaddingBytes != 6*r.ElementCount {
				t.Errorf("%s: payload %d + padding %d + empty %d + metadata %d = %d, bytes_allocated %d", ctx,
					r.PayloadBytes, r.PaddingBytes, r.EmptyBytes, r.MetadataBytes, sum, r.BytesAllocated)
			}
			estimated := name == "dense_hash_map" || name == "sparse_hash_map"
			if r.Estimated != estimated {
				t.Errorf("%s: estimated %v, want %v (counted by the allocator unless sparsehash)", ctx, r.Estimated, estimated)
			}
			if r.RSSBytes <= 0 || r.PeakRSSBytes < r.RSSBytes || len(r.Timeline) < 2 || len(r.Workers) != 1 || r.Workers[0].Rows != 50_000 {
				t.Errorf("%s: rss %d, peak %d, %d timeline points, workers %+v", ctx, r.RSSBytes, r.PeakRSSBytes, len(r.Timeline), r.Workers)
			}
			// The producer's waits are the parent's clock, the load the
			// worker's: they start apart by the worker's set-up, so the
			// check allows a second of it (a loaded machine took 0.1 s).
			if w := r.Workers[0]; w.BusySeconds > r.LoadSeconds || r.Producer.WaitSeconds > r.LoadSeconds+1 {
				t.Errorf("%s: load %.3f s, but inserts %.3f s and the producer waited %.3f s: the parts of a load cannot exceed it",
					ctx, r.LoadSeconds, w.BusySeconds, r.Producer.WaitSeconds)
			}
			if r.PredictedPeak <= 0 {
				t.Errorf("%s: predicted peak %d, want the guard's estimate", ctx, r.PredictedPeak)
			}
		}
	}
}

// TestReferencesEveryTypePair: each reference map takes every key size x
// value size the lab offers (UInt8 to UInt128: 25 instantiations cover the
// 15 x 15 types), agrees with packed on the pairs, and finds no absent key.
func TestReferencesEveryTypePair(t *testing.T) {
	needRefs(t)
	names := []string{"UInt8", "UInt16", "UInt32", "UInt64", "UInt128"}
	if testing.Short() {
		names = []string{"UInt16", "UInt128"}
	}
	for _, k := range names {
		for _, v := range names {
			cfg := config.Config{Layouts: append([]string{"packed"}, referenceLayouts()...), Key: k, Value: v, Rows: 100, Keys: "random", Seed: 3, MissRate: 0.3}
			got := drivertest.RunOrFail(t, cfg)
			want := got["packed"]
			for _, name := range referenceLayouts() {
				r := got[name]
				if r.ElementCount != want.ElementCount || r.Checksum != want.Checksum || r.FoundRate != want.FoundRate {
					t.Errorf("%s <%s,%s>: element_count %d, checksum %s, found_rate %v; packed: %d, %s, %v",
						name, k, v, r.ElementCount, r.Checksum, r.FoundRate, want.ElementCount, want.Checksum, want.FoundRate)
				}
				if r.KeyType != k || r.ValueType != v {
					t.Errorf("%s: types %s/%s, want %s/%s", name, r.KeyType, r.ValueType, k, v)
				}
			}
		}
	}
}

// TestReferenceFileSource: a TSV file with repeated keys loads into a
// reference map as into packed; the read order is the file's distinct keys.
func TestReferenceFileSource(t *testing.T) {
	needRefs(t)
	path := filepath.Join(t.TempDir(), "keys.tsv")
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "%d\t%d\n", (i*7919)%2000, i%300)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed", "boost_flat", "sparse_hash_map"}, Source: path})
	want := got["packed"]
	for _, name := range []string{"boost_flat", "sparse_hash_map"} {
		r := got[name]
		if r.ElementCount != 2000 || r.Duplicates != 1000 || r.Checksum != want.Checksum || r.FoundRate != 1 || r.Source != path {
			t.Errorf("%s: element_count %d, duplicates %d, checksum %s (packed %s), found_rate %v, source %q; want 2000, 1000, equal, 1, %q",
				name, r.ElementCount, r.Duplicates, r.Checksum, want.Checksum, r.FoundRate, r.Source, path)
		}
	}
}

// TestReferenceRSSIsTheMap: the worker's RSS is the map's own: within 5 %
// of what the allocator handed the maps whose bytes are counted exactly,
// the peak is the last growth's two tables (about 1.5x), and the worker
// records the kernel's CPU time during the load (page faults), as the Go
// worker does.
func TestReferenceRSSIsTheMap(t *testing.T) {
	needRefs(t)
	if testing.Short() {
		t.Skip("loads 1e6 rows into each map")
	}
	got := drivertest.RunOrFail(t, config.Config{Layouts: []string{"boost_flat", "absl_flat", "hopscotch"}, Rows: 1_000_000, NoRead: true})
	kernel := 0.0
	for name, r := range got {
		kernel += r.LoadKernelSeconds
		if r.LoadKernelSeconds < 0 || r.LoadKernelSeconds > r.LoadSeconds+0.05 {
			t.Errorf("%s: load_kernel_seconds %.3f for a %.3f s load on one thread", name, r.LoadKernelSeconds, r.LoadSeconds)
		}
		ratio := float64(r.RSSBytes) / float64(r.BytesAllocated)
		peak := float64(r.PeakRSSBytes) / float64(r.BytesAllocated)
		t.Logf("%s: rss %d, bytes_allocated %d (x%.3f), peak x%.3f", name, r.RSSBytes, r.BytesAllocated, ratio, peak)
		if ratio < 0.99 || ratio > 1.05 {
			t.Errorf("%s: rss_bytes %d is %.3f x bytes_allocated %d, want 0.99 to 1.05", name, r.RSSBytes, ratio, r.BytesAllocated)
		}
		if peak < 1.3 || peak > 1.6 {
			t.Errorf("%s: peak_rss_bytes %d is %.3f x bytes_allocated, want the last growth's old + new table, 1.3 to 1.6", name, r.PeakRSSBytes, peak)
		}
		if r.PredictedPeak < r.PeakRSSBytes*9/10 || r.PredictedPeak > r.PeakRSSBytes*2 {
			t.Errorf("%s: the guard predicted a peak of %d, measured %d: want within 0.9x to 2x", name, r.PredictedPeak, r.PeakRSSBytes)
		}
	}
	if kernel <= 0 {
		t.Errorf("the three maps' loads, tens of MiB faulted in 4 KiB pages, recorded no kernel time")
	}
}

// TestReferencePreallocate: with --preallocate the C++ maps reserve() for
// the rows before the load, so they never grow and their peak is their
// final size (TestReferenceRSSIsTheMap: 1.3 to 1.6 of it when they grow);
// dense_hash_map and sparse_hash_map take resize(n), which is their reserve.
func TestReferencePreallocate(t *testing.T) {
	needRefs(t)
	if testing.Short() {
		t.Skip("loads 1e6 rows into each map")
	}
	got := drivertest.RunOrFail(t, config.Config{Layouts: []string{"boost_flat", "absl_flat", "hopscotch", "dense_hash_map"}, Rows: 1_000_000, NoRead: true, Preallocate: true})
	for name, r := range got {
		peak := float64(r.PeakRSSBytes) / float64(r.BytesAllocated)
		if !r.Preallocate || peak > 1.1 {
			t.Errorf("%s preallocate: preallocate %v, peak_rss_bytes %d is %.3f x bytes_allocated %d; want true and at most 1.1 (no growth)",
				name, r.Preallocate, r.PeakRSSBytes, peak, r.BytesAllocated)
		}
	}
	if r := drivertest.RunOrFail(t, config.Config{Layouts: []string{"sparse_hash_map"}, Rows: 100_000, NoRead: true, Preallocate: true})["sparse_hash_map"]; !r.Preallocate || r.ElementCount != 100_000 {
		t.Errorf("sparse_hash_map preallocate: preallocate %v, %d elements", r.Preallocate, r.ElementCount)
	}
}

// TestReferenceWorkerRefusesBadJobs: the worker answers a job it cannot do
// with one error line naming what it allows, as the Go worker does.
func TestReferenceWorkerRefusesBadJobs(t *testing.T) {
	path := needRefs(t)
	for _, c := range []struct{ job, want string }{
		{`{"layout":"btree"}`, `unknown layout "btree" (allowed: boost_flat, absl_flat, dense_hash_map, sparse_hash_map, hopscotch)`},
		{`{"layout":"boost_flat","key_bytes":3,"value_bytes":2}`, `key_bytes "3": no such key size (allowed: 1, 2, 4, 8, 16)`},
		{`{"layout":"hopscotch","key_bytes":8,"value_bytes":32}`, `value_bytes "32": no such value size (allowed: 1, 2, 4, 8, 16)`},
		{`{"layout":"absl_flat","protocol":99,"key_bytes":8,"value_bytes":2}`, `protocol 99: this packlab-refs speaks protocol 2 (rebuild it with: make refs)`},
		{`not json`, `reading the job from stdin: not a JSON object`},
	} {
		cmd := exec.Command(path)
		cmd.Stdin = strings.NewReader(c.job + "\n")
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("job %s: %v", c.job, err)
		}
		want := fmt.Sprintf("{\"error\":%q}\n", c.want)
		if string(out) != want {
			t.Errorf("job %s:\n got %q\nwant %q", c.job, out, want)
		}
	}
}

// TestReferenceCrashFailsOnlyItsRun: a reference worker that dies in the
// middle of its load (here by SIGSEGV, the first one started: absl_flat's)
// fails that run; the job's other runs, before and after it, are measured
// and returned.
func TestReferenceCrashFailsOnlyItsRun(t *testing.T) {
	real := needRefs(t)
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "packlab-refs")
	script := "#!/bin/sh\n" +
		"[ \"$1\" = --describe ] && exec " + real + " --describe\n" +
		"if mkdir " + filepath.Join(dir, "crashed") + " 2>/dev/null; then head -c 200000 >/dev/null; kill -SEGV $$; fi\n" +
		"exec " + real + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(WorkerEnv, wrapper)
	results, err := experiments.Run(context.Background(), config.Config{Layouts: []string{"packed", "absl_flat", "boost_flat"}, Rows: 20_000}, experiments.RunOptions{})
	var failed *experiments.RunsFailedError
	if !errors.As(err, &failed) {
		t.Fatalf("Run: error %v (%T), want a *experiments.RunsFailedError", err, err)
	}
	if len(failed.Failed) != 1 || !strings.HasPrefix(failed.Failed[0], "absl_flat: ") || !strings.Contains(failed.Failed[0], "segmentation fault") {
		t.Errorf("failed runs %q, want one, absl_flat's, saying segmentation fault", failed.Failed)
	}
	var layouts []string
	for _, r := range results {
		layouts = append(layouts, r.Layout)
	}
	if strings.Join(layouts, ",") != "packed,boost_flat" {
		t.Errorf("results for %v, want packed and boost_flat", layouts)
	}
}

// TestReferencesUnavailable: without the worker a reference layout is
// refused before any run, with the one command that builds it.
func TestReferencesUnavailable(t *testing.T) {
	t.Setenv(WorkerEnv, "/nonexistent/packlab-refs")
	err := config.Config{Layouts: []string{"packed", "boost_flat"}}.Validate()
	want := "layouts boost_flat: unavailable: PACKLAB_REFS_WORKER=/nonexistent/packlab-refs: no such file or directory; build the C++ reference maps with: make refs"
	if err == nil || err.Error() != want {
		t.Errorf("Validate: %v\nwant %s", err, want)
	}
	t.Setenv(WorkerEnv, "")
	t.Setenv("PATH", t.TempDir())
	st := Status()
	if st.Available || !strings.HasPrefix(st.Problem, "the C++ reference maps are not built (no packlab-refs at ") ||
		!strings.HasSuffix(st.Problem, " or on PATH); build them with: make refs") {
		t.Errorf("ReferenceStatus with no worker: %+v", st)
	}
	if err := (config.Config{Layouts: []string{"packed", "gomap"}}).Validate(); err != nil {
		t.Errorf("core layouts need no worker: %v", err)
	}
}

// TestReferenceRunsOneTable: --shards does not apply to a reference map.
func TestReferenceRunsOneTable(t *testing.T) {
	needRefs(t)
	err := config.Config{Layouts: []string{"hashed", "dense_hash_map"}, Shards: 4}.Validate()
	want := "shards 4: a C++ reference map (dense_hash_map) runs as one table (allowed: 1 with a reference map)"
	if err == nil || err.Error() != want {
		t.Errorf("Validate: %v\nwant %s", err, want)
	}
}

// TestHugePagesWithAReference: --huge-pages applies to packlab's layouts,
// so it is refused with only a C++ map, and taken with packed beside one.
func TestHugePagesWithAReference(t *testing.T) {
	if !Status().Available {
		t.Skip("the reference maps are not built")
	}
	err := config.Config{Layouts: []string{"boost_flat"}, HugePages: "off"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "applies to packlab's layouts") {
		t.Errorf("huge_pages off with only a C++ map: got %v", err)
	}
	if err := (config.Config{Layouts: []string{"boost_flat", "packed"}, HugePages: "off"}).Validate(); err != nil {
		t.Errorf("huge_pages off with a C++ map and packed: %v", err)
	}
}

// TestEveryReferenceGrows: every map dict names has its growth rule here.
func TestEveryReferenceGrows(t *testing.T) {
	for _, r := range References() {
		if r.growth.mlf <= 0 || r.growth.allocator <= 0 {
			t.Errorf("%s: no growth rule (%+v)", r.Name, r.growth)
		}
	}
	if len(growths) != len(References()) {
		t.Errorf("%d growth rules for %d reference maps", len(growths), len(References()))
	}
}

// TestBadStreamEndsTheRun: a stream source (a FIFO) whose row 50 is bad,
// or whose gzip is cut short, ends a reference map's run as it ends
// packed's: bad input naming the place, not a worker waiting on its pipe
// for frames that never come (issue 48).
func TestBadStreamEndsTheRun(t *testing.T) {
	needRefs(t)
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		if i == 50 {
			b.WriteString("x\t1\n")
			continue
		}
		fmt.Fprintf(&b, "%d\t%d\n", i, i%300)
	}
	bad := b.String()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(strings.Replace(bad, "x\t1\n", "50\t1\n", 1)))
	zw.Close()
	cut := gz.Bytes()[:gz.Len()/2]
	for _, c := range []struct {
		name, data, want string
	}{
		{"a bad row", bad, ":50: column 1"},
		{"a truncated gzip", string(cut), "unexpected EOF"},
	} {
		fifo := filepath.Join(t.TempDir(), "keys.tsv")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skip("no FIFOs here:", err)
		}
		go func() {
			if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
				w.WriteString(c.data)
				w.Close()
			}
		}()
		done := make(chan error, 1)
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			_, err := experiments.Run(ctx, config.Config{Layouts: []string{"boost_flat"}, Source: fifo}, experiments.RunOptions{})
			done <- err
		}()
		select {
		case err := <-done:
			var ie *fault.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v; want bad input naming %q", c.name, err, c.want)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s: the run did not end within 30 s", c.name)
		}
		cancel()
	}
}
