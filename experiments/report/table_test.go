package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// fxMixed is a table whose runs differ in shards, mlf and rows, with one
// read phase off and one run measured in a browser (no RSS).
func fxMixed() []result.Result {
	rs := fxResults()
	rs[1].Shards = 16
	rs[1].MaxLoadFactor = 0.9
	rs[2].ReadSeconds, rs[2].ReadRowsPerSecond, rs[2].FoundRate = 0, 0, 0
	rs[3].Rows, rs[3].ElementCount = 10_000_000, 9_999_988
	rs[3].Duplicates = 12
	rs[3].BytesAllocated, rs[3].PayloadBytes, rs[3].EmptyBytes, rs[3].MetadataBytes = 704643176, 99999880, 524288144, 80355152
	rs[3].RSSBytes, rs[3].PeakRSSBytes = 723517440, 1052770304
	rs[3].LoadSeconds, rs[3].LoadRowsPerSecond, rs[3].ReadSeconds, rs[3].ReadRowsPerSecond = 2.412, 4145936.15, 1.031, 9698339.48
	rs[4].RSSBytes, rs[4].PeakRSSBytes, rs[4].Isolated, rs[4].Runtime = 0, 0, false, "browser"
	return rs
}

func TestWriteTableGolden(t *testing.T) {
	ext := map[string]string{"table": "txt", "markdown": "md", "csv": "csv", "json": "json"}
	for _, format := range text.Formats() {
		for name, in := range map[string][]result.Result{"layouts": fxResults(), "mixed": fxMixed()} {
			var buf bytes.Buffer
			if err := WriteTable(&buf, in, format); err != nil {
				t.Fatalf("WriteTable(%s, %s): %v", name, format, err)
			}
			compareGolden(t, filepath.Join("testdata", "table-"+name+"."+ext[format]), buf.Bytes())
		}
	}
}

func TestWriteTableUnknownFormat(t *testing.T) {
	err := WriteTable(&bytes.Buffer{}, fxResults(), "yaml")
	if err == nil {
		t.Fatal("WriteTable(yaml) succeeded")
	}
	for _, want := range append([]string{`"yaml"`}, text.Formats()...) {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, fxResults(), " Markdown "); err != nil || !strings.HasPrefix(buf.String(), "| settings |") {
		t.Errorf("WriteTable(\" Markdown \") = %v, %.40q", err, buf.String())
	}
}

func TestWriteTableJSONIsTheResultsAndNothingElse(t *testing.T) {
	for _, in := range [][]result.Result{fxResults(), fxMixed()} {
		var buf bytes.Buffer
		if err := WriteTable(&buf, in, "json"); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(&buf)
		dec.DisallowUnknownFields()
		var back []result.Result
		if err := dec.Decode(&back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, in) {
			t.Errorf("JSON does not decode back to the results")
		}
		if rest := strings.TrimSpace(buf.String()); rest != "" {
			t.Errorf("after the array: %q", rest)
		}
	}
	for _, in := range [][]result.Result{nil, {}} {
		var buf bytes.Buffer
		if err := WriteTable(&buf, in, "json"); err != nil || buf.String() != "[]\n" {
			t.Errorf("JSON of no results = %q, %v; want \"[]\\n\"", buf.String(), err)
		}
	}
	bad := fxResults()[:1]
	bad[0].LoadSeconds = math.NaN()
	if err := WriteTable(&bytes.Buffer{}, bad, "json"); err == nil {
		t.Errorf("JSON of a NaN figure succeeded; JSON has no NaN")
	}
}

