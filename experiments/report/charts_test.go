package report

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/result"
)

// updateGoldenFiles rewrites experiments/testdata from the current output:
// go test ./experiments/report -run 'Golden' -update-golden
var updateGoldenFiles = flag.Bool("update-golden", false, "rewrite the golden files of charts and tables")

// fxResults are five runs of 1e6 random <UInt64,UInt16> pairs, one per
// layout, with SHARDS 2. The memory figures are what core's tables report
// for that load (bytes_allocated and its parts); times, RSS and the timeline
// are of the size this machine measures.
func fxResults() []result.Result {
	host := result.Host{CPUs: 2, TotalMemory: 25769803776, GoVersion: "go1.26.8", OS: "linux", Arch: "amd64"}
	base := func(id, layout string) result.Result {
		return result.Result{
			ID: id, StartedAt: "2026-11-30T20:58:00Z", Layout: layout, KeyType: "UInt64", ValueType: "UInt16",
			Rows: 1_000_000, Shards: 2, MaxLoadFactor: 0.5, Source: "random", Seed: 1,
			ElementCount: 1_000_000, Repeats: 1, FoundRate: 1, Isolated: true, Runtime: "native", Host: host,
		}
	}
	workers := func(rows0 int64, busy0, wait0, busy1, wait1 float64) []result.Worker {
		rows1 := 1_000_000 - rows0
		return []result.Worker{
			{Shard: 0, Rows: rows0, BusySeconds: busy0, WaitSeconds: wait0, RowsPerSecond: float64(rows0) / busy0},
			{Shard: 1, Rows: rows1, BusySeconds: busy1, WaitSeconds: wait1, RowsPerSecond: float64(rows1) / busy1},
		}
	}
	timeline := func(secs float64, peak, end int64) []result.TimelinePoint {
		return []result.TimelinePoint{
			{Seconds: 0, Rows: 0, RSSBytes: 0},
			{Seconds: secs * 0.25, Rows: 250_000, RSSBytes: end / 4},
			{Seconds: secs * 0.5, Rows: 500_000, RSSBytes: end / 3},
			{Seconds: secs * 0.75, Rows: 750_000, RSSBytes: peak},
			{Seconds: secs, Rows: 1_000_000, RSSBytes: end},
		}
	}

	// One row a layout, its fields in the order of figures: the table's
	// figures, then what the run measured.
	// Each worker's rows are 500321 and the rest; the timeline ends at the
	// load's end with the run's RSS.
	type figures struct {
		id, layout, clickhouse               string
		buckets                              int64
		fill                                 float64
		alloc, payload, padding, empty, meta int64
		estimated                            bool
		heap, rss, peak, predicted           int64
		load, loadRate, read, readRate       float64
		busy0, wait0, busy1, wait1           float64
		producerRead, split, producerWait    float64
		timelinePeak                         int64
	}
	rows := []figures{
		{"20261130T205800Z-hashed-3f2a", "hashed", "LAYOUT(HASHED(SHARDS 2))", 2097152, 0.476837158203125, 33554520, 10000000, 6000000, 17554448, 72, false, 33505280, 35127296, 52428800, 50331648, 0.212, 4716981.13, 0.094, 10638297.87, 0.161, 0.043, 0.158, 0.046, 0.061, 0.027, 0.118, 42991616},
		{"20261130T205801Z-packed-9c1e", "packed", "LAYOUT(SPARSE_HASHED(SHARDS 2))", 2097152, 0.476837158203125, 20971608, 10000000, 0, 10971530, 78, false, 20955136, 22282240, 33030144, 31457280, 0.187, 5347593.58, 0.088, 11363636.36, 0.139, 0.041, 0.137, 0.044, 0.060, 0.026, 0.097, 27262976},
		{"20261130T205802Z-sparse-71b0", "sparse", "LAYOUT(SPARSE_HASHED(SHARDS 2))", 2097152, 0.476837158203125, 17047896, 10000000, 6000000, 348784, 699112, false, 37183488, 39845888, 45088768, 25165824, 0.534, 1872659.18, 0.231, 4329004.33, 0.498, 0.012, 0.493, 0.015, 0.062, 0.028, 0.421, 41943040},
		{"20261130T205803Z-hashed_array-d402", "hashed_array", "LAYOUT(HASHED_ARRAY(SHARDS 2))", 4194304, 0.2384185791015625, 69206136, 10000000, 0, 51206032, 8000104, false, 69189632, 71565312, 103809024, 100663296, 0.241, 4149377.59, 0.102, 9803921.57, 0.190, 0.040, 0.186, 0.043, 0.061, 0.027, 0.149, 87031808},
		{"20261130T205804Z-gomap-5e77", "gomap", "", 2093056, 0.4777703033268102, 35663792, 10000000, 6000000, 17488896, 2174896, true, 47554560, 50331648, 60817408, 53477376, 0.301, 3322259.14, 0.127, 7874015.75, 0.249, 0.029, 0.244, 0.033, 0.063, 0.027, 0.188, 60817408},
	}
	var out []result.Result
	for _, f := range rows {
		r := base(f.id, f.layout)
		r.ClickHouseLayout = f.clickhouse
		r.BucketCount, r.LoadFactor = f.buckets, f.fill
		r.BytesAllocated, r.PayloadBytes, r.PaddingBytes, r.EmptyBytes, r.MetadataBytes =
			f.alloc, f.payload, f.padding, f.empty, f.meta
		r.Estimated = f.estimated
		r.HeapBytes, r.RSSBytes, r.PeakRSSBytes, r.PredictedPeak = f.heap, f.rss, f.peak, f.predicted
		r.LoadSeconds, r.LoadRowsPerSecond, r.ReadSeconds, r.ReadRowsPerSecond = f.load, f.loadRate, f.read, f.readRate
		r.Workers = workers(500321, f.busy0, f.wait0, f.busy1, f.wait1)
		r.Producer = result.Producer{ReadSeconds: f.producerRead, SplitSeconds: f.split, WaitSeconds: f.producerWait}
		r.Timeline = timeline(f.load, f.timelinePeak, f.rss)
		out = append(out, r)
	}
	return out
}

