package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/refdriver"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/text"
)

// Version is packlab's version, as `packlab version` and a built site's
// stamp say it.
const Version = "0.1.0-dev"

// Lab is the lab's whole API, the same for every face: the desktop window
// binds it with Wails, app/browser to the page's calls in WebAssembly. Each
// method takes and returns JSON-tagged values and an error that is always
// an *Error naming the field or action it concerns. Long work (a run) goes
// on in the background and reports through Options.Emit.
//
// Lab imports no face: a face passes its events and its native dialogs in
// Options.
type Lab struct {
	opt   Options
	store *store.Store

	mu   sync.Mutex
	jobs map[string]*job // runs not yet finished, by id
	seq  int

	// The last file source's check: reading a big file through takes a
	// while, and the form asks for an estimate as the person types.
	checkMu   sync.Mutex
	lastCheck fileCheck

	// The "Your ClickHouse" tab's inspections in progress (clickhouse.go).
	inspectMu   sync.Mutex
	inspectStop map[int]context.CancelFunc
	inspectSeq  int
}

type fileCheck struct {
	key string
	mc  experiments.MemoryCheck
	err error
}

// Check asks experiments' memory guard about cfg for the lab l. A file
// source is read through once per (settings, file size, file time) and the
// answer kept. It is a function, not a method, so that the window's binding
// (every exported method of Lab) does not grow.
func Check(l *Lab, cfg config.Config) (experiments.MemoryCheck, error) {
	if cfg.Source == "" {
		return experiments.Check(context.Background(), cfg)
	}
	st, err := os.Stat(cfg.Source)
	if err != nil {
		return experiments.Check(context.Background(), cfg) // names the problem
	}
	b, _ := json.Marshal(cfg)
	key := fmt.Sprintf("%s|%d|%d", b, st.Size(), st.ModTime().UnixNano())
	l.checkMu.Lock()
	defer l.checkMu.Unlock()
	if l.lastCheck.key != key {
		mc, err := experiments.Check(context.Background(), cfg)
		l.lastCheck = fileCheck{key, mc, err}
	}
	return l.lastCheck.mc, l.lastCheck.err
}

// Options is what a face gives the lab.
type Options struct {
	// ResultsDir is the folder results are saved in, one JSON file each;
	// "" means store.DefaultResultsDir.
	ResultsDir string
	// Emit sends an event to the page ("run:progress", "run:result",
	// "run:error", "run:done"); it must be safe to call from any goroutine.
	// Nil drops events.
	Emit func(event string, data any)
	// OpenFile and SaveFile show the native file dialogs and return the path
	// chosen, or "" when the person cancelled. Nil means the face has none:
	// ChooseSource then fails and Export needs ExportRequest.Path.
	OpenFile func(FileDialog) (string, error)
	SaveFile func(FileDialog) (string, error)
	// InProcess measures in this process instead of a fresh worker process
	// per run (the browser build; the desktop app isolates every run).
	InProcess bool
	// Runtime names where runs happen, as results record it: "native" (the
	// default) or "browser".
	Runtime string
}

// FileDialog is what a native open or save dialog shows.
type FileDialog struct {
	Title       string       `json:"title"`
	DefaultName string       `json:"default_name"` // save: the file name proposed
	Filters     []FileFilter `json:"filters"`
}

// FileFilter is one entry of a dialog's file-type menu.
type FileFilter struct {
	Name    string `json:"name"`    // "PNG image (*.png)"
	Pattern string `json:"pattern"` // "*.png", several joined by ';'
}

// New returns the lab over the results folder of opt.
func New(opt Options) (*Lab, error) {
	if opt.Runtime == "" {
		opt.Runtime = "native"
	}
	dir := opt.ResultsDir
	if dir == "" {
		d, err := store.DefaultResultsDir()
		if err != nil {
			return nil, fmt.Errorf("finding the results folder: %w", err)
		}
		dir = d
	}
	st, err := store.OpenStore(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the results folder: %w", err)
	}
	opt.ResultsDir = dir
	return &Lab{opt: opt, store: st, jobs: map[string]*job{}}, nil
}

