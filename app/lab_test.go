package app

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/worker"
)

// TestMain lets this test binary serve as the worker process that measures
// each run, as the packlab binary does in the desktop app.
func TestMain(m *testing.M) { os.Exit(experiments.WorkerOr(m.Run)) }

// events records what a run emits.
type events struct {
	mu  sync.Mutex
	all []event
	ch  chan event
}

type event struct {
	name string
	data any
}

func newEvents() *events { return &events{ch: make(chan event, 4096)} }

func (e *events) emit(name string, data any) {
	e.mu.Lock()
	e.all = append(e.all, event{name, data})
	e.mu.Unlock()
	e.ch <- event{name, data}
}

// waitDone returns the run's events up to and including its EventDone.
func (e *events) waitDone(t *testing.T, id string, timeout time.Duration) ([]event, RunDone) {
	t.Helper()
	var got []event
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-e.ch:
			got = append(got, ev)
			if d, ok := ev.data.(RunDone); ok && d.ID == id {
				return got, d
			}
		case <-deadline:
			t.Fatalf("run %s: no %s in %v; events so far: %d", id, EventDone, timeout, len(got))
		}
	}
}

// waitTable waits up to two minutes for run id to end with n results and
// returns their table.
func (e *events) waitTable(t *testing.T, l *Lab, id string, n int) Table {
	t.Helper()
	_, done := e.waitDone(t, id, 2*time.Minute)
	if done.Failed || len(done.ResultIDs) != n {
		t.Fatalf("done %+v", done)
	}
	tab, err := l.Table(done.ResultIDs)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// run starts f on l and waits up to timeout for its end: the events on the
// way and its RunDone.
func (e *events) run(t *testing.T, l *Lab, f Form, timeout time.Duration) ([]event, RunDone) {
	t.Helper()
	st, err := l.StartRun(f)
	if err != nil {
		t.Fatal(err)
	}
	return e.waitDone(t, st.ID, timeout)
}

func newLab(t *testing.T) (*Lab, *events) {
	t.Helper()
	ev := newEvents()
	l, err := New(Options{ResultsDir: t.TempDir(), Emit: ev.emit})
	if err != nil {
		t.Fatal(err)
	}
	return l, ev
}

func small(layouts ...string) Form {
	f := defaultForm()
	f.Layouts = layouts
	f.Rows = "1e5"
	return f
}

// apiError checks that err is an *Error for field whose message names want.
func apiError(t *testing.T, err error, field, want string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *Error for %q", err, err, field)
	}
	if e.Field != field || !strings.Contains(e.Message, want) {
		t.Errorf("error {field %q, message %q}, want field %q and a message naming %q", e.Field, e.Message, field, want)
	}
	b, _ := json.Marshal(e)
	if !bytes.HasPrefix(b, []byte(`{"field":`)) {
		t.Errorf("error JSON %s", b)
	}
}

func TestLimits(t *testing.T) {
	l, _ := newLab(t)
	lim, err := l.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if len(lim.Layouts) < 5 || lim.Layouts[1].Name != "packed" || lim.Layouts[1].ClickHouse != "SPARSE_HASHED" {
		t.Errorf("layouts %+v", lim.Layouts)
	}
	// The form shows each layout's ClickHouse counterpart under its name:
	// packed and sparse are both SPARSE_HASHED, so the label must say which
	// table and which ClickHouse versions, and no two labels may be equal.
	labels := map[string]string{}
	for _, ly := range lim.Layouts {
		if ly.ClickHouseLabel == "" {
			continue
		}
		if other, ok := labels[ly.ClickHouseLabel]; ok {
			t.Errorf("layouts %s and %s both show %q", other, ly.Name, ly.ClickHouseLabel)
		}
		labels[ly.ClickHouseLabel] = ly.Name
	}
	for name, want := range map[string]string{
		"packed":  "SPARSE_HASHED (PackedHashMap, since 23.5)",
		"sparse":  "SPARSE_HASHED (sparse_hash_map, before 23.5)",
		"hashed":  "HASHED (HashMap)",
		"compact": "no ClickHouse layout (packlab's, ordered probing)",
	} {
		i := slices.IndexFunc(lim.Layouts, func(l LayoutInfo) bool { return l.Name == name })
		if i < 0 || lim.Layouts[i].ClickHouseLabel != want {
			t.Errorf("layout %s: label %+v, want %q", name, lim.Layouts, want)
		}
	}
	if lim.CoresText != coresText(runtime.NumCPU()) || coresText(1) != "1 core" || coresText(2) != "2 cores" {
		t.Errorf("cores text %q (1: %q, 2: %q), want \"1 core\" and \"2 cores\"", lim.CoresText, coresText(1), coresText(2))
	}
	if len(lim.Types) != 15 || lim.Types[3].Name != "UInt64" || lim.Types[3].Size != 8 || lim.Types[3].Label != "UInt64 · 8 B" {
		t.Errorf("types %+v", lim.Types)
	}
	if lim.Shards != (IntRange{1, 128, 1}) || lim.MaxLoadFactor.Min != 0.5 || lim.MaxLoadFactor.Max != 0.99 {
		t.Errorf("ranges: shards %+v, mlf %+v", lim.Shards, lim.MaxLoadFactor)
	}
	if lim.Cores != runtime.NumCPU() || lim.TotalMemoryBytes <= 0 || lim.FreeMemoryBytes <= 0 || lim.FreeMemoryBytes > lim.TotalMemoryBytes {
		t.Errorf("machine: %d cores, %d total, %d free", lim.Cores, lim.TotalMemoryBytes, lim.FreeMemoryBytes)
	}
	if lim.Runtime != "native" || !lim.Isolated {
		t.Errorf("runtime %q, isolated %v", lim.Runtime, lim.Isolated)
	}
	var kinds []string
	for _, k := range lim.ChartKinds {
		kinds = append(kinds, k.Kind)
		if k.Title == "" || k.Title == k.Kind {
			t.Errorf("chart %s has no title", k.Kind)
		}
	}
	if !slices.Equal(kinds, report.ChartKinds()) {
		t.Errorf("chart kinds %v, want %v", kinds, report.ChartKinds())
	}
	// The defaults are a valid form that fits.
	est, err := l.Estimate(lim.Defaults)
	own := slices.DeleteFunc(slices.Clone(lim.Layouts), func(l LayoutInfo) bool { return l.Reference || l.ClickHouseOwn || l.Row })
	if err != nil || !est.Fits || len(est.Layouts) != len(own) {
		t.Errorf("defaults: %+v, %v", est, err)
	}
}