// fxGrowth is hashed and packed at 1e3 ... 1e6 rows, SHARDS 1: the input
// of a growth sweep. bytes_allocated is the table's: 2^k cells of 16 or 10
// bytes, the smallest power of two holding rows at fill 0.5.
func fxGrowth() []result.Result {
	var out []result.Result
	for _, layout := range []string{"hashed", "packed"} {
		cell := int64(16)
		if layout == "packed" {
			cell = 10
		}
		for _, rows := range []int64{1_000, 10_000, 100_000, 1_000_000} {
			cells := int64(256)
			for float64(rows) > float64(cells)*0.5 {
				cells *= 2
			}
			r := result.Result{Layout: layout, KeyType: "UInt64", ValueType: "UInt16", Rows: rows, Shards: 1, MaxLoadFactor: 0.5,
				ElementCount: rows, BucketCount: cells, BytesAllocated: cells * cell, PayloadBytes: rows * 10,
				EmptyBytes: (cells - rows) * cell, LoadSeconds: float64(rows) / 5e6, LoadRowsPerSecond: 5e6,
				RSSBytes: cells*cell + 1<<20, PeakRSSBytes: cells*cell*5/4 + 1<<20, Isolated: true, Runtime: "native"}
			if layout == "hashed" {
				r.PaddingBytes = rows * 6
			}
			out = append(out, r)
		}
	}
	return out
}

// option decodes a chart's option for inspection.
type fxOption struct {
	Title struct {
		Text         string `json:"text"`
		Subtext      string `json:"subtext"`
		SubtextStyle struct {
			LineHeight int `json:"lineHeight"`
		} `json:"subtextStyle"`
	} `json:"title"`
	Animation *bool `json:"animation"`
	Series    []struct {
		Name       string          `json:"name"`
		Type       string          `json:"type"`
		Stack      string          `json:"stack"`
		XAxisIndex int             `json:"xAxisIndex"`
		YAxisIndex int             `json:"yAxisIndex"`
		Data       []fxOptionDatum `json:"data"`
	} `json:"series"`
	XAxis []struct {
		Type string   `json:"type"`
		Name string   `json:"name"`
		Data []string `json:"data"`
	} `json:"xAxis"`
	YAxis []struct {
		Type string   `json:"type"`
		Name string   `json:"name"`
		Data []string `json:"data"`
	} `json:"yAxis"`
	VisualMap []struct {
		Max         float64 `json:"max"`
		SeriesIndex []int   `json:"seriesIndex"`
	} `json:"visualMap"`
}

type fxOptionDatum struct {
	Value json.RawMessage `json:"value"`
}

// float reads a datum that is one number; ok is false for "-" (no value).
func (d fxOptionDatum) float(t *testing.T) (float64, bool) {
	t.Helper()
	var f float64
	if err := json.Unmarshal(d.Value, &f); err != nil {
		var s string
		if json.Unmarshal(d.Value, &s) == nil && s == "-" {
			return 0, false
		}
		t.Fatalf("datum %s is neither a number nor \"-\"", d.Value)
	}
	return f, true
}

// pair reads a datum [x, y] or [x, y, v].
func (d fxOptionDatum) tuple(t *testing.T) []float64 {
	t.Helper()
	var v []float64
	if err := json.Unmarshal(d.Value, &v); err != nil {
		t.Fatalf("datum %s is not a list of numbers: %v", d.Value, err)
	}
	return v
}

func decodeOption(t *testing.T, c Chart) fxOption {
	t.Helper()
	var o fxOption
	if err := json.Unmarshal(c.Option, &o); err != nil {
		t.Fatalf("%s: option does not decode: %v\n%s", c.Kind, err, c.Option)
	}
	return o
}