func (l *Lab) emit(event string, data any) {
	if l.opt.Emit != nil {
		l.opt.Emit(event, data)
	}
}

// Limits is everything the form needs to offer and check: the choices, the
// ranges, the defaults, and this machine.
type Limits struct {
	Layouts    []LayoutInfo `json:"layouts"` // packlab's, then the C++ reference maps
	References References   `json:"references"`
	// ClickHouse is the state of ClickHouse's own dictionaries (the ch_
	// layouts), for a note under them.
	ClickHouse ClickHouseState `json:"clickhouse"`
	Types      []TypeInfo      `json:"types"`
	// KeyTypes is what the key may be: the types, and the String and
	// tuple keys ClickHouse's COMPLEX_KEY_ layouts (the ch_complex_key_
	// ones) hold, derived from the lab's keys (config.Config's Key).
	KeyTypes []TypeInfo `json:"key_types"`
	// PlanKeyTypes is what a plan's key may be: the types, and the String
	// keys the planner takes (ClickHouse's COMPLEX_KEY_ layouts alone).
	PlanKeyTypes []TypeInfo `json:"plan_key_types"`
	// AttributeTypes is what an attribute may be besides the value: the
	// types, and Strings of a few length ranges (--attributes takes any).
	// A plan's value may be any of them too (a dictionary of Strings, id →
	// name, is planned; a run's value is a fixed-size type).
	AttributeTypes []TypeInfo  `json:"attribute_types"`
	KeySources     []KeySource `json:"key_sources"`
	Shards         IntRange    `json:"shards"`
	MaxLoadFactor  FloatRange  `json:"max_load_factor"`
	// MaxLoadFactorDefault is what an empty max_load_factor means: each
	// layout's own default, as the form says it.
	MaxLoadFactorDefault string   `json:"max_load_factor_default"`
	Repeats              IntRange `json:"repeats"`
	MaxRows              int64    `json:"max_rows"`
	Defaults             Form     `json:"defaults"`

	TotalMemoryBytes int64  `json:"total_memory_bytes"`
	FreeMemoryBytes  int64  `json:"free_memory_bytes"` // available to a new run now; -1 if unknown
	TotalMemoryText  string `json:"total_memory_text"`
	FreeMemoryText   string `json:"free_memory_text"`
	Cores            int    `json:"cores"`
	CoresText        string `json:"cores_text"` // "1 core", "2 cores"
	Runtime          string `json:"runtime"`    // "native" or "browser"
	// HugePagesSupported: the tables' slabs can have transparent huge pages
	// here (Linux), so the form offers to turn them off.
	HugePagesSupported bool `json:"huge_pages_supported"`
	Isolated           bool `json:"isolated"` // each run in a fresh worker process
	// PlanCalibrationID is the id of the Plan tab's calibration in progress
	// events and for Cancel.
	PlanCalibrationID string `json:"plan_calibration_id"`
	// PlanVerificationID is the id of the Plan tab's build of its
	// ClickHouse answer in ClickHouse (VerifyPlan), likewise.
	PlanVerificationID string `json:"plan_verification_id"`

	ChartKinds     []ChartKind `json:"chart_kinds"`
	ResultsDir     string      `json:"results_dir"`
	EChartsVersion string      `json:"echarts_version"`
}