func TestEstimate(t *testing.T) {
	l, _ := newLab(t)
	est, err := l.Estimate(small("hashed", "packed"))
	if err != nil {
		t.Fatal(err)
	}
	if !est.Fits || est.Rows != 100_000 || est.RowsText != "100K" || len(est.Layouts) != 2 {
		t.Fatalf("estimate %+v", est)
	}
	h, p := est.Layouts[0], est.Layouts[1]
	if h.Layout != "hashed" || p.Layout != "packed" {
		t.Fatalf("layouts %s, %s", h.Layout, p.Layout)
	}
	// 1e5 keys at mlf 0.5: 262,144 cells of 16 B (hashed) and 10 B (packed).
	if h.FinalBytes < 262_144*16 || h.FinalBytes > 262_144*16+1024 || p.FinalBytes < 262_144*10 || p.FinalBytes > 262_144*10+1024 {
		t.Errorf("final bytes hashed %d, packed %d", h.FinalBytes, p.FinalBytes)
	}
	if h.PeakBytes <= h.FinalBytes || !h.Fits || h.BarPercent < 0.5 || h.BarPercent > 100 {
		t.Errorf("hashed: %+v", h)
	}
	if !strings.Contains(est.Message, est.AvailableText) || !strings.Contains(est.Verdict, "Fits") {
		t.Errorf("message %q, verdict %q", est.Message, est.Verdict)
	}

	// A billion rows of every layout will not fit in this machine: not an
	// error, a refusal with the numbers.
	f := defaultForm()
	f.Rows = "3B"
	est, err = l.Estimate(f)
	if err != nil {
		t.Fatal(err)
	}
	if est.Fits || !strings.Contains(est.Verdict, "refused") || !strings.Contains(est.Message, "available") || !strings.Contains(est.Message, "3B rows") {
		t.Errorf("3B rows: fits %v, verdict %q, message %q", est.Fits, est.Verdict, est.Message)
	}
	// StartRun refuses it before anything runs.
	_, err = l.StartRun(f)
	apiError(t, err, "run", "Not run")
	if ids, _ := l.Running(); len(ids) != 0 {
		t.Errorf("refused run left jobs %v", ids)
	}
}

func TestBadInputNamesTheField(t *testing.T) {
	dir := t.TempDir()
	tsv := filepath.Join(dir, "keys.tsv")
	if err := os.WriteFile(tsv, []byte("1\t10\n2\t20\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		edit  func(*Form)
		field string
		want  string
	}{
		{"no layout", func(f *Form) { f.Layouts = nil }, "layouts", "at least one"},
		{"unknown layout", func(f *Form) { f.Layouts = []string{"btree"} }, "layouts", "btree"},
		{"layout twice", func(f *Form) { f.Layouts = []string{"packed", "packed"} }, "layouts", "twice"},
		{"key type", func(f *Form) { f.Key = "UInt7" }, "key", "UInt7"},
		{"value type", func(f *Form) { f.Value = "String" }, "value", "String"},
		{"value's String lengths", func(f *Form) { f.Value = "String(40..20)" }, "value", "String(40..20): String's shortest length 40 is over its longest, 20"},
		{"key's String lengths", func(f *Form) { f.Key = "Nullable(String(0))" }, "key", "String's longest length is 0 bytes"},
		{"rows text", func(f *Form) { f.Rows = "ten" }, "rows", "ten"},
		{"rows zero", func(f *Form) { f.Rows = "0" }, "rows", "not positive"},
		{"rows empty", func(f *Form) { f.Rows = "" }, "rows", "empty"},
		{"rows fraction", func(f *Form) { f.Rows = "1.5" }, "rows", "whole"},
		{"rows negative", func(f *Form) { f.Rows = "-1M" }, "rows", "-1M"},
		{"shards zero", func(f *Form) { f.Shards = "0" }, "shards", "1 to 128"},
		{"shards 129", func(f *Form) { f.Shards = "129" }, "shards", "129"},
		{"shards text", func(f *Form) { f.Shards = "four" }, "shards", "not a whole number"},
		{"shards fraction", func(f *Form) { f.Shards = "1.5" }, "shards", "1.5"},
		{"shards huge", func(f *Form) { f.Shards = "1e300" }, "shards", "1e300: out of range"},
		{"mlf low", func(f *Form) { f.MaxLoadFactor = "0.3" }, "max_load_factor", "0.5 to 0.99"},
		{"mlf one", func(f *Form) { f.MaxLoadFactor = "1" }, "max_load_factor", "out of range"},
		{"mlf text", func(f *Form) { f.MaxLoadFactor = "half" }, "max_load_factor", "not a number"},
		{"key kind", func(f *Form) { f.Keys = "poisson" }, "keys", "poisson"},
		{"range without M", func(f *Form) { f.Keys = "range" }, "keys_param", "need M"},
		{"range M text", func(f *Form) { f.Keys, f.KeysParam = "range", "many" }, "keys_param", "many"},
		{"range M too big", func(f *Form) { f.Keys, f.KeysParam = "range", "1e20" }, "keys_param", "1e20"},
		{"zipf S zero", func(f *Form) { f.Keys, f.KeysParam = "zipf", "0" }, "keys_param", "0"},
		{"zipf S too big", func(f *Form) { f.Keys, f.KeysParam = "zipf", "11" }, "keys_param", "11"},
		{"param on random", func(f *Form) { f.KeysParam = "5" }, "keys_param", "no parameter"},
		{"seed negative", func(f *Form) { f.Seed = "-1" }, "seed", "-1"},
		{"seed text", func(f *Form) { f.Seed = "abc" }, "seed", "not a whole number"},
		{"repeats zero", func(f *Form) { f.Repeats = "0" }, "repeats", "1 to 100"},
		{"repeats 101", func(f *Form) { f.Repeats = "101" }, "repeats", "101"},
		{"miss rate", func(f *Form) { f.MissRate = "2" }, "miss_rate", "0 to 1"},
		{"miss rate without read", func(f *Form) { f.MissRate, f.NoRead = "0.5", true }, "miss_rate", "skip lookups"},
		{"huge pages", func(f *Form) { f.HugePages = "maybe" }, "huge_pages", "on, off"},
		{"settle text", func(f *Form) { f.Settle = "soon" }, "settle", "soon"},
		{"settle too long", func(f *Form) { f.Settle = "601" }, "settle", "0 to 600"},
		{"settle negative", func(f *Form) { f.Settle = "-2" }, "settle", "-2"},
		{"settle NaN", func(f *Form) { f.Settle = "NaN" }, "settle", "NaN: not a number"},
		{"miss rate Inf", func(f *Form) { f.MissRate = "Inf" }, "miss_rate", "Inf: not a number"},
		{"file not chosen", func(f *Form) { f.SourceKind, f.Keys = "file", "" }, "source", "choose a TSV or CSV"},
		{"source kind", func(f *Form) { f.SourceKind = "http" }, "source", "http"},
		{"no such file", func(f *Form) { f.Keys, f.Source = "", filepath.Join(dir, "nope.tsv") }, "source", "no such file"},
		{"file is a folder", func(f *Form) { f.Keys, f.Source = "", dir }, "source", "directory"},
		{"file and keys", func(f *Form) { f.Source = tsv }, "keys", "not both"},
		{"column without file", func(f *Form) { f.KeyColumn = "2" }, "source", "apply to a file"},

		{"attributes of packlab's layout", func(f *Form) { f.Attributes = []string{"UInt16", "UInt32"} }, "attributes", "ClickHouse's layouts and the row layouts"},
		{"attribute type", func(f *Form) { f.Attributes = []string{"UInt16", "LowCardinality(String)"} }, "attributes", "LowCardinality(String): unknown type"},
		{"attribute's Nullable", func(f *Form) { f.Attributes = []string{"UInt16", "Nullable(String(-1))"} }, "attributes", `Nullable(String(-1)): String's length "-1" is not a whole number of bytes`},
		{"bad header", func(f *Form) { f.Keys, f.Source, f.Header = "", tsv, "maybe" }, "header", "maybe"},
		{"preallocate a file", func(f *Form) { f.Keys, f.Source, f.Preallocate = "", tsv, true }, "preallocate", "synthetic keys"},
		// The file's columns, as the command line's --columns: an empty one
		// (a comma at the end) is named, not counted as a column.
		{"empty column", func(f *Form) {
			f.Layouts, f.Keys, f.Source, f.Attributes, f.Columns = []string{"packed_row"}, "", tsv, []string{"UInt16", "UInt32"}, "3,"
		}, "columns", "3,: column 2 of 2 is empty: a comma at the end"},
	}
	l, _ := newLab(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := small("packed")
			c.edit(&f)
			_, err := l.Estimate(f)
			apiError(t, err, c.field, c.want)
			_, err = l.StartRun(f)
			apiError(t, err, c.field, c.want)
		})
	}
	if ids, _ := l.Running(); len(ids) != 0 {
		t.Errorf("bad input started runs %v", ids)
	}

	// A file is read through inside the run (so that Cancel works then
	// too): the prediction names its problem at once, the run as an event.
	f := small("packed")
	f.Keys, f.Rows, f.Source, f.KeyColumn = "", "", tsv, "9"
	_, err := l.Estimate(f)
	apiError(t, err, "source", "key column 9")
	l2, ev := newLab(t)
	got, done := ev.run(t, l2, f, time.Minute)
	var runErr *RunError
	for _, e := range got {
		if re, ok := e.data.(RunError); ok {
			runErr = &re
		}
	}
	if runErr == nil || runErr.Field != "source" || !strings.Contains(runErr.Message, "key column 9") || !done.Failed || len(done.ResultIDs) != 0 {
		t.Errorf("file run: error event %+v, done %+v", runErr, done)
	}
}

