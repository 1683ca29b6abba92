//go:build js && wasm

// Package browser is the browser face's binding: the same app.Lab, its
// methods called from JavaScript with the same JSON the desktop window
// exchanges, its events posted as they happen. It is the only package of
// the lab's Go side that imports syscall/js; cmd/packlab-wasm starts it.
//
// The Go instance lives in a Web Worker (frontend/js/wasm-worker.js); the
// worker is the host. It gives Bind an object with
//
//	host.ready(call)                   Bind hands over call(id, method, argsJSON)
//	host.reply(id, resultJSON, errorJSON)  the answer to one call: exactly one
//	                                   of the two is a string, the other null
//	host.event(name, dataJSON)         "run:progress", "run:result", "run:error", "run:done"
//	host.download(name, mime, bytes)   an export to hand to the person (bytes: Uint8Array)
//	host.pickedFile()                  the path of the file the person just picked
//	                                   (mounted by the host), "" when they cancelled
//
// Answers and events go out synchronously from Go (no promise, no
// microtask): a run keeps the single thread busy, and anything queued behind
// it would arrive after the run.
//
// What differs from the desktop, all of it here:
//   - memory: the guard's "available" is the room left in the tab's wasm32
//     memory (experiments/internal/machine/machine_js.go), its "total" the 4 GiB a wasm32
//     memory can hold; Estimate names the largest row count that fits for each
//     chosen layout at the chosen settings, worked out from core.Predict's peak
//     through the guard, and says why;
//   - labels: what the desktop calls RSS is the wasm memory the Go runtime
//     holds (table columns, chart names, notes); results carry runtime
//     "browser" and isolated false (experiments sets both), and the results
//     table gains a runtime column;
//   - files: exports are written to a scratch folder and handed to the page
//     as a download; a key file is the one the person picked, mounted by the
//     host and read in chunks as Go reads it.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"path"
	"regexp"
	"strings"
	"sync"
	"syscall/js"

	"github.com/packlab/packlab/app"
	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/text"
)

// DownloadsDir is the scratch folder exports are written to before they are
// handed to the page as downloads.
const DownloadsDir = "/downloads"

// jsBinding is one Lab bound to one host.
type jsBinding struct {
	lab  *app.Lab
	host js.Value

	// gate holds run events back while StartRun's answer is on its way, so
	// that the page knows the run's id before its first event.
	gate sync.Mutex
}

// Bind makes the lab of opt callable from JavaScript through host (see
// the top of this file). It sets opt's events and dialogs to the host's,
// measures in-process, and names the runtime "browser".
func Bind(host js.Value, opt app.Options) (*app.Lab, error) {
	if host.Type() != js.TypeObject {
		return nil, errors.New("Bind: the host is not an object")
	}
	for _, fn := range []string{"ready", "reply", "event", "download", "pickedFile"} {
		if host.Get(fn).Type() != js.TypeFunction {
			return nil, fmt.Errorf("Bind: the host has no function %s", fn)
		}
	}
	b := &jsBinding{host: host}
	opt.InProcess = true
	opt.Runtime = "browser"
	opt.Emit = b.emit
	opt.OpenFile = func(app.FileDialog) (string, error) {
		return host.Call("pickedFile").String(), nil
	}
	opt.SaveFile = func(d app.FileDialog) (string, error) {
		return path.Join(DownloadsDir, path.Base(d.DefaultName)), nil
	}
	if err := os.MkdirAll(DownloadsDir, 0o755); err != nil {
		return nil, fmt.Errorf("Bind: the downloads folder: %w", err)
	}
	lab, err := app.New(opt)
	if err != nil {
		return nil, err
	}
	b.lab = lab
	host.Call("ready", js.FuncOf(b.call))
	return lab, nil
}

func (b *jsBinding) emit(event string, data any) {
	buf, err := json.Marshal(data)
	if err != nil {
		buf, _ = json.Marshal(app.RunError{Field: "run", Message: "an event could not be encoded: " + err.Error()})
		event = app.EventError
	}
	b.gate.Lock()
	b.host.Call("event", event, string(buf))
	b.gate.Unlock()
}

