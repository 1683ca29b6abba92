package web

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
)

// TestChartsFitTheirBox renders every chart as the lab and the report
// draw them (ECharts, from the option Go builds), for results whose
// run labels are long enough to be turned, at the sizes of the lab's chart
// area, and checks that every piece of text (axis labels, names, titles,
// legend items not scrolled away) lies inside the chart: a long first label
// used to hang off the left edge, cut.
func TestChartsFitTheirBox(t *testing.T) {
	chromium := browserFor(t)
	// Real results, measured in this process: three configurations whose
	// labels carry types, rows and shards.
	var results []result.Result
	for _, cfg := range []config.Config{
		{Layouts: []string{"packed", "hashed"}, Key: "UInt64", Rows: 10_000},
		{Layouts: []string{"packed", "hashed"}, Key: "UInt8", Rows: 10_000},
		{Layouts: []string{"sparse", "hashed_array"}, Key: "UInt32", Value: "UUID", Rows: 20_000, Shards: 4},
	} {
		cfg.InProcess = true
		rs, err := experiments.Run(context.Background(), cfg, experiments.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, rs...)
	}
	echartsJS, err := os.ReadFile(filepath.Join("..", "experiments", "report", "assets", "echarts.min.js"))
	if err != nil {
		t.Fatal(err)
	}

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.NoFirstRun,
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")), chromedp.WindowSize(1400, 900))
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	do(t, ctx, string(echartsJS))

	// The lab's chart box on a 1280x800 screen (window and page), in the
	// desktop window at 1360 px and in the browser at 1440 and 1600 px;
	// the chart area is 430 px high less its insets. Every chart: at 1280
	// the padding chart's measured figures and its axis' name were cut.
	names, _ := json.Marshal(core.TypeNames())
	typeNames := string(names)
	var all []report.Chart
	for _, kind := range report.ChartKinds() {
		c, err := report.BuildChart(kind, results)
		if err != nil {
			t.Errorf("chart %s: %v", kind, err)
			continue
		}
		all = append(all, c)
	}
	// The Plan tab's memory chart, for 1e9 rows in 24 GiB with these results
	// as its history (its title and notes were clipped once).
	plan, err := planner.MakePlan(planner.PlanRequest{Rows: 1e9, MemoryBytes: 24 << 30}, results,
		planner.PlanMachine{AvailableBytes: 24 << 30, TotalBytes: 24 << 30, Cores: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := report.PlanChart(plan, results); err != nil {
		t.Errorf("the Plan chart: %v", err)
	} else {
		all = append(all, c)
	}
	for _, size := range []struct{ w, h int }{{882, 414}, {964, 414}, {1044, 414}, {1204, 414}} {
		for _, c := range all {
			kind := c.Kind
			script := fmt.Sprintf(`(() => {
				document.body.innerHTML = '<div id="c" style="position:absolute;left:0;top:0;width:%dpx;height:%dpx"></div>';
				const box = document.getElementById("c");
				const chart = echarts.init(box, null, {renderer: "svg"});
				chart.setOption(%s, true);
				const r = box.getBoundingClientRect();
				const out = [];
				const seen = [];
				for (const t of box.querySelectorAll("text")) {
					const b = t.getBoundingClientRect();
					if (!t.textContent.trim() || b.width === 0 || t.closest("[clip-path]")) continue; // a scrolling legend clips its own
					if (b.left < r.left - 1 || b.right > r.right + 1 || b.top < r.top - 1 || b.bottom > r.bottom + 1) {
						out.push(t.textContent + " at " + [b.left, b.top, b.right, b.bottom].map(Math.round).join(","));
					}
					// Two pieces of level text on each other read as one ("0 %%20 %%40 %%");
					// a turned label's box is no measure of its ink.
					const m = t.getCTM();
					if (m && Math.abs(m.b) > 1e-6) continue;
					for (const [u, c] of seen) {
						if (Math.min(b.right, c.right) - Math.max(b.left, c.left) > 3 && Math.min(b.bottom, c.bottom) - Math.max(b.top, c.top) > 3) {
							out.push(JSON.stringify(u) + " on " + JSON.stringify(t.textContent));
						}
					}
					seen.push([t.textContent, b]);
				}
				// The padding chart names every type on both axes and puts a
				// figure in each of its 15x15 cells: none is dropped.
				if (%q === "padding-waste") {
					const texts = Array.from(box.querySelectorAll("text")).map((t) => t.textContent);
					for (const name of %s) {
						const n = texts.filter((x) => x === name).length;
						if (n < 2) out.push(name + " named on " + n + " of the two axes");
					}
					const figures = texts.filter((x) => /^\d+(\.\d)?$/.test(x)).length;
					if (figures < 225) out.push(figures + " cells' figures of 225");
				}
				chart.dispose();
				return out;
			})()`, size.w, size.h, c.Option, kind, typeNames)
			if cut := eval[[]string](t, ctx, script); len(cut) > 0 {
				b, _ := json.Marshal(cut)
				t.Errorf("chart %s at %dx%d: text outside the chart (cut off) or on other text: %s", kind, size.w, size.h, b)
			}
		}
	}
}