// LayoutInfo is one layout as the form offers it.
type LayoutInfo struct {
	Name       string `json:"name"`
	ClickHouse string `json:"clickhouse"` // its ClickHouse LAYOUT name, "" where ClickHouse has none
	// ClickHouseLabel is the words under its name (dict.Layout's Label):
	// what ClickHouse calls it, telling apart layouts that share a LAYOUT
	// name ("SPARSE_HASHED (PackedHashMap, since 23.5)"), its C++ type, or
	// whose it is.
	ClickHouseLabel   string `json:"clickhouse_label"`
	Description       string `json:"description"`
	UsesMaxLoadFactor bool   `json:"uses_max_load_factor"`
	// Reference is a C++ reference map (boost_flat ...), measured beside
	// packlab's layouts by a worker program that must be built first.
	Reference bool `json:"reference"`
	// ClickHouseOwn is one of ClickHouse's own dictionaries (ch_hashed ...),
	// run by ClickHouse itself, embedded (make chdb).
	ClickHouseOwn bool `json:"clickhouse_own"`
	// Row marks a row layout: packlab's table holding every attribute of
	// a row in one cell (takes --attributes; experiments/config/rows.go).
	Row bool `json:"row,omitempty"`
	// Available says whether it can run here; when not, Unavailable says
	// why and the one command that builds it.
	Available   bool   `json:"available"`
	Unavailable string `json:"unavailable"`
}

// References is the C++ reference maps' state, for a note under the form's
// layouts.
type References struct {
	Available    bool   `json:"available"`
	Problem      string `json:"problem"`       // why they cannot run here, with how to build them
	BuildCommand string `json:"build_command"` // make refs
	Note         string `json:"note"`          // one line for the form
}

// ClickHouseState is ClickHouse's own dictionaries' state, for a note under
// the form's layouts.
type ClickHouseState struct {
	Available    bool   `json:"available"`
	Version      string `json:"version"`       // SELECT version(): 26.7.2.1
	Problem      string `json:"problem"`       // why they cannot run here, with how to get them
	BuildCommand string `json:"build_command"` // make chdb
	Note         string `json:"note"`          // one line for the form
}

// TypeInfo is one key or value type.
type TypeInfo struct {
	Name  string `json:"name"`
	Size  int    `json:"size"`  // bytes
	Align int    `json:"align"` // natural alignment
	Label string `json:"label"` // "UInt64 · 8 B"
}

// complexKeyTypes are the String and tuple keys the form offers beside
// the fixed-size types: only the ch_complex_key_ layouts hold them (the
// engine's key field says so otherwise). A cell holds a 16-byte reference
// to the key's bytes in an arena (dict.Key).
var complexKeyTypes = []TypeInfo{
	{Name: "String", Size: 16, Align: 8, Label: "String · 8–32 B"},
	{Name: "String(16)", Size: 16, Align: 8, Label: "String · 16 B"},
	{Name: "Tuple(String, UInt64)", Size: 16, Align: 8, Label: "(String, UInt64)"},
	{Name: "Tuple(UInt32, String)", Size: 16, Align: 8, Label: "(UInt32, String)"},
}

// IntRange and FloatRange are a field's allowed values and default.
type IntRange struct {
	Min     int `json:"min"`
	Max     int `json:"max"`
	Default int `json:"default"`
}

type FloatRange struct {
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	Step    float64 `json:"step"`
	Default float64 `json:"default"`
}

// ChartKind is one chart tab.
type ChartKind struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
}

// references is the C++ reference maps' state: listed always, runnable
// only where their worker is built (never in the browser), and otherwise
// marked unavailable with the command that builds them.
func references() (References, map[string]string) {
	st := refdriver.Status()
	refs := References{Available: st.Available, Problem: st.Problem, BuildCommand: refdriver.BuildCommand}
	if st.Available {
		refs.Note = "C++ reference maps: the maps people pick instead, measured the same way"
	} else {
		refs.Note = unavailableNote("C++ reference maps", "the C++ reference maps", st.Problem)
	}
	return refs, st.Libraries
}

// clickHouse is ClickHouse's own dictionaries' state: listed always,
// runnable only where packlab-ch is built (never in the browser), and
// otherwise marked unavailable with the command that gets them.
func clickHouse() ClickHouseState {
	st := chdriver.Status()
	state := ClickHouseState{Available: st.Available, Version: st.Version, Problem: st.Problem, BuildCommand: chdriver.BuildCommand}
	if st.Available {
		state.Note = "ClickHouse " + st.Version + " itself (chDB): its dictionaries load the same rows, its figures beside packlab's"
	} else {
		state.Note = unavailableNote("ClickHouse's own dictionaries", "ClickHouse's own dictionaries", st.Problem)
	}
	return state
}