func mustChart(t *testing.T, kind string, results []result.Result) (Chart, fxOption) {
	t.Helper()
	c, err := BuildChart(kind, results)
	if err != nil {
		t.Fatalf("BuildChart(%q): %v", kind, err)
	}
	if c.Kind != kind || c.Title == "" {
		t.Fatalf("BuildChart(%q) = kind %q title %q", kind, c.Kind, c.Title)
	}
	o := decodeOption(t, c)
	if o.Title.Text != c.Title {
		t.Errorf("%s: option title %q, want the chart's title %q", kind, o.Title.Text, c.Title)
	}
	if o.Animation == nil || *o.Animation {
		t.Errorf("%s: animation is not switched off", kind)
	}
	if o.Title.SubtextStyle.LineHeight <= 0 {
		t.Errorf("%s: the notes have no line height; ECharts would draw their lines over each other", kind)
	}
	if bytes.Contains(c.Option, []byte("__f__")) {
		t.Errorf("%s: option holds a go-echarts JS function marker", kind)
	}
	return c, o
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestEmbeddedEChartsIsThePinnedVersion(t *testing.T) {
	versions := regexp.MustCompile(`\.version="([0-9][^"]*)"`).FindAllStringSubmatch(EChartsJS(), -1)
	if len(versions) != 1 || versions[0][1] != EChartsVersion {
		t.Fatalf("embedded echarts.min.js declares versions %v, want exactly %q", versions, EChartsVersion)
	}
	if EChartsVersion != "5.4.3" {
		t.Errorf("EChartsVersion = %q; go-echarts v2.6.7 targets 5.4.3", EChartsVersion)
	}

	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "frontend", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatalf("frontend/package.json: %v", err)
	}
	if got := pkg.Dependencies["echarts"]; got != EChartsVersion {
		t.Errorf("frontend/package.json pins echarts %q, want exactly %q", got, EChartsVersion)
	}

	fromNPM, err := os.ReadFile(filepath.Join("..", "..", "frontend", "node_modules", "echarts", "dist", "echarts.min.js"))
	if errors.Is(err, os.ErrNotExist) {
		t.Log("frontend/node_modules not installed (cd frontend && npm ci): version checked, bytes not compared")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fromNPM, []byte(EChartsJS())) {
		t.Errorf("experiments/assets/echarts.min.js (%d bytes) differs from frontend/node_modules (%d bytes): copy the pinned file over",
			len(EChartsJS()), len(fromNPM))
	}
}

func TestChartKindsAllBuild(t *testing.T) {
	want := []string{"memory-breakdown", "padding-waste", "memory-vs-rows", "memory-timeline", "per-thread-speed", "throughput"}
	if got := ChartKinds(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("ChartKinds() = %v, want %v", got, want)
	}
	for _, kind := range want {
		mustChart(t, kind, fxResults())
	}
	// Case and spaces are forgiven, as in the CLI's flags.
	if _, err := BuildChart(" Throughput ", fxResults()); err != nil {
		t.Errorf("BuildChart(\" Throughput \"): %v", err)
	}
}

