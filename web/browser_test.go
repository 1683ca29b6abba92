package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/packlab/packlab/app/serve/servetest"
	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// Environment the test reads.
const (
	envRun        = "PACKLAB_WEB_TEST"   // 1: run the end-to-end test
	envScreenshot = "PACKLAB_SCREENSHOT" // a path: save the lab's picture there (docs/browser.png)
	envChromium   = "PACKLAB_CHROMIUM"   // the browser to drive; default chromium on PATH
)

// TestBrowserLab drives the served lab in headless Chromium: the page
// paints and connects to the wasm backend; bad input is refused next to its
// field and runs nothing; a packed and hashed comparison of 1e5
// <UInt64,UInt16> rows runs and shows the bytes_allocated core computes for
// the same tables; every chart draws pixels; PNG export downloads a PNG; the
// results survive a reload (IndexedDB); a key file comes through the file
// picker; Cancel stops a run at once, keeps the layouts already measured,
// and the lab goes on; and a 1e6-row packed run is timed against the same
// run native and in-process.
func TestBrowserLab(t *testing.T) {
	chromium := browserFor(t)
	// packlab serve on a free loopback port, building the site first.
	tmp, root := t.TempDir(), projectRoot(t)
	bin := buildPacklab(t, root, tmp)
	site := filepath.Join(tmp, "web")
	url, stopServe := serve(t, bin, root, site)
	defer stopServe()

	// Headless Chromium with a fresh profile; downloads go to a folder.
	downloads := filepath.Join(tmp, "downloads")
	if err := os.MkdirAll(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(tmp, "profile")),
		chromedp.WindowSize(1440, 1000),
	)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	defer cancelCtx()
	ctx, cancelTimeout := context.WithTimeout(ctx, 8*time.Minute)
	defer cancelTimeout()

	// Any uncaught exception on the page fails the test; the console is logged.
	chooser := make(chan cdp.BackendNodeID, 1)
	var pageMu sync.Mutex
	var exceptions []string
	if err := chromedp.Listen(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			pageMu.Lock()
			exceptions = append(exceptions, exceptionText(ev.ExceptionDetails))
			pageMu.Unlock()
		case *page.EventFileChooserOpened:
			select {
			case chooser <- ev.BackendNodeID:
			default:
			}
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			}
			t.Logf("console.%s: %s", ev.Type, strings.Join(parts, " "))
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	defer func() {
		pageMu.Lock()
		defer pageMu.Unlock()
		for _, e := range exceptions {
			t.Errorf("uncaught exception on the page: %s", e)
		}
	}()

	must := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatalf("allowing downloads: %v", err)
	}

	// ---- the page paints and connects ----
	must("open the lab", chromedp.Navigate(url))
	waitFor(t, ctx, "the lab to be ready", `document.body.dataset.ready === "true"`, 90*time.Second)
	// First paint: this first visit, then two more with the cache off; the
	// median of the three is the figure.
	const fcp = `(performance.getEntriesByName("first-contentful-paint")[0] || {startTime: -1}).startTime`
	paints := []float64{eval[float64](t, ctx, fcp)}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		t.Fatalf("turning the cache off: %v", err)
	}
	for range 2 {
		must("reload", chromedp.Reload())
		waitFor(t, ctx, "the lab to be ready", `document.body.dataset.ready === "true"`, 90*time.Second)
		paints = append(paints, eval[float64](t, ctx, fcp))
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: false}); err != nil {
		t.Fatalf("turning the cache on: %v", err)
	}
	paint := median(paints)
	// A figure, not an assertion: timings on a shared machine are measured
	// and reported (the README has them), never a reason for a test to fail.
	t.Logf("TARGET first contentful paint of %s: %.0f ms (median of %.0f ms; target under 1000 ms)%s", url, paint, paints, notMet(paint > 1000))
	if paint <= 0 {
		t.Errorf("first paint %.0f ms (median of %.0f): the page reported no paint", paint, paints)
	}
	machine := evalString(t, ctx, `document.querySelector("#machine .pill").textContent`)
	if !strings.Contains(machine, "browser") || !strings.Contains(machine, "in process") {
		t.Errorf("the header says %q, want the browser runtime, in process", machine)
	}
	// The worker has one thread: the header says "1 core", not "1 cores".
	if header := evalString(t, ctx, `document.querySelector("#machine span").textContent`); header != "1 core" && !regexp.MustCompile(`^([02-9]|\d\d+) cores$`).MatchString(header) {
		t.Errorf("the header says %q, want \"1 core\" or \"N cores\"", header)
	}
	rssLabel := evalString(t, ctx, `Array.from(document.querySelectorAll("#progress .stat .k")).map(e => e.textContent).join(",")`)
	if !strings.Contains(rssLabel, "wasm memory") || strings.Contains(rssLabel, "RSS") {
		t.Errorf("progress labels %q: want wasm memory in place of RSS", rssLabel)
	}
	do(t, ctx, helpers)

	// ---- at 1280x800: Run and the main choices in view, chips told apart ----
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	type inView struct {
		Run, Layouts, Rows   bool
		Checked, Unchecked   string
		CheckedN, UncheckedN int
	}
	v := eval[inView](t, ctx, `(() => {
		const seen = el => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0; };
		const bg = el => el ? getComputedStyle(el).backgroundColor : "";
		// Every chip is selected by default here: one is unselected for the
		// look, and selected again.
		const first = document.querySelector("#layouts input");
		first.checked = false;
		const on = document.querySelectorAll("#layouts input:checked + span"), off = document.querySelectorAll("#layouts input:not(:checked) + span");
		const out = {run: seen(document.getElementById("run")), layouts: seen(document.getElementById("layouts")), rows: seen(document.getElementById("rows")),
			checked: bg(on[0]), unchecked: bg(off[0]), checkedN: on.length, uncheckedN: off.length};
		first.checked = true;
		return out;
	})()`)
	if !v.Run || !v.Layouts || !v.Rows {
		t.Errorf("at 1280x800 without scrolling: Run in view %v, the layouts %v, rows %v; want all in view", v.Run, v.Layouts, v.Rows)
	}
	if v.CheckedN == 0 || v.UncheckedN == 0 || v.Checked == v.Unchecked || v.Unchecked != "rgb(255, 255, 255)" {
		t.Errorf("chips: %d selected on %q, %d not on %q; want white for unselected and a fill for selected", v.CheckedN, v.Checked, v.UncheckedN, v.Unchecked)
	}
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1440, 1000)); err != nil {
		t.Fatal(err)
	}

	// ---- the C++ reference maps: listed, never runnable in a browser ----
	refs := evalString(t, ctx, `Array.from(document.querySelectorAll("#ref-layouts input")).map(i => i.value + (i.disabled ? ":off" : ":on")).join(",")`)
	note := evalString(t, ctx, `document.getElementById("refs-note").textContent`)
	if refs != "boost_flat:off,absl_flat:off,dense_hash_map:off,sparse_hash_map:off,hopscotch:off" ||
		!strings.Contains(note, "browser lab runs packlab's Go layouts only") || !strings.Contains(note, "make refs") {
		t.Errorf("reference maps in the browser: %s, note %q; want all five listed and disabled, and a note that names make refs", refs, note)
	}
	// Each family's note names it once (it said "ClickHouse's own
	// dictionaries unavailable: ...; ClickHouse's own dictionaries run in
	// the desktop lab ...").
	for family, id := range map[string]string{"c++ reference maps": "refs-note", "clickhouse's own dictionaries": "ch-note"} {
		if n := evalString(t, ctx, `document.getElementById("`+id+`").textContent`); strings.Count(strings.ToLower(n), family) != 1 {
			t.Errorf("the browser's note on the %s says it %d times: %q", family, strings.Count(strings.ToLower(n), family), n)
		}
	}

	// ---- bad input: an error next to its field, nothing runs ----
	do(t, ctx, `__t.layouts(["packed", "hashed"]); __t.set("key", "UInt64"); __t.set("value", "UInt16"); __t.set("shards", "1")`)
	for _, bad := range []struct{ field, value, want string }{
		{"rows", "-5", "-5"},
		{"shards", "500", "500: out of range (allowed: 1 to 128)"},
	} {
		do(t, ctx, fmt.Sprintf(`__t.set("rows", "1e5"); __t.set(%q, %q)`, bad.field, bad.value))
		msg := waitText(t, ctx, bad.field+"'s error", fmt.Sprintf(`__t.err(%q)`, bad.field), 20*time.Second)
		if !strings.Contains(msg, bad.want) {
			t.Errorf("%s %s: the error beside the field says %q, want it to contain %q", bad.field, bad.value, msg, bad.want)
		}
		type submitState struct {
			RunDisabled bool   `json:"runDisabled"`
			Invalid     bool   `json:"invalid"`
			Progress    bool   `json:"progressHidden"`
			Banner      string `json:"banner"`
		}
		// Submit even so (the button is disabled): Go refuses it again, and
		// nothing runs.
		state := eval[submitState](t, ctx, fmt.Sprintf(`(async () => {
			document.getElementById("form").requestSubmit();
			await new Promise(r => setTimeout(r, 500));
			return {runDisabled: document.getElementById("run").disabled,
				invalid: document.getElementById(%q).classList.contains("invalid"),
				progressHidden: document.getElementById("progress").hidden,
				banner: document.getElementById("banner").textContent};
		})()`, bad.field), chromedp.EvalAwaitPromise)
		if !state.RunDisabled || !state.Invalid || !state.Progress {
			t.Errorf("%s %s: run disabled %v, field marked invalid %v, progress hidden %v; want all true", bad.field, bad.value, state.RunDisabled, state.Invalid, state.Progress)
		}
		if msg2 := evalString(t, ctx, fmt.Sprintf(`__t.err(%q)`, bad.field)); !strings.Contains(msg2, bad.want) {
			t.Errorf("%s %s after submitting: the error says %q", bad.field, bad.value, msg2)
		}
	}
	if n := historyCount(t, ctx); n != 0 {
		t.Fatalf("after bad input the history has %d results, want 0 (something ran)", n)
	}

	// ---- a comparison: packed and hashed, 1e5 <UInt64,UInt16> rows ----
	do(t, ctx, `__t.set("shards", "1"); __t.set("rows", "1e5")`)
	runLab(t, ctx, "the 1e5 comparison", 2)

	coreBytes := map[string]int64{}
	var want []result.Result
	for _, l := range []core.Layout{core.LayoutPacked, core.LayoutHashed} {
		st := coreStats(t, l, 100_000)
		coreBytes[string(l)] = st.BytesAllocated
		want = append(want, result.Result{Layout: string(l), KeyType: "UInt64", ValueType: "UInt16", Rows: 100_000, Shards: 1,
			MaxLoadFactor: 0.5, ElementCount: st.ElementCount, BytesAllocated: st.BytesAllocated})
	}
	shown := shownTable(t, ctx)
	wantCells := bytesCells(t, want)
	for layout, cell := range shown {
		if cell != wantCells[layout] {
			t.Errorf("%s: the page shows bytes_allocated %q, core computes %d bytes = %q", layout, cell, coreBytes[layout], wantCells[layout])
		}
	}
	if len(shown) != 2 {
		t.Errorf("the results table shows %v, want packed and hashed", shown)
	}
	// The whole table is in view, bytes/entry and the runtime column
	// included, with no sideways scrolling, at 1600 px and at 1440 px.
	for _, w := range []int64{1600, 1440} {
		if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(w, 1000)); err != nil {
			t.Fatal(err)
		}
		type fit struct{ Scroll, Client, Columns int }
		f := eval[fit](t, ctx, `(() => { const w = document.getElementById("results-table");
			return {scroll: w.scrollWidth, client: w.clientWidth, columns: w.querySelectorAll("thead th").length}; })()`)
		if f.Scroll > f.Client || f.Columns < 9 {
			t.Errorf("at %d px the results table is %d px wide in a %d px box (%d columns): cut at the right edge", w, f.Scroll, f.Client, f.Columns)
		}
	}
	results := exportJSON(t, ctx, downloads)
	for _, r := range results {
		if r.BytesAllocated != coreBytes[r.Layout] {
			t.Errorf("%s: the exported result has bytes_allocated %d, core computes %d", r.Layout, r.BytesAllocated, coreBytes[r.Layout])
		}
		if r.Runtime != "browser" || r.Isolated || r.Rows != 100_000 || r.ElementCount != 100_000 {
			t.Errorf("%s: runtime %q isolated %v rows %d elements %d; want browser, false, 1e5, 1e5", r.Layout, r.Runtime, r.Isolated, r.Rows, r.ElementCount)
		}
		if r.PeakRSSBytes < r.BytesAllocated/2 {
			t.Errorf("%s: the wasm memory's peak above the baseline is %d bytes for %d bytes of tables", r.Layout, r.PeakRSSBytes, r.BytesAllocated)
		}
	}

	// ---- every chart draws pixels; PNG export gives a PNG ----
	kinds := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#charttabs button")).map(b => b.dataset.kind)`)
	if len(kinds) < 6 {
		t.Errorf("chart tabs %v, want six", kinds)
	}
	drawn := 0
	for _, kind := range kinds {
		must("show chart "+kind, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#charttabs button[data-kind=%q]`, kind))))
		waitFor(t, ctx, "chart "+kind, fmt.Sprintf(`document.getElementById("chart").dataset.kind === %q`, kind), 30*time.Second)
		if evalString(t, ctx, `document.getElementById("chart").dataset.empty`) == "true" {
			note := evalString(t, ctx, `document.getElementById("chart-empty").textContent`)
			t.Logf("chart %s: nothing to draw for one row count: %q", kind, note)
			if note == "" {
				t.Errorf("chart %s is empty and says nothing", kind)
			}
			continue
		}
		px := eval[pixels](t, ctx, inkJS("#chart"))
		if px.W == 0 || px.H == 0 || px.Painted < px.W*px.H/200 {
			t.Errorf("chart %s: canvas %dx%d with %d painted pixels, want a drawn chart", kind, px.W, px.H, px.Painted)
		}
		if strings.Contains(evalString(t, ctx, `JSON.stringify(echarts.getInstanceByDom(document.getElementById("chart")).getOption())`), "RSS") {
			t.Errorf("chart %s names RSS; in the browser it is the wasm memory", kind)
		}
		drawn++
	}
	if drawn < 4 {
		t.Errorf("only %d charts drew for two layouts", drawn)
	}
	must("show the memory breakdown", chromedp.Click(chromedp.CSS(`#charttabs button[data-kind="memory-breakdown"]`)))
	waitFor(t, ctx, "the memory breakdown", `document.getElementById("chart").dataset.kind === "memory-breakdown"`, 30*time.Second)
	must("export PNG", chromedp.Click(chromedp.CSS(`[data-chart-export="png"]`)))
	pngFile := waitDownload(t, downloads, ".png")
	checkPNG(t, pngFile)
	if note := waitText(t, ctx, "the export note", `document.getElementById("chart-note").textContent`, 10*time.Second); !strings.HasPrefix(note, "Downloaded ") {
		t.Errorf("the chart's export note says %q, want Downloaded …", note)
	}

	// ---- the picture for the README, at a 1280x800 laptop's size ----
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond) // the chart's resize and entry animation
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1440, 1000)); err != nil {
		t.Fatal(err)
	}
	if dst := os.Getenv(envScreenshot); dst != "" {
		if !filepath.IsAbs(dst) {
			dst = filepath.Join(root, dst)
		}
		if err := os.WriteFile(dst, shot, 0o644); err != nil {
			t.Error(err)
		}
		t.Logf("screenshot saved to %s", dst)
	}

	// ---- the history survives a reload ----
	must("reload", chromedp.Reload())
	waitFor(t, ctx, "the lab after a reload", `document.body.dataset.ready === "true"`, 90*time.Second)
	if n := historyCount(t, ctx); n != 2 {
		t.Errorf("after a reload the history has %d results, want the 2 saved in IndexedDB", n)
	}
	if dir := evalString(t, ctx, `document.querySelector("#history-table").textContent`); !strings.Contains(dir, "browser") {
		t.Errorf("the history does not label its runs browser: %q", dir)
	}
	// The History lists jobs: the comparison is one, named as asked. Picked
	// and compared, the results' heading says what they are, and the last
	// run's card is gone.
	jobs := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#history-grid tr.job td.name div")).map(e => e.textContent)`)
	if len(jobs) != 1 || !regexp.MustCompile(`^run (hashed,packed|packed,hashed) 1e5$`).MatchString(jobs[0]) {
		t.Errorf("after a reload the History lists jobs %q, want the one comparison, run hashed,packed 1e5", jobs)
	}
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="history"]').click();
		document.querySelector('#history-grid tr.job input[type=checkbox]').click()`)
	waitFor(t, ctx, "compare enabled", `!document.getElementById("hist-compare").disabled`, 10*time.Second)
	do(t, ctx, `document.getElementById("hist-compare").click()`)
	waitFor(t, ctx, "the compared results", `document.querySelectorAll("#results-grid tbody tr").length === 2 && document.getElementById("results-desc").textContent !== ""`, 20*time.Second)
	if desc := evalString(t, ctx, `document.getElementById("results-desc").textContent`); !strings.HasPrefix(desc, jobs[0]+" · browser · started ") || !strings.HasSuffix(desc, " · 2 results") {
		t.Errorf("after Compare selected the results' heading says %q, want the job, browser, its start and 2 results", desc)
	}
	if !eval[bool](t, ctx, `document.getElementById("progress").hidden`) {
		t.Errorf("after Compare selected the last run's card still shows")
	}
	do(t, ctx, helpers)

	// ---- a key file through the browser's file picker ----
	keys := filepath.Join(tmp, "keys.tsv")
	const fileRows = 300_000
	writeKeys(t, keys, fileRows)
	if _, err := chromedp.Call(ctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		t.Fatalf("intercepting the file chooser: %v", err)
	}
	do(t, ctx, `__t.layouts(["packed"]); document.querySelector('#source-mode button[data-mode="file"]').click()`)
	must("choose a file", chromedp.Click(chromedp.CSS(`#choose-file`)))
	select {
	case node := <-chooser:
		if _, err := chromedp.Call(ctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{keys}, BackendNodeID: node}); err != nil {
			t.Fatalf("picking %s: %v", keys, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Choose… opened no file picker")
	}
	if src := waitText(t, ctx, "the chosen file", `document.getElementById("source").value`, 20*time.Second); src != "/files/keys.tsv" {
		t.Errorf("the source field says %q, want /files/keys.tsv", src)
	}
	runLab(t, ctx, "the key file run", 1)
	fromFile := exportJSON(t, ctx, downloads)
	fileStats := coreFileStats(t, keys)
	if len(fromFile) != 1 || fromFile[0].Rows != fileRows || fromFile[0].ElementCount != fileStats.ElementCount || fromFile[0].BytesAllocated != fileStats.BytesAllocated {
		t.Errorf("the key file's run: %+v; core loads %d rows into %d keys, %d bytes", fromFile, fileRows, fileStats.ElementCount, fileStats.BytesAllocated)
	}
	do(t, ctx, `document.querySelector('#source-mode button[data-mode="synthetic"]').click()`)

	// ---- Cancel stops a run at once, keeps what was measured; the lab goes on ----
	// packed then sparse: cancel once packed's result is in, while sparse loads.
	do(t, ctx, `__t.layouts(["packed", "sparse"]); __t.set("rows", "3e6")`)
	waitFor(t, ctx, "the estimate", `__t.ready()`, 30*time.Second)
	do(t, ctx, `document.getElementById("progress-title").textContent = ""; document.getElementById("run").click()`)
	waitFor(t, ctx, "sparse's load, after packed's result", `document.getElementById("p-layout").textContent.startsWith("sparse") && document.body.dataset.run === "running"`, 2*time.Minute)
	// The page answers while the run goes on: a page whose thread the run
	// held would answer only after it, when the run is over.
	if state := evalString(t, ctx, `document.body.dataset.run + " " + document.title`); state != "running packlab" {
		t.Errorf("the page answered %q during the run, want it still running", state)
	}
	t0 := time.Now()
	must("cancel", chromedp.Click(chromedp.CSS(`#cancel`)))
	waitFor(t, ctx, "the cancel", `document.getElementById("progress-title").textContent === "Cancelled" && document.body.dataset.run === "idle"`, 60*time.Second)
	phase := evalString(t, ctx, `document.getElementById("progress-phase").textContent`)
	t.Logf("cancelled in %.2f s: %q", time.Since(t0).Seconds(), phase)
	if !strings.HasPrefix(phase, "Cancelled; 1 layout measured in ") || !strings.HasSuffix(phase, "before the cancel (kept in history)") {
		t.Errorf("after the cancel the page says %q, want packed kept", phase)
	}
	// The history reloads from the new worker, which reads IndexedDB first.
	waitFor(t, ctx, "the history after the cancel", historyCountJS+` >= 4`, 30*time.Second)
	if n := historyCount(t, ctx); n != 4 {
		t.Errorf("after the cancel the history has %d results, want 4 (packed's kept)", n)
	}
	if kept := shownTable(t, ctx); len(kept) != 1 || kept["packed"] == "" {
		t.Errorf("after the cancel the results show %v, want packed's", kept)
	}

	// ---- at 1280x800: a run of three layouts fits, Run pressed while the
	// comparison is scrolled down shows the progress, and after the run
	// Run, the estimate, the progress and the first chart are in view ----
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, `__t.layouts(["packed", "hashed", "sparse"]); __t.set("rows", "1e5"); document.querySelector(".main").scrollTop = 1e6`)
	runLab(t, ctx, "three layouts at 1280x800", 3)
	checkFit(t, ctx, "after a run of three layouts")
	type inView2 struct{ Run, Estimate, Progress, Chart bool }
	if v := eval[inView2](t, ctx, `(() => {
		const seen = (id, whole) => { const r = document.getElementById(id).getBoundingClientRect();
			return r.height > 0 && r.top >= 0 && (whole ? r.bottom <= window.innerHeight : r.top < window.innerHeight - 120); };
		return {Run: seen("run", true), Estimate: seen("estimate", true), Progress: seen("progress", true), Chart: seen("chart", false)};
	})()`); !v.Run || !v.Estimate || !v.Progress || !v.Chart {
		t.Errorf("at 1280x800 after a run started scrolled down: in view Run %v, the estimate %v, the progress %v, the first chart %v; want all", v.Run, v.Estimate, v.Progress, v.Chart)
	}
	checkResultsFit(t, ctx, "after a run of three layouts")
	// Every result so far compared at once (rows and types in their
	// settings): the table still keeps every column in its card.
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="history"]').click();
		{ const all = document.querySelector('#history-grid thead input[type=checkbox]'); if (!all.checked) all.click(); }`)
	waitFor(t, ctx, "compare enabled", `!document.getElementById("hist-compare").disabled`, 10*time.Second)
	do(t, ctx, `document.getElementById("hist-compare").click()`)
	waitFor(t, ctx, "every result compared", `document.querySelectorAll("#results-grid tbody tr").length === `+strconv.Itoa(historyCount(t, ctx)), 20*time.Second)
	checkResultsFit(t, ctx, "with every result compared")
	do(t, ctx, `{ const all = document.querySelector('#history-grid thead input[type=checkbox]'); if (all.checked) all.click(); }`)
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1440, 1000)); err != nil {
		t.Fatal(err)
	}

	// ---- the target: 1e6 packed rows, browser vs native in-process ----
	// The machine is shared, so the two sides alternate: a native
	// in-process run, then the same run in the browser, four times. The
	// first pair is what a new tab does (the engine still optimising the
	// hot code): reported. The figure is the ratio of the median load times
	// of the other three pairs.
	do(t, ctx, `__t.layouts(["packed"]); __t.set("rows", "1e6"); __t.set("repeats", "1")`)
	var browserLoads, nativeLoads, browserReads, nativeReads []float64
	var last result.Result
	for i := range 4 {
		nat, err := experiments.Run(context.Background(), config.Config{Layouts: []string{"packed"}, Rows: 1_000_000, InProcess: true}, experiments.RunOptions{})
		if err != nil || len(nat) != 1 {
			t.Fatalf("the native run: %v", err)
		}
		runLab(t, ctx, fmt.Sprintf("1e6 packed run %d", i+1), 1)
		br := exportJSON(t, ctx, downloads)
		if len(br) != 1 {
			t.Fatalf("the timed run exported %d results", len(br))
		}
		if br[0].BytesAllocated != nat[0].BytesAllocated {
			t.Errorf("bytes_allocated %d in the browser, %d native", br[0].BytesAllocated, nat[0].BytesAllocated)
		}
		last = br[0]
		browserLoads, nativeLoads = append(browserLoads, br[0].LoadSeconds), append(nativeLoads, nat[0].LoadSeconds)
		browserReads, nativeReads = append(browserReads, br[0].ReadSeconds), append(nativeReads, nat[0].ReadSeconds)
	}
	bl, nl := median(browserLoads[1:]), median(nativeLoads[1:])
	ratio := bl / nl
	t.Logf("TARGET 1e6 <UInt64,UInt16> packed, median load of 3 alternating runs: %.3f s in the browser, %.3f s native in-process: %.2fx (target <= 3x)%s; loads %.3f vs %.3f s; read %.3f s vs %.3f s (%.2fx); the first run of the tab loaded in %.3f s (%.2fx); wasm memory peak %s above the baseline for bytes_allocated %s",
		bl, nl, ratio, notMet(ratio > 3), browserLoads[1:], nativeLoads[1:], median(browserReads[1:]), median(nativeReads[1:]), median(browserReads[1:])/median(nativeReads[1:]),
		browserLoads[0], browserLoads[0]/nl, text.Bytes(last.PeakRSSBytes), text.Bytes(last.BytesAllocated))

	// ---- the Plan tab: the same API call as packlab plan, in the tab ----
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="plan"]').click(); __t.set("plan_rows", "1T rows")`)
	do(t, ctx, `document.getElementById("plan-form").requestSubmit()`)
	if msg := waitText(t, ctx, "the plan's rows error", `__t.err("plan_rows")`, 20*time.Second); !strings.HasPrefix(msg, "1T rows: not a number") {
		t.Errorf("the plan's rows error says %q", msg)
	}
	do(t, ctx, `__t.set("plan_rows", "1e9"); __t.set("plan_memory", "24GiB"); document.getElementById("plan-form").requestSubmit()`)
	waitFor(t, ctx, "the plan", `document.body.dataset.plan === "done" && !!document.getElementById("plan-verdict")`, 60*time.Second)
	if left := eval[string](t, ctx, `__t.err("plan_rows") + (document.getElementById("plan_rows").classList.contains("invalid") ? " (marked invalid)" : "")`); left != "" {
		t.Errorf("the corrected plan still shows the rows error %q", left)
	}
	type planShown struct {
		Verdict  string
		RuledOut int
		Rows     int
		Painted  int
		// The front's chart: painted, or its note says why not.
		FrontPainted int
		FrontNote    string
		FrontLines   int
	}
	ps := eval[planShown](t, ctx, `(() => ({Verdict: document.getElementById("plan-verdict").textContent,
		RuledOut: document.querySelectorAll("#plan-ruled-out li").length,
		Rows: document.querySelectorAll("#plan-grid tbody tr").length,
		Painted: (`+inkJS("#plan-chart")+`).Painted,
		FrontPainted: (`+inkJS("#front-chart")+`).Painted,
		FrontNote: document.getElementById("front-chart-empty").hidden ? "" : document.getElementById("front-chart-empty").textContent,
		FrontLines: document.querySelectorAll("#plan-front li").length}))()`)
	t.Logf("the Plan tab: %q, %d layouts ruled out, %d rows; the front: %d lines, painted %d, note %q", ps.Verdict, ps.RuledOut, ps.Rows, ps.FrontLines, ps.FrontPainted, ps.FrontNote)
	if (ps.FrontPainted == 0) == (ps.FrontNote == "") || (ps.FrontLines > 0) != (ps.FrontPainted > 0) {
		t.Errorf("the front's chart: painted %d, note %q, %d lines of the front: want a painted chart with its lines, or a note", ps.FrontPainted, ps.FrontNote, ps.FrontLines)
	}
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	checkFit(t, ctx, "after a plan of 1e9 rows")
	// The tab leads with the two answers, ClickHouse's first: the answer's
	// card is the first under the form, its items ClickHouse, then Go.
	type lead struct {
		First   string
		Answers []string
		Lines   []string
		Colours []string
	}
	l := eval[lead](t, ctx, `(() => { const v = document.getElementById("plan-verdict");
		const lines = v.innerText.split("\n").filter((x) => x.trim() !== "");
		return {First: document.querySelector("#plan-out > .card").id,
		Answers: Array.from(document.querySelectorAll("#plan-answer .plan-answer-item")).map((e) => e.dataset.answer),
		Lines: lines, Colours: lines.length === v.children.length ? Array.from(v.children).map((e) => getComputedStyle(e).color) : []}; })()`)
	// No heading of the answers says what another already says (each
	// snippet's repeated its item's: "In ClickHouse 26.7: SPARSE_HASHED(...)"
	// twice).
	heads := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#plan-answer h3")).map((h) => h.textContent)`)
	for i, h := range heads {
		if slices.Contains(heads[:i], h) {
			t.Errorf("the Plan's answers say %q twice (headings %q)", h, heads)
		}
	}
	if l.First != "plan-answer" || !slices.Equal(l.Answers, []string{"clickhouse", "go"}) {
		t.Errorf("the Plan tab leads with %q, its answers %q; want the answers' card first, ClickHouse's then Go's", l.First, l.Answers)
	}
	// The two answers' lines are two lines on screen (they ran together,
	// "... at a reload In Go ..."), each in its colour: here ClickHouse's
	// does not fit in 24 GiB (red) and Go's does (green).
	if len(l.Lines) != 2 || !strings.HasPrefix(l.Lines[0], "In ClickHouse") || !strings.HasPrefix(l.Lines[1], "In Go") ||
		len(l.Colours) != 2 || strings.Contains(l.Lines[0], "does not fit") == (l.Colours[0] == "rgb(31, 138, 76)") || l.Colours[1] != "rgb(31, 138, 76)" {
		t.Errorf("the Plan's answers read %q in colours %q; want ClickHouse's line then Go's, each in the colour of its fit (green rgb(31, 138, 76) where it fits)", l.Lines, l.Colours)
	}
	// History with a job open: its results scroll in their own box, and the
	// jobs' table (its results count at the right) stays the card's width.
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="history"]').click()`)
	waitFor(t, ctx, "the history", `document.querySelectorAll("#history-grid tr.job").length >= 1`, 20*time.Second)
	do(t, ctx, `const b = document.querySelector('#history-grid tr.job button.twisty[aria-expanded="false"]'); if (b) b.click()`)
	waitFor(t, ctx, "a job open", `document.querySelectorAll("#history-grid tr.job-results").length >= 1`, 20*time.Second)
	checkFit(t, ctx, "with a job open in History")
	if w := eval[[]int](t, ctx, `(() => { const w = document.getElementById("history-table"); return [w.scrollWidth, w.clientWidth]; })()`); w[0] > w[1] {
		t.Errorf("at 1280x800 with a job open, History's jobs are %d px wide in %d: its results column off the card", w[0], w[1])
	}
	// The Your ClickHouse tab says why a browser page cannot inspect a
	// server, and the command that can; it has no form here.
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="clickhouse"]').click()`)
	type chShown struct {
		Why, Command string
		Form         bool
	}
	ch := eval[chShown](t, ctx, `(() => ({Why: document.getElementById("ch-browser").offsetParent ? document.getElementById("ch-browser-why").textContent : "",
		Command: document.getElementById("ch-browser-command").textContent, Form: document.getElementById("ch-connect").offsetParent !== null}))()`)
	if !strings.Contains(ch.Why, "desktop window or the command line") || !strings.Contains(ch.Why, "native protocol") ||
		!strings.HasPrefix(ch.Command, "packlab inspect ") || ch.Form {
		t.Errorf("the Your ClickHouse tab in the browser: %+v; want why it needs the desktop or the command line, the command, and no form", ch)
	}
	checkFit(t, ctx, "on the Your ClickHouse tab")
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="plan"]').click()`)
	if _, err := chromedp.Run(ctx, chromedp.EmulateViewport(1440, 1000)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ps.Verdict, "fit in 24.0 GiB") || ps.RuledOut == 0 || ps.Rows < 4 || ps.Painted < 1000 {
		t.Errorf("the Plan tab shows %+v; want an answer that fits 24 GiB, layouts ruled out, the setups and a drawn chart", ps)
	}

	// ---- a dictionary of three attributes: two more types added to the
	// value, planned as ClickHouse keeps them ----
	do(t, ctx, `document.getElementById("plan_attr_add").click(); document.getElementById("plan_attr_add").click();
		const s = document.querySelectorAll("#plan_attrs select"); s[1].value = "Float64";
		document.body.dataset.plan = ""; document.getElementById("plan-form").requestSubmit()`)
	waitFor(t, ctx, "the plan of three attributes", `document.body.dataset.plan === "done"`, 60*time.Second)
	if out := eval[string](t, ctx, `document.getElementById("plan-out").textContent`); !strings.Contains(out, "a3 Float64") || !strings.Contains(out, "UInt16, UInt32, Float64") {
		t.Errorf("the plan of three attributes shows no CREATE DICTIONARY with them: %.300q", out)
	}
	do(t, ctx, `document.querySelectorAll("#plan_attrs button").forEach((b) => b.click())`)
	if n := eval[int](t, ctx, `document.querySelectorAll("#plan_attrs select").length`); n != 0 {
		t.Errorf("%d attributes left after removing them", n)
	}

	// ---- deleting from the history reaches IndexedDB too: one job's
	// results, then the rest with "Clear history" ----
	n := historyCount(t, ctx)
	do(t, ctx, `document.querySelector('#viewtabs button[data-view="history"]').click()`)
	do(t, ctx, `document.querySelector('#history-grid tr.job input[type=checkbox]').click()`)
	waitFor(t, ctx, "the selection", `!document.getElementById("hist-delete").disabled`, 10*time.Second)
	do(t, ctx, `document.getElementById("hist-delete").click(); document.getElementById("hist-delete").click()`)
	waitFor(t, ctx, "one job deleted", fmt.Sprintf(`(%s) < %d`, historyCountJS, n), 20*time.Second)
	do(t, ctx, `document.getElementById("hist-clear").click(); document.getElementById("hist-clear").click()`)
	waitFor(t, ctx, "the history cleared", `document.querySelectorAll("#history-grid tbody tr").length === 0`, 20*time.Second)
	must("reload", chromedp.Reload())
	waitFor(t, ctx, "the lab after a reload", `document.body.dataset.ready === "true"`, 90*time.Second)
	if after := historyCount(t, ctx); after != 0 {
		t.Errorf("deleted all %d results, and after a reload the history has %d", n, after)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// helpers are the page-side hands of the test: they type into the form as a
// person does (input and change events).
const helpers = `window.__t = {
	set(id, v) {
		const e = document.getElementById(id);
		e.value = v;
		e.dispatchEvent(new Event("input", {bubbles: true}));
		e.dispatchEvent(new Event("change", {bubbles: true}));
	},
	layouts(names) {
		for (const i of document.querySelectorAll("#layouts input")) i.checked = names.includes(i.value);
		document.getElementById("form").dispatchEvent(new Event("change", {bubbles: true}));
	},
	err(field) {
		const s = document.querySelector('[data-error-for="' + field + '"]');
		return s ? s.textContent : "";
	},
	// ready: the estimate for the form as it is now says it fits.
	ready() {
		const chosen = document.querySelectorAll("#layouts input:checked").length;
		return !document.getElementById("run").disabled &&
			document.querySelectorAll("#estimate .est-row").length === chosen;
	},
};`

// serve starts `packlab serve` on a free loopback port and returns its URL.
// browserFor skips t unless the browser tests run (envRun), and is the
// Chromium they drive: envChromium, else chromium on PATH.
func browserFor(t *testing.T) string {
	t.Helper()
	if os.Getenv(envRun) != "1" {
		t.Skipf("runs with %s=1 (make test-web)", envRun)
	}
	if p := os.Getenv(envChromium); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium on PATH: run make deps-web (apt-get install chromium)")
	return ""
}

// projectRoot is the project's folder, this package's parent.
func projectRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// buildPacklab builds packlab from root into folder dir and returns its path.
func buildPacklab(t *testing.T, root, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "packlab")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func serve(t *testing.T, bin, root, site string) (string, func()) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--dir", site)
	cmd.Dir = root
	start := time.Now()
	srv := servetest.Start(t, cmd, 5*time.Minute)
	t.Logf("packlab serve built and served the site in %.1f s: %s (%s)", time.Since(start).Seconds(), srv.URL, strings.TrimSpace(srv.Stderr.String()))
	return srv.URL, srv.Stop
}