// layoutInfos is the table of layouts (dict.Layouts) as the form offers
// it: whether each can run here, and a C++ map's library version.
func layoutInfos(refs References, libraries map[string]string, ch ClickHouseState) []LayoutInfo {
	var out []LayoutInfo
	for _, d := range dict.Layouts() {
		info := LayoutInfo{Name: d.Name, ClickHouseLabel: d.Label, Description: d.Doc,
			UsesMaxLoadFactor: result.UsesMaxLoadFactor(d.Name), Available: true}
		if len(d.ClickHouse) > 0 {
			info.ClickHouse = d.ClickHouse[0].Layout
		}
		switch d.Family {
		case dict.FamilyPacklab:
			_, info.Row = dict.ParseRowLayout(d.Name)
		case dict.FamilyReference:
			info.Reference, info.Available, info.Unavailable = true, refs.Available, refs.Problem
			if lib := libraries[d.Name]; lib != "" {
				info.Description = lib + ": " + d.Doc
			}
		case dict.FamilyClickHouse:
			info.ClickHouseOwn, info.Available, info.Unavailable = true, ch.Available, ch.Problem
		}
		out = append(out, info)
	}
	return out
}

// unavailableNote is the form's line for a family of layouts that cannot
// run here: "<family> unavailable: <problem>", without the problem's own
// "<what> are " before "not built ...", and with "they" and "them" for its
// "; <what> run in ..." (the browser's reason) and "; build <what> with"
// (a worker variable naming no file), any of which would say the family
// twice.
func unavailableNote(family, what, problem string) string {
	for _, w := range []string{what, family} {
		if rest, ok := strings.CutPrefix(problem, w+" are "); ok {
			problem = rest
			break
		}
	}
	for _, w := range []string{what, family} {
		problem = strings.Replace(problem, "; "+w+" ", "; they ", 1)
		problem = strings.Replace(problem, "; build "+w+" with", "; build them with", 1)
	}
	return family + " unavailable: " + problem
}

// coresText is "1 core" or "N cores".
func coresText(n int) string {
	if n == 1 {
		return "1 core"
	}
	return strconv.Itoa(n) + " cores"
}

// chartTitles are the tab labels; a kind missing here shows its name.
var chartTitles = map[string]string{
	"memory-breakdown": "Memory breakdown",
	"padding-waste":    "Padding waste",
	"memory-vs-rows":   "Memory vs rows",
	"memory-timeline":  "Memory timeline",
	"per-thread-speed": "Per-thread speed",
	"throughput":       "Throughput",
}

func chartKinds() []ChartKind {
	var out []ChartKind
	for _, k := range report.ChartKinds() {
		t := chartTitles[k]
		if t == "" {
			t = k
		}
		out = append(out, ChartKind{Kind: k, Title: t})
	}
	return out
}