func TestBuildChartUnknownKind(t *testing.T) {
	_, err := BuildChart("pie", fxResults())
	if err == nil {
		t.Fatal("BuildChart(\"pie\") succeeded")
	}
	for _, want := range append([]string{`"pie"`}, ChartKinds()...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if errors.Is(err, ErrNoData) {
		t.Errorf("an unknown kind is not ErrNoData")
	}
}

func TestChartsEmptyInput(t *testing.T) {
	for _, kind := range ChartKinds() {
		for _, in := range [][]result.Result{nil, {}} {
			c, err := BuildChart(kind, in)
			if kind == "padding-waste" {
				// The computed heatmap needs no result.
				if err != nil {
					t.Errorf("%s with no results: %v", kind, err)
					continue
				}
				o := decodeOption(t, c)
				if len(o.Series) != 1 || len(o.Series[0].Data) != 15*15 {
					t.Errorf("%s with no results: %d series, want the 15x15 heatmap alone", kind, len(o.Series))
				}
				continue
			}
			if !errors.Is(err, ErrNoData) {
				t.Errorf("%s with no results: err = %v, want ErrNoData", kind, err)
			}
		}
	}
}

func TestChartsMissingFieldsNeverPanic(t *testing.T) {
	// A run that measured nothing: no elements, no times, no timeline, no
	// workers; and one with NaN and infinite figures.
	bare := []result.Result{{Layout: "hashed"}, {}}
	weird := fxResults()[:2]
	weird[0].LoadRowsPerSecond = math.Inf(1)
	weird[0].Workers[0].RowsPerSecond = math.NaN()
	weird[0].Timeline[1].Seconds = math.NaN()
	weird[1].ElementCount = 0
	for _, kind := range ChartKinds() {
		for name, in := range map[string][]result.Result{"bare": bare, "weird": weird} {
			c, err := BuildChart(kind, in)
			if err != nil {
				if !errors.Is(err, ErrNoData) {
					t.Errorf("%s on %s results: %v, want a chart or ErrNoData", kind, name, err)
				}
				continue
			}
			decodeOption(t, c)
		}
	}
	c, _ := mustChart(t, "memory-breakdown", weird)
	if !strings.Contains(string(c.Option), "left out (element_count 0): packed") {
		t.Errorf("memory-breakdown does not note the run it left out:\n%s", c.Option)
	}
}

func TestMemoryBreakdownChart(t *testing.T) {
	rs := fxResults()
	_, o := mustChart(t, "memory-breakdown", rs)
	if got, want := o.XAxis[0].Data, []string{"hashed", "packed", "sparse", "hashed_array", "gomap"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("runs %v, want %v (labels name only the layout when nothing else differs)", got, want)
	}
	names := []string{"payload", "padding", "empty cells", "metadata", "measured overhead"}
	if len(o.Series) != len(names) {
		t.Fatalf("%d series, want %d", len(o.Series), len(names))
	}
	for i, s := range o.Series {
		if s.Name != names[i] || s.Type != "bar" || s.Stack != "bytes" || len(s.Data) != len(rs) {
			t.Errorf("series %d = %q %s stack %q with %d values, want %q stacked bar with %d", i, s.Name, s.Type, s.Stack, len(s.Data), names[i], len(rs))
		}
	}
	for run, r := range rs {
		var sum float64
		for i := 0; i < 4; i++ {
			v, _ := o.Series[i].Data[run].float(t)
			sum += v
		}
		want := float64(r.BytesAllocated) / float64(r.ElementCount)
		if math.Abs(sum-want) > 0.005 {
			t.Errorf("%s: payload+padding+empty+metadata = %.3f B/entry, want bytes_allocated/element_count = %.3f", r.Layout, sum, want)
		}
		over, _ := o.Series[4].Data[run].float(t)
		if wantOver := float64(max(0, r.RSSBytes-r.BytesAllocated)) / 1e6; math.Abs(over-wantOver) > 0.0005 {
			t.Errorf("%s: overhead %.3f B/entry, want %.3f", r.Layout, over, wantOver)
		}
	}
	// hashed <UInt64,UInt16>: 10 B payload and 6 B padding per entry.
	if p, _ := o.Series[0].Data[0].float(t); p != 10 {
		t.Errorf("hashed payload = %v B/entry, want 10", p)
	}
	if p, _ := o.Series[1].Data[0].float(t); p != 6 {
		t.Errorf("hashed padding = %v B/entry, want 6", p)
	}
	if !strings.Contains(o.Title.Subtext, "estimated bytes_allocated: gomap") {
		t.Errorf("subtitle %q does not say gomap's figure is estimated", o.Title.Subtext)
	}
	if o.YAxis[0].Name != "bytes per entry" {
		t.Errorf("y axis %q, want it to name its unit", o.YAxis[0].Name)
	}
	// RSS below bytes_allocated gives no negative overhead.
	low := rs[:1]
	low[0].RSSBytes = low[0].BytesAllocated / 2
	_, o = mustChart(t, "memory-breakdown", low)
	if v, _ := o.Series[4].Data[0].float(t); v != 0 {
		t.Errorf("overhead with RSS < bytes_allocated = %v, want 0", v)
	}
}

func TestPaddingWasteChart(t *testing.T) {
	rs := fxResults()
	_, o := mustChart(t, "padding-waste", rs)
	if len(o.Series) != 2 || o.Series[0].Type != "heatmap" || o.Series[1].Type != "bar" {
		t.Fatalf("series %+v, want a heatmap and the measured bars", o.Series)
	}
	names := core.TypeNames()
	if strings.Join(o.XAxis[0].Data, ",") != strings.Join(names, ",") || strings.Join(o.YAxis[0].Data, ",") != strings.Join(names, ",") {
		t.Fatalf("heatmap axes %v x %v, want every type on both", o.XAxis[0].Data, o.YAxis[0].Data)
	}
	if len(o.Series[0].Data) != len(names)*len(names) {
		t.Fatalf("%d heatmap cells, want %d", len(o.Series[0].Data), len(names)*len(names))
	}
	cell := map[[2]string]float64{}
	for _, d := range o.Series[0].Data {
		v := d.tuple(t)
		cell[[2]string{names[int(v[1])], names[int(v[0])]}] = v[2]
	}
	for _, c := range []struct {
		key, value string
		want       float64
	}{
		{"UInt64", "UInt16", 37.5}, // 16 B cell, 10 B payload
		{"UInt64", "UInt64", 0},    // 16 B, nothing to pad
		{"UInt8", "UInt64", 43.8},  // 16 B cell, 9 B payload
		{"UInt16", "UInt32", 25},   // 8 B cell, 6 B payload
		{"UUID", "UInt8", 29.2},    // 24 B cell, 17 B payload
		{"Date", "DateTime", 25},   // 8 B cell, 6 B payload
		{"Float32", "Float32", 0},  // 8 B
		{"UInt128", "UInt16", 25},  // 24 B cell, 18 B payload
	} {
		k, v := core.MustType(c.key), core.MustType(c.value)
		exact := 100 * float64(core.PaddedCellBytes(k, v)-core.PairBytes(k, v)) / float64(core.PaddedCellBytes(k, v))
		if got := cell[[2]string{c.key, c.value}]; got != c.want || math.Abs(got-exact) > 0.05 {
			t.Errorf("padding share <%s,%s> = %v %%, want %v (exact %.3f)", c.key, c.value, got, c.want, exact)
		}
	}
	if got := o.VisualMap[0].SeriesIndex; len(got) != 1 || got[0] != 0 {
		t.Errorf("visual map colours series %v, want the heatmap (0) alone", got)
	}
	if o.VisualMap[0].Max != 50 {
		t.Errorf("colour scale tops at %v, want 50 (the largest share, 43.75 %%, rounded up)", o.VisualMap[0].Max)
	}
	// Measured: padding_bytes / (payload + padding), per run, with types named.
	m := o.Series[1]
	if m.XAxisIndex != 1 || m.YAxisIndex != 1 {
		t.Errorf("measured bars on axes %d/%d, want the second grid's 1/1", m.XAxisIndex, m.YAxisIndex)
	}
	wantRuns := []string{"hashed UInt64/UInt16", "packed UInt64/UInt16", "sparse UInt64/UInt16", "hashed_array UInt64/UInt16", "gomap UInt64/UInt16"}
	if got := o.YAxis[1].Data; strings.Join(got, ",") != strings.Join(wantRuns, ",") {
		t.Errorf("measured runs %v, want %v", got, wantRuns)
	}
	for i, want := range []float64{37.5, 0, 37.5, 0, 37.5} {
		if got, _ := m.Data[i].float(t); got != want {
			t.Errorf("%s measured padding share %v %%, want %v", wantRuns[i], got, want)
		}
	}

	// A dictionary of several attributes: a bar for each attribute's table.
	dict := result.Result{Layout: "ch_hashed", KeyType: "UInt64", ValueType: "UInt16", Attributes: "UInt16,UInt32,Float64", Rows: 1e6, Shards: 1,
		ElementCount: 1e6, PayloadBytes: 22e6, KeyCopyBytes: 16e6, PaddingBytes: 10e6,
		AttributeCells: []result.AttributeCell{
			{Name: "value", Type: "UInt16", CellBytes: 16, PaddingBytes: 6},
			{Name: "a2", Type: "UInt32", CellBytes: 16, PaddingBytes: 4},
			{Name: "a3", Type: "Float64", CellBytes: 16, PaddingBytes: 0}}}
	_, o = mustChart(t, "padding-waste", []result.Result{dict})
	run := "ch_hashed UInt64/UInt16,UInt32,Float64"
	wantRuns = []string{run + " · value UInt16", run + " · a2 UInt32", run + " · a3 Float64"}
	if got := o.YAxis[1].Data; strings.Join(got, ",") != strings.Join(wantRuns, ",") {
		t.Errorf("a dictionary's bars %v, want %v", got, wantRuns)
	}
	for i, want := range []float64{37.5, 25, 0} {
		if got, _ := o.Series[1].Data[i].float(t); got != want {
			t.Errorf("%s padding share %v %%, want %v", wantRuns[i], got, want)
		}
	}
}

func TestMemoryVsRowsChart(t *testing.T) {
	_, o := mustChart(t, "memory-vs-rows", fxGrowth())
	if o.XAxis[0].Type != "log" || o.XAxis[0].Name != "rows" {
		t.Errorf("x axis %s %q, want a log axis of rows", o.XAxis[0].Type, o.XAxis[0].Name)
	}
	if o.YAxis[0].Name != "MiB" || o.YAxis[0].Type != "log" {
		t.Errorf("y axis %s %q, want log MiB (16 KiB ... 32 MiB spans more than 100x)", o.YAxis[0].Type, o.YAxis[0].Name)
	}
	want := []string{"hashed bytes_allocated", "hashed RSS", "packed bytes_allocated", "packed RSS", "information limit"}
	if len(o.Series) != len(want) {
		t.Fatalf("%d series, want %v", len(o.Series), want)
	}
	for i, s := range o.Series {
		if s.Name != want[i] || s.Type != "line" || len(s.Data) != 4 {
			t.Errorf("series %d = %q %s with %d points, want %q line with 4", i, s.Name, s.Type, len(s.Data), want[i])
		}
	}
	// hashed at 1e6 rows: 2^21 cells x 16 B = 32 MiB.
	last := o.Series[0].Data[3].tuple(t)
	if last[0] != 1e6 || last[1] != 32 {
		t.Errorf("hashed last point %v, want [1e6 32]", last)
	}
	// The information limit of 1e6 <UInt64,UInt16> pairs: 7.69 B a pair.
	if lim := o.Series[4].Data[3].tuple(t); lim[0] != 1e6 || math.Abs(lim[1]-7.69e6/(1<<20)) > 0.01 {
		t.Errorf("information limit at 1e6 rows %v MiB, want [1e6 %.2f]", lim, 7.69e6/(1<<20))
	}
	// Rows rise along each line.
	for _, s := range o.Series {
		for i := 1; i < len(s.Data); i++ {
			if s.Data[i].tuple(t)[0] <= s.Data[i-1].tuple(t)[0] {
				t.Errorf("%s: rows not increasing at point %d", s.Name, i)
			}
		}
	}
	// Input order must not matter for the lines.
	rev := fxGrowth()
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	_, o2 := mustChart(t, "memory-vs-rows", rev)
	if got := o2.Series[1].Data[0].tuple(t); got[0] != 1000 {
		t.Errorf("reversed input: first point of %s at %v rows, want 1000", o2.Series[1].Name, got[0])
	}
}

func TestMemoryTimelineChart(t *testing.T) {
	rs := fxResults()
	rs[4].Timeline = nil
	_, o := mustChart(t, "memory-timeline", rs)
	if len(o.Series) != 8 {
		t.Fatalf("%d series, want RSS and rows for the 4 runs with a timeline", len(o.Series))
	}
	if len(o.YAxis) != 2 || o.YAxis[0].Name != "RSS (MiB)" || o.YAxis[1].Name != "million rows loaded" {
		t.Errorf("y axes %+v, want RSS (MiB) and million rows loaded", o.YAxis)
	}
	if o.Series[1].Name != "hashed rows" || o.Series[1].YAxisIndex != 1 {
		t.Errorf("series 1 = %q on axis %d, want hashed rows on the right axis", o.Series[1].Name, o.Series[1].YAxisIndex)
	}
	end := o.Series[0].Data[4].tuple(t)
	if end[0] != 0.212 || math.Abs(end[1]-35127296.0/(1<<20)) > 0.001 {
		t.Errorf("hashed last RSS point %v, want [0.212 %.3f]", end, 35127296.0/(1<<20))
	}
	if !strings.Contains(o.Title.Subtext, "1 of 5 runs have no timeline") {
		t.Errorf("subtitle %q does not note the run without a timeline", o.Title.Subtext)
	}
}

func TestPerThreadSpeedChart(t *testing.T) {
	rs := fxResults()[:1]
	_, o := mustChart(t, "per-thread-speed", rs)
	if got := strings.Join(o.XAxis[0].Data, ","); got != "producer,shard 0,shard 1" {
		t.Errorf("threads %q, want producer,shard 0,shard 1", got)
	}
	if len(o.Series) != 3 || o.Series[0].Stack != "time" || o.Series[1].Stack != "time" || o.Series[2].YAxisIndex != 1 {
		t.Fatalf("series %+v, want busy and waiting stacked, rows/s on the right axis", o.Series)
	}
	busy, _ := o.Series[0].Data[1].float(t)
	wait, _ := o.Series[1].Data[1].float(t)
	rate, _ := o.Series[2].Data[1].float(t)
	w := rs[0].Workers[0]
	if busy != w.BusySeconds || wait != w.WaitSeconds || math.Abs(rate-w.RowsPerSecond/1e6) > 0.0005 {
		t.Errorf("shard 0: busy %v wait %v rate %v, want %v %v %.3f", busy, wait, rate, w.BusySeconds, w.WaitSeconds, w.RowsPerSecond/1e6)
	}
	if pb, _ := o.Series[0].Data[0].float(t); !near(pb, 0.088) {
		t.Errorf("producer busy %v s, want read + split = 0.088", pb)
	}
	if _, ok := o.Series[2].Data[0].float(t); ok {
		t.Errorf("the producer has a rows/s bar; it loads no table")
	}
	// Several runs: each thread is named after its run.
	_, o = mustChart(t, "per-thread-speed", fxResults()[:2])
	if got := o.XAxis[0].Data; len(got) != 6 || got[3] != "packed · producer" {
		t.Errorf("threads of two runs %v, want 6 named after their run", got)
	}
}

func TestThroughputChart(t *testing.T) {
	rs := fxResults()
	rs[1].ReadSeconds, rs[1].ReadRowsPerSecond = 0, 0 // read phase off
	_, o := mustChart(t, "throughput", rs)
	if o.YAxis[0].Name != "million rows/s" {
		t.Errorf("y axis %q", o.YAxis[0].Name)
	}
	load, _ := o.Series[0].Data[0].float(t)
	if load != 4.72 {
		t.Errorf("hashed load %v M rows/s, want 4.72", load)
	}
	if _, ok := o.Series[1].Data[1].float(t); ok {
		t.Errorf("packed has a read bar with its read phase off")
	}
}

func TestRunLabelsNameWhatDiffers(t *testing.T) {
	rs := fxResults()[:3]
	rs[1].Shards = 8
	rs[2].MaxLoadFactor = 0.9
	rs[2].ValueType = "UInt64"
	got := result.RunLabels(rs, result.LabelAll, 0)
	want := []string{"hashed UInt64/UInt16 SHARDS 2 MLF 0.5", "packed UInt64/UInt16 SHARDS 8 MLF 0.5", "sparse UInt64/UInt64 SHARDS 2 MLF 0.9"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", got, want)
	}
	// hashed_array and gomap ignore mlf, so their mlf neither shows nor differs.
	rs = fxResults()[3:]
	rs[1].MaxLoadFactor = 0
	rs = append(rs, fxResults()[0])
	rs[2].MaxLoadFactor = 0.7
	rs[2].Rows = 1_500_000
	got = result.RunLabels(rs, result.LabelAll, 0)
	want = []string{"hashed_array 1M rows", "gomap 1M rows", "hashed 1.5M rows"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("labels %q, want %q", got, want)
	}
	// Huge pages on and off are two runs to tell apart; a result saved
	// before the setting was recorded ran with them on.
	rs = []result.Result{fxResults()[1], fxResults()[1], fxResults()[1]}
	rs[0].HugePages, rs[1].HugePages, rs[2].HugePages = "", "off", "on"
	got = result.RunLabels(rs, result.LabelAll, 0)
	if strings.Join(got, "|") != "packed hugepages on|packed hugepages off|packed hugepages on #2" {
		t.Errorf("labels with huge pages %q", got)
	}
	// A C++ map first: packlab's runs are still told apart by their shards.
	rs = []result.Result{fxResults()[1], fxResults()[1], fxResults()[1]}
	rs[0].Layout, rs[0].Reference, rs[0].Shards = "boost_flat", "boost::unordered_flat_map", 1
	rs[1].Shards, rs[2].Shards = 1, 4
	got = result.RunLabels(rs, result.LabelAll, 0)
	if strings.Join(got, "|") != "boost_flat (C++)|packed SHARDS 1|packed SHARDS 4" {
		t.Errorf("labels after a reference map %q", got)
	}
	// Repeats of one configuration get a number.
	rs = []result.Result{fxResults()[0], fxResults()[0], fxResults()[0]}
	got = result.RunLabels(rs, result.LabelAll, 0)
	if strings.Join(got, "|") != "hashed|hashed #2|hashed #3" {
		t.Errorf("repeated labels %q", got)
	}
}

func TestChartsAreReproducibleGolden(t *testing.T) {
	for _, kind := range ChartKinds() {
		in := fxResults()
		if kind == "memory-vs-rows" {
			in = fxGrowth()
		}
		a, err := BuildChart(kind, in)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := BuildChart(kind, in)
		if !bytes.Equal(a.Option, b.Option) {
			t.Errorf("%s: two builds differ", kind)
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, a.Option, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		compareGolden(t, filepath.Join("testdata", "chart-"+kind+".json"), pretty.Bytes())
	}
}

// compareGolden checks got against a golden file, or rewrites it with -update-golden.
func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGoldenFiles {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./experiments/report -run Golden -update-golden to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the output at line %d:\n got: %q\nwant: %q\n(go test ./experiments/report -run Golden -update-golden rewrites it after a deliberate change)", path, i+1, g, w)
			}
		}
	}
}

