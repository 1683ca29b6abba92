package app

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
	"github.com/packlab/packlab/experiments/worker"
)

// PlanForm is the Plan tab's form exactly as typed; Go parses it.
type PlanForm struct {
	Rows    string `json:"rows"`    // 1e9, 1B, 10M ... up to 2^62
	Key     string `json:"key"`     // default UInt64
	Value   string `json:"value"`   // default UInt16
	Memory  string `json:"memory"`  // the budget: 24GiB, 512MiB; "" = what this machine has available
	Threads string `json:"threads"` // threads the load may use; "" = this machine's cores
	Prefer  string `json:"prefer"`  // "memory" (default), "read" or "load"
	// FirstLoadOnly checks the budget against the first load's peak, not a
	// reload's.
	FirstLoadOnly bool `json:"first_load_only"`
	// Runtime is where the planned table runs: "native" (default, on every
	// face) or "browser" (this browser's wasm memory; the browser only).
	Runtime string `json:"runtime"`
	// Preallocate plans tables reserved for the rows before the load.
	Preallocate bool `json:"preallocate"`
	Calibrate   bool `json:"calibrate"` // measure the speeds that are missing first (at 1e7 rows, 13 minutes on the lab machine with ClickHouse's: each load after 2.5 s idle)
	// CalibrationRows is the size the calibration measures at ("" = the
	// plan's rows, 1e6 to 1e7); only with Calibrate.
	CalibrationRows string `json:"calibration_rows"`
	// ClickHouseVersion is the ClickHouse release the LAYOUT clauses are
	// for ("" = planner.DefaultClickHouseVersion).
	ClickHouseVersion string `json:"clickhouse_version"`
	// Attributes is every attribute's type when the dictionary has more
	// than one, the first the value (then Value is ignored); empty: Value
	// alone.
	Attributes []string `json:"attributes"`
	// MaxKey is the largest key when the keys are dense integers from 0
	// ("" = not known): the plan then weighs ClickHouse's FLAT.
	MaxKey string `json:"max_key"`
	// Growth is how much the dictionary grows before its next reload, in
	// percent ("" = planner.DefaultGrowthPercent).
	Growth string `json:"growth"`
	// For shows one answer: "clickhouse" or "go" ("" = both).
	For string `json:"for"`
	// From is a table (database.table) on the server of Server, the Your
	// ClickHouse tab's form: the plan is then for the dictionary over it
	// (PlanFromTable, not in the browser), and Rows, Key, Value,
	// Attributes and MaxKey are the table's, left empty. KeyColumn and
	// Columns ("a,b") pick its key and attributes ("" = its primary key,
	// every other column).
	From      string         `json:"from"`
	KeyColumn string         `json:"key_column"`
	Columns   string         `json:"columns"`
	Server    ClickHouseForm `json:"server"`
}

// PlanView is the planner's answer for the Plan tab: the text worded by
// experiments (the same as `packlab plan` prints), the table, the chart, and
// the plan itself.
type PlanView struct {
	planner.PlanDetails
	Fits       bool                `json:"fits"`       // the Go answer's peak fits the budget (else the ClickHouse answer's)
	Missing    []string            `json:"missing"`    // layouts with no speed measured: Calibrate measures them
	Calibrated []string            `json:"calibrated"` // result ids measured by this call's calibration
	Chart      ChartView           `json:"chart"`
	Front      ChartView           `json:"front"`      // load and read time against memory, the front in colour (report.PlanFrontChart)
	Candidates []planner.Candidate `json:"candidates"` // every setup, by rank (the JSON of `plan --format json`)
	Seconds    float64             `json:"seconds"`    // time to answer, calibration included
}

// planControlOfField is the Plan tab's control of each field of
// planner.PlanRequest (its JSON name) that the planner's errors name.
var planControlOfField = map[string]string{
	"rows":               "plan_rows",
	"key":                "plan_key",
	"value":              "plan_value",
	"memory_bytes":       "plan_memory",
	"threads":            "plan_threads",
	"prefer":             "plan_prefer",
	"runtime":            "plan_runtime",
	"calibrate":          "plan_calibrate",
	"calibration_rows":   "plan_calibrate_rows",
	"clickhouse_version": "plan_clickhouse_version",
	"attributes":         "plan_attributes",
	"max_key":            "plan_max_key",
	"growth_percent":     "plan_growth",
	"for":                "plan_for",
	"from":               "plan_from",
	"key_column":         "plan_key_column",
	"columns":            "plan_columns",
	"settle_seconds":     "plan",
}