func TestWriteTableCSVHasRawNumbers(t *testing.T) {
	in := fxMixed()
	var buf bytes.Buffer
	if err := WriteTable(&buf, in, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(in)+1 {
		t.Fatalf("%d records, want a header and %d rows", len(recs), len(in))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for i, r := range in {
		rec := recs[i+1]
		ints := map[string]int64{"rows": r.Rows, "element_count": r.ElementCount, "bytes_allocated": r.BytesAllocated,
			"rss_bytes": r.RSSBytes, "peak_rss_bytes": r.PeakRSSBytes, "shards": int64(r.Shards)}
		for name, want := range ints {
			if got, err := strconv.ParseInt(rec[col[name]], 10, 64); err != nil || got != want {
				t.Errorf("run %d %s = %q, want %d", i, name, rec[col[name]], want)
			}
		}
		floats := map[string]float64{"load_seconds": r.LoadSeconds, "read_seconds": r.ReadSeconds,
			"read_rows_per_second": r.ReadRowsPerSecond, "max_load_factor": r.MaxLoadFactor,
			"bytes_per_entry": float64(r.BytesAllocated) / float64(r.ElementCount)}
		for name, want := range floats {
			if got, err := strconv.ParseFloat(rec[col[name]], 64); err != nil || got != want {
				t.Errorf("run %d %s = %q, want %v", i, name, rec[col[name]], want)
			}
		}
		if rec[col["layout"]] != r.Layout || rec[col["key_type"]] != r.KeyType || rec[col["value_type"]] != r.ValueType {
			t.Errorf("run %d: %v", i, rec)
		}
	}
}

func TestWriteTableText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTable(&buf, fxMixed(), "table"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want a header and 5 rows:\n%s", len(lines), buf.String())
	}
	// Numbers are right-aligned: every line ends at the same column.
	for i, l := range lines {
		if len([]rune(l)) != len([]rune(lines[0])) {
			t.Errorf("line %d is %d wide, header %d:\n%s", i, len([]rune(l)), len([]rune(lines[0])), buf.String())
		}
	}
	want := []string{
		"hashed 1M rows SHARDS 2 MLF 0.5", "1,000,000", "0.212", "0.094", "10.64", "32.00 MiB", "33.50 MiB", "50.00 MiB", "33.55",
	}
	for _, w := range want {
		if !strings.Contains(lines[1], w) {
			t.Errorf("hashed row %q lacks %q", lines[1], w)
		}
	}
	for _, c := range []struct {
		line int
		want string
	}{
		{2, "packed 1M rows SHARDS 16 MLF 0.9"},
		{3, "sparse 1M rows SHARDS 2 MLF 0.5"},
		{4, "hashed_array 10M rows SHARDS 2 "}, // no MLF: hashed_array ignores it
		{4, "672.00 MiB"},
		{5, "~34.01 MiB"}, // gomap's figure is estimated
	} {
		if !strings.Contains(lines[c.line], c.want) {
			t.Errorf("line %d %q lacks %q", c.line, lines[c.line], c.want)
		}
	}
	if strings.Count(lines[3], " - ") < 2 || strings.Count(lines[5], " -") < 2 {
		t.Errorf("unmeasured figures are not shown as -:\n%s\n%s", lines[3], lines[5])
	}
}

func TestWriteTableEmpty(t *testing.T) {
	for _, format := range []string{"table", "markdown", "csv"} {
		var buf bytes.Buffer
		if err := WriteTable(&buf, nil, format); err != nil {
			t.Fatal(err)
		}
		lines := strings.Count(buf.String(), "\n")
		want := 1
		if format == "markdown" {
			want = 2
		}
		if lines != want || !strings.Contains(buf.String(), "settings") {
			t.Errorf("%s of no results = %q, want the header alone", format, buf.String())
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 33554432: "32.00 MiB", 35 << 30: "35.00 GiB",
		17_700_000_000: "16.48 GiB", -1 << 20: "-1.00 MiB", 1<<30 - 1: "1024.00 MiB",
	} {
		if got := text.Bytes2(n); got != want {
			t.Errorf("FormatBytes2(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 12: "12", 1000: "1,000", 999999: "999,999", 1_000_000_000: "1,000,000,000", -1234: "-1,234"} {
		if got := text.Thousands(n); got != want {
			t.Errorf("GroupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestRepeatsShowTheirSpread: repeated loads give the median and the
// range, in the result (Spread), the table, the CSV and the throughput
// chart's labels (issue 28: figures with their spread).
func TestRepeatsShowTheirSpread(t *testing.T) {
	rep := func(load, read float64) result.Result {
		return result.Result{Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Rows: 1e6, Shards: 1, MaxLoadFactor: 0.5,
			ElementCount: 1e6, LoadSeconds: load, LoadRowsPerSecond: 1e6 / load, ReadSeconds: read, ReadRowsPerSecond: 1e6 / read}
	}
	r := result.Combine([]result.Result{rep(0.5, 0.1), rep(0.4, 0.125), rep(0.8, 0.08)})
	if r.Repeats != 3 || r.LoadSeconds != 0.5 || r.ReadSeconds != 0.1 ||
		r.Spread == nil || *r.Spread != (result.Spread{LoadSecondsMin: 0.4, LoadSecondsMax: 0.8, ReadSecondsMin: 0.08, ReadSecondsMax: 0.125}) {
		t.Fatalf("combined: repeats %d, load %v, read %v, spread %+v", r.Repeats, r.LoadSeconds, r.ReadSeconds, r.Spread)
	}
	one := result.Combine([]result.Result{rep(0.5, 0.1)})
	if one.Spread != nil {
		t.Errorf("one load has a spread: %+v", one.Spread)
	}

	var md strings.Builder
	if err := WriteTable(&md, []result.Result{r, one}, "markdown"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 0.500 (0.400–0.800) | 0.100 (0.080–0.125) | 10.00 (8.00–12.50) |", "| 0.500 | 0.100 | 10.00 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, md.String())
		}
	}
	var csv strings.Builder
	if err := WriteTable(&csv, []result.Result{r, one}, "csv"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if !strings.HasSuffix(lines[1], ",3,0.4,0.8,0.08,0.125") || !strings.HasSuffix(lines[2], ",1,,,,") {
		t.Errorf("csv rows:\n%s", csv.String())
	}

	c, err := ThroughputChart([]result.Result{r, one})
	if err != nil {
		t.Fatal(err)
	}
	opt := string(c.Option)
	for _, want := range []string{`"formatter":"2.00 (1.25–2.50)"`, `"formatter":"10.00 (8.00–12.50)"`, "the slowest to the fastest"} {
		if !strings.Contains(opt, want) {
			t.Errorf("the throughput chart lacks %s", want)
		}
	}
}

// TestShortText: a name of 5,000 characters is shown cut to MaxLabel with
// what was left out said, so that it cannot break a list, a table or a
// chart; the result file keeps it whole. Short names pass as they are.
func TestShortText(t *testing.T) {
	long := strings.Repeat("x", 5000)
	got := text.Short(long, text.MaxLabel)
	if !strings.HasPrefix(got, strings.Repeat("x", text.MaxLabel-1)+"…") || !strings.HasSuffix(got, "(4921 more characters)") {
		t.Errorf("ShortText of 5,000 characters: %q", got)
	}
	if got := text.Short("seed-table · 1M rows", text.MaxLabel); got != "seed-table · 1M rows" {
		t.Errorf("a short name changed: %q", got)
	}
	rs := []result.Result{{ID: "a", Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Rows: 10, Job: &result.Job{ID: "j", Name: long}}}
	var b strings.Builder
	if err := WriteReportMarkdown(&b, rs, "t"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), strings.Repeat("x", text.MaxLabel)) {
		t.Errorf("the report shows the 5,000-character job name whole")
	}
}

// TestCellsAreTheMarkdownTables: the window's cells (Cells) are the
// Markdown export's, unescaped: the same header, alignment and rows.
func TestCellsAreTheMarkdownTables(t *testing.T) {
	rs := fxMixed()
	header, numeric, rows := Cells(rs)
	var want strings.Builder
	text.Grid(&want, header, numeric, rows, true)
	var md bytes.Buffer
	if err := WriteTable(&md, rs, "markdown"); err != nil {
		t.Fatal(err)
	}
	if md.String() != want.String() || len(rows) != len(rs) || len(numeric) != len(header) || numeric[0] || !numeric[1] {
		t.Errorf("Cells drawn as Markdown:\n%s\nWriteTable's:\n%s", want.String(), md.String())
	}
}