func TestChartHTMLIsSelfContained(t *testing.T) {
	c, _ := mustChart(t, "memory-breakdown", fxResults())
	page, err := c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	assertSelfContained(t, page)
	if n := bytes.Count(page, []byte(`.version="5.4.3"`)); n != 1 {
		t.Errorf("ECharts is inlined %d times, want once", n)
	}
	if !bytes.Contains(page, []byte(`id="packlab-memory-breakdown"`)) {
		t.Errorf("page has no element with the chart's fixed id")
	}
	opts := pageOptions(t, page)
	if len(opts) != 1 || !bytes.Equal(opts[0], c.Option) {
		t.Errorf("page draws %d options; want the chart's option, unchanged", len(opts))
	}
	// Bytes that could close the script are escaped, and decode unchanged.
	c.Title = "</script><b>x</b>"
	c.Option = json.RawMessage(`{"title":{"text":"</script><b>x</b>"}}`)
	page, err = c.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(page, []byte("</script><b>")) {
		t.Errorf("a title closed the page's script")
	}
	if got := pageOptions(t, page); len(got) != 1 || !bytes.Contains(got[0], []byte(`\u003c/script\u003e`)) {
		t.Errorf("escaped option not found: %s", got)
	}
	if _, err := (Chart{Kind: "x", Option: json.RawMessage("{nope")}).HTML(); err == nil {
		t.Errorf("HTML of an invalid option succeeded")
	}
}