// planError is ErrorOf for the Plan tab: a field error names the tab's
// field, anything else goes to "plan".
func planError(err error) error {
	e := ErrorOf(err, "plan")
	var fe *fault.FieldError
	if errors.As(err, &fe) {
		if field, ok := planControlOfField[fault.Base(fe.Field)]; ok {
			e.Field = field
		}
	}
	return e
}

// from reports whether the form asks for a plan over a table of a server.
func (f PlanForm) from() bool { return strings.TrimSpace(f.From) != "" }

// parse reads the form into a request; an error names its field.
func (f PlanForm) parse() (planner.PlanRequest, error) {
	bad := planError
	r := planner.PlanRequest{Key: strings.TrimSpace(f.Key), Value: strings.TrimSpace(f.Value), Prefer: strings.TrimSpace(f.Prefer),
		FirstLoadOnly: f.FirstLoadOnly, Runtime: strings.TrimSpace(f.Runtime), Preallocate: f.Preallocate,
		ClickHouseVersion: strings.TrimSpace(f.ClickHouseVersion)}
	if len(f.Attributes) > 1 {
		r.Value, r.Attributes = "", f.Attributes
	}
	from := f.from()
	if !from || strings.TrimSpace(f.Rows) != "" {
		rows, err := config.ParseRows(f.Rows)
		if err != nil {
			return r, bad(err)
		}
		r.Rows = rows
	}
	var err error
	if strings.TrimSpace(f.Memory) != "" {
		if r.MemoryBytes, err = planner.ParseMemory(f.Memory); err != nil {
			return r, bad(err)
		}
	}
	if t := strings.TrimSpace(f.Threads); t != "" {
		if r.Threads, err = parseInt("plan_threads", t, 1, config.MaxThreads); err != nil {
			return r, err
		}
	}
	if t := strings.TrimSpace(f.CalibrationRows); t != "" {
		if !f.Calibrate {
			return r, errorf("plan_calibrate_rows", "%s: applies when missing speeds are measured first (allowed: empty, or tick “measure missing speeds first”)", t)
		}
		if r.CalibrationRows, err = planner.ParseCalibrationRows(t); err != nil {
			return r, bad(err)
		}
	}
	if t := strings.TrimSpace(f.Growth); t != "" {
		g, err := planner.ParseGrowth(t)
		if err != nil {
			return r, bad(err)
		}
		r.GrowthPercent = &g
	}
	r.For = strings.TrimSpace(f.For)
	if t := strings.TrimSpace(f.MaxKey); t != "" {
		if r.MaxKey, err = planner.ParseMaxKey(t); err != nil {
			return r, bad(err)
		}
	}
	check := r
	if from {
		check.Rows = 1 // the table's, once read (PlanFromTable); the rest is checked first
	}
	if err := check.Validate(); err != nil {
		return r, bad(err)
	}
	return r, nil
}

// PlanCalibrationID is the id the Plan tab's calibration goes by while it
// measures: its EventProgress events carry it (the bar and the ETA of each
// load, and the idle before it), Cancel(PlanCalibrationID) stops it, and a
// run cannot start beside it (nor it beside a run).
const PlanCalibrationID = "plan-calibration"

// PlanVerificationID is the id the Plan tab's build of its ClickHouse
// answer in ClickHouse goes by while it loads (VerifyPlan, not in the
// browser): its progress, Cancel, and no run beside it.
const PlanVerificationID = "plan-verification"

// Plan answers the Plan tab's form: every layout, load factor and shard
// count for the rows asked, ranked under the budget, from core.Predict and
// the speeds saved here. With Calibrate it first measures, and saves, what
// is missing (as `packlab plan` does), in this process in the browser,
// reporting as a run does under PlanCalibrationID. Errors name the form
// field; a cancelled calibration is an error of "plan" that says what was
// kept.
func (l *Lab) Plan(f PlanForm) (PlanView, error) {
	start := time.Now()
	req, err := f.parse()
	if err != nil {
		return PlanView{}, err
	}
	if f.from() {
		return PlanView{}, errorf("plan_from", "a plan for a table of a server is made by PlanFromTable (the desktop app; packlab plan --from)")
	}
	return l.planView(start, func(ask usecase.PlanAsk) (usecase.PlanAnswer, error) {
		ask.Request = req
		return usecase.Plan(context.Background(), ask)
	}, f.Calibrate)
}