// notMet marks a TARGET line whose figure missed its target this time.
func notMet(missed bool) string {
	if missed {
		return " NOT MET this run (a shared machine's timings; see the README)"
	}
	return ""
}

func waitFor(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		banner, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("banner").textContent + " | " + Array.from(document.querySelectorAll("[data-error-for]")).map(e => e.dataset.errorFor + ": " + e.textContent).filter(s => !s.endsWith(": ")).join("; ")`))
		t.Fatalf("waiting for %s (%s): %v; the page says: %s", what, expr, err, banner)
	}
}

func waitText(t *testing.T, ctx context.Context, what, expr string, timeout time.Duration) string {
	t.Helper()
	waitFor(t, ctx, what, "("+expr+") !== \"\"", timeout)
	return evalString(t, ctx, expr)
}

func evalString(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	return eval[string](t, ctx, expr)
}

// eval evaluates expr on the page and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("%.200s: %v", expr, err)
	}
	return v
}

// do runs script on the page for its effect.
func do(t *testing.T, ctx context.Context, script string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, script)
}

// historyCountJS counts the results in History: each job's row says how
// many it has.
const historyCountJS = `Array.from(document.querySelectorAll("#history-grid tr.job")).reduce((n, tr) => n + Number(tr.dataset.count), 0)`

func historyCount(t *testing.T, ctx context.Context) int {
	t.Helper()
	return eval[int](t, ctx, historyCountJS)
}

// runLab waits for the estimate, clicks Run and waits for the run to end
// with results of `layouts` layouts on screen.
func runLab(t *testing.T, ctx context.Context, what string, layouts int) {
	t.Helper()
	waitFor(t, ctx, "the estimate before "+what, `__t.ready()`, 30*time.Second)
	do(t, ctx, `document.getElementById("progress-title").textContent = ""; document.getElementById("run").click()`)
	start := time.Now()
	waitFor(t, ctx, what, `["Finished", "Failed", "Cancelled"].includes(document.getElementById("progress-title").textContent) && document.body.dataset.run === "idle"`, 3*time.Minute)
	title := evalString(t, ctx, `document.getElementById("progress-title").textContent`)
	phase := evalString(t, ctx, `document.getElementById("progress-phase").textContent`)
	t.Logf("%s: %s in %.1f s: %s", what, title, time.Since(start).Seconds(), phase)
	if title != "Finished" {
		t.Fatalf("%s: %s: %s (run error: %s)", what, title, phase, evalString(t, ctx, `__t.err("run")`))
	}
	waitFor(t, ctx, "the results table", fmt.Sprintf(`document.querySelectorAll("#results-grid tbody tr").length === %d`, layouts), 30*time.Second)
}

// shownTable reads the results table's bytes_allocated cell per layout.
func shownTable(t *testing.T, ctx context.Context) map[string]string {
	t.Helper()
	type table struct {
		Head []string
		Rows [][]string
	}
	tab := eval[table](t, ctx, `({
		Head: Array.from(document.querySelectorAll("#results-grid thead th")).map(e => e.textContent),
		Rows: Array.from(document.querySelectorAll("#results-grid tbody tr")).map(r => Array.from(r.cells).map(c => c.textContent)),
	})`)
	col, set := slices.Index(tab.Head, "bytes_allocated"), slices.Index(tab.Head, "settings")
	if col < 0 || set < 0 {
		t.Fatalf("the results table has columns %q, want settings and bytes_allocated", tab.Head)
	}
	if !slices.Contains(tab.Head, "runtime") || !slices.Contains(tab.Head, "peak wasm memory") {
		t.Errorf("the results table's columns %q: want runtime and peak wasm memory", tab.Head)
	}
	out := map[string]string{}
	for _, r := range tab.Rows {
		layout, _, _ := strings.Cut(r[set], " ")
		out[layout] = r[col]
		if rt := r[len(r)-1]; !strings.HasPrefix(rt, "browser") {
			t.Errorf("%s: runtime %q, want browser", layout, rt)
		}
	}
	return out
}

// bytesCells formats results' bytes_allocated as experiments' table does.
func bytesCells(t *testing.T, rs []result.Result) map[string]string {
	t.Helper()
	var md bytes.Buffer
	if err := report.WriteTable(&md, rs, "markdown"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(md.String()), "\n")
	head := cells(lines[0])
	col, set := slices.Index(head, "bytes_allocated"), slices.Index(head, "settings")
	out := map[string]string{}
	for _, l := range lines[2:] {
		c := cells(l)
		layout, _, _ := strings.Cut(c[set], " ")
		out[layout] = c[col]
	}
	return out
}

func cells(line string) []string {
	var out []string
	for _, c := range strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|") {
		out = append(out, strings.TrimSpace(c))
	}
	return out
}

// coreStats loads the run's keys (random, seed 0) into one table of layout
// with core, as the lab does, and returns its stats.
func coreStats(t *testing.T, layout core.Layout, rows int64) core.Stats {
	t.Helper()
	spec, err := source.Parse(source.Random)
	if err != nil {
		t.Fatal(err)
	}
	spec.Rows = rows
	src, err := source.Open[uint64, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, _, err := core.Load(context.Background(), src, core.LoadConfig{Layout: layout, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m.Stats()
}

// exportJSON clicks the JSON export and reads the downloaded results.
func exportJSON(t *testing.T, ctx context.Context, downloads string) []result.Result {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-export="json"]`))); err != nil {
		t.Fatal(err)
	}
	f := waitDownload(t, downloads, ".json")
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result.Result
	if err := json.Unmarshal(b, &rs); err != nil {
		t.Fatalf("the JSON export %s: %v\n%.300s", f, err, b)
	}
	return rs
}