var externalRef = regexp.MustCompile(`(?i)<(script|link|img|iframe)[^>]*(src|href)\s*=\s*["']?\s*(https?:)?//`)

// assertSelfContained fails if the page loads anything from a network.
func assertSelfContained(t *testing.T, page []byte) {
	t.Helper()
	if m := externalRef.Find(page); m != nil {
		t.Errorf("page loads an external resource: %s", m)
	}
	if bytes.Contains(page, []byte("go-echarts.github.io")) || bytes.Contains(page, []byte("cdn")) {
		t.Errorf("page names a CDN")
	}
	if !bytes.Contains(page, []byte(`data-library="Apache ECharts `+EChartsVersion+`"`)) || !bytes.Contains(page, []byte(EChartsJS())) {
		t.Errorf("page does not inline ECharts %s", EChartsVersion)
	}
}

var setOptionCall = regexp.MustCompile(`chart\.setOption\((\{.*\})\);\n`)

// pageOptions returns the option of every chart a page draws, as written.
func pageOptions(t *testing.T, page []byte) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, m := range setOptionCall.FindAllSubmatch(page, -1) {
		if !json.Valid(m[1]) {
			t.Fatalf("setOption argument is not JSON: %.200s", m[1])
		}
		out = append(out, json.RawMessage(m[1]))
	}
	return out
}