func TestGoodSpellings(t *testing.T) {
	l, _ := newLab(t)
	for _, c := range []struct {
		rows string
		want int64
	}{{"1e6", 1_000_000}, {"10M", 10_000_000}, {" 2.5K ", 2500}, {"1_000", 1000}, {"1B", 1_000_000_000}} {
		f := small("packed")
		f.Rows = c.rows
		est, err := l.Estimate(f)
		if err != nil || est.Rows != c.want {
			t.Errorf("rows %q: %d, %v; want %d", c.rows, est.Rows, err, c.want)
		}
	}
	f := small("packed")
	f.Shards, f.MaxLoadFactor, f.Keys, f.KeysParam, f.Seed, f.Repeats = " 8 ", "0.75", "range", "1M", "18446744073709551615", "3"
	cfg, err := f.Parse()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Shards != 8 || cfg.MaxLoadFactor != 0.75 || cfg.Keys != "range:1000000" || cfg.Seed != 1<<64-1 || cfg.Repeats != 3 {
		t.Errorf("config %+v", cfg)
	}
}

func pngDataURL(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := 0; x < w; x++ {
		img.Set(x, h/2, color.RGBA{47, 111, 237, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// A comparison run end to end, measured in worker processes: events,
// saved results, history, the table, every chart and every export.
func TestRunCompareAndExport(t *testing.T) {
	l, ev := newLab(t)
	st, err := l.StartRun(small("packed", "hashed"))
	if err != nil {
		t.Fatal(err)
	}
	if st.ID == "" || !slices.Equal(st.Layouts, []string{"packed", "hashed"}) || st.TotalRows != 100_000 || !strings.Contains(st.Title, "2 layouts") {
		t.Errorf("started %+v", st)
	}
	got, done := ev.waitDone(t, st.ID, 2*time.Minute)
	if done.Cancelled || done.Failed || len(done.ResultIDs) != 2 {
		t.Fatalf("done %+v", done)
	}
	var progress, results int
	for _, e := range got {
		switch d := e.data.(type) {
		case Progress:
			progress++
			if e.name != EventProgress || d.ID != st.ID || d.TotalRows != 100_000 || d.Percent < 0 || d.Percent > 100 || d.RowsText == "" || d.LayoutText == "" {
				t.Errorf("progress %+v", d)
			}
		case RunResult:
			results++
			if e.name != EventResult || d.ResultID != done.ResultIDs[results-1] {
				t.Errorf("result event %+v", d)
			}
		case RunError:
			t.Errorf("error event %+v", d)
		}
	}
	if progress == 0 || results != 2 {
		t.Errorf("%d progress and %d result events", progress, results)
	}
	if ids, _ := l.Running(); len(ids) != 0 {
		t.Errorf("finished run still listed: %v", ids)
	}

	// History: the run is one job, named as asked, its results in the
	// order measured.
	h, err := l.History()
	if err != nil || h.Count != 2 || len(h.Jobs) != 1 || len(h.Jobs[0].Rows) != 2 || len(h.Jobs[0].Rows[0].Cells) != len(h.Columns) {
		t.Fatalf("history %+v, %v", h, err)
	}
	hj := h.Jobs[0]
	if hj.ID != st.JobID || hj.Name != "run packed,hashed 1e5" || st.JobName != hj.Name || hj.Face != "desktop" ||
		hj.Summary != "2 results · packed, hashed · UInt64→UInt16 · 100K rows" || hj.Results != "2" || hj.Legacy {
		t.Errorf("history job %+v (started %+v)", hj, st)
	}
	if hj.Rows[0].ID != done.ResultIDs[0] || hj.Rows[0].Cells[1] != "packed" || hj.Rows[1].Cells[1] != "hashed" || hj.Rows[0].Cells[3] != "100K" {
		t.Errorf("history rows %+v", hj.Rows)
	}

	tab, err := l.Table(done.ResultIDs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range tab.Columns {
		names = append(names, c.Name)
	}
	for _, want := range []string{"settings", "load (sec)", "read (sec)", "read (million rows/s)", "bytes_allocated", "RSS", "peak RSS"} {
		if !slices.Contains(names, want) {
			t.Errorf("table lacks %q: %v", want, names)
		}
	}
	if len(tab.Rows) != 2 || !strings.HasPrefix(tab.Rows[0].Cells[0], "packed") || tab.Rows[0].ID != done.ResultIDs[0] || !tab.Columns[1].Numeric || tab.Columns[0].Numeric {
		t.Errorf("table %+v", tab)
	}
	// The comparison's heading says what it shows: this job, and the types
	// its rows share.
	if want := "run packed,hashed 1e5 · desktop · started " + hj.Started + " · UInt64 → UInt16 · 2 results"; tab.Title != want {
		t.Errorf("table title %q, want %q", tab.Title, want)
	}

	for _, kind := range report.ChartKinds() {
		c, err := l.Chart(kind, done.ResultIDs)
		if err != nil || c.Empty || c.Kind != kind || c.Title == "" {
			t.Errorf("chart %s: %+v, %v", kind, c, err)
			continue
		}
		var opt map[string]any
		if err := json.Unmarshal(c.Option, &opt); err != nil || opt["series"] == nil {
			t.Errorf("chart %s option: %v, %.200s", kind, err, c.Option)
		}
	}
	_, err = l.Chart("pie", done.ResultIDs)
	apiError(t, err, "chart", "pie")
	_, err = l.Chart("throughput", nil)
	apiError(t, err, "chart", "no results chosen")
	_, err = l.Chart("throughput", []string{"nope"})
	apiError(t, err, "chart", "nope")

	dir := t.TempDir()
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="5" height="5"/></svg>`
	for _, c := range []struct {
		req   ExportRequest
		check func([]byte) bool
	}{
		{ExportRequest{What: "chart", Format: "png", Kind: "memory-breakdown", Data: pngDataURL(t, 640, 400)},
			func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }},
		{ExportRequest{What: "chart", Format: "svg", Kind: "throughput", Data: svg},
			func(b []byte) bool { return bytes.HasPrefix(b, []byte("<?xml")) && bytes.Contains(b, []byte("</svg>")) }},
		{ExportRequest{What: "report", Format: "html", Title: "two layouts"},
			func(b []byte) bool {
				return bytes.Contains(b, []byte("two layouts")) && bytes.Contains(b, []byte("<html"))
			}},
		{ExportRequest{What: "table", Format: "markdown"}, func(b []byte) bool { return bytes.HasPrefix(b, []byte("| settings |")) }},
		{ExportRequest{What: "table", Format: "csv"}, func(b []byte) bool { return bytes.Count(b, []byte("\n")) == 3 }},
		{ExportRequest{What: "results", Format: "json"}, func(b []byte) bool {
			var rs []result.Result
			return json.Unmarshal(b, &rs) == nil && len(rs) == 2 && rs[0].ID == done.ResultIDs[0] && rs[0].Isolated
		}},
	} {
		c.req.IDs = done.ResultIDs
		c.req.Path = filepath.Join(dir, c.req.What+"."+c.req.Format)
		res, err := l.Export(c.req)
		if err != nil {
			t.Errorf("export %s %s: %v", c.req.What, c.req.Format, err)
			continue
		}
		b, err := os.ReadFile(c.req.Path)
		if err != nil || int64(len(b)) != res.Bytes || !c.check(b) || !strings.HasPrefix(res.Message, "Saved ") {
			t.Errorf("export %s %s: %+v, %d bytes, %v: %.120q", c.req.What, c.req.Format, res, len(b), err, b)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}

	// Delete one; History and the table follow.
	if _, err := l.Delete([]string{done.ResultIDs[0], "nope"}); err == nil {
		t.Errorf("deleting an unknown id succeeded")
	}
	if h, _ := l.History(); h.Count != 2 {
		t.Errorf("a failed delete removed results: %d left", h.Count)
	}
	del, err := l.Delete(done.ResultIDs[:1])
	if err != nil || !slices.Equal(del.Deleted, done.ResultIDs[:1]) {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	if h, _ := l.History(); h.Count != 1 || len(h.Jobs) != 1 || h.Jobs[0].Rows[0].ID != done.ResultIDs[1] {
		t.Errorf("after delete: %+v", h.Jobs)
	}
	_, err = l.Table(done.ResultIDs)
	apiError(t, err, "export", done.ResultIDs[0])
	_, err = l.Delete(nil)
	apiError(t, err, "history", "no results")

	// A new Lab over the same folder (the app restarted) sees the result.
	l2, err := New(Options{ResultsDir: l.opt.ResultsDir})
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := l2.History(); h.Count != 1 || h.Jobs[0].Rows[0].ID != done.ResultIDs[1] {
		t.Errorf("after a restart: %+v", h.Jobs)
	}
}

// TestHistoryByJob: every Run is a job of its own, listed newest first by
// the time it started, which is the time shown; a comparison across jobs
// says so; deleting a job's results deletes the job.
func TestHistoryByJob(t *testing.T) {
	l, ev := newLab(t)
	var runs []RunDone
	for _, f := range []Form{small("packed"), small("hashed", "gomap")} {
		_, done := ev.run(t, l, f, time.Minute)
		runs = append(runs, done)
	}
	h, err := l.History()
	if err != nil || len(h.Jobs) != 2 || h.Count != 3 {
		t.Fatalf("history %+v, %v", h, err)
	}
	if h.Jobs[0].Name != "run hashed,gomap 1e5" || h.Jobs[1].Name != "run packed 1e5" {
		t.Errorf("jobs %q, %q; want the second run first", h.Jobs[0].Name, h.Jobs[1].Name)
	}
	// Ordered by the time shown: each job's start.
	if h.Jobs[0].Started < h.Jobs[1].Started {
		t.Errorf("jobs are not in the order of the times shown: %q before %q", h.Jobs[0].Started, h.Jobs[1].Started)
	}
	both := append(append([]string{}, runs[0].ResultIDs...), runs[1].ResultIDs...)
	tab, err := l.Table(both)
	if want := "3 results from 2 jobs: run packed 1e5; run hashed,gomap 1e5"; err != nil || tab.Title != want {
		t.Errorf("table title %q (%v), want %q", tab.Title, err, want)
	}
	if _, err := l.Delete(runs[1].ResultIDs); err != nil {
		t.Fatal(err)
	}
	if h, _ := l.History(); len(h.Jobs) != 1 || h.Jobs[0].Name != "run packed 1e5" {
		t.Errorf("after deleting a job's results: %+v", h.Jobs)
	}
}

func TestExportErrors(t *testing.T) {
	l, ev := newLab(t)
	_, done := ev.run(t, l, small("packed"), time.Minute)
	if len(done.ResultIDs) != 1 {
		t.Fatalf("done %+v", done)
	}
	ids := done.ResultIDs
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, c := range []struct {
		name  string
		req   ExportRequest
		field string
		want  string
	}{
		{"unknown what", ExportRequest{What: "movie", Format: "mp4", IDs: ids, Path: p("x")}, "export", "movie mp4"},
		{"wrong format", ExportRequest{What: "table", Format: "xlsx", IDs: ids, Path: p("x")}, "export", "allowed"},
		{"no results", ExportRequest{What: "table", Format: "csv", Path: p("x")}, "export", "no results"},
		{"unknown result", ExportRequest{What: "table", Format: "csv", IDs: []string{"nope"}, Path: p("x")}, "export", "nope"},
		{"twice", ExportRequest{What: "table", Format: "csv", IDs: []string{ids[0], ids[0]}, Path: p("x")}, "export", "twice"},
		{"no folder", ExportRequest{What: "table", Format: "csv", IDs: ids, Path: p("missing/x.csv")}, "export", "no such folder"},
		{"path is a folder", ExportRequest{What: "table", Format: "csv", IDs: ids, Path: dir}, "export", "is a folder"},
		{"unknown chart", ExportRequest{What: "chart", Format: "png", Kind: "pie", IDs: ids, Data: pngDataURL(t, 4, 4), Path: p("x.png")}, "chart", "pie"},
		{"no image", ExportRequest{What: "chart", Format: "png", Kind: "throughput", IDs: ids, Path: p("x.png")}, "chart", "not rendered"},
		{"not a data URL", ExportRequest{What: "chart", Format: "png", Kind: "throughput", IDs: ids, Data: "hello", Path: p("x.png")}, "chart", "data URL"},
		{"not a PNG", ExportRequest{What: "chart", Format: "png", Kind: "throughput", IDs: ids, Data: "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("GIF89a....")), Path: p("x.png")}, "chart", "not a PNG"},
		{"bad base64", ExportRequest{What: "chart", Format: "png", Kind: "throughput", IDs: ids, Data: "data:image/png;base64,!!!", Path: p("x.png")}, "chart", "base64"},
		{"not an SVG", ExportRequest{What: "chart", Format: "svg", Kind: "throughput", IDs: ids, Data: "<html></html>", Path: p("x.svg")}, "chart", "<svg>"},
		{"no dialog", ExportRequest{What: "table", Format: "csv", IDs: ids}, "export", "give a path"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := l.Export(c.req)
			apiError(t, err, c.field, c.want)
		})
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("failed exports left files: %v", left)
	}

	// The save dialog: cancelled, or a name without its extension.
	var asked []FileDialog
	answer := ""
	l.opt.SaveFile = func(d FileDialog) (string, error) { asked = append(asked, d); return answer, nil }
	res, err := l.Export(ExportRequest{What: "table", Format: "csv", IDs: ids})
	if err != nil || !res.Cancelled {
		t.Errorf("cancelled dialog: %+v, %v", res, err)
	}
	answer = p("mytable")
	res, err = l.Export(ExportRequest{What: "table", Format: "csv", IDs: ids})
	if err != nil || res.Path != p("mytable.csv") {
		t.Errorf("dialog path: %+v, %v", res, err)
	}
	if len(asked) != 2 || !strings.HasSuffix(asked[0].DefaultName, "-table.csv") || asked[0].Filters[0].Pattern != "*.csv" {
		t.Errorf("dialogs asked %+v", asked)
	}
	l.opt.SaveFile = func(FileDialog) (string, error) { return "", errors.New("no display") }
	_, err = l.Export(ExportRequest{What: "table", Format: "csv", IDs: ids})
	apiError(t, err, "export", "no display")
}

func TestChooseSource(t *testing.T) {
	l, _ := newLab(t)
	_, err := l.ChooseSource()
	apiError(t, err, "source", "type the file's path")
	l.opt.OpenFile = func(d FileDialog) (string, error) {
		if len(d.Filters) == 0 || !strings.Contains(d.Filters[0].Pattern, "*.tsv") {
			t.Errorf("open dialog %+v", d)
		}
		return "/data/keys.tsv", nil
	}
	if c, err := l.ChooseSource(); err != nil || c.Path != "/data/keys.tsv" || c.Cancelled {
		t.Errorf("choose: %+v, %v", c, err)
	}
	l.opt.OpenFile = func(FileDialog) (string, error) { return "", nil }
	if c, err := l.ChooseSource(); err != nil || !c.Cancelled {
		t.Errorf("cancelled: %+v, %v", c, err)
	}
}

// A run from a TSV file, measured in a worker: the file's rows, its path
// as the source.
func TestRunFromFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id\tvalue\n")
	for i := 1; i <= 3000; i++ {
		b.WriteString(strconv.Itoa(i*7) + "\t" + strconv.Itoa(i%65536) + "\n")
	}
	b.WriteString("7\t1\n") // a duplicate key: the first occurrence wins
	path := filepath.Join(dir, "keys.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l, ev := newLab(t)
	f := small("hashed_array")
	f.Keys, f.Rows, f.Source, f.KeyColumn, f.ValueColumn = "", "", path, "id", "value"

	// The prediction counts the file's rows, and sees the file change.
	small := filepath.Join(dir, "small.tsv")
	g := f
	g.Source = small
	for _, n := range []int64{2, 3} {
		body := "id\tvalue\n" + strings.Repeat("5\t1\n", int(n))
		if err := os.WriteFile(small, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		est, err := l.Estimate(g)
		if err != nil || est.Rows != n {
			t.Errorf("file of %d rows: estimate %d rows, %v", n, est.Rows, err)
		}
	}
	_, done := ev.run(t, l, f, time.Minute)
	if len(done.ResultIDs) != 1 {
		t.Fatalf("done %+v", done)
	}
	var out bytes.Buffer
	res, err := l.Export(ExportRequest{What: "results", Format: "json", IDs: done.ResultIDs, Path: filepath.Join(dir, "r.json")})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(res.Path)
	out.Write(data)
	var rs []result.Result
	if err := json.Unmarshal(out.Bytes(), &rs); err != nil || len(rs) != 1 {
		t.Fatalf("results: %v", err)
	}
	if r := rs[0]; r.Rows != 3001 || r.ElementCount != 3000 || r.Duplicates != 1 || r.Source != path {
		t.Errorf("file run: rows %d, elements %d, duplicates %d, source %q", r.Rows, r.ElementCount, r.Duplicates, r.Source)
	}

	// "skip bad rows" says how many it skipped when the run ends.
	bad := filepath.Join(dir, "bad.tsv")
	if err := os.WriteFile(bad, []byte("id\tvalue\n1\t2\n3\tx\n4\t70000\n5\t6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.Source, f.SkipBadRows = bad, true
	if _, done = ev.run(t, l, f, time.Minute); !strings.HasSuffix(done.Message, "; 2 bad rows of the file skipped") {
		t.Errorf("run with skip bad rows ended %q, want it to say 2 bad rows were skipped", done.Message)
	}
}

// Cancel works at any moment: right after the start, and during a load.
func TestCancel(t *testing.T) {
	l, ev := newLab(t)

	// At once: before the worker has even started.
	st, err := l.StartRun(small("packed", "hashed"))
	if err != nil {
		t.Fatal(err)
	}
	if c, err := l.Cancel(st.ID); err != nil || c.ID != st.ID {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
	_, done := ev.waitDone(t, st.ID, time.Minute)
	if !done.Cancelled || done.Failed {
		t.Errorf("cancelled at once: %+v", done)
	}

	// During a load: a run big enough to take many seconds, cancelled at
	// its first progress event.
	f := small("packed")
	f.Rows = "100M"
	if testing.Short() {
		f.Rows = "30M"
	}
	st, err = l.StartRun(f)
	if err != nil {
		t.Fatal(err)
	}
	// One run at a time.
	_, err = l.StartRun(small("packed"))
	apiError(t, err, "run", "still going")

	var cancelledAt time.Time
	deadline := time.After(time.Minute)
wait:
	for {
		select {
		case e := <-ev.ch:
			if p, ok := e.data.(Progress); ok && p.ID == st.ID && p.Rows > 0 && cancelledAt.IsZero() {
				cancelledAt = time.Now()
				if _, err := l.Cancel(st.ID); err != nil {
					t.Fatal(err)
				}
			}
			if d, ok := e.data.(RunDone); ok && d.ID == st.ID {
				done = d
				break wait
			}
		case <-deadline:
			t.Fatal("no done event within a minute")
		}
	}
	if cancelledAt.IsZero() {
		t.Fatalf("the run ended before any progress: %+v", done)
	}
	if took := time.Since(cancelledAt); took > 10*time.Second {
		t.Errorf("cancel took %v", took)
	}
	if !done.Cancelled || len(done.ResultIDs) != 0 || !strings.Contains(done.Message, "Cancelled") {
		t.Errorf("done %+v", done)
	}
	if h, _ := l.History(); h.Count != 0 {
		t.Errorf("a cancelled run saved %d results", h.Count)
	}
	_, err = l.Cancel(st.ID)
	apiError(t, err, "cancel", "no run")
	_, err = l.Cancel("")
	apiError(t, err, "cancel", "no run id")
}

func TestErrorOf(t *testing.T) {
	if ErrorOf(nil, "x") != nil {
		t.Error("ErrorOf(nil) is not nil")
	}
	e := ErrorOf(&fault.FieldError{Field: "shards", Value: "500", Problem: "out of range", Allowed: "1 to 128"}, "run")
	if *e != (Error{Field: "shards", Message: "500: out of range (allowed: 1 to 128)"}) {
		t.Errorf("field error: %+v", e)
	}
	e = ErrorOf(&fault.FieldError{Field: "weird", Value: "1", Problem: "bad"}, "run")
	if e.Field != "run" {
		t.Errorf("unknown flag: %+v", e)
	}
	e = ErrorOf(errors.New("disk full"), "export")
	if *e != (Error{Field: "export", Message: "disk full"}) || e.Error() != "export: disk full" {
		t.Errorf("plain error: %+v", e)
	}
	in := &Error{Field: "rows", Message: "m"}
	if ErrorOf(in, "x") != in {
		t.Error("an *Error is not kept")
	}
}

// TestCompactInTheLab: compact is offered with no ClickHouse LAYOUT, the
// form's default max load factor is each layout's own (compact runs at its
// 0.9 while packed keeps ClickHouse's 0.5), and the results table says how
// far compact is from the information limit.
func TestCompactInTheLab(t *testing.T) {
	l, ev := newLab(t)
	lim, err := l.Limits()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(lim.Layouts, func(l LayoutInfo) bool { return l.Name == "compact" })
	if i < 0 || lim.Layouts[i].ClickHouse != "" || !lim.Layouts[i].UsesMaxLoadFactor || lim.Layouts[i].Description == "" {
		t.Fatalf("compact in the form: %+v", lim.Layouts)
	}
	if lim.Defaults.MaxLoadFactor != "" || !strings.Contains(lim.MaxLoadFactorDefault, "compact 0.9") {
		t.Errorf("default max_load_factor %q (%q), want empty: each layout's own, compact 0.9", lim.Defaults.MaxLoadFactor, lim.MaxLoadFactorDefault)
	}
	_, done := ev.run(t, l, small("compact", "packed"), 2*time.Minute)
	if len(done.ResultIDs) != 2 {
		t.Fatalf("done %+v", done)
	}
	for i, want := range []float64{0.9, 0.5} {
		r, err := l.store.Load(done.ResultIDs[i])
		if err != nil || r.MaxLoadFactor != want || r.ClickHouseLayout == "" != (i == 0) {
			t.Errorf("result %d: max_load_factor %v, clickhouse_layout %q (%v); want %v, and a LAYOUT only for packed", i, r.MaxLoadFactor, r.ClickHouseLayout, err, want)
		}
	}
	tab, err := l.Table(done.ResultIDs)
	if err != nil {
		t.Fatal(err)
	}
	var limits []string // a line on the kernel's share of a load may stand beside them
	for _, n := range tab.Notes {
		if strings.Contains(n, "information limit") {
			limits = append(limits, n)
		}
	}
	if len(limits) != 1 || !strings.HasPrefix(limits[0], "compact") || !strings.Contains(limits[0], "the information limit of 8.10") {
		t.Errorf("table notes %q, want one line on compact against the limit of 1e5 pairs (8.10 bytes a pair)", tab.Notes)
	}
}

// TestHugePagesFromTheForm: the form's "huge pages for the tables" box
// reaches the run, whose saved result records it, and Limits offers the
// box only where the platform has huge pages.
func TestHugePagesFromTheForm(t *testing.T) {
	l, ev := newLab(t)
	lim, err := l.Limits()
	if err != nil {
		t.Fatal(err)
	}
	if lim.HugePagesSupported != core.HugePagesSupported || lim.Defaults.HugePages != "on" {
		t.Errorf("limits: huge pages supported %v, default %q; want %v, on", lim.HugePagesSupported, lim.Defaults.HugePages, core.HugePagesSupported)
	}
	f := small("packed")
	f.HugePages = "off"
	rs, err := runOne(t, l, ev, f)
	want := "off"
	if !core.HugePagesSupported {
		want = "none"
	}
	if err != nil || len(rs) != 1 {
		t.Fatalf("saved %d results (%v), want 1", len(rs), err)
	}
	if rs[0].HugePages != want {
		t.Errorf("the result says huge_pages %q, want %q", rs[0].HugePages, want)
	}
}

// TestSettleFromTheForm: the form's "Idle first" idles before each load, shows
// the idle in the progress (bar and ETA counting it down) and is saved in
// the result.
func TestSettleFromTheForm(t *testing.T) {
	l, ev := newLab(t)
	if lim, _ := l.Limits(); lim.Defaults.Settle != "0" {
		t.Errorf("the form opens with an idle of %q, want 0", lim.Defaults.Settle)
	}
	f := small("packed")
	f.Settle = "0.8"
	evs, done := ev.run(t, l, f, 2*time.Minute)
	if done.Failed || len(done.ResultIDs) != 1 {
		t.Fatalf("done %+v", done)
	}
	var idle []Progress
	for _, e := range evs {
		if p, ok := e.data.(Progress); ok && p.Phase == worker.PhaseSettle {
			idle = append(idle, p)
		}
	}
	if len(idle) < 2 || !strings.HasPrefix(idle[0].PhaseText, "idling ") || !strings.Contains(idle[0].PhaseText, "of 0.8 s before loading packed") ||
		idle[len(idle)-1].Percent <= idle[0].Percent || idle[len(idle)-1].ETASeconds >= idle[0].ETASeconds {
		t.Errorf("idle progress %+v; want it counting 0.8 s down", idle)
	}
	saved, err := store.OpenStore(l.opt.ResultsDir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := saved.List()
	if err != nil || len(rs) != 1 || rs[0].SettleSeconds != 0.8 {
		t.Fatalf("saved %+v (%v); want one result with settle_seconds 0.8", rs, err)
	}
	if row := historyRow(rs[0]); !strings.Contains(row.Cells[len(row.Cells)-1], "idle 0.8 s first") {
		t.Errorf("history row %q does not say the idle", row.Cells)
	}
}

// runOne runs f, which must give one result, and returns the results the
// lab saved.
func runOne(t *testing.T, l *Lab, ev *events, f Form) ([]result.Result, error) {
	t.Helper()
	if _, done := ev.run(t, l, f, 2*time.Minute); done.Failed || len(done.ResultIDs) != 1 {
		t.Fatalf("done %+v", done)
	}
	saved, err := store.OpenStore(l.opt.ResultsDir)
	if err != nil {
		t.Fatal(err)
	}
	rs, _, err := saved.List()
	return rs, err
}

// TestPreallocateFromTheForm: the form's "preallocate" reaches the
// prediction (a compact table reserved for its rows is smaller than one
// grown there, and has no growth to add to its peak) and the saved result.
func TestPreallocateFromTheForm(t *testing.T) {
	l, ev := newLab(t)
	if lim, _ := l.Limits(); lim.Defaults.Preallocate {
		t.Errorf("the form opens with preallocate on; ClickHouse's default is off")
	}
	f := small("compact")
	grown, err := l.Estimate(f)
	if err != nil {
		t.Fatal(err)
	}
	f.Preallocate = true
	reserved, err := l.Estimate(f)
	if err != nil {
		t.Fatal(err)
	}
	g, r := grown.Layouts[0], reserved.Layouts[0]
	// The peak adds the loader's buffers and the runtime to the tables' own
	// (the same in both); the growth's old slab is gone from it.
	if r.FinalBytes >= g.FinalBytes || r.PeakBytes-r.FinalBytes >= g.PeakBytes-g.FinalBytes {
		t.Errorf("compact at 1e5: grown final %d peak %d, preallocated final %d peak %d; want the preallocated smaller, with less above its final size (no growth)",
			g.FinalBytes, g.PeakBytes, r.FinalBytes, r.PeakBytes)
	}
	rs, err := runOne(t, l, ev, f)
	if err != nil || len(rs) != 1 || !rs[0].Preallocate || rs[0].BytesAllocated != r.FinalBytes {
		t.Fatalf("saved %d results (%v); want one, preallocated, of the predicted %d bytes: %+v", len(rs), err, r.FinalBytes, rs)
	}
}

// TestPlanPreallocateFromTheForm: the Plan tab's "preallocate" plans
// reserved tables: every setup says so and the answer's Go code reserves.
func TestPlanPreallocateFromTheForm(t *testing.T) {
	l, _ := newLab(t)
	for _, pre := range []bool{false, true} {
		v, err := l.Plan(PlanForm{Rows: "1e9", Memory: "24GiB", Preallocate: pre})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range v.Candidates {
			if c.Preallocate != pre {
				t.Fatalf("preallocate %v: %s SHARDS %d says preallocate %v", pre, c.Layout, c.Shards, c.Preallocate)
			}
		}
		goCode := ""
		for _, c := range v.Candidates {
			if c.Answer == "go" {
				goCode = c.GoCode
			}
		}
		// Reserved for the rows after the default growth of 10 %.
		if got := strings.Contains(goCode, "Reserve: 1100000000"); got != pre {
			t.Errorf("preallocate %v: the Go answer's code reserves: %v\n%s", pre, got, goCode)
		}
	}
}

// TestPlanClickHouseVersionFromTheForm: the Plan tab's ClickHouse release
// reaches the planner (23.3 builds no PackedHashMap), and a bad one is the
// field's error.
func TestPlanClickHouseVersionFromTheForm(t *testing.T) {
	l, _ := newLab(t)
	v, err := l.Plan(PlanForm{Rows: "1e9", Memory: "24GiB", ClickHouseVersion: "23.3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range v.Candidates {
		if c.Layout == "packed" && c.ClickHouseLayout != "" {
			t.Fatalf("ClickHouse 23.3: packed SHARDS %d has %s", c.Shards, c.ClickHouseLayout)
		}
	}
	_, err = l.Plan(PlanForm{Rows: "1e9", ClickHouseVersion: "23.x"})
	apiError(t, err, "plan_clickhouse_version", "23.x")
}

// TestPlanAttributesFromTheForm: the Plan tab's attributes reach the
// planner (ClickHouse's layouts only, every attribute in the CREATE
// DICTIONARY), and a bad one is the attributes field's error.
func TestPlanAttributesFromTheForm(t *testing.T) {
	l, _ := newLab(t)
	v, err := l.Plan(PlanForm{Rows: "1e6", Memory: "24GiB", Attributes: []string{"UInt16", "UInt32", "Float64"}})
	if err != nil {
		t.Fatal(err)
	}
	ddl := ""
	for _, c := range v.Candidates {
		switch c.Layout {
		case "hashed", "packed", "hashed_array", "packed_row", "compact_row":
		default:
			t.Fatalf("a plan of three attributes weighs %s", c.Layout)
		}
		ddl += c.CreateDictionary
	}
	if !strings.Contains(ddl, "a3 Float64") {
		t.Errorf("the best ClickHouse setup's CREATE DICTIONARY: %q, want every attribute", ddl)
	}
	// What the form's attribute menu offers plans, a String among them.
	lim, err := l.Limits()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range lim.AttributeTypes {
		if _, err := l.Plan(PlanForm{Rows: "1e6", Memory: "24GiB", Attributes: []string{"UInt16", a.Name}}); err != nil {
			t.Errorf("the form's attribute %s (%s): %v", a.Name, a.Label, err)
		}
	}
	_, err = l.Plan(PlanForm{Rows: "1e6", Attributes: []string{"UInt16", "String(40..20)"}})
	apiError(t, err, "plan_attributes", "String(40..20)")
	// And every value its value menu offers, a String alone among them
	// (an id → name dictionary: ClickHouse's layouts and packlab's rows).
	for _, a := range lim.AttributeTypes {
		v, err := l.Plan(PlanForm{Rows: "1e6", Memory: "24GiB", Value: a.Name})
		if err != nil || len(v.Answers) == 0 {
			t.Errorf("the form's value %s (%s): %v", a.Name, a.Label, err)
		}
	}
}

// TestPlanCalibrationReportsAndCancels: the Plan tab's calibration reports
// as a run does, under PlanCalibrationID (the idle before its first load
// counting down, with about how long the calibration has left), keeps a run
// from starting beside it, and stops on
// Cancel(PlanCalibrationID), its Plan call saying so.
func TestPlanCalibrationReportsAndCancels(t *testing.T) {
	l, ev := newLab(t) // an empty history: every layout is missing
	if lim, _ := l.Limits(); lim.PlanCalibrationID != PlanCalibrationID {
		t.Errorf("limits give the calibration's id as %q", lim.PlanCalibrationID)
	}
	type answer struct {
		v   PlanView
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := l.Plan(PlanForm{Rows: "1e9", Calibrate: true})
		done <- answer{v, err}
	}()
	deadline := time.After(time.Minute)
	for idle := false; !idle; {
		select {
		case e := <-ev.ch:
			if p, ok := e.data.(Progress); ok && p.ID == PlanCalibrationID && p.Phase == worker.PhaseSettle {
				idle = true
				if !strings.HasPrefix(p.PhaseText, "idling ") || p.Repeats < 5 || !strings.Contains(p.PhaseText, "; the calibration has about ") {
					t.Errorf("the calibration's first progress: %+v; want its idle, run 1 of every layout's", p)
				}
			}
		case a := <-done:
			t.Fatalf("Plan returned before any progress: %+v, %v", a.v, a.err)
		case <-deadline:
			t.Fatal("no progress from the calibration in a minute")
		}
	}
	_, err := l.StartRun(small("packed"))
	apiError(t, err, "run", "the Plan tab's calibration is still going")
	if _, err := l.Cancel(PlanCalibrationID); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		apiError(t, a.err, "plan", "Calibration cancelled; nothing was measured")
	case <-time.After(10 * time.Second):
		t.Fatal("the calibration went on after Cancel")
	}
	if ids, _ := l.Running(); len(ids) != 0 {
		t.Errorf("still running after the cancel: %v", ids)
	}
}

// TestPlanCalibrationRowsFromTheForm: the Plan tab's "at N rows" reaches the
// calibration's request, and bad values are named beside the field.
func TestPlanCalibrationRowsFromTheForm(t *testing.T) {
	r, err := PlanForm{Rows: "1e9", Calibrate: true, CalibrationRows: "1e8"}.parse()
	if err != nil || r.CalibrationRows != 100_000_000 {
		t.Errorf("at 1e8 rows: %+v, %v; want calibration rows 1e8", r, err)
	}
	if r, err := (PlanForm{Rows: "1e9", Calibrate: true}).parse(); err != nil || r.CalibrationRows != 0 {
		t.Errorf("empty: %+v, %v; want the default (0)", r, err)
	}
	for _, c := range []struct {
		f    PlanForm
		want string
	}{
		{PlanForm{Rows: "1e9", CalibrationRows: "1e8"}, "1e8: applies when missing speeds are measured first"},
		{PlanForm{Rows: "1e9", Calibrate: true, CalibrationRows: "5e4"}, "50000: out of range (allowed: 100K to 2^62 rows"},
		{PlanForm{Rows: "1e9", Calibrate: true, CalibrationRows: "lots"}, "lots: not a number"},
	} {
		_, err := c.f.parse()
		apiError(t, err, "plan_calibrate_rows", c.want)
	}
}

// TestProgressIsTheJobs: the bar is the job's, so the first of three
// layouts reading shows a third, not a full bar; the last loading half its
// rows five sixths.
func TestProgressIsTheJobs(t *testing.T) {
	for _, c := range []struct {
		p    worker.Progress
		want float64
	}{
		{worker.Progress{Layout: "hashed", Repeat: 1, Repeats: 3, Phase: worker.PhaseRead, Rows: 100, TotalRows: 100}, 100.0 / 3},
		{worker.Progress{Layout: "sparse", Repeat: 3, Repeats: 3, Phase: worker.PhaseLoad, Rows: 50, TotalRows: 100}, 100 * 2.5 / 3},
		{worker.Progress{Layout: "packed", Repeat: 1, Repeats: 1, Phase: worker.PhaseLoad, Rows: 25, TotalRows: 100}, 25},
	} {
		got := progressOf("r", c.p)
		if math.Abs(got.Percent-c.want) > 0.01 {
			t.Errorf("%s (%s) at %d of %d rows: the bar at %.2f %%, want %.2f %%", got.LayoutText, c.p.Phase, c.p.Rows, c.p.TotalRows, got.Percent, c.want)
		}
	}
}

// TestPlanInTheFormsWords: the Plan tab's lines name the form's controls,
// not the command line's flags ("24.0 GiB (--memory)", "with --format json
// or csv", "--first-load-only"), whichever budget is checked.
func TestPlanInTheFormsWords(t *testing.T) {
	l, _ := newLab(t)
	flag := regexp.MustCompile(`(^|[\s(])--[a-z]|\{[a-z_]+\}`) // a flag, or a field the form did not name
	for _, first := range []bool{false, true} {
		v, err := l.Plan(PlanForm{Rows: "1e9", Memory: "24GiB", FirstLoadOnly: first})
		if err != nil {
			t.Fatal(err)
		}
		d := v.PlanDetails
		d.Snippets = nil // code: SQL and Go, not the form's words
		b, _ := json.Marshal(d)
		if m := flag.FindAllIndex(b, 3); m != nil {
			for _, at := range m {
				t.Errorf("first load only %v: the plan says %q", first, b[max(0, at[0]-60):min(len(b), at[1]+40)])
			}
		}
	}
	// The table's note about loads run back to back names the form's idle.
	if got := formWords("so their times follow their order; an idle of 8 s before each load ({settle_seconds} 8) puts every load on fresh memory"); strings.Contains(got, "{") || !strings.Contains(got, "“Idle first”") {
		t.Errorf("the table's note says %q", got)
	}
}

// TestAttributesNamed: a run of several attributes names their types in
// its job and in its table's heading, whose settings leave the shared
// types out.
func TestAttributesNamed(t *testing.T) {
	l, ev := newLab(t)
	f := small("packed_row")
	f.Rows = "1e4"
	f.Attributes = []string{"UInt16", "UInt32"}
	st, err := l.StartRun(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := "run packed_row 1e4 UInt64→UInt16,UInt32"; st.JobName != want {
		t.Errorf("the job is named %q, want %q", st.JobName, want)
	}
	if tab := ev.waitTable(t, l, st.ID, 1); !strings.Contains(tab.Title, " · UInt64 → UInt16, UInt32 · 1 result") {
		t.Errorf("the table's heading is %q, want the key and attribute types", tab.Title)
	}
}

// TestUnavailableNoteSaysItsFamilyOnce: the form's note on a family of
// layouts that cannot run names the family once, whatever the driver's
// problem says (not built here; the browser's reason, which named it again:
// "ClickHouse's own dictionaries unavailable: the browser lab runs
// packlab's Go layouts only; ClickHouse's own dictionaries run in ...").
func TestUnavailableNoteSaysItsFamilyOnce(t *testing.T) {
	for _, c := range []struct{ family, what, problem, want string }{
		{"ClickHouse's own dictionaries", "ClickHouse's own dictionaries",
			"ClickHouse's own dictionaries are not built (no packlab-ch beside packlab); build them with: make chdb",
			"ClickHouse's own dictionaries unavailable: not built (no packlab-ch beside packlab); build them with: make chdb"},
		{"ClickHouse's own dictionaries", "ClickHouse's own dictionaries",
			"the browser lab runs packlab's Go layouts only; ClickHouse's own dictionaries run in the desktop lab and 'packlab run' (build them there with: make chdb)",
			"ClickHouse's own dictionaries unavailable: the browser lab runs packlab's Go layouts only; they run in the desktop lab and 'packlab run' (build them there with: make chdb)"},
		{"C++ reference maps", "the C++ reference maps",
			"the browser lab runs packlab's Go layouts only; the C++ reference maps run in the desktop lab and 'packlab run' (build them there with: make refs)",
			"C++ reference maps unavailable: the browser lab runs packlab's Go layouts only; they run in the desktop lab and 'packlab run' (build them there with: make refs)"},
		{"C++ reference maps", "the C++ reference maps",
			"PACKLAB_REFS_WORKER=/nowhere: no such file; build the C++ reference maps with: make refs",
			"C++ reference maps unavailable: PACKLAB_REFS_WORKER=/nowhere: no such file; build them with: make refs"},
	} {
		if got := unavailableNote(c.family, c.what, c.problem); got != c.want {
			t.Errorf("unavailableNote(%q, %q, %q)\n = %q\nwant %q", c.family, c.what, c.problem, got, c.want)
		}
	}
}

// TestStringKeyFromTheForm: the form offers the String and tuple keys the
// engine takes; ch_complex_key_ layouts hold them, and any other layout
// is refused beside the key's field, naming the layouts that can.
func TestStringKeyFromTheForm(t *testing.T) {
	l, _ := newLab(t)
	lim, err := l.Limits()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range lim.KeyTypes {
		names = append(names, k.Name)
	}
	for _, want := range []string{"UInt64", "String", "Tuple(String, UInt64)"} {
		if !slices.Contains(names, want) {
			t.Errorf("key types %v: no %s", names, want)
		}
	}
	// The plan's key menu: the types and the String keys, no tuple.
	var plan []string
	for _, k := range lim.PlanKeyTypes {
		plan = append(plan, k.Name)
	}
	if !slices.Contains(plan, "String") || !slices.Contains(plan, "UInt64") || slices.ContainsFunc(plan, func(s string) bool { return strings.HasPrefix(s, "Tuple") }) {
		t.Errorf("plan key types %v; want the types and the String keys", plan)
	}
	for _, k := range lim.KeyTypes { // every one a key the engine takes
		f := small("ch_complex_key_hashed")
		f.Key = k.Name
		if _, err := f.Parse(); err != nil {
			t.Errorf("key %s offered, and refused with ch_complex_key_hashed: %v", k.Name, err)
		}
	}
	f := small("packed", "ch_complex_key_hashed")
	f.Key = "String"
	_, err = l.Estimate(f)
	apiError(t, err, "key", "layout packed cannot hold a String or tuple key")
	apiError(t, err, "key", "ch_complex_key_hashed")
	if e := err.(*Error); strings.Contains(e.Message, "not in this page") {
		t.Errorf("the desktop's refusal speaks of the browser page: %q", e.Message)
	}
	// The browser page words its own refusal (app/browser's parse;
	// web's TestBrowserStringKey sees it in Chromium).
	f.Layouts = []string{"ch_complex_key_hashed", "ch_complex_key_sparse_hashed"}
	f.Key = "Tuple(String, UInt64)"
	est, err := l.Estimate(f)
	if err != nil {
		t.Fatalf("a (String, UInt64) key in the ch_complex_key_ layouts: %v", err)
	}
	if len(est.Layouts) != 2 || est.Layouts[0].FinalBytes <= 0 {
		t.Errorf("estimate %+v", est)
	}
	t.Logf("%s", est.Message)

	// And it runs, in ClickHouse itself, where the worker is built.
	if !lim.ClickHouse.Available {
		t.Skipf("ClickHouse's layouts are unavailable here: %s", lim.ClickHouse.Note)
	}
	l2, ev := newLab(t)
	f = small("ch_complex_key_hashed")
	f.Key, f.Rows = "Tuple(String, UInt64)", "1e4"
	_, done := ev.run(t, l2, f, 2*time.Minute)
	if done.Failed || len(done.ResultIDs) != 1 {
		t.Fatalf("the run: %+v", done)
	}
	h, err := l2.History()
	if err != nil || len(h.Jobs) != 1 || !strings.Contains(h.Jobs[0].Summary, "Tuple(String, UInt64)") {
		t.Errorf("history %+v, %v: want the run's job, its key named", h, err)
	}
}
