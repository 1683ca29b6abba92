package chdriver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/drivertest"
	"github.com/packlab/packlab/experiments/result"
)

func TestMain(m *testing.M) { os.Exit(drivertest.Main(m, Register)) }

// needClickHouse points the lab at packlab-ch for a test: $PACKLAB_CH_WORKER
// (make test sets it, after make chdb, and then ClickHouse must run), or
// else bin/packlab-ch of this checkout; a test skips when neither is built.
func needClickHouse(t *testing.T) string {
	t.Helper()
	return drivertest.NeedWorker(t, drivertest.DriverBin, WorkerEnv, WorkerName, BuildCommand, func() (bool, string) {
		st := Status()
		return st.Available, st.Problem
	})
}

// within reports whether got is within frac of want.
func within(got, want int64, frac float64) bool {
	return want > 0 && math.Abs(float64(got-want)) <= frac*float64(want)
}

// TestClickHouseAgreesWithTheModels is the fidelity target: ClickHouse
// itself (26.7, through chDB) loads the lab's rows, and packlab's computed
// bytes for the dictionary it built are within 0.1 % of its
// bytes_allocated for HASHED and SPARSE_HASHED, with SHARDS 4 and
// MAX_LOAD_FACTOR 0.9 too; within 0.1 % of what ClickHouse's memory tracker
// gained over a HASHED_ARRAY's load (its bytes_allocated leaves the key index
// out), and every layout's RSS after a purge within 5 % (and ClickHouse's
// own few MiB); for a UInt32 and a UInt128 key
// within 1 % for the simple layouts (the key widened or cut to UInt64) and
// the COMPLEX_KEY_ ones; and with three attributes (UInt16, UInt32,
// Float64: a table per attribute, or HASHED_ARRAY's index and an array per
// attribute) the same, at 1e6 and 1e7, with SHARDS 4 too; with two String
// attributes (a 16-byte reference in the cell, the values in each shard's
// arena) within 0.5 %, and with Nullable ones (the nulls in a set of their
// keys, HASHED_ARRAY's a bit a row) too. Each run proves
// its rows: the count, and the checksum of the pairs ClickHouse holds; and,
// but at 1e7, that dictGet finds every key. The load of 1e7 rows is for
// what shows there only, a reload's peak: HASHED's and HASHED_ARRAY's, the
// two growths the model has for ClickHouse (SPARSE_HASHED's PackedHashMap
// grows as HASHED does, in cells of 10 bytes: checked here at 1e6, its
// reload at 1e7 against ClickHouse's measured ones in package dict's
// TestClickHouseReloadModel); it reads nothing, the reads at 1e6 prove
// dictGet.
// threeAttributes is the dictionary of three attributes.
var threeAttributes = []string{"UInt16", "UInt32", "Float64"}

// stringAttributes has two Strings, whose values share each shard's arena.
var stringAttributes = []string{"id:UInt16", "name:String", "code:String(4..16)", "score:Float64"}

// nullableAttributes has a tenth of its last two attributes' rows NULL.
var nullableAttributes = []string{"id:UInt16", "plan:Nullable(UInt32)", "name:Nullable(String)"}

// unwrittenArena is the part of ClickHouse's String arenas for n rows of
// attrs that the model counts (dict.StringArenaBytes: whole chunks) and no
// value is written into: the values' mean lengths.
func unwrittenArena(t *testing.T, attrs []string, n int64, shards int) int64 {
	t.Helper()
	_, first := config.SplitAttribute(attrs[0])
	parsed, err := config.ParseAttributes(first, attrs)
	if err != nil {
		t.Fatal(err)
	}
	written := 0.0
	for _, a := range parsed {
		if a.IsString() {
			written += float64(a.NonNull(n)) * a.MeanLen()
		}
	}
	return dict.StringArenaBytes(parsed, n, shards) - int64(written)
}