// TestTimelineIsThinned: the timeline chart draws a bounded number of
// points however many runs and samples it is given (each run's first,
// last and peak kept), so that a report of thousands of long runs stays a
// page: 2,070 runs of 2,000 samples made a 195 MB report before.
func TestTimelineIsThinned(t *testing.T) {
	ts := make([]result.TimelinePoint, 2001)
	for i := range ts {
		ts[i] = result.TimelinePoint{Seconds: float64(i) / 10, Rows: int64(i) * 1000, RSSBytes: int64(i % 700)}
	}
	thin := thinTimeline(ts, 50)
	if len(thin) > 51 || thin[0] != ts[0] || thin[len(thin)-1] != ts[2000] || !slices.Contains(thin, ts[699]) {
		t.Errorf("thinned to %d points; want at most 51, the first, the last and the peak (RSS %d at %.1f s)", len(thin), ts[699].RSSBytes, ts[699].Seconds)
	}
	if !slices.IsSortedFunc(thin, func(a, b result.TimelinePoint) int { return cmp.Compare(a.Seconds, b.Seconds) }) {
		t.Errorf("thinned points out of order")
	}
	if got := thinTimeline(ts[:30], 50); len(got) != 30 {
		t.Errorf("a short timeline was thinned to %d points", len(got))
	}
	results := make([]result.Result, 500)
	for i := range results {
		results[i] = result.Result{ID: fmt.Sprint(i), Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Rows: 2e6, Shards: 1 + i%4, Timeline: ts}
	}
	c, err := MemoryTimelineChart(results)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c.Option)
	if len(b) > 8<<20 {
		t.Errorf("500 runs of 2,001 samples: a chart of %d MB, want a few", len(b)>>20)
	}
}