// planView runs ask (usecase.Plan, or PlanFromTable's) with the Plan tab's
// calibration, when asked, as a job of its own, and is its answer as the
// tab shows it.
func (l *Lab) planView(start time.Time, ask func(usecase.PlanAsk) (usecase.PlanAnswer, error), calibrate bool) (PlanView, error) {
	calibration := usecase.CalibrateNone
	if calibrate {
		calibration = usecase.CalibrateMissing
	}
	var stopped *atomic.Bool // the calibration's, once it starts
	a, err := ask(usecase.PlanAsk{Calibration: calibration, Store: l.store, InProcess: l.opt.InProcess,
		Calibrating: func(cfgs []config.Config) (context.Context, usecase.Hooks, func(), error) {
			ctx, h, j, release, err := l.startCalibration(cfgs)
			if j != nil {
				stopped = &j.stopped
			}
			return ctx, h, release, err
		}})
	var calibrated []string
	for _, r := range a.Calibrated.Results {
		calibrated = append(calibrated, r.ID)
	}
	var ce *usecase.CalibrationError
	switch {
	case errors.As(err, &ce) && (stopped != nil && stopped.Load() || usecase.Cancelled(err)):
		kept := "nothing was measured"
		if n := len(a.Calibrated.Results); n > 0 {
			kept = text.Count(n, "run", "runs") + " measured before the cancel (kept in history, and used by the next plan)"
		}
		return PlanView{}, errorf("plan", "Calibration cancelled; %s", kept)
	case errors.As(err, &ce):
		return PlanView{}, ErrorOf(ce.Err, "plan")
	case err != nil:
		return PlanView{}, planError(err)
	}
	plan, history := a.Plan, a.History
	v := PlanView{PlanDetails: formPlan(plan.Details()), Candidates: plan.Candidates, Calibrated: calibrated}
	if b := plan.Best(); b != nil {
		v.Fits = b.Fits
	}
	for _, m := range plan.Measures {
		if m.LoadRowsPerSecond == 0 {
			v.Missing = append(v.Missing, m.Layout)
		}
	}
	c, err := report.PlanChart(plan, history)
	if err != nil {
		v.Chart = ChartView{Kind: report.PlanChartKind, Empty: true, Note: err.Error()}
	} else {
		v.Chart = ChartView{Kind: c.Kind, Title: c.Title, Option: c.Option}
	}
	if c, err := report.PlanFrontChart(plan); err != nil {
		v.Front = ChartView{Kind: report.PlanFrontChartKind, Empty: true, Note: "no setup has its load and read speeds measured for this plan yet: runs of these key and value types where the table will run give them (the native app’s “measure missing speeds first” measures them)"}
	} else {
		v.Front = ChartView{Kind: c.Kind, Title: c.Title, Option: c.Option}
	}
	v.Seconds = time.Since(start).Seconds()
	return v, nil
}

// startCalibration registers the Plan tab's calibration as a job of its
// own, under PlanCalibrationID (startPlanJob), each load's progress saying
// about how long the calibration has left.
func (l *Lab) startCalibration(cfgs []config.Config) (ctx context.Context, h usecase.Hooks, j *job, release func(), err error) {
	left := usecase.CalibrationLeft(cfgs) // its time from the start: the first idle's line says it before a load
	return l.startPlanJob(PlanCalibrationID, planner.CalibrationJobName(cfgs), func(p worker.Progress) string {
		return "; the calibration has about " + usecase.RoughDuration(left(p)) + " left"
	})
}

// startPlanJob registers a job of the Plan tab (its calibration, its
// verification) under id, unless a run is going: its progress goes out as
// EventProgress (more, if set, added to each phase's words) and Cancel(id)
// stops it. release ends it.
func (l *Lab) startPlanJob(id, name string, more func(worker.Progress) string) (ctx context.Context, h usecase.Hooks, j *job, release func(), err error) {
	face := result.FaceDesktop
	if l.opt.Runtime == "browser" {
		face = result.FaceBrowser
	}
	ctx, cancel := context.WithCancel(context.Background())
	j = &job{id: id, cancel: cancel, job: result.NewJob(name, face, time.Now())}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.busy("plan"); err != nil {
		cancel()
		return nil, h, nil, nil, err
	}
	l.jobs[j.id] = j
	release = func() {
		cancel()
		l.mu.Lock()
		delete(l.jobs, j.id)
		l.mu.Unlock()
	}
	h = usecase.Hooks{Job: &j.job, Progress: func(p worker.Progress) {
		pr := progressOf(j.id, p)
		if more != nil {
			pr.PhaseText += more(p)
		}
		l.emit(EventProgress, pr)
	}}
	return ctx, h, j, release, nil
}