func TestClickHouseAgreesWithTheModels(t *testing.T) {
	needClickHouse(t)
	cases := []struct {
		rows    int64
		layouts []string
		key     string
		shards  int
		mlf     float64
		tol     float64
		attrs   []string
	}{
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.001, nil},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed"}, "UInt64", 4, 0.9, 0.001, nil},
		{10_000_000, []string{"ch_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.001, nil},
		{140_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.001, nil}, // ClickHouse reserves: 2^19 cells, not the grower's 2^20 rows: ClickHouse reserves (dict.clickHouseReserves)
		{1_000_000, []string{"ch_hashed", "ch_complex_key_hashed"}, "UInt32", 1, 0, 0.01, nil},
		{1_000_000, []string{"ch_hashed", "ch_complex_key_hashed", "ch_complex_key_sparse_hashed"}, "UInt128", 1, 0, 0.01, nil},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.001, threeAttributes},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 4, 0, 0.001, threeAttributes},
		{100_000, []string{"ch_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.01, []string{"country:UInt16", "plan:UInt32", "score:Float64"}},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.005, stringAttributes},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 4, 0, 0.005, stringAttributes},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 1, 0, 0.005, nullableAttributes},
		{1_000_000, []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, "UInt64", 4, 0, 0.005, nullableAttributes},
		{1_000_000, []string{"ch_complex_key_hashed", "ch_complex_key_sparse_hashed", "ch_complex_key_hashed_array"}, "UInt64", 1, 0, 0.001, threeAttributes},
		{1_000_000, []string{"ch_complex_key_hashed", "ch_complex_key_sparse_hashed", "ch_complex_key_hashed_array"}, "UInt128", 4, 0, 0.005, stringAttributes},
		{1_000_000, []string{"ch_complex_key_hashed", "ch_complex_key_sparse_hashed", "ch_complex_key_hashed_array"}, "UInt128", 4, 0, 0.005, nullableAttributes},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		rows := c.rows
		noRead := rows >= 10_000_000 // for the reload's peak alone
		value := "UInt16"
		if c.attrs != nil {
			value = ""
		}
		got := drivertest.RunOrFail(t, config.Config{Layouts: c.layouts, Key: c.key, Value: value, Attributes: c.attrs, Rows: rows, Shards: c.shards, MaxLoadFactor: c.mlf, Seed: 1, NoRead: noRead})
		for _, name := range c.layouts {
			r, ok := got[name]
			if !ok {
				t.Errorf("%s %s: no result", name, c.key)
				continue
			}
			ch := r.ClickHouse
			if ch == nil {
				t.Fatalf("%s: a result without ClickHouse's figures", name)
			}
			t.Logf("%s %s SHARDS %d: %s; bytes_allocated %d, rss purged %d, model %d (%+.3f %% of %s); load %.2f s, read %.1f M/s (%.1f with %d threads)",
				name, c.key, c.shards, r.ClickHouseLayout, r.BytesAllocated, ch.RSSPurgedBytes, ch.ModelBytes, ch.DifferencePercent, ch.ComparedWith,
				r.LoadSeconds, r.ReadRowsPerSecond/1e6, ch.ReadAllThreadsRowsPerSecond/1e6, ch.ReadThreads)
			if r.ElementCount != rows || (!noRead && r.FoundRate != 1) {
				t.Errorf("%s %s: element_count %d, found rate %v; want %d, 1", name, c.key, r.ElementCount, r.FoundRate, rows)
			}
			if !strings.HasPrefix(ch.Version, "26.") || !strings.Contains(ch.DDL, r.ClickHouseLayout) {
				t.Errorf("%s: version %q, DDL %q: want ClickHouse 26 and the LAYOUT clause %s", name, ch.Version, ch.DDL, r.ClickHouseLayout)
			}
			last := "a3 Float64"
			if c.attrs != nil {
				if n, typ := config.SplitAttribute(c.attrs[len(c.attrs)-1]); n != "" {
					last = n + " " + typ
				}
			}
			if c.attrs != nil && (r.Attributes != strings.Join(c.attrs, ",") || !strings.Contains(ch.DDL, last)) {
				t.Errorf("%s: attributes %q, DDL %q: want %v, every one a column", name, r.Attributes, ch.DDL, c.attrs)
			}
			measured := r.BytesAllocated
			if ch.ComparedWith == "tracked_bytes" {
				measured = ch.TrackedBytes
			}
			tol, slack := c.tol, int64(1024)
			if ch.ComparedWith == "tracked_bytes" {
				// The tracker counts what ClickHouse's own threads allocate
				// and free over the load too: a few tens of KiB, up to 450 KiB
				// less seen at 1e5 rows on a loaded machine (the load took
				// 0.5 s, not 0.08), noise on a 6 MB dictionary.
				tol, slack = 0.005, 512<<10
			}
			if !within(measured, ch.ModelBytes, tol) && max(measured-ch.ModelBytes, ch.ModelBytes-measured) > slack {
				t.Errorf("%s %s SHARDS %d MLF %v: ClickHouse's %s %d, packlab computes %d (%+.3f %%), want within %.1f %%",
					name, c.key, c.shards, c.mlf, ch.ComparedWith, measured, ch.ModelBytes, ch.DifferencePercent, tol*100)
			}
			// The process's memory says the same: the RSS left after
			// jemalloc gave its free pages back is the model's, and
			// ClickHouse's own few MiB (2.2-2.4 MiB here, whatever the
			// layout). With several attributes up to a tenth lower: the
			// baseline is taken after ClickHouse wrote the attributes' file,
			// and some of what that held is given back only later (seen
			// here: 95.2 MB against HASHED's 100.7 for three attributes, on
			// a clean clone's run). And RSS holds only the pages written: a
			// String arena's chunks are allocated before they are written,
			// so up to its unwritten part is missing (a Nullable(String)'s
			// HASHED_ARRAY: 10.5 % below, 9.5 MB, on a clean clone's run).
			below := ch.ModelBytes / 20
			if c.attrs != nil {
				below = ch.ModelBytes/10 + unwrittenArena(t, c.attrs, rows, c.shards)
			}
			if slack := ch.RSSPurgedBytes - ch.ModelBytes; !strings.Contains(ch.Note, "sparse_hash_map") && (slack < -below || slack > ch.ModelBytes/20+4<<20) {
				t.Errorf("%s %s: RSS after a purge %d, the model %d: want within 5 %% and ClickHouse's own 4 MiB", name, c.key, ch.RSSPurgedBytes, ch.ModelBytes)
			}
			// A reload holds the serving dictionary and the new one: at 1e7
			// more than one and a half tables, and not much more than the
			// plan's model of it (dict.clickHouseRetained, fitted to loads on
			// a busy machine, within 8 % of them; a quiet machine's 2-second
			// load keeps every freed buffer and peaked 17 % above it; at 1e6
			// ClickHouse's own buffers of the source's blocks make it up to
			// 30 % higher, so it is not asserted there).
			if m := ch.ModelReloadPeakBytes; m > 0 && rows >= 10_000_000 &&
				(ch.ReloadPeakRSSBytes < ch.ModelBytes*3/2 || ch.ReloadPeakRSSBytes > m*5/4) {
				t.Errorf("%s %s SHARDS %d: a reload peaked at %d, want between 1.5x the table (%d) and the model's %d",
					name, c.key, c.shards, ch.ReloadPeakRSSBytes, ch.ModelBytes, m)
			}
			// Three fixed-size attributes' tables: the key's two other
			// copies are a part of their own, and the parts add up.
			if slices.Equal(c.attrs, threeAttributes) && name != "ch_hashed_array" && !strings.Contains(name, "complex") &&
				(r.KeyCopyBytes != rows*16 || r.PayloadBytes+r.PaddingBytes+r.EmptyBytes+r.MetadataBytes+r.KeyCopyBytes != r.BytesAllocated) {
				t.Errorf("%s SHARDS %d: key copies %d of %d bytes (payload %d, padding %d, empty %d, metadata %d): want 16 bytes a row, the parts adding up",
					name, c.shards, r.KeyCopyBytes, r.BytesAllocated, r.PayloadBytes, r.PaddingBytes, r.EmptyBytes, r.MetadataBytes)
			}
			if !strings.Contains(name, "complex") && ch.KeyTypes != "UInt64" {
				t.Errorf("%s %s: ClickHouse keeps the key as %q, want UInt64 (a simple key)", name, c.key, ch.KeyTypes)
			}
			if ch.KeyCut != (c.key == "UInt128" && !strings.Contains(name, "complex")) {
				t.Errorf("%s %s: key_cut %v", name, c.key, ch.KeyCut)
			}
		}
		// HASHED_ARRAY's bytes_allocated leaves its key index out in 26.7
		// (ClickHouse PR #118641 fixes it): pinned, so the day the
		// version here counts it, this says so and the comparison can move
		// to bytes_allocated.
		if r, ok := got["ch_hashed_array"]; ok && c.attrs == nil && r.BytesAllocated > r.ClickHouse.ModelBytes/4 {
			t.Errorf("ch_hashed_array: bytes_allocated %d is more than a quarter of the model's %d: ClickHouse %s counts the key index now (PR #118641); compare bytes_allocated",
				r.BytesAllocated, r.ClickHouse.ModelBytes, r.ClickHouse.Version)
		}
		// A narrower key costs ClickHouse the same as UInt64: it keeps it so.
		if c.key == "UInt32" && rows == 1_000_000 {
			if a, b := got["ch_hashed"].BytesAllocated, int64(33_554_664); !within(a, b, 0.001) {
				t.Errorf("ch_hashed with a UInt32 key: bytes_allocated %d, want a UInt64 key's %d (measured here)", a, b)
			}
		}
	}
}

// TestClickHouseFailureIsOneRun: ClickHouse failing (here: the worker's
// address space capped at 1.4 GB, which ClickHouse starts in, 566 MB of it
// the library, but cannot load 1e7 rows in: "Allocator: Cannot realloc
// from 4.00 MiB to 8.00 MiB ... (CANNOT_ALLOCATE_MEMORY)") is that run's
// one-line failure, the promised line of a run out of memory; the job's other runs go on, and no folder is left in
// the temporary folder. With -short (the race stage) the job is ClickHouse's
// run alone: packed's load of 1e7 rows in a race-built worker was 15 s of
// the test's 17, and what -race watches here is the lab's feed and relay
// while ClickHouse's worker fails; that the other run goes on is the
// engine's loop, checked by the unit stage.
func TestClickHouseFailureIsOneRun(t *testing.T) {
	worker := needClickHouse(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	capped := filepath.Join(t.TempDir(), "packlab-ch")
	script := "#!/bin/sh\n[ \"$1\" = --describe ] && exec " + worker + " \"$@\"\nulimit -v 1400000\nexec " + worker + " \"$@\"\n"
	if err := os.WriteFile(capped, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(WorkerEnv, capped)
	layouts := []string{"ch_hashed", "packed"}
	if testing.Short() {
		layouts = layouts[:1]
	}
	results, err := experiments.Run(context.Background(), config.Config{Layouts: layouts, Rows: 10_000_000, NoRead: true}, experiments.RunOptions{})
	var failed *experiments.RunsFailedError
	if !errors.As(err, &failed) || len(failed.Failed) != 1 || len(results) != len(layouts)-1 || len(results) > 0 && results[0].Layout != "packed" {
		t.Fatalf("Run with ClickHouse out of address space: %d results, error %v; want packed measured and ch_hashed failed", len(results), err)
	}
	line := failed.Failed[0]
	t.Logf("the failure: %s", line)
	// The promised line, not ClickHouse's exception of 570 characters
	// (issue 48): the layout, out of memory, the rows, the guard's figure.
	// On a loaded machine (make test beside two other sessions) the capped
	// ClickHouse once died of a segmentation fault instead of throwing: a
	// failure of the address space outside its allocator. That run is
	// still one line naming ch_hashed, and the job's other run goes on.
	segv := strings.HasPrefix(line, "ch_hashed: ClickHouse's worker") && strings.HasSuffix(line, "ended without a result (signal: segmentation fault)")
	if !segv && (!strings.HasPrefix(line, "ch_hashed: out of memory: ClickHouse's worker") || !strings.Contains(line, "at 10M rows (the guard predicted a peak of")) ||
		strings.Contains(line, "\n") || strings.Contains(line, "Exception") {
		t.Errorf("the failure %q: want the one line of a run out of memory, naming ch_hashed", line)
	}
	left, _ := os.ReadDir(tmp)
	for _, e := range left {
		t.Errorf("left in the temporary folder: %s", e.Name())
	}
}

// TestAttributesBreakdown: a dictionary of three attributes, as ClickHouse
// 26.7 reported it at 1e6 rows (bytes_allocated, bucket_count), splits into
// the key once and the attributes (payload), the key's two other copies,
// each table's padding and empty cells, and the headers; the memory chart
// shows the copies as their own part.
func TestAttributesBreakdown(t *testing.T) {
	const n = 1_000_000
	attrs := dict.Fixed(core.MustType("UInt16"), core.MustType("UInt32"), core.MustType("Float64"))
	names := []string{"value", "a2", "a3"}
	for _, c := range []struct {
		layout           string
		bytes            int64
		padding, metaMax int64
		cells            string
	}{
		{"ch_hashed", 100_663_992, n * (48 - 38), 1024, "[{value UInt16 16 6} {a2 UInt32 16 4} {a3 Float64 16 0}]"},       // cells of 16 + 16 + 16 bytes
		{"ch_sparse_hashed", 79_692_472, n * (38 - 38), 1024, "[{value UInt16 10 0} {a2 UInt32 12 0} {a3 Float64 16 0}]"}, // PackedHashMap: 10 + 12 + 16, no padding
	} {
		d, _ := dict.FindClickHouseDictionary(c.layout)
		r := result.Result{Layout: c.layout, ElementCount: n, BucketCount: 1 << 21, BytesAllocated: c.bytes}
		fillAttributesBreakdown(&r, d, names, attrs)
		if r.PayloadBytes != n*22 || r.KeyCopyBytes != n*16 || r.PaddingBytes != c.padding || r.MetadataBytes > c.metaMax ||
			r.PayloadBytes+r.PaddingBytes+r.EmptyBytes+r.MetadataBytes+r.KeyCopyBytes != r.BytesAllocated {
			t.Errorf("%s: payload %d, key copies %d, padding %d, empty %d, metadata %d of %d: want 22, 16 and %d bytes a row, the rest empty cells and headers",
				c.layout, r.PayloadBytes, r.KeyCopyBytes, r.PaddingBytes, r.EmptyBytes, r.MetadataBytes, r.BytesAllocated, c.padding/n)
		}
		if got := fmt.Sprint(r.AttributeCells); got != c.cells {
			t.Errorf("%s: attribute cells %s, want %s", c.layout, got, c.cells)
		}
	}
	// A String's arena, or HASHED_ARRAY, stays one figure.
	d, _ := dict.FindClickHouseDictionary("ch_hashed_array")
	r := result.Result{ElementCount: n, BucketCount: 1 << 21, BytesAllocated: 48_272_240}
	if fillAttributesBreakdown(&r, d, names, attrs); r.PayloadBytes != 0 || r.KeyCopyBytes != 0 || r.AttributeCells != nil {
		t.Errorf("ch_hashed_array: split into %+v, want left whole", r)
	}
}

// TestClickHouseFlat: FLAT is an array per attribute indexed by the key,
// of the largest key's size rounded to a power of two: packlab's figure is
// ClickHouse's bytes_allocated to the byte for sequential keys past the
// default MAX_ARRAY_SIZE (the clause raises it) with a String, and for
// range:M keys; keys it cannot index, SHARDS and a wide key are refused by
// name before anything runs.
func TestClickHouseFlat(t *testing.T) {
	for _, c := range []struct {
		cfg    config.Config
		reason string
	}{
		{config.Config{Layouts: []string{"ch_flat"}, Rows: 1000}, "keys random: ch_flat indexes an array by the key"},
		{config.Config{Layouts: []string{"ch_flat"}, Rows: 1000, Keys: "sequential", Shards: 2}, "shards 2: ch_flat takes no SHARDS"},
		{config.Config{Layouts: []string{"ch_flat"}, Rows: 1000, Keys: "sequential", Key: "UInt128"}, "key UInt128: ch_flat indexes its arrays by an integer key"},
	} {
		if err := c.cfg.Validate(); err == nil || !strings.HasPrefix(err.Error(), c.reason) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.reason)
		}
	}
	if testing.Short() {
		return
	}
	needClickHouse(t)
	for _, c := range []struct {
		keys   string
		attrs  []string
		clause string
	}{
		{"sequential", []string{"UInt16", "name:String", "UInt32"}, "LAYOUT(FLAT(MAX_ARRAY_SIZE 1000000))"},
		{"sequential", []string{"UInt16", "Nullable(UInt32)", "name:Nullable(String)"}, "LAYOUT(FLAT(MAX_ARRAY_SIZE 1000000))"},
		{"range:3000000", nil, "LAYOUT(FLAT(MAX_ARRAY_SIZE 3000000))"},
	} {
		r := drivertest.RunOrFail(t, config.Config{Layouts: []string{"ch_flat"}, Keys: c.keys, Rows: 1_000_000, Attributes: c.attrs, Seed: 1})["ch_flat"]
		ch := r.ClickHouse
		t.Logf("ch_flat %s %v: %s, bytes_allocated %d, model %d, load %.2f s, read %.1f M/s", c.keys, c.attrs, r.ClickHouseLayout, r.BytesAllocated, ch.ModelBytes, r.LoadSeconds, r.ReadRowsPerSecond/1e6)
		if r.ClickHouseLayout != c.clause || r.BytesAllocated != ch.ModelBytes || r.FoundRate != 1 || ch.ComparedWith != "bytes_allocated" {
			t.Errorf("ch_flat %s: %s, bytes_allocated %d, packlab computes %d, found %v: want %s, the same bytes, every key", c.keys, r.ClickHouseLayout, r.BytesAllocated, ch.ModelBytes, r.FoundRate, c.clause)
		}
	}
}

// TestClickHouseFlatSmallRange: keys of range:1000 fall in FLAT's first
// array, which is never resized: packlab's figure is ClickHouse's to the
// byte (it counted a power of two: +82 %, issue 48). Not -short: one
// worker start.
func TestClickHouseFlatSmallRange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts ClickHouse")
	}
	needClickHouse(t)
	r := drivertest.RunOrFail(t, config.Config{Layouts: []string{"ch_flat"}, Keys: "range:1000", Rows: 10_000, Value: "UInt64", NoRead: true})["ch_flat"]
	if ch := r.ClickHouse; r.BytesAllocated != ch.ModelBytes {
		t.Errorf("ch_flat range:1000: bytes_allocated %d, packlab computes %d; want the same", r.BytesAllocated, ch.ModelBytes)
	}
}
