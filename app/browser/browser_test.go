//go:build js && wasm

// The browser binding's tests, run under Node:
//
//	GOOS=js GOARCH=wasm go test -exec "$(go env GOROOT)/lib/wasm/go_js_wasm_exec" -run JS ./app/browser
//
// The host is a JavaScript object whose functions are Go functions
// recording what the binding sends, as wasm-worker.js's would post it.
// Node gives Go its real file system, so the results store is a temporary
// folder.

package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall/js"
	"testing"
	"time"

	"github.com/packlab/packlab/app"
	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/refdriver"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
)

type jsReply struct {
	id            int
	result, error string // JSON; one is ""
}

type jsEvent struct {
	name, data string
	afterReply int // replies seen when it came
}

type jsDownload struct {
	name, mime string
	data       []byte
}

// jsHost is the test's host: every call of the binding is recorded.
type jsHost struct {
	obj    js.Value
	call   js.Value
	nextID int

	mu        sync.Mutex
	replies   chan jsReply
	events    chan jsEvent
	downloads chan jsDownload
	nReplies  int
	picked    string
	funcs     []js.Func
}

func newJSHost(t *testing.T) *jsHost {
	h := &jsHost{replies: make(chan jsReply, 64), events: make(chan jsEvent, 4096), downloads: make(chan jsDownload, 8)}
	h.obj = js.Global().Get("Object").New()
	fn := func(name string, f func(args []js.Value) any) {
		jf := js.FuncOf(func(_ js.Value, args []js.Value) any { return f(args) })
		h.funcs = append(h.funcs, jf)
		h.obj.Set(name, jf)
	}
	str := func(v js.Value) string {
		if v.Type() == js.TypeString {
			return v.String()
		}
		return ""
	}
	fn("ready", func(a []js.Value) any { h.call = a[0]; return nil })
	fn("reply", func(a []js.Value) any {
		h.mu.Lock()
		h.nReplies++
		h.mu.Unlock()
		h.replies <- jsReply{a[0].Int(), str(a[1]), str(a[2])}
		return nil
	})
	fn("event", func(a []js.Value) any {
		h.mu.Lock()
		n := h.nReplies
		h.mu.Unlock()
		h.events <- jsEvent{a[0].String(), a[1].String(), n}
		return nil
	})
	fn("download", func(a []js.Value) any {
		b := make([]byte, a[2].Length())
		js.CopyBytesToGo(b, a[2])
		h.downloads <- jsDownload{a[0].String(), a[1].String(), b}
		return nil
	})
	fn("pickedFile", func(a []js.Value) any {
		h.mu.Lock()
		defer h.mu.Unlock()
		p := h.picked
		h.picked = ""
		return p
	})
	t.Cleanup(func() {
		for _, f := range h.funcs {
			f.Release()
		}
	})
	return h
}

// do calls method through the binding as the worker does and waits for its
// answer: the result's JSON, or the error's.
func (h *jsHost) do(t *testing.T, method string, args ...any) (result string, apiErr *app.Error) {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	h.nextID++
	id := h.nextID
	if ret := h.call.Invoke(id, method, string(b)); !ret.IsNull() && !ret.IsUndefined() {
		t.Fatalf("%s: call returned %v", method, ret)
	}
	select {
	case r := <-h.replies:
		if r.id != id {
			t.Fatalf("%s: reply for call %d, want %d", method, r.id, id)
		}
		if r.error != "" {
			var e app.Error
			if err := json.Unmarshal([]byte(r.error), &e); err != nil {
				t.Fatalf("%s: error JSON %q: %v", method, r.error, err)
			}
			return "", &e
		}
		return r.result, nil
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no reply", method)
	}
	return "", nil
}

func (h *jsHost) ok(t *testing.T, dst any, method string, args ...any) {
	t.Helper()
	res, e := h.do(t, method, args...)
	if e != nil {
		t.Fatalf("%s: error %+v", method, e)
	}
	if dst != nil {
		if err := json.Unmarshal([]byte(res), dst); err != nil {
			t.Fatalf("%s: result %q: %v", method, res, err)
		}
	}
}

// small is the lab's opening form with layouts and 100,000 rows.
func small(t *testing.T, lab *app.Lab, layouts ...string) app.Form {
	t.Helper()
	lim, err := lab.Limits()
	if err != nil {
		t.Fatal(err)
	}
	f := lim.Defaults
	f.Layouts = layouts
	f.Rows = "1e5"
	return f
}

