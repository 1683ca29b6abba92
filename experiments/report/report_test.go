package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/result"
)

func writeReport(t *testing.T, results []result.Result, title string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteReport(&buf, results, title); err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	return buf.Bytes()
}

func TestReportIsSelfContainedWithEveryChart(t *testing.T) {
	rs := fxResults()
	page := writeReport(t, rs, "UInt64 → UInt16 at 1M rows")
	assertSelfContained(t, page)
	if n := bytes.Count(page, []byte(`.version="`+EChartsVersion+`"`)); n != 1 {
		t.Errorf("ECharts %s is inlined %d times, want once", EChartsVersion, n)
	}
	if n := bytes.Count(page, []byte("<script")); n != 1+len(ChartKinds()) {
		t.Errorf("%d scripts, want ECharts plus one per chart (%d)", n, len(ChartKinds()))
	}

	// Every chart is there, in ChartKinds order, drawn from exactly the
	// option BuildChart gives every other face.
	got := pageOptions(t, page)
	if len(got) != len(ChartKinds()) {
		t.Fatalf("report draws %d charts, want %d", len(got), len(ChartKinds()))
	}
	for i, kind := range ChartKinds() {
		want, err := BuildChart(kind, rs)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[i], want.Option) {
			t.Errorf("chart %d of the report is not BuildChart(%q)'s option", i+1, kind)
		}
		o := decodeOption(t, Chart{Kind: kind, Option: got[i]})
		if o.Title.Text != want.Title || len(o.Series) == 0 {
			t.Errorf("chart %d: title %q with %d series", i+1, o.Title.Text, len(o.Series))
		}
		if !bytes.Contains(page, []byte(`id="`+chartElementID(kind)+`-`)) {
			t.Errorf("no element for the %s chart", kind)
		}
	}
	if bytes.Contains(page, []byte("Not shown")) {
		t.Errorf("a chart is reported missing though every one has data")
	}
}

var tableRow = regexp.MustCompile(`<tr>(.*?)</tr>`)
var tableCell = regexp.MustCompile(`<t[dh][^>]*>(.*?)</t[dh]>`)