// TestChartsFitAndHaveNoToolbox: no chart draws ECharts' own save icon (it
// wrote a file with no dialog and was drawn into every export), every line
// of a chart's notes fits a chart beside the lab's sidebar at 1280 px, the
// grid leaves room at the right for the last x label, and the tooltips give
// their figures' units.
func TestChartsFitAndHaveNoToolbox(t *testing.T) {
	for _, kind := range ChartKinds() {
		c, err := BuildChart(kind, fxResults())
		if err != nil {
			t.Fatal(err)
		}
		var o struct {
			Toolbox *struct {
				Show    *bool `json:"show"`
				Feature any   `json:"feature"`
			} `json:"toolbox"`
			Title struct {
				Subtext string `json:"subtext"`
			} `json:"title"`
			Grid []struct {
				Right string `json:"right"`
			} `json:"grid"`
			Tooltip struct {
				Formatter string `json:"formatter"`
			} `json:"tooltip"`
			Series []struct {
				Name    string `json:"name"`
				Tooltip struct {
					Formatter string `json:"formatter"`
				} `json:"tooltip"`
			} `json:"series"`
		}
		if err := json.Unmarshal(c.Option, &o); err != nil {
			t.Fatal(err)
		}
		// The timeline's series differ in unit (RSS in bytes, rows in
		// rows): each says its own.
		if kind == "memory-timeline" {
			if len(o.Series) == 0 {
				t.Errorf("%s: no series", kind)
			}
			for _, s := range o.Series {
				if f := s.Tooltip.Formatter; !strings.Contains(f, "{c} (s, ") || !(strings.Contains(f, "RSS ") && strings.HasSuffix(s.Name, " RSS") || strings.Contains(f, "rows)") && strings.HasSuffix(s.Name, " rows")) {
					t.Errorf("%s: series %q's tooltip is %q, want its point with units (s, and RSS in bytes or rows)", kind, s.Name, f)
				}
			}
		}
		if tb := o.Toolbox; tb != nil && (tb.Show == nil || *tb.Show || tb.Feature != nil) {
			t.Errorf("%s: the option shows a toolbox: %+v", kind, tb)
		}
		for _, line := range strings.Split(o.Title.Subtext, "\n") {
			if n := utf8.RuneCountInString(line); n > noteWidth {
				t.Errorf("%s: a note line of %d characters (at most %d fit): %q", kind, n, noteWidth, line)
			}
		}
		units := map[string]string{"memory-breakdown": "{c0} B per entry", "per-thread-speed": "{c0} s", "throughput": "{c1} million rows/s", "memory-vs-rows": "(rows, "}
		if want := units[kind]; want != "" && !strings.Contains(o.Tooltip.Formatter, want) {
			t.Errorf("%s: the tooltip's formatter is %q, want the figures with their units (%q)", kind, o.Tooltip.Formatter, want)
		}
		if len(o.Grid) == 0 || strings.HasSuffix(o.Grid[len(o.Grid)-1].Right, "%") {
			t.Errorf("%s: grids %+v; want the last one to leave pixels at the right for the last x label", kind, o.Grid)
		}
	}
}