// waitDownload waits for a new finished download ending in ext, and moves
// it aside so the next one is new too.
func waitDownload(t *testing.T, dir, ext string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ext) {
				src := filepath.Join(dir, e.Name())
				seen := filepath.Join(dir, "seen")
				os.MkdirAll(seen, 0o755)
				dst := filepath.Join(seen, fmt.Sprintf("%d-%s", time.Now().UnixNano(), e.Name()))
				if err := os.Rename(src, dst); err != nil {
					t.Fatal(err)
				}
				return dst
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s download arrived in %s", ext, dir)
	return ""
}

// checkPNG decodes the file as a PNG with something drawn on it.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the PNG export %s is not a PNG: %v", path, err)
	}
	r := img.Bounds()
	if r.Dx() < 100 || r.Dy() < 100 {
		t.Fatalf("the PNG export is %dx%d", r.Dx(), r.Dy())
	}
	if n := nonWhite(img); n < r.Dx()*r.Dy()/200 {
		t.Errorf("the PNG export (%dx%d) has only %d non-white pixels", r.Dx(), r.Dy(), n)
	}
	t.Logf("PNG export: %s, %dx%d, %d bytes", filepath.Base(path), r.Dx(), r.Dy(), len(b))
}

func nonWhite(img image.Image) int {
	n := 0
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
				n++
			}
		}
	}
	return n
}