// Limits returns the form's choices and ranges and this machine's memory
// and cores.
func (l *Lab) Limits() (Limits, error) {
	lim := Limits{
		KeySources:    keySources,
		Shards:        IntRange{Min: core.MinShards, Max: core.MaxShards, Default: 1},
		MaxLoadFactor: FloatRange{Min: core.MinMaxLoadFactor, Max: core.MaxMaxLoadFactor, Step: 0.01, Default: core.DefaultMaxLoadFactor},
		MaxLoadFactorDefault: fmt.Sprintf("each layout's own: %v (ClickHouse's), compact %v",
			core.DefaultMaxLoadFactor, core.DefaultCompactMaxLoadFactor),
		Repeats:            IntRange{Min: 1, Max: config.MaxRepeats, Default: 1},
		MaxRows:            source.MaxRows,
		Defaults:           defaultForm(),
		Cores:              runtime.NumCPU(),
		CoresText:          coresText(runtime.NumCPU()),
		Runtime:            l.opt.Runtime,
		HugePagesSupported: core.HugePagesSupported,
		Isolated:           !l.opt.InProcess,
		PlanCalibrationID:  PlanCalibrationID,
		PlanVerificationID: PlanVerificationID,
		ChartKinds:         chartKinds(),
		ResultsDir:         l.opt.ResultsDir,
		EChartsVersion:     report.EChartsVersion,
	}
	var libraries map[string]string
	lim.References, libraries = references()
	lim.ClickHouse = clickHouse()
	lim.Layouts = layoutInfos(lim.References, libraries, lim.ClickHouse)
	for _, t := range core.Types() {
		lim.Types = append(lim.Types, TypeInfo{Name: t.Name, Size: t.Size, Align: t.Align,
			Label: t.Name + " · " + strconv.Itoa(t.Size) + " B"})
	}
	lim.KeyTypes = append(slices.Clone(lim.Types), complexKeyTypes...)
	for _, k := range lim.KeyTypes {
		if (planner.PlanRequest{Rows: 1000, Key: k.Name}).Validate() == nil {
			lim.PlanKeyTypes = append(lim.PlanKeyTypes, k)
		}
	}
	lim.AttributeTypes = append(lim.AttributeTypes, lim.Types...)
	for _, s := range []struct{ name, lengths string }{{"String(1..8)", "1–8"}, {"String", "8–32"}, {"String(32..128)", "32–128"}} {
		// The cell holds a 16-byte reference, the value's bytes are in an arena.
		lim.AttributeTypes = append(lim.AttributeTypes, TypeInfo{Name: s.name, Size: 16, Align: 8, Label: "String · " + s.lengths + " B"})
	}
	// The guard's view of memory, on the smallest run there is.
	mc, err := experiments.Check(context.Background(), config.Config{
		Layouts: []string{string(core.LayoutPacked)}, Rows: 1, InProcess: l.opt.InProcess})
	if err != nil {
		return lim, ErrorOf(err, "")
	}
	lim.TotalMemoryBytes, lim.FreeMemoryBytes = mc.TotalBytes, mc.AvailableBytes
	lim.TotalMemoryText = text.Bytes(mc.TotalBytes)
	lim.FreeMemoryText = text.Bytes(mc.AvailableBytes)
	return lim, nil
}

// Estimate is the prediction before a run: each layout's peak against the
// memory available now, and the verdict.
type Estimate struct {
	Fits            bool                    `json:"fits"`
	Verdict         string                  `json:"verdict"` // "Fits in memory" or "Will not fit"
	Message         string                  `json:"message"` // the numbers, one line
	Rows            int64                   `json:"rows"`
	RowsText        string                  `json:"rows_text"`
	NeedBytes       int64                   `json:"need_bytes"` // the largest run's peak, with the worker's runtime
	NeedText        string                  `json:"need_text"`
	AvailableBytes  int64                   `json:"available_bytes"` // -1 if unknown
	AvailableText   string                  `json:"available_text"`
	TotalBytes      int64                   `json:"total_bytes"`
	TotalText       string                  `json:"total_text"`
	Layouts         []LayoutEstimate        `json:"layouts"`
	WorkerRuntime   int64                   `json:"worker_runtime_bytes"`
	Largest         string                  `json:"largest"`
	GuardPrediction experiments.MemoryCheck `json:"check"`
}

// LayoutEstimate is one layout's predicted run.
type LayoutEstimate struct {
	Layout     string  `json:"layout"`
	PeakBytes  int64   `json:"peak_bytes"`  // predicted peak_rss_bytes, with the worker's runtime
	FinalBytes int64   `json:"final_bytes"` // predicted bytes_allocated after the load
	PeakText   string  `json:"peak_text"`
	FinalText  string  `json:"final_text"`
	BarPercent float64 `json:"bar_percent"` // PeakBytes + the worker's runtime, as a share of the available memory, 0.5 to 100
	Fits       bool    `json:"fits"`
	Estimated  bool    `json:"estimated"` // a model or an upper bound, not a replay
	Note       string  `json:"note"`      // a tooltip: the parts of the peak
}