// call is host-callable: call(id, method, argsJSON). It returns at once; the
// method runs on its own goroutine and answers through host.reply.
func (b *jsBinding) call(_ js.Value, args []js.Value) any {
	if len(args) != 3 {
		return fmt.Sprintf("call takes (id, method, argsJSON), got %d arguments", len(args))
	}
	id, method, raw := args[0], args[1].String(), args[2].String()
	go func() {
		if method == "StartRun" {
			// Hold the run's events until its answer is out.
			b.gate.Lock()
			defer b.gate.Unlock()
		}
		res, err := b.dispatch(method, raw)
		b.reply(id, res, err)
	}()
	return nil
}

func (b *jsBinding) reply(id js.Value, res any, err error) {
	if err != nil {
		e := app.ErrorOf(err, "")
		buf, _ := json.Marshal(e)
		b.host.Call("reply", id, js.Null(), string(buf))
		return
	}
	buf, merr := json.Marshal(res)
	if merr != nil {
		buf, _ = json.Marshal(&app.Error{Message: "the answer could not be encoded: " + merr.Error()})
		b.host.Call("reply", id, js.Null(), string(buf))
		return
	}
	b.host.Call("reply", id, string(buf), js.Null())
}

// dispatch decodes the JSON array of arguments and calls the method. A
// panic becomes an error for the page rather than the end of the worker.
func (b *jsBinding) dispatch(method, raw string) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &app.Error{Message: fmt.Sprintf("internal error in %s: %v", method, v)}
		}
	}()
	var args []json.RawMessage
	if strings.TrimSpace(raw) != "" {
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			return nil, &app.Error{Message: fmt.Sprintf("%s: the arguments are not a JSON array: %v", method, err)}
		}
	}
	call, ok := b.methods()[method]
	if !ok {
		return nil, &app.Error{Message: fmt.Sprintf("the browser lab has no method %s", method)}
	}
	return call(method, args)
}

// jsMethod is one of the Lab's methods as the page calls it: its name (for
// the messages) and its arguments, a JSON array.
type jsMethod func(method string, args []json.RawMessage) (any, error)

// methods is every method the page may call, by name.
func (b *jsBinding) methods() map[string]jsMethod {
	return map[string]jsMethod{
		"Limits":   call0(b.limits),
		"Estimate": call1(b.estimate),
		"StartRun": call1(b.startRun),
		"Cancel":   call1(b.lab.Cancel),
		"Running":  call0(b.lab.Running),
		// The page stopped the worker that ran id (a run holds the single
		// thread, so that is how a browser run is cancelled at any moment);
		// this worker is its successor and words the run's end.
		"RunCancelled": call3(func(id string, ids []string, secs float64) (app.RunDone, error) {
			return app.RunCancelled(id, ids, secs), nil
		}),
		"History":          call0(b.history),
		"Delete":           call1(b.lab.Delete),
		"Inspection":       call1(b.lab.Inspection),
		"DeleteInspection": call1(b.lab.DeleteInspection),
		"Table":            call1(b.table),
		"Chart":            call2(b.chart),
		"Export":           call1(b.export),
		"ChooseSource":     call0(b.lab.ChooseSource),
		"Plan":             call1(b.lab.Plan),
	}
}

// jsArgs decodes a call's arguments into dst, one each: a call with another
// number of arguments, or one that does not decode, is refused by name.
func jsArgs(method string, args []json.RawMessage, dst ...any) error {
	if n := len(dst); len(args) != n {
		s := "s"
		if n == 1 {
			s = ""
		}
		return &app.Error{Message: fmt.Sprintf("%s takes %d argument%s, got %d", method, n, s, len(args))}
	}
	for i, d := range dst {
		if err := json.Unmarshal(args[i], d); err != nil {
			return &app.Error{Message: fmt.Sprintf("%s: argument %d: %v", method, i+1, err)}
		}
	}
	return nil
}

func call0[R any](f func() (R, error)) jsMethod {
	return func(method string, args []json.RawMessage) (any, error) {
		if err := jsArgs(method, args); err != nil {
			return nil, err
		}
		return f()
	}
}

func call1[A, R any](f func(A) (R, error)) jsMethod {
	return func(method string, args []json.RawMessage) (any, error) {
		var a A
		if err := jsArgs(method, args, &a); err != nil {
			return nil, err
		}
		return f(a)
	}
}

func call2[A, B, R any](f func(A, B) (R, error)) jsMethod {
	return func(method string, args []json.RawMessage) (any, error) {
		var a A
		var b B
		if err := jsArgs(method, args, &a, &b); err != nil {
			return nil, err
		}
		return f(a, b)
	}
}

