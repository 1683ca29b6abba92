package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/worker"
)

// jsonKeys flattens the keys of a decoded JSON value into paths:
// "workers[].shard", "host.cpus".
func jsonKeys(prefix string, v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			into[prefix+k] = true
			jsonKeys(prefix+k+".", sub, into)
		}
	case []any:
		p := strings.TrimSuffix(prefix, ".") + "[]."
		for _, sub := range x {
			jsonKeys(p, sub, into)
		}
	}
}

// TestResultJSONContract measures a real run and checks its JSON against the
// golden list of keys (testdata/run/result-keys.golden): every field present,
// under its snake_case name, including the ones issue 4 names.
func TestResultJSONContract(t *testing.T) {
	res, err := Run(context.Background(), config.Config{Layouts: []string{"hashed"}, Rows: 20_000, Shards: 2, InProcess: true}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res[0])
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(data, &decoded); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	jsonKeys("", decoded, keys)
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	sort.Strings(got)
	golden, err := os.ReadFile(filepath.Join("testdata", "run", "result-keys.golden"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(golden))
	if !slices.Equal(got, want) {
		t.Errorf("result JSON keys differ from testdata/run/result-keys.golden\n got %v\nwant %v", got, want)
	}
	// The keys issue 4 lists, by name.
	for _, k := range strings.Fields(`layout key_type value_type rows shards max_load_factor source element_count
		duplicates bucket_count load_factor bytes_allocated payload_bytes padding_bytes empty_bytes metadata_bytes
		heap_bytes rss_bytes peak_rss_bytes load_seconds load_rows_per_second read_seconds read_rows_per_second
		found_rate workers workers[].shard workers[].rows workers[].busy_seconds workers[].wait_seconds
		workers[].rows_per_second timeline timeline[].seconds timeline[].rows timeline[].rss_bytes isolated
		clickhouse_layout`) {
		if !keys[k] {
			t.Errorf("result JSON has no %q", k)
		}
	}
	// Every tag in the Result tree is snake_case and never omitted.
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	var walk func(reflect.Type)
	walk = func(ty reflect.Type) {
		for i := range ty.NumField() {
			f := ty.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if !snake.MatchString(name) || opts != "" {
				t.Errorf("%s.%s has json tag %q, want a snake_case name and no options", ty.Name(), f.Name, tag)
			}
			ft := f.Type
			if ft.Kind() == reflect.Slice {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				walk(ft)
			}
		}
	}
	walk(reflect.TypeOf(result.Result{}))
}

// TestHugePagesSetting: --huge-pages reaches the tables of a run in its own
// worker process and is recorded in the result, so that runs with and
// without can be told apart; with no setting the process's own holds (on,
// or off with PACKLAB_HUGEPAGES=off in the environment).
func TestHugePagesSetting(t *testing.T) {
	for _, c := range []struct{ env, setting, want string }{
		{"", "", "on"}, {"", "off", "off"}, {"off", "", "off"}, {"off", "on", "on"},
	} {
		t.Setenv("PACKLAB_HUGEPAGES", c.env)
		if !core.HugePagesSupported {
			c.want = "none"
		}
		res, err := Run(context.Background(), config.Config{Layouts: []string{"packed"}, Rows: 20_000, HugePages: c.setting}, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].HugePages != c.want || !res[0].Isolated {
			t.Errorf("PACKLAB_HUGEPAGES=%q huge_pages %q: result says %q (isolated %v), want %q", c.env, c.setting, res[0].HugePages, res[0].Isolated, c.want)
		}
	}
	if err := (config.Config{HugePages: "yes"}).Validate(); err == nil || err.Error() != "huge_pages yes: unknown (allowed: on, off)" {
		t.Errorf("huge_pages yes: got %v", err)
	}
}

// TestIsolatedAndInProcess measures the same config in worker processes and
// in this one: the computed figures agree, the isolated results say so and
// come from one worker process per layout, and the measured ones are filled.
func TestIsolatedAndInProcess(t *testing.T) {
	cfg := config.Config{Layouts: []string{"hashed", "packed", "hashed_array"}, Rows: 100_000, Shards: 2, MaxLoadFactor: 0.9, Keys: "sequential", Seed: 7}
	log := countWorkers(t)
	iso, err := Run(context.Background(), cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log.started()); n != 3 {
		t.Errorf("isolated run started %d worker processes, want 3 (one per layout)", n)
	}
	cfg.InProcess = true
	inp, err := Run(context.Background(), cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log.started()); n != 3 {
		t.Errorf("in-process run started %d more worker processes", n-3)
	}
	ids := map[string]bool{}
	for i := range iso {
		a, b := iso[i], inp[i]
		if !a.Isolated || b.Isolated {
			t.Errorf("%s: isolated = %v and %v, want true then false", a.Layout, a.Isolated, b.Isolated)
		}
		if a.Layout != cfg.Layouts[i] || b.Layout != cfg.Layouts[i] {
			t.Errorf("result %d is %s/%s, want %s", i, a.Layout, b.Layout, cfg.Layouts[i])
		}
		for _, r := range []result.Result{a, b} {
			if ids[r.ID] {
				t.Errorf("id %s used twice", r.ID)
			}
			ids[r.ID] = true
			if r.ElementCount != 100_000 || r.Rows != 100_000 || r.Duplicates != 0 {
				t.Errorf("%s: element_count %d rows %d duplicates %d, want 100000, 100000, 0", r.Layout, r.ElementCount, r.Rows, r.Duplicates)
			}
			if len(r.Workers) != 2 || r.Workers[0].Rows+r.Workers[1].Rows != 100_000 || r.Workers[1].Shard != 1 {
				t.Errorf("%s: workers %+v, want 2 shards summing to 100000 rows", r.Layout, r.Workers)
			}
			if r.FoundRate != 1 || r.ReadRowsPerSecond <= 0 || r.LoadRowsPerSecond <= 0 || r.LoadSeconds <= 0 {
				t.Errorf("%s: found_rate %v read %v rows/s load %v rows/s", r.Layout, r.FoundRate, r.ReadRowsPerSecond, r.LoadRowsPerSecond)
			}
			tl := r.Timeline
			if len(tl) < 2 || tl[0] != (result.TimelinePoint{}) || tl[len(tl)-1].Rows != 100_000 {
				t.Errorf("%s: timeline %+v, want (0,0,0) first and all rows last", r.Layout, tl)
			}
			if r.Seed != 7 || r.Source != "sequential" || r.KeyType != "UInt64" || r.ValueType != "UInt16" || r.Shards != 2 || r.Repeats != 1 {
				t.Errorf("%s: settings not carried: %+v", r.Layout, r)
			}
			if r.Host.CPUs != runtime.NumCPU() || r.Host.GoVersion != runtime.Version() || r.Runtime != "native" {
				t.Errorf("%s: host %+v runtime %q", r.Layout, r.Host, r.Runtime)
			}
			if r.PredictedPeak <= 0 || r.HeapBytes <= 0 {
				t.Errorf("%s: predicted_peak_bytes %d heap_bytes %d", r.Layout, r.PredictedPeak, r.HeapBytes)
			}
			if machine.MemoryMeasurable && !raceEnabled && (r.RSSBytes <= 0 || r.PeakRSSBytes < r.RSSBytes) {
				t.Errorf("%s: rss_bytes %d peak_rss_bytes %d, want 0 < rss <= peak", r.Layout, r.RSSBytes, r.PeakRSSBytes)
			}
		}
		if a.BucketCount != b.BucketCount || a.BytesAllocated != b.BytesAllocated || a.PaddingBytes != b.PaddingBytes {
			t.Errorf("%s: isolated and in-process tables differ: %d/%d buckets, %d/%d bytes", a.Layout, a.BucketCount, b.BucketCount, a.BytesAllocated, b.BytesAllocated)
		}
	}
	want := []string{"LAYOUT(HASHED(SHARDS 2 MAX_LOAD_FACTOR 0.9))", "LAYOUT(SPARSE_HASHED(SHARDS 2 MAX_LOAD_FACTOR 0.9))", "LAYOUT(HASHED_ARRAY(SHARDS 2))"}
	for i, r := range iso {
		if r.ClickHouseLayout != want[i] {
			t.Errorf("%s: clickhouse_layout %q, want %q", r.Layout, r.ClickHouseLayout, want[i])
		}
	}
	if iso[2].MaxLoadFactor != 0.5 {
		t.Errorf("hashed_array reports max_load_factor %v; its key index always grows at 0.5", iso[2].MaxLoadFactor)
	}
}

// TestSeedTableTarget is issue 4's target: 1e6 <UInt64,UInt16> rows give
// 2^21 buckets in hashed and packed, 32 MiB and 20 MiB plus a header, and
// 6 bytes of padding per pair in hashed only.
func TestSeedTableTarget(t *testing.T) {
	rows := int64(1_000_000)
	if testing.Short() {
		rows = 100_000 // 2^18 buckets
	}
	res, err := Run(context.Background(), config.Config{Layouts: []string{"hashed", "packed"}, Key: "UInt64", Value: "UInt16", Rows: rows, NoRead: testing.Short()}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	buckets := int64(2_097_152)
	if testing.Short() {
		buckets = 262_144
	}
	for i, cell := range []int64{16, 10} {
		r := res[i]
		if r.BucketCount != buckets {
			t.Errorf("%s: bucket_count %d, want %d", r.Layout, r.BucketCount, buckets)
		}
		if extra := r.BytesAllocated - buckets*cell; extra < 0 || extra > 512 {
			t.Errorf("%s: bytes_allocated %d, want %d plus a header of at most 512", r.Layout, r.BytesAllocated, buckets*cell)
		}
		if want := (cell - 10) * rows; r.PaddingBytes != want {
			t.Errorf("%s: padding_bytes %d, want %d", r.Layout, r.PaddingBytes, want)
		}
	}
}

// TestRepeatsRunFreshWorkers: every repeat is its own worker process.
func TestRepeatsRunFreshWorkers(t *testing.T) {
	log := countWorkers(t)
	res, err := Run(context.Background(), config.Config{Layouts: []string{"packed", "gomap"}, Rows: 10_000, Repeats: 3, NoRead: true}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(log.started()); n != 6 {
		t.Errorf("started %d workers for 2 layouts x 3 repeats, want 6", n)
	}
	for _, r := range res {
		if r.Repeats != 3 || r.ReadSeconds != 0 {
			t.Errorf("%s: repeats %d read_seconds %v, want 3 and 0 (no read)", r.Layout, r.Repeats, r.ReadSeconds)
		}
	}
}

// TestProgressEvents: a load long enough to report shows progress for each
// run, numbered, from the caller's goroutine, ending with "done".
func TestProgressEvents(t *testing.T) {
	rows := int64(300_000)
	if testing.Short() {
		rows = 50_000
	}
	var events []worker.Progress
	_, err := Run(context.Background(), config.Config{Layouts: []string{"hashed", "packed"}, Rows: rows}, RunOptions{Progress: func(p worker.Progress) { events = append(events, p) }})
	if err != nil {
		t.Fatal(err)
	}
	last := map[int]worker.Progress{}
	for _, e := range events {
		if e.Repeats != 2 || e.Repeat < 1 || e.Repeat > 2 || e.TotalRows != rows {
			t.Fatalf("event %+v: want repeat 1 or 2 of 2, total %d", e, rows)
		}
		last[e.Repeat] = e
	}
	for run := 1; run <= 2; run++ {
		if e := last[run]; e.Phase != worker.PhaseDone || e.Rows != rows {
			t.Errorf("run %d ends with %+v, want phase done at %d rows", run, e, rows)
		}
	}
}

// TestFileSourceRun: a TSV file is read through before the run (a malformed
// row is an error naming file, line and column, before any worker starts),
// and a good one runs isolated like a generator.
func TestFileSourceRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tsv")
	var b strings.Builder
	b.WriteString("id\tv\n")
	for i := 1; i <= 5000; i++ {
		b.WriteString(strconv.Itoa(i%4000+1) + "\t" + strconv.Itoa(i%60000) + "\n")
	}
	if err := os.WriteFile(good, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.tsv")
	if err := os.WriteFile(bad, []byte("1\t2\n3\t4\nx7\t5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := countWorkers(t)
	_, err := Run(context.Background(), config.Config{Layouts: []string{"hashed"}, Source: bad}, RunOptions{})
	if want := "source " + bad + `:3: column 1: "x7" is not a valid UInt64`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("malformed row: err = %v, want the file, line 3 and column 1", err)
	}
	if n := len(log.started()); n != 0 {
		t.Errorf("a malformed file started %d workers", n)
	}
	res, err := Run(context.Background(), config.Config{Layouts: []string{"hashed", "sparse"}, Source: good, Key: "UInt32", Value: "UInt16"}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Rows != 5000 || r.ElementCount != 4000 || r.Duplicates != 1000 || r.Source != good || !r.Isolated || r.FoundRate != 1 {
			t.Errorf("%s: rows %d elements %d duplicates %d source %q isolated %v found %v", r.Layout, r.Rows, r.ElementCount, r.Duplicates, r.Source, r.Isolated, r.FoundRate)
		}
	}
	// The guard counts the file's rows: skipping the file's read list
	// changes the prediction.
	c, err := Check(context.Background(), config.Config{Layouts: []string{"hashed"}, Source: good, Key: "UInt32"})
	if err != nil {
		t.Fatal(err)
	}
	if e := c.Estimates[0]; e.Rows != 5000 || e.ReadBytes != 5000*4 || !e.Estimated {
		t.Errorf("estimate for the file: %+v, want 5000 rows, read list 20000 bytes, estimated", e)
	}
}

// TestLoadKernelTime: on Linux a load records the kernel's CPU time, which
// is more than nothing for a table that faults in tens of MiB (in 4 KiB
// pages: some 10,000 faults, well above a scheduler tick even where the
// kernel accounts by ticks) and at most the load's time on every thread;
// elsewhere it stays 0 (unknown).
func TestLoadKernelTime(t *testing.T) {
	res, err := Run(context.Background(), config.Config{Layouts: []string{"packed"}, Rows: 2_000_000, NoRead: true, InProcess: true, HugePages: "off"}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	t.Logf("load %.3f s, kernel %.3f s, %d threads", r.LoadSeconds, r.LoadKernelSeconds, r.Threads)
	if runtime.GOOS != "linux" {
		if r.LoadKernelSeconds != 0 {
			t.Errorf("kernel time %v on %s, want 0 (unknown)", r.LoadKernelSeconds, runtime.GOOS)
		}
		return
	}
	if r.LoadKernelSeconds <= 0 || r.LoadKernelSeconds > r.LoadSeconds*float64(r.Threads)+0.05 {
		t.Errorf("kernel time %.3f s for a %.3f s load of a 32 MiB table on %d threads: want more than 0, at most the load's time on every thread", r.LoadKernelSeconds, r.LoadSeconds, r.Threads)
	}
}

// TestPreallocate: --preallocate reaches the tables of runs in their own
// worker processes: each is built for the source's rows (its bytes are
// core.Predict's for that reservation, not for growing there), the result
// says so, the table labels it apart from an unreserved run, and the notes
// say what ClickHouse makes of PREALLOCATE. Rows, not distinct keys: keys
// drawn from 1000 values are reserved for every row, as ClickHouse's were.
func TestPreallocate(t *testing.T) {
	const rows = 300_000
	k, v := core.MustType(config.DefaultKey), core.MustType(config.DefaultValue)
	for _, keys := range []string{"random", "range:1000"} {
		res, err := Run(context.Background(), config.Config{Layouts: []string{"packed", "compact", "hashed_array"}, Rows: rows, Keys: keys, NoRead: true, Preallocate: true}, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			reserved, _ := core.Predict(core.Layout(r.Layout), k, v, r.ElementCount, core.Options{Reserve: rows}, 1)
			grown, _ := core.Predict(core.Layout(r.Layout), k, v, r.ElementCount, core.Options{}, 1)
			if !r.Preallocate || !r.Isolated || r.BytesAllocated != reserved.FinalBytes {
				t.Errorf("%s %s preallocate: preallocate %v, isolated %v, %d bytes; want true, true and %d (reserved for %d rows; grown to %d keys: %d)",
					r.Layout, keys, r.Preallocate, r.Isolated, r.BytesAllocated, reserved.FinalBytes, rows, r.ElementCount, grown.FinalBytes)
			}
		}
	}
	plain, err := Run(context.Background(), config.Config{Layouts: []string{"compact"}, Rows: rows, NoRead: true}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reserved, err := Run(context.Background(), config.Config{Layouts: []string{"compact"}, Rows: rows, NoRead: true, Preallocate: true}, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if plain[0].Preallocate || plain[0].BytesAllocated == reserved[0].BytesAllocated {
		t.Errorf("compact at %d rows: %d bytes grown, %d reserved; want them apart", rows, plain[0].BytesAllocated, reserved[0].BytesAllocated)
	}
	both := []result.Result{plain[0], reserved[0]}
	if got := result.TableSettings(both); got[0] != "compact SHARDS 1 MLF 0.9" || got[1] != "compact SHARDS 1 MLF 0.9 PREALLOCATE" {
		t.Errorf("settings of a grown and a preallocated run: %q", got)
	}
	notes := ResultNotes(both)
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.HasPrefix(n, "PREALLOCATE:") && strings.Contains(n, "ignore it since 23.1")
	}) {
		t.Errorf("notes under a preallocated run: %q; want the PREALLOCATE line", notes)
	}
	if notes := ResultNotes(plain); slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, "PREALLOCATE") }) {
		t.Errorf("notes under a run without it: %q", notes)
	}
}

// TestSettleCancelledInTheIdle: a cancel during the idle before a load
// stops the job at once, keeping what was measured.
func TestSettleCancelledInTheIdle(t *testing.T) {
	cfg := config.Config{Layouts: []string{"hashed", "packed"}, Rows: 1000, NoRead: true, InProcess: true, SettleSeconds: 2}
	ctx, cancel := context.WithCancel(context.Background())
	var measured []string
	start := time.Now()
	res, err := Run(ctx, cfg, RunOptions{OnResult: func(r result.Result) error {
		measured = append(measured, r.Layout)
		return nil
	}, Progress: func(p worker.Progress) {
		if p.Phase == worker.PhaseDone {
			cancel() // in the first load: the second one's idle is cut short
		}
	}})
	if !errors.Is(err, fault.ErrCancelled) || len(res) != 1 || !slices.Equal(measured, []string{"hashed"}) {
		t.Errorf("cancelled in the idle: %d results, %v saved, err %v; want hashed kept and ErrCancelled", len(res), measured, err)
	}
	if took := time.Since(start); took > 3500*time.Millisecond {
		t.Errorf("the cancel waited out the idle: %v (2 s before the first load, then a cancel)", took)
	}
}

// TestSettleFromTheConfig: --settle (Config.SettleSeconds) idles before each
// load, shows the idle as progress counting towards it, is recorded in every
// result and in the job's name, and labels runs apart from unsettled ones.
// (The planner's calibration idles by its configs: TestCalibrationAtAGivenSize.)
func TestSettleFromTheConfig(t *testing.T) {
	cfg := config.Config{Layouts: []string{"hashed", "packed"}, Rows: 1000, NoRead: true, InProcess: true, SettleSeconds: 0.6}
	var idle []worker.Progress
	start := time.Now()
	res, err := Run(context.Background(), cfg, RunOptions{Progress: func(p worker.Progress) {
		if p.Phase == worker.PhaseSettle {
			idle = append(idle, p)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); len(res) != 2 || took < 1200*time.Millisecond {
		t.Errorf("%d results in %v; want 2, after 0.6 s idle before each", len(res), took)
	}
	for _, r := range res {
		if r.SettleSeconds != 0.6 {
			t.Errorf("%s: settle_seconds %v, want 0.6", r.Layout, r.SettleSeconds)
		}
	}
	// Reported at once and every 250 ms (a ticker drops ticks that a busy
	// machine delivers late): at least 2 a load.
	if len(idle) < 4 || idle[0].Layout != "hashed" || idle[0].Repeat != 1 || idle[0].SettleSeconds != 0.6 || idle[len(idle)-1].Layout != "packed" {
		t.Fatalf("idle progress %+v; want hashed's then packed's, each counting towards 0.6 s", idle)
	}
	for i := 1; i < len(idle); i++ {
		if idle[i].Layout == idle[i-1].Layout && idle[i].Seconds < idle[i-1].Seconds {
			t.Errorf("idle progress went back: %v then %v", idle[i-1].Seconds, idle[i].Seconds)
		}
	}
	if name := config.RunJobName(cfg); !strings.Contains(name, "settle 0.6s") {
		t.Errorf("job name %q does not say the idle", name)
	}
	plain := res[1]
	plain.SettleSeconds = 0
	if labels := result.RunLabels([]result.Result{plain, res[1]}, result.LabelAll, 0); labels[0] != "packed" || labels[1] != "packed settle 0.6s" {
		t.Errorf("labels %q; want the settled run labelled apart", labels)
	}
	for _, v := range []float64{-1, 601, math.NaN()} {
		err := config.Config{SettleSeconds: v}.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != "settle_seconds" || fe.Allowed != "0 to 600 seconds" {
			t.Errorf("settle %v: %v; want a settle_seconds field error, 0 to 600 seconds", v, err)
		}
	}
}

// TestSourceCountProgress: a file source is read through before the runs
// (its rows for the guard); that count reports progress, so that a
// 1e9-row gzip file's minute of counting is not a silent one, and the
// rows it reports only grow, up to the file's.
func TestSourceCountProgress(t *testing.T) {
	defer func(d time.Duration) { worker.CountProgressEvery = d }(worker.CountProgressEvery)
	worker.CountProgressEvery = 0 // every block
	path := filepath.Join(t.TempDir(), "keys.tsv")
	var b strings.Builder
	const rows = 300_000
	for i := 1; i <= rows; i++ {
		b.WriteString(strconv.Itoa(i) + "\t7\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var counts []int64
	_, err := Run(context.Background(), config.Config{Layouts: []string{"hashed"}, Source: path, NoRead: true, InProcess: true}, RunOptions{Progress: func(p worker.Progress) {
		if p.Phase == worker.PhaseCount {
			counts = append(counts, p.Rows)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) < 3 || !slices.IsSorted(counts) || counts[len(counts)-1] > rows {
		t.Errorf("count progress %v: want several, growing, at most %d rows", counts, rows)
	}
}

// TestSweepRunsAreCheckedAtTheirOwnRows: every run of a growth sweep is
// checked by the guard (and named, if cancelled) at its own row count, not
// at the first config's: the synthetic source's rows are each config's.
func TestSweepRunsAreCheckedAtTheirOwnRows(t *testing.T) {
	var cfgs []config.Config // a growth sweep's
	for _, rows := range []int64{10_000, 100_000, 1_000_000} {
		cfgs = append(cfgs, config.Config{Layouts: []string{"packed"}, Rows: rows})
	}
	runs, err := prepare(context.Background(), cfgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(cfgs) || len(runs) < 3 {
		t.Fatalf("%d runs for %d configs", len(runs), len(cfgs))
	}
	for i, r := range runs {
		if r.est.Rows != cfgs[i].Rows {
			t.Errorf("run %d (%s at %d rows) checked at %d rows", i, r.run.Layout, cfgs[i].Rows, r.est.Rows)
		}
	}
	last := stopped(runs[len(runs)-1], context.Canceled)
	if !strings.Contains(last.Error(), "packed at 1M rows was stopped") {
		t.Errorf("the last run's cancel: %v, want it named at 1M rows", last)
	}
}