// Estimate validates the form and predicts each layout's peak memory
// (core.Predict through experiments' guard) against the memory available
// now. A form error comes back as an *Error naming the field; a run that
// would not fit is not an error here: Fits is false and Message says why.
func (l *Lab) Estimate(f Form) (Estimate, error) {
	cfg, err := f.Parse()
	if err != nil {
		return Estimate{}, err
	}
	cfg.InProcess = l.opt.InProcess
	mc, err := Check(l, cfg)
	if err != nil {
		return Estimate{}, ErrorOf(err, "run")
	}
	return EstimateOf(mc), nil
}

// EstimateOf words the guard's check of a run as the form shows it.
func EstimateOf(mc experiments.MemoryCheck) Estimate {
	e := Estimate{
		Fits:            mc.Fits,
		NeedBytes:       mc.NeedBytes,
		NeedText:        text.Bytes(mc.NeedBytes),
		AvailableBytes:  mc.AvailableBytes,
		AvailableText:   text.Bytes(mc.AvailableBytes),
		TotalBytes:      mc.TotalBytes,
		TotalText:       text.Bytes(mc.TotalBytes),
		WorkerRuntime:   mc.RuntimeBytes,
		Largest:         mc.Largest,
		GuardPrediction: mc,
	}
	for _, est := range mc.Estimates {
		need := est.PeakBytes + mc.RuntimeBytes
		le := LayoutEstimate{
			Layout:     est.Layout,
			PeakBytes:  est.PeakBytes,
			FinalBytes: est.FinalBytes,
			PeakText:   text.Bytes(est.PeakBytes),
			FinalText:  text.Bytes(est.FinalBytes),
			Fits:       mc.AvailableBytes < 0 || need <= mc.AvailableBytes,
			Estimated:  est.Estimated,
			BarPercent: 100,
			Note: fmt.Sprintf("%s: predicted peak RSS %s = tables %s + loader %s + read %s; %s after the load; with the worker's runtime (%s) it needs %s",
				est.Layout, text.Bytes(est.PeakBytes), text.Bytes(est.TablePeakBytes),
				text.Bytes(est.LoaderBytes), text.Bytes(est.ReadBytes),
				text.Bytes(est.FinalBytes), text.Bytes(mc.RuntimeBytes), text.Bytes(need)),
		}
		if mc.AvailableBytes > 0 {
			le.BarPercent = min(100, max(0.5, 100*float64(need)/float64(mc.AvailableBytes)))
		}
		if est.ReloadPeakBytes > 0 {
			le.Note += fmt.Sprintf("; a reload would hold %s (this table beside a new one loading, as ClickHouse reloads)", text.Bytes(est.ReloadPeakBytes))
		}
		if est.Estimated {
			le.Note += " (an upper bound or a model)"
		}
		e.Layouts = append(e.Layouts, le)
		e.Rows = est.Rows
	}
	e.RowsText = text.Rows(e.Rows)
	switch {
	case !mc.Fits:
		e.Verdict = "Will not fit — Run is refused"
		e.Message = refusal(mc)
	case mc.AvailableBytes < 0:
		e.Verdict = "Memory unknown"
		e.Message = fmt.Sprintf("Largest predicted peak %s (%s); this platform does not tell how much memory is free.", e.NeedText, mc.Largest)
	default:
		e.Verdict = "Fits in memory"
		e.Message = fmt.Sprintf("Largest need %s (%s at %s rows, with the worker's runtime %s) of %s available (%s installed).",
			e.NeedText, mc.Largest, e.RowsText, text.Bytes(mc.RuntimeBytes), e.AvailableText, e.TotalText)
	}
	return e
}