func call3[A, B, C, R any](f func(A, B, C) (R, error)) jsMethod {
	return func(method string, args []json.RawMessage) (any, error) {
		var a A
		var b B
		var c C
		if err := jsArgs(method, args, &a, &b, &c); err != nil {
			return nil, err
		}
		return f(a, b, c)
	}
}

// ---- memory: the wasm32 limit ----

// limits is Lab.Limits with the tab's memory: 4 GiB in all, and what the
// runtime does not hold yet.
func (b *jsBinding) limits() (app.Limits, error) {
	lim, err := b.lab.Limits()
	if err != nil {
		return lim, err
	}
	lim.TotalMemoryBytes = experiments.WasmMemoryLimit
	lim.TotalMemoryText = text.Bytes(experiments.WasmMemoryLimit) + " wasm32"
	lim.FreeMemoryText = text.Bytes(lim.FreeMemoryBytes) + " wasm"
	return lim, nil
}

// browserCheck is the guard's check of cfg in this tab, in the tab's terms
// (see inAddressSpace).
func (b *jsBinding) browserCheck(cfg config.Config) (experiments.MemoryCheck, error) {
	cfg.InProcess = true
	mc, err := app.Check(b.lab, cfg)
	if err != nil {
		return mc, err
	}
	return inAddressSpace(mc), nil
}

// inAddressSpace turns the guard's check into the tab's: the total is the
// 4 GiB of a wasm32 memory, and a layout that grows by reallocating one slab
// (hashed, packed, hashed_array, compact) needs more of it than its peak.
//
// Native memory gives a freed slab's pages back; the wasm memory only
// grows, and Go's heap in it cannot move a block: a new slab twice the size
// of the last one fits in no hole the earlier, smaller slabs left (their sum
// is less than the live previous slab), so every growth takes fresh address
// space at the top. The tables' peak in the address space is then the sum
// of every slab the growth made: core.Predict's peak (the final slab and the
// previous one) plus the earlier ones, whose sum is at most the previous
// slab again (each is at most half the next). Measured in Chromium: packed
// <UInt64,UInt16> at 134,217,728 rows, which core.Predict's peak (3.75 GiB)
// lets into 4 GiB, stopped the Go program at the last growth; this rule
// caps it at 67,108,864. compact grows x5/4 (from 2^16 home slots), so the
// slabs before the previous one are four times its size together and a new
// slab can fit where they were; it is counted as the others, cautiously.
// sparse and gomap make many small blocks, which the heap reuses: their
// peak stands.
func inAddressSpace(mc experiments.MemoryCheck) experiments.MemoryCheck {
	mc.TotalBytes = experiments.WasmMemoryLimit
	mc.NeedBytes, mc.Largest = 0, ""
	for i, e := range mc.Estimates {
		table := core.Layout(e.Layout)
		if l, ok := dict.ParseRowLayout(e.Layout); ok { // packed_row's rows are in a packed table
			table = l
		}
		switch table {
		case core.LayoutHashed, core.LayoutPacked, core.LayoutHashedArray, core.LayoutCompact, core.LayoutIceberg:
			if prev := e.TablePeakBytes - e.FinalBytes; prev > 0 {
				e.TablePeakBytes += prev
				e.PeakBytes = max(e.TablePeakBytes+e.LoaderBytes, e.FinalBytes+e.ReadBytes)
			}
		}
		mc.Estimates[i] = e
		if need := e.PeakBytes + mc.RuntimeBytes; need > mc.NeedBytes || mc.Largest == "" {
			mc.NeedBytes, mc.Largest = need, e.Layout
		}
	}
	mc.Fits = mc.AvailableBytes < 0 || mc.NeedBytes <= mc.AvailableBytes
	return mc
}