func exceptionText(d *runtime.ExceptionDetails) string {
	s := d.Text
	if d.Exception != nil && d.Exception.Description != "" {
		s += " " + d.Exception.Description
	}
	return fmt.Sprintf("%s (%s:%d:%d)", s, d.URL, d.LineNumber, d.ColumnNumber)
}

// writeKeys writes a TSV of rows distinct UInt64 keys and UInt16 values
// with a header.
func writeKeys(t *testing.T, path string, rows int) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("key\tvalue\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d\t%d\n", uint64(i)*0x9E3779B97F4A7C15, i%65536)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// coreFileStats loads the key file into one packed table with core.
func coreFileStats(t *testing.T, path string) core.Stats {
	t.Helper()
	spec, err := source.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.Open[uint64, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m, _, err := core.Load(context.Background(), src, core.LoadConfig{Layout: core.LayoutPacked, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m.Stats()
}

// TestEmbeddedSite: a binary built with the site inside (make web-binary)
// serves it from an empty folder with no Go toolchain on PATH: the page with
// the wasm backend, and packlab.wasm as application/wasm, gzipped.
func TestEmbeddedSite(t *testing.T) {
	if os.Getenv(envRun) != "1" {
		t.Skipf("runs with %s=1 (make test-web)", envRun)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	run := func(dir string, env []string, name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	// What make web-binary does: the site into build/web, then the binary.
	plain := filepath.Join(tmp, "packlab-plain")
	run(root, os.Environ(), "go", "build", "-o", plain, ".")
	run(root, os.Environ(), plain, "serve", "--build", "--dir", filepath.Join("build", "web"))
	bin := filepath.Join(tmp, "packlab")
	run(root, os.Environ(), "go", "build", "-tags", "embedweb", "-o", bin, ".")
	wasm, err := os.ReadFile(filepath.Join(root, "build", "web", "packlab.wasm"))
	if err != nil {
		t.Fatal(err)
	}

	empty := t.TempDir()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Dir, cmd.Env = empty, []string{"PATH=" + empty, "HOME=" + empty}
	srv := servetest.Start(t, cmd, time.Minute)
	defer srv.Stop()
	url := srv.URL
	if !strings.Contains(srv.Line, "the site built into this binary") {
		t.Fatalf("serve printed %q; stderr %q", srv.Line, srv.Stderr.String())
	}
	// Go's client asks for gzip and undoes it, saying so in Uncompressed.
	get := func(path string) (*http.Response, []byte) {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, page := get("")
	if resp.StatusCode != 200 || !bytes.Contains(page, []byte(`js/backend-wasm.js`)) {
		t.Errorf("GET /: %d, %.200s", resp.StatusCode, page)
	}
	resp, body := get("packlab.wasm")
	if resp.Header.Get("Content-Type") != "application/wasm" || !resp.Uncompressed {
		t.Fatalf("GET /packlab.wasm was not sent gzipped: %v", resp.Header)
	}
	if !bytes.Equal(body, wasm) {
		t.Errorf("the embedded packlab.wasm (%d bytes) is not build/web's (%d)", len(body), len(wasm))
	}
	t.Logf("the embedded site: packlab.wasm, %d bytes, sent gzipped", len(wasm))
}

// pixels is what inkJS returns: the largest canvas's size and its ink.
type pixels struct{ W, H, Painted int }

// inkJS is a script that counts the pixels of the canvases under selector
// that are neither transparent nor white (the charts paint a white
// background, so counting opaque pixels would count every one): a drawn
// chart has thousands.
func inkJS(selector string) string {
	return `(() => {
		let w = 0, h = 0, painted = 0;
		for (const c of document.querySelectorAll(` + strconv.Quote(selector+" canvas") + `)) {
			w = Math.max(w, c.width); h = Math.max(h, c.height);
			const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			for (let i = 0; i < d.length; i += 4)
				if (d[i + 3] > 0 && !(d[i] > 245 && d[i + 1] > 245 && d[i + 2] > 245)) painted++;
		}
		return {W: w, H: h, Painted: painted};
	})()`
}

// fitJS finds what does not fit the view: a card whose content is wider
// than the card, a horizontal scrollbar on the document or the main column,
// and text cut by an ellipsis with no title to read it in full.
const fitJS = `(() => {
	const out = [];
	const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
	const visible = (e) => e.offsetParent !== null || getComputedStyle(e).position === "fixed";
	const de = document.documentElement;
	if (de.scrollWidth > de.clientWidth) out.push("the document: " + de.scrollWidth + " px wide in " + de.clientWidth);
	for (const e of document.querySelectorAll(".main, .sidebar")) {
		if (e.scrollWidth > e.clientWidth) out.push(name(e) + ": " + e.scrollWidth + " px of content in " + e.clientWidth);
	}
	for (const card of document.querySelectorAll(".card")) {
		if (!visible(card)) continue;
		if (card.scrollWidth > card.clientWidth) {
			const r = card.getBoundingClientRect();
			const wide = Array.from(card.querySelectorAll("*")).filter((k) => visible(k) && k.getBoundingClientRect().right > r.right + 1).map(name).slice(0, 3);
			out.push("card " + name(card) + ": " + card.scrollWidth + " px of content in " + card.clientWidth + " (" + wide.join(", ") + ")");
		}
	}
	// Inside a card, what is wider than its box and clipped: a table that
	// scrolls in its card must keep its first column in view (sticky); code
	// may scroll; text cut by an ellipsis needs a title to be read whole.
	for (const e of document.querySelectorAll(".card *, .sidebar *")) {
		if (!visible(e) || e.scrollWidth <= e.clientWidth + 1) continue;
		const cs = getComputedStyle(e);
		if (cs.overflowX === "visible" || e.tagName === "PRE" || e.tagName === "CANVAS" || e.closest(".chart")) continue;
		if (cs.textOverflow === "ellipsis") {
			if (!e.title && !e.closest("[title]")) out.push("text cut with no title: " + name(e) + " " + JSON.stringify(e.textContent.slice(0, 60)));
			continue;
		}
		const first = e.querySelector("table.grid > tbody > tr > td:first-child");
		if (e.classList.contains("table-wrap") && first && getComputedStyle(first).position === "sticky") continue;
		out.push(name(e) + ": " + e.scrollWidth + " px of content in " + e.clientWidth + ", cut" + (first ? " (its first column not fixed)" : ""));
	}
	// A snippet's Copy button covers none of its heading's words (it once
	// sat on the ClickHouse answer's "MLF 0.94").
	for (const b of document.querySelectorAll(".snippet > button")) {
		const h = b.parentElement.querySelector("h3");
		if (!visible(b) || !h) continue;
		const r = document.createRange();
		r.selectNodeContents(h);
		const br = b.getBoundingClientRect();
		for (const w of r.getClientRects()) {
			if (w.width > 0 && w.left < br.right && w.right > br.left && w.top < br.bottom && w.bottom > br.top) {
				out.push("Copy covers its heading's words: " + JSON.stringify(h.textContent.slice(0, 80)));
				break;
			}
		}
	}
	return out;
})()`

// checkResultsFit fails where the results table scrolls sideways in its
// card (a column, "runtime" or "bytes/entry", off its right edge) or the
// sidebar's key and value types are not side by side.
func checkResultsFit(t *testing.T, ctx context.Context, when string) {
	t.Helper()
	type fit struct {
		Scroll, Client int
		Settings       []string
		KeyTop, ValTop int
	}
	f := eval[fit](t, ctx, `(() => { const w = document.getElementById("results-table");
		return {Scroll: w.scrollWidth, Client: w.clientWidth,
			Settings: Array.from(document.querySelectorAll("#results-grid tbody td:first-child")).map((td) => td.textContent),
			KeyTop: Math.round(document.getElementById("key").getBoundingClientRect().top),
			ValTop: Math.round(document.getElementById("value").getBoundingClientRect().top)}; })()`)
	if f.Scroll > f.Client {
		t.Errorf("at 1280x800 %s the results table is %d px wide in %d: its last columns off the card (settings %q)", when, f.Scroll, f.Client, f.Settings)
	}
	if f.KeyTop != f.ValTop {
		t.Errorf("at 1280x800 the key type's select is at y %d, the value type's at %d: want them side by side", f.KeyTop, f.ValTop)
	}
}

// checkFit fails for everything fitJS finds at the page's size now.
func checkFit(t *testing.T, ctx context.Context, when string) {
	t.Helper()
	// A viewport just emulated reaches the page as a resize event at its
	// next frames, and the charts resize on it: measure after two frames
	// (once, before them, the Plan chart was still 1052 px in a 902 px card).
	eval[bool](t, ctx, `new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))`, chromedp.EvalAwaitPromise)
	for _, p := range eval[[]string](t, ctx, fitJS) {
		t.Errorf("at 1280x800 %s: %s", when, p)
	}
	// PACKLAB_FIT_SHOTS=dir keeps what the check saw, a PNG a check, to
	// look at.
	if dir := os.Getenv("PACKLAB_FIT_SHOTS"); dir != "" {
		shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, strings.ReplaceAll(when, " ", "-")+".png"), shot, 0o644)
		}
		if err != nil {
			t.Errorf("keeping the fit check's picture: %v", err)
		}
	}
}