func bindForTest(t *testing.T) (*jsHost, *app.Lab) {
	t.Helper()
	h := newJSHost(t)
	lab, err := Bind(h.obj, app.Options{ResultsDir: filepath.Join(t.TempDir(), "results")})
	if err != nil {
		t.Fatal(err)
	}
	if h.call.Type() != js.TypeFunction {
		t.Fatal("Bind did not hand the host its call function")
	}
	return h, lab
}

// TestJSBindRefusesAnIncompleteHost: a host without one of its functions is
// an error naming it, not a panic later.
func TestJSBindRefusesAnIncompleteHost(t *testing.T) {
	h := newJSHost(t)
	h.obj.Delete("download")
	if _, err := Bind(h.obj, app.Options{ResultsDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "download") {
		t.Errorf("a host without download: %v", err)
	}
	if _, err := Bind(js.Null(), app.Options{}); err == nil {
		t.Error("a null host was accepted")
	}
}

// TestJSLimitsAndBadInput: the same methods and JSON as the desktop, with
// the browser's runtime and memory; bad input comes back as {field, message}
// naming the field; bad calls are errors, not crashes.
func TestJSLimitsAndBadInput(t *testing.T) {
	h, _ := bindForTest(t)
	var lim app.Limits
	h.ok(t, &lim, "Limits")
	if lim.Runtime != "browser" || lim.Isolated || lim.TotalMemoryBytes != experiments.WasmMemoryLimit {
		t.Errorf("Limits: runtime %q isolated %v total %d; want browser, false, 4 GiB", lim.Runtime, lim.Isolated, lim.TotalMemoryBytes)
	}
	if lim.FreeMemoryBytes <= 0 || lim.FreeMemoryBytes >= experiments.WasmMemoryLimit {
		t.Errorf("Limits: free %d, want the wasm32 room left (0 < free < 4 GiB)", lim.FreeMemoryBytes)
	}
	own, refs, chs := 0, 0, 0
	for _, l := range lim.Layouts {
		if l.ClickHouseOwn {
			if chs++; l.Available || !strings.Contains(l.Unavailable, "browser") || !strings.Contains(l.Unavailable, "make chdb") {
				t.Errorf("Limits: ClickHouse's %s in the browser: %+v, want unavailable, saying why and naming make chdb", l.Name, l)
			}
			continue
		}
		if !l.Reference {
			own++
		} else if refs++; l.Available || !strings.Contains(l.Unavailable, "browser") || !strings.Contains(l.Unavailable, "make refs") {
			t.Errorf("Limits: reference map %s in the browser: %+v, want unavailable, saying why and naming make refs", l.Name, l)
		}
	}
	if own != len(core.Layouts())+len(dict.RowLayoutNames()) || refs != len(refdriver.References()) || chs != len(dict.ClickHouseDictionaries()) || len(lim.ChartKinds) < 6 {
		t.Errorf("Limits: %d layouts, %d reference maps, %d of ClickHouse's, %d charts", own, refs, chs, len(lim.ChartKinds))
	}

	f := lim.Defaults
	f.Rows = "-5"
	if _, e := h.do(t, "Estimate", f); e == nil || e.Field != "rows" || !strings.Contains(e.Message, "-5") {
		t.Errorf("rows -5: %+v, want an error for rows naming -5", e)
	}
	f = lim.Defaults
	f.Shards = "500"
	if _, e := h.do(t, "StartRun", f); e == nil || e.Field != "shards" || e.Message != "500: out of range (allowed: 1 to 128)" {
		t.Errorf("shards 500: %+v", e)
	}
	var running []string
	h.ok(t, &running, "Running")
	if len(running) != 0 {
		t.Errorf("a refused run is running: %v", running)
	}
	for _, c := range []struct {
		method, args, want string
	}{
		{"Nope", "[]", "has no method Nope"},
		{"Estimate", "{", "not a JSON array"},
		{"Estimate", "[]", "Estimate takes 1 argument, got 0"},
		{"Table", `[42]`, "argument 1"},
		{"Chart", `["memory-breakdown"]`, "Chart takes 2 arguments, got 1"},
	} {
		h.nextID++
		h.call.Invoke(h.nextID, c.method, c.args)
		r := <-h.replies
		if !strings.Contains(r.error, c.want) {
			t.Errorf("%s %s: reply %+v, want an error containing %q", c.method, c.args, r, c.want)
		}
	}
}

// TestJSRowCap: a run larger than the tab's wasm32 memory is refused with
// the reason and the largest row count that fits, worked out from the
// guard's prediction (core.Predict) in the address space: that many rows
// fit, one more does not.
func TestJSRowCap(t *testing.T) {
	h, lab := bindForTest(t)
	f := small(t, lab, "packed", "hashed", "packed_row")
	f.Rows = "1e10"
	var est app.Estimate
	h.ok(t, &est, "Estimate", f)
	if est.Fits || !strings.Contains(est.Message, "WebAssembly memory") || !strings.Contains(est.Message, "Most rows that fit at these settings: packed ") {
		t.Fatalf("1e10 rows: fits %v, message %q; want refused with the wasm limit and the row caps", est.Fits, est.Message)
	}
	if _, e := h.do(t, "StartRun", f); e == nil || e.Field != "run" || !strings.Contains(e.Message, "Most rows that fit") {
		t.Errorf("StartRun of 1e10 rows: %+v, want refused for run with the caps", e)
	}
	cfg, err := f.Parse()
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range f.Layouts {
		c := rowCap(cfg, layout)
		if !strings.Contains(est.Message, layout+" "+capText(c)) {
			t.Errorf("%s: the message does not give its cap %s: %q", layout, capText(c), est.Message)
		}
		check := func(rows int64) experiments.MemoryCheck {
			one := cfg
			one.Layouts, one.Rows, one.InProcess = []string{layout}, rows, true
			mc, err := experiments.Check(context.Background(), one)
			if err != nil {
				t.Fatal(err)
			}
			return inAddressSpace(mc)
		}
		at, above := check(c), check(c+1)
		if !at.Fits || above.Fits || at.NeedBytes > at.AvailableBytes || above.NeedBytes <= above.AvailableBytes {
			t.Errorf("%s: cap %d: at it need %d of %d (fits %v), one more need %d (fits %v)", layout, c, at.NeedBytes, at.AvailableBytes, at.Fits, above.NeedBytes, above.Fits)
		}
		// The cap falls where the last growth would double a slab: packed
		// <UInt64,UInt16> at 2^26 rows (2^27 cells of 10 B: 1.25 GiB, the
		// slabs before it 1.25 GiB more); hashed's 16 B cells at 2^25;
		// packed_row's row of one UInt16 in a packed table as packed.
		if want := map[string]int64{"packed": 1 << 26, "hashed": 1 << 25, "packed_row": 1 << 26}[layout]; c != want {
			t.Errorf("%s <UInt64,UInt16>: cap %d rows, want %d", layout, c, want)
		}
	}
	// Narrow keys stop the table growing: no cap.
	f.Key, f.Value, f.Layouts = "UInt8", "UInt8", []string{"packed"}
	h.ok(t, &est, "Estimate", f)
	if !est.Fits || !strings.Contains(est.Message, "packed any number of") {
		t.Errorf("UInt8 keys: fits %v, %q", est.Fits, est.Message)
	}
}

// TestJSRun: a run answers StartRun before its first event, reports
// progress, saves each result and ends with run:done; the table, history
// and charts name the wasm memory, not RSS; exports come out as downloads.
func TestJSRun(t *testing.T) {
	h, lab := bindForTest(t)
	f := small(t, lab, "packed", "hashed")
	var st app.Started
	h.ok(t, &st, "StartRun", f)
	if st.ID == "" || st.TotalRows != 100_000 {
		t.Fatalf("StartRun: %+v", st)
	}
	var done app.RunDone
	var results []string
	progress := 0
	for done.ID == "" {
		select {
		case ev := <-h.events:
			if ev.afterReply == 0 {
				t.Errorf("event %s came before StartRun's answer", ev.name)
			}
			switch ev.name {
			case app.EventProgress:
				var p app.Progress
				json.Unmarshal([]byte(ev.data), &p)
				if p.ID == st.ID {
					progress++
				}
			case app.EventResult:
				var r app.RunResult
				json.Unmarshal([]byte(ev.data), &r)
				results = append(results, r.ResultID)
			case app.EventError:
				t.Errorf("run error: %s", ev.data)
			case app.EventDone:
				json.Unmarshal([]byte(ev.data), &done)
			}
		case <-time.After(2 * time.Minute):
			t.Fatal("no run:done")
		}
	}
	if done.ID != st.ID || done.Failed || done.Cancelled || len(done.ResultIDs) != 2 || progress == 0 || len(results) != 2 {
		t.Fatalf("run:done %+v after %d progress events and results %v", done, progress, results)
	}
	saved, err := app.Results(lab, done.ResultIDs, "run")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range saved {
		if r.Runtime != "browser" || r.Isolated || r.ElementCount != 100_000 || r.PeakRSSBytes <= 0 {
			t.Errorf("%s: runtime %q isolated %v elements %d peak wasm memory %d", r.Layout, r.Runtime, r.Isolated, r.ElementCount, r.PeakRSSBytes)
		}
	}

	var tab app.Table
	h.ok(t, &tab, "Table", done.ResultIDs)
	var names []string
	for _, c := range tab.Columns {
		names = append(names, c.Name)
	}
	cols := strings.Join(names, "|")
	if !strings.Contains(cols, "|wasm memory|peak wasm memory|") || strings.Contains(cols, "RSS") || !strings.HasSuffix(cols, "|runtime") {
		t.Errorf("table columns %q: want wasm memory for RSS and a runtime column", cols)
	}
	for _, r := range tab.Rows {
		if got := r.Cells[len(r.Cells)-1]; got != "browser, in-process" {
			t.Errorf("runtime cell %q", got)
		}
	}
	var hist app.History
	h.ok(t, &hist, "History")
	if hist.Count != 2 || strings.Contains(func() string { b, _ := json.Marshal(hist.Columns); return string(b) }(), "RSS") {
		t.Errorf("history: %d results, columns %+v", hist.Count, hist.Columns)
	}
	if len(hist.Jobs) != 1 || hist.Jobs[0].Face != "browser" || len(hist.Jobs[0].Rows) != 2 {
		t.Errorf("history: %+v, want the run as one job from the browser", hist.Jobs)
	}
	for _, kind := range report.ChartKinds() {
		var v app.ChartView
		h.ok(t, &v, "Chart", kind, done.ResultIDs)
		if !v.Empty && (bytes.Contains(v.Option, []byte("RSS")) || !json.Valid(v.Option)) {
			t.Errorf("chart %s still names RSS or is not JSON", kind)
		}
		if kind == "memory-timeline" && !bytes.Contains(v.Option, []byte("wasm memory")) {
			t.Errorf("the memory timeline does not name the wasm memory")
		}
	}

	// Exports: a chart PNG and the results' JSON, as downloads.
	img := image.NewRGBA(image.Rect(0, 0, 4, 3))
	img.Set(1, 1, color.Black)
	var pngBuf bytes.Buffer
	png.Encode(&pngBuf, img)
	var ex app.Exported
	h.ok(t, &ex, "Export", app.ExportRequest{What: "chart", Format: "png", Kind: "memory-breakdown", IDs: done.ResultIDs,
		Data: "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngBuf.Bytes())})
	d := <-h.downloads
	if !strings.HasSuffix(d.name, "-memory-breakdown.png") || d.mime != "image/png" || !bytes.Equal(d.data, pngBuf.Bytes()) || ex.Path != d.name || !strings.HasPrefix(ex.Message, "Downloaded ") {
		t.Errorf("PNG export: %+v, download %s %s %d bytes", ex, d.name, d.mime, len(d.data))
	}
	h.ok(t, &ex, "Export", app.ExportRequest{What: "results", Format: "json", IDs: done.ResultIDs})
	d = <-h.downloads
	var rs []result.Result
	if err := json.Unmarshal(d.data, &rs); err != nil || len(rs) != 2 || rs[0].Runtime != "browser" || !strings.HasPrefix(d.mime, "application/json") {
		t.Errorf("JSON export: %s %s: %v, %d results", d.name, d.mime, err, len(rs))
	}
	if left, _ := os.ReadDir(DownloadsDir); len(left) != 0 {
		t.Errorf("the downloads folder keeps %d files after the exports", len(left))
	}
	if _, e := h.do(t, "Export", app.ExportRequest{What: "chart", Format: "png", Kind: "memory-breakdown", IDs: done.ResultIDs, Data: "nope"}); e == nil || e.Field != "chart" {
		t.Errorf("a PNG export of bad data: %+v, want an error for chart", e)
	}
}

// TestJSChooseSourceAndCancelled: the picked file's path comes back from
// ChooseSource (cancelled when none); a run whose worker was stopped is
// worded as the desktop words a cancel.
func TestJSChooseSourceAndCancelled(t *testing.T) {
	h, _ := bindForTest(t)
	h.mu.Lock()
	h.picked = "/files/keys.tsv"
	h.mu.Unlock()
	var sc app.SourceChoice
	h.ok(t, &sc, "ChooseSource")
	if sc.Path != "/files/keys.tsv" || sc.Cancelled {
		t.Errorf("ChooseSource with a picked file: %+v", sc)
	}
	h.ok(t, &sc, "ChooseSource")
	if !sc.Cancelled {
		t.Errorf("ChooseSource with none picked: %+v", sc)
	}
	var d app.RunDone
	h.ok(t, &d, "RunCancelled", "run-1", []string{"a", "b"}, 2.5)
	if !d.Cancelled || d.ID != "run-1" || len(d.ResultIDs) != 2 || d.Message != "Cancelled; 2 layouts measured in 2.5 s before the cancel (kept in history)" {
		t.Errorf("RunCancelled: %+v", d)
	}
	h.ok(t, &d, "RunCancelled", "run-2", nil, 0.1)
	if d.ResultIDs == nil || d.Message != "Cancelled before any layout finished; nothing was saved" {
		t.Errorf("RunCancelled with nothing measured: %+v", d)
	}
}

// TestJSPlanIsNative: the browser plans a native run unless asked. Its
// figures are Linux's (packed's slab grows in place: its first load's peak
// is its final tables and the loader's blocks), a budget must be given (the
// tab cannot tell the native machine's memory), and it cannot calibrate a
// native run's speeds; asked for this browser, the wasm memory's growth
// (every old slab stays behind) and the tab's own room are planned.
func TestJSPlanIsNative(t *testing.T) {
	h, _ := bindForTest(t)
	if _, e := h.do(t, "Plan", app.PlanForm{Rows: "1e9"}); e == nil || e.Field != "plan_memory" || !strings.Contains(e.Message, "native run") {
		t.Errorf("a native plan with no budget: %+v; want an error for plan_memory saying why", e)
	}
	if _, e := h.do(t, "Plan", app.PlanForm{Rows: "1e9", Memory: "24GiB", Calibrate: true}); e == nil || e.Field != "plan_calibrate" {
		t.Errorf("calibrating a native plan in the browser: %+v; want an error for plan_calibrate", e)
	}
	packed := func(v app.PlanView) planner.Candidate {
		for _, c := range v.Candidates {
			// packlab's own packed, not ClickHouse's SPARSE_HASHED of the same geometry.
			if c.Layout == "packed" && c.Shards == 1 && c.MaxLoadFactor == 0.5 && (c.Engine == "" || c.Engine == planner.EngineGo) {
				return c
			}
		}
		t.Fatal("no packed SHARDS 1 MLF 0.5")
		return planner.Candidate{}
	}
	var native app.PlanView
	h.ok(t, &native, "Plan", app.PlanForm{Rows: "1e9", Memory: "24GiB"})
	c := packed(native)
	if !strings.Contains(native.Headline, "for a native run") || c.GrowthBytes != 0 || c.PeakBytes != c.BytesAllocated+c.LoaderBytes {
		t.Errorf("native plan in the browser: %q; packed growth %d, first load peak %d, want its final tables %d + loader %d",
			native.Headline, c.GrowthBytes, c.PeakBytes, c.BytesAllocated, c.LoaderBytes)
	}
	var wasm app.PlanView
	h.ok(t, &wasm, "Plan", app.PlanForm{Rows: "1e8", Runtime: "browser"})
	pr, err := core.Predict(core.LayoutPacked, core.MustType("UInt64"), core.MustType("UInt16"), 1e8, core.Options{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := packed(wasm); !strings.Contains(wasm.Headline, "this browser's wasm memory") || pr.GrowthBytes == 0 || w.GrowthBytes != 2*pr.GrowthBytes {
		t.Errorf("a plan for the browser: %q; packed growth %d, want twice the old slab %d", wasm.Headline, w.GrowthBytes, pr.GrowthBytes)
	}
}