// rowCap is the largest row count of a synthetic source whose run of
// layout, at cfg's other settings, fits this tab now: the predicted peak
// (core.Predict through experiments' guard: tables, loader, read; in the
// address space, see inAddressSpace) within the wasm memory left. 0 when
// not even one row fits.
func rowCap(cfg config.Config, layout string) int64 {
	cfg.Layouts = []string{layout}
	cfg.InProcess = true
	fits := func(rows int64) bool {
		cfg.Rows = rows
		mc, err := experiments.Check(context.Background(), cfg)
		return err == nil && inAddressSpace(mc).Fits
	}
	// 2^40 rows are far beyond 4 GiB for any key of 4 bytes or more, and
	// small enough for Predict's arithmetic; a run that fits even then has
	// keys so narrow (UInt8, UInt16) that the table stops growing.
	lo, hi := int64(0), int64(1)<<40 // fits(lo) or lo == 0; !fits(hi+1)
	if fits(hi) {
		return source.MaxRows
	}
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// parse is the form's configuration, as the desktop's; a String or
// tuple key's refusal also says where the layouts that hold one run, since
// none of them runs in this page.
func parse(f app.Form) (config.Config, error) {
	cfg, err := f.Parse()
	var e *app.Error
	if errors.As(err, &e) && e.Field == "key" {
		if k, problem, ok := dict.ParseKey(strings.TrimSpace(f.Key)); ok && problem == "" && k.Derived() {
			e.Message += "; the ch_complex_key_ layouts run in the desktop lab and from the command line, not in this page"
		}
	}
	return cfg, err
}

// estimate is Lab.Estimate in the tab's terms, with each layout's row cap.
func (b *jsBinding) estimate(f app.Form) (app.Estimate, error) {
	cfg, err := parse(f)
	if err != nil {
		return app.Estimate{}, err
	}
	mc, err := b.browserCheck(cfg)
	if err != nil {
		return app.Estimate{}, app.ErrorOf(err, "run")
	}
	e := app.EstimateOf(mc)
	caps := map[string]int64{}
	if cfg.Source == "" {
		for _, le := range e.Layouts {
			caps[le.Layout] = rowCap(cfg, le.Layout)
		}
	}
	for i, le := range e.Layouts {
		le.Note = strings.Replace(le.Note, "; with the worker's runtime (0 B) it needs", "; it needs", 1)
		switch core.Layout(le.Layout) {
		case core.LayoutHashed, core.LayoutPacked, core.LayoutHashedArray, core.LayoutCompact, core.LayoutIceberg:
			le.Note += "; the tables' part counts every slab the growth makes, since a wasm memory cannot reuse the smaller ones' space for a larger one"
		}
		if c, ok := caps[le.Layout]; ok {
			le.Note += fmt.Sprintf("; in this tab's wasm memory %s fits up to %s rows at these settings", le.Layout, capText(c))
		}
		e.Layouts[i] = relabelNote(le)
	}
	e.Message = browserMessage(mc, e, caps)
	switch {
	case !mc.Fits:
		e.Verdict = "Will not fit in this tab — Run is refused"
	default:
		e.Verdict = "Fits in this tab's memory"
	}
	return e, nil
}

func relabelNote(le app.LayoutEstimate) app.LayoutEstimate {
	le.Note = relabel(le.Note)
	return le
}

// browserMessage is the estimate's line: what the largest run needs, what
// the tab has left of its 4 GiB, and the row caps (the reason a larger run
// is refused).
func browserMessage(mc experiments.MemoryCheck, e app.Estimate, caps map[string]int64) string {
	big := mc.LargestEstimate()
	about := "about "
	if big.Estimated {
		about = "at most about "
	}
	room := fmt.Sprintf("this tab's WebAssembly memory has %s of its %s left (wasm32: 32-bit addresses, so 4 GiB at most, whatever the machine has)",
		text.Bytes(mc.AvailableBytes), text.Bytes(mc.TotalBytes))
	var lim []string
	for _, le := range e.Layouts {
		if c, ok := caps[le.Layout]; ok {
			lim = append(lim, le.Layout+" "+capText(c))
		}
	}
	limits := ""
	if len(lim) > 0 {
		limits = " Most rows that fit at these settings: " + strings.Join(lim, ", ") + "."
	}
	if !mc.Fits {
		return fmt.Sprintf("Not run: %s at %s rows needs %s%s at its peak (tables %s, loader %s, read %s), but %s.%s",
			mc.Largest, text.Rows(big.Rows), about, text.Bytes(mc.NeedBytes),
			text.Bytes(big.TablePeakBytes), text.Bytes(big.LoaderBytes),
			text.Bytes(big.ReadBytes), room, limits)
	}
	return fmt.Sprintf("Largest need %s (%s at %s rows); %s.%s",
		text.Bytes(mc.NeedBytes), mc.Largest, text.Rows(big.Rows), room, limits)
}

// capText writes a row cap: "67,108,864", or "any number of" when the
// table stops growing (narrow keys).
func capText(n int64) string {
	if n >= source.MaxRows {
		return "any number of"
	}
	return text.Thousands(n)
}

// startRun refuses a run that does not fit the tab with the browser's
// reason, then starts it as the desktop does.
func (b *jsBinding) startRun(f app.Form) (app.Started, error) {
	cfg, err := parse(f)
	if err != nil {
		return app.Started{}, err
	}
	if cfg.Source == "" {
		mc, err := b.browserCheck(cfg)
		if err != nil {
			return app.Started{}, app.ErrorOf(err, "run")
		}
		if !mc.Fits {
			e := app.EstimateOf(mc)
			caps := map[string]int64{}
			for _, le := range e.Layouts {
				caps[le.Layout] = rowCap(cfg, le.Layout)
			}
			return app.Started{}, &app.Error{Field: "run", Message: browserMessage(mc, e, caps)}
		}
	}
	return b.lab.StartRun(f)
}

// ---- labels: RSS is the wasm memory here ----

var rssWord = regexp.MustCompile(`\bRSS\b`)

// relabel names the wasm memory where the desktop's words say RSS.
func relabel(s string) string { return rssWord.ReplaceAllString(s, "wasm memory") }

func (b *jsBinding) history() (app.History, error) {
	h, err := b.lab.History()
	if err != nil {
		return h, err
	}
	for i := range h.Columns {
		h.Columns[i].Name = relabel(h.Columns[i].Name)
	}
	return h, nil
}

// table is Lab.Table with the wasm memory's names and a runtime column.
func (b *jsBinding) table(ids []string) (app.Table, error) {
	t, err := b.lab.Table(ids)
	if err != nil {
		return t, err
	}
	rs, err := app.Results(b.lab, ids, "export")
	if err != nil {
		return t, err
	}
	for i := range t.Columns {
		t.Columns[i].Name = relabel(t.Columns[i].Name)
	}
	t.Columns = append(t.Columns, app.Column{Name: "runtime"})
	for i := range t.Rows {
		where := rs[i].Runtime
		if !rs[i].Isolated {
			where += ", in-process"
		}
		t.Rows[i].Cells = append(t.Rows[i].Cells, where)
	}
	return t, nil
}

// chart is Lab.Chart with every RSS in the option's texts (series, axis
// names, notes) named as the wasm memory, when every chosen result was
// measured in a browser.
func (b *jsBinding) chart(kind string, ids []string) (app.ChartView, error) {
	v, err := b.lab.Chart(kind, ids)
	if err != nil || v.Empty {
		return v, err
	}
	rs, err := app.Results(b.lab, ids, "chart")
	if err != nil {
		return v, err
	}
	for _, r := range rs {
		if r.Runtime != "browser" {
			return v, nil
		}
	}
	var opt any
	if err := json.Unmarshal(v.Option, &opt); err != nil {
		return v, app.ErrorOf(fmt.Errorf("the chart's option: %w", err), "chart")
	}
	out, err := json.Marshal(relabelStrings(opt))
	if err != nil {
		return v, app.ErrorOf(fmt.Errorf("the chart's option: %w", err), "chart")
	}
	v.Option = out
	return v, nil
}

// relabelStrings relabels every string value (not the keys) of a decoded
// JSON value.
func relabelStrings(v any) any {
	switch x := v.(type) {
	case string:
		return relabel(x)
	case []any:
		for i := range x {
			x[i] = relabelStrings(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = relabelStrings(x[k])
		}
	}
	return v
}

// ---- files: exports become downloads ----

// export is Lab.Export; a file written to DownloadsDir (the save "dialog"
// of the browser) is handed to the page as a download and removed.
func (b *jsBinding) export(req app.ExportRequest) (app.Exported, error) {
	res, err := b.lab.Export(req)
	if err != nil || res.Cancelled || path.Dir(res.Path) != DownloadsDir {
		return res, err
	}
	field := "export"
	if strings.EqualFold(strings.TrimSpace(req.What), "chart") {
		field = "chart"
	}
	data, err := os.ReadFile(res.Path)
	os.Remove(res.Path)
	if err != nil {
		return app.Exported{}, &app.Error{Field: field, Message: fmt.Sprintf("reading the export back: %v", source.PathErrorReason(err))}
	}
	name := path.Base(res.Path)
	typ := mime.TypeByExtension(path.Ext(name))
	if typ == "" {
		typ = "application/octet-stream"
	}
	arr := js.Global().Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	b.host.Call("download", name, typ, arr)
	return app.Exported{Path: name, Bytes: int64(len(data)),
		Message: fmt.Sprintf("Downloaded %s (%s)", name, text.Bytes(int64(len(data))))}, nil
}