func TestReportTable(t *testing.T) {
	rs := fxResults()
	page := string(writeReport(t, rs, ""))
	if !strings.Contains(page, "<title>"+DefaultReportTitle+"</title>") || !strings.Contains(page, "<h1>"+DefaultReportTitle+"</h1>") {
		t.Errorf("an empty title does not fall back to %q", DefaultReportTitle)
	}
	header, want := humanCells(rs)
	rows := tableRow.FindAllStringSubmatch(page, -1)
	if len(rows) != len(rs)+1 {
		t.Fatalf("%d table rows, want a header and %d", len(rows), len(rs))
	}
	for i, row := range rows {
		var cells []string
		for _, c := range tableCell.FindAllStringSubmatch(row[1], -1) {
			cells = append(cells, c[1])
		}
		exp := header
		if i > 0 {
			exp = want[i-1]
		}
		if strings.Join(cells, "|") != strings.Join(exp, "|") {
			t.Errorf("table row %d = %q, want %q", i, cells, exp)
		}
	}
	for _, s := range []string{
		"5 runs of hashed, packed, sparse, hashed_array, gomap",
		"key/value types UInt64/UInt16 · rows 1M · shards 2",
		"on linux/amd64, 2 CPUs, 24.00 GiB memory, go1.26.8",
		"each run in a fresh process",
		"~ marks a bytes_allocated",
		`<td class="num">~34.01 MiB</td>`,
	} {
		if !strings.Contains(page, s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

func TestReportLeavesOutChartsWithoutData(t *testing.T) {
	rs := fxResults()
	for i := range rs {
		rs[i].Timeline, rs[i].Workers = nil, nil
	}
	page := writeReport(t, rs, "no timelines")
	if got := len(pageOptions(t, page)); got != len(ChartKinds())-2 {
		t.Errorf("%d charts, want all but memory-timeline and per-thread-speed", got)
	}
	for _, s := range []string{"Not shown, for want of data:", "memory-timeline chart: no result has a timeline", "per-thread-speed chart: no result has workers"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("report lacks %q", s)
		}
	}
	if bytes.Contains(page, []byte(`id="packlab-memory-timeline`)) {
		t.Errorf("report has an element for the chart it left out")
	}
}

func TestReportEscapesText(t *testing.T) {
	rs := fxResults()[:2]
	rs[0].Layout = "<img src=x onerror=alert(1)>"
	page := writeReport(t, rs, `A "title" <script>alert(1)</script>`)
	if bytes.Contains(page, []byte("<script>alert(1)")) || bytes.Contains(page, []byte("<img src=x")) {
		t.Errorf("text from results or the title reached the page unescaped")
	}
	assertSelfContained(t, page)
	for _, o := range pageOptions(t, page) {
		if !json.Valid(o) {
			t.Errorf("option is not JSON after escaping")
		}
	}
}

func TestReportNoResults(t *testing.T) {
	var buf bytes.Buffer
	err := WriteReport(&buf, nil, "x")
	if err == nil || !strings.Contains(err.Error(), "no results") {
		t.Errorf("WriteReport(nil) = %v, want an error saying there are no results", err)
	}
	if buf.Len() != 0 {
		t.Errorf("WriteReport wrote %d bytes before failing", buf.Len())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestReportWriteError(t *testing.T) {
	if err := WriteReport(failingWriter{}, fxResults(), "x"); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteReport to a failing writer = %v, want its error", err)
	}
}

// TestReportRendersInChromium opens a report in headless Chromium, with
// no network, and checks that ECharts drew every chart. It needs Debian's
// chromium and is skipped without it or with -short.
func TestReportRendersInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser; skipped with -short")
	}
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install chromium)")
	}
	dir := t.TempDir()
	render := func(name string, page []byte) []byte {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, page, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
			"--disable-background-networking", "--no-first-run", "--user-data-dir="+filepath.Join(dir, "profile"),
			"--window-size=1280,900", "--dump-dom", "file://"+path)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		dom, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
		}
		return dom
	}
	failed := regexp.MustCompile(`class="chart chart-error"[^>]*>([^<]*)`)

	// Control: without the inlined library the page says its charts failed,
	// so the check below can tell a drawn chart from a dead one.
	page := writeReport(t, fxResults(), "render check")
	dead := render("dead.html", bytes.Replace(page, []byte(EChartsJS()), nil, 1))
	if n := len(failed.FindAll(dead, -1)); n != len(ChartKinds()) {
		t.Fatalf("without ECharts, %d charts report failure, want %d", n, len(ChartKinds()))
	}

	dom := render("report.html", page)
	if m := failed.FindSubmatch(dom); m != nil {
		t.Fatalf("a chart failed to draw: %s", m[1])
	}
	instances := regexp.MustCompile(`<div class="chart" id="(packlab-[a-z-]+-\d+)"[^>]*_echarts_instance_="ec_\d+"[^>]*>.*?<canvas[^>]*width="(\d+)"`).FindAllSubmatch(dom, -1)
	if len(instances) != len(ChartKinds()) {
		t.Fatalf("ECharts drew %d charts, want %d", len(instances), len(ChartKinds()))
	}
	for _, m := range instances {
		if w, _ := strconv.Atoi(string(m[2])); w < 300 {
			t.Errorf("%s drew a canvas %d px wide", m[1], w)
		}
	}
}

// BenchmarkWriteReport writes the report of five runs: six charts, the
// table and ECharts inlined (about 1 MiB, nearly all of it ECharts).
func BenchmarkWriteReport(b *testing.B) {
	rs := fxResults()
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteReport(&buf, rs, "bench"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/report")
}

// BenchmarkBuildChart builds each chart's option from five runs.
func BenchmarkBuildChart(b *testing.B) {
	rs := fxResults()
	for _, kind := range ChartKinds() {
		b.Run("kind="+kind, func(b *testing.B) {
			var size int
			for b.Loop() {
				c, err := BuildChart(kind, rs)
				if err != nil {
					b.Fatal(err)
				}
				size = len(c.Option)
			}
			b.ReportMetric(float64(size), "bytes/option")
		})
	}
}
