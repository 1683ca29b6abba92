package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
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
	Calibrate   bool `json:"calibrate"` // measure the speeds that are missing first (about half a minute: each load after 2.5 s idle)
	// CalibrationRows is the size the calibration measures at ("" = 2M,
	// planner.CalibrationRows); only with Calibrate.
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

// parse reads the form into a request; an error names its field.
func (f PlanForm) parse() (planner.PlanRequest, error) {
	bad := planError
	r := planner.PlanRequest{Key: strings.TrimSpace(f.Key), Value: strings.TrimSpace(f.Value), Prefer: strings.TrimSpace(f.Prefer),
		FirstLoadOnly: f.FirstLoadOnly, Runtime: strings.TrimSpace(f.Runtime), Preallocate: f.Preallocate,
		ClickHouseVersion: strings.TrimSpace(f.ClickHouseVersion)}
	if len(f.Attributes) > 1 {
		r.Value, r.Attributes = "", f.Attributes
	}
	rows, err := experiments.ParseRows(f.Rows)
	if err != nil {
		return r, bad(err)
	}
	r.Rows = rows
	if strings.TrimSpace(f.Memory) != "" {
		if r.MemoryBytes, err = planner.ParseMemory(f.Memory); err != nil {
			return r, bad(err)
		}
	}
	if t := strings.TrimSpace(f.Threads); t != "" {
		if r.Threads, err = parseInt("plan_threads", t, 1, experiments.MaxThreads); err != nil {
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
	if err := r.Validate(); err != nil {
		return r, bad(err)
	}
	return r, nil
}

// PlanCalibrationID is the id the Plan tab's calibration goes by while it
// measures: its EventProgress events carry it (the bar and the ETA of each
// load, and the idle before it), Cancel(PlanCalibrationID) stops it, and a
// run cannot start beside it (nor it beside a run).
const PlanCalibrationID = "plan-calibration"

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
	ctx := context.Background()
	history, _, err := l.store.ListContext(ctx)
	if err != nil {
		return PlanView{}, ErrorOf(err, "plan")
	}
	machine := planner.ThisMachine(ctx)
	var calibrated []string
	if f.Calibrate {
		cfgs, err := planner.CalibrationConfigs(req, history, machine.Cores)
		if err != nil {
			return PlanView{}, planError(err)
		}
		for i := range cfgs {
			cfgs[i].InProcess = l.opt.InProcess
		}
		if len(cfgs) > 0 {
			res, err := l.calibrate(cfgs, func(r result.Result) error {
				calibrated = append(calibrated, r.ID)
				return l.store.Save(r)
			})
			history = append(history, res...)
			if err != nil {
				return PlanView{}, err
			}
			machine = planner.ThisMachine(ctx)
		}
	}
	plan, err := planner.MakePlan(req, history, machine)
	if err != nil {
		return PlanView{}, planError(err)
	}
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
	v.Seconds = time.Since(start).Seconds()
	return v, nil
}

// calibrate measures cfgs for the planner as a job of its own, under
// PlanCalibrationID: progress as EventProgress, cancellable, one
// measurement at a time with the runs.
func (l *Lab) calibrate(cfgs []experiments.Config, save func(result.Result) error) ([]result.Result, error) {
	face := result.FaceDesktop
	if l.opt.Runtime == "browser" {
		face = result.FaceBrowser
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	j := &job{id: PlanCalibrationID, cancel: cancel, job: result.NewJob(planner.CalibrationJobName(cfgs), face, time.Now())}
	l.mu.Lock()
	if err := l.busy("plan"); err != nil {
		l.mu.Unlock()
		return nil, err
	}
	l.jobs[j.id] = j
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.jobs, j.id)
		l.mu.Unlock()
	}()
	res, err := planner.Calibrate(ctx, cfgs, experiments.RunOptions{Job: &j.job, OnResult: save,
		Progress: func(p experiments.Progress) { l.emit(EventProgress, progressOf(j.id, p)) }})
	switch {
	case err != nil && (j.stopped.Load() || errors.Is(err, experiments.ErrCancelled)):
		kept := "nothing was measured"
		if len(res) > 0 {
			kept = fmt.Sprintf("%d run%s measured before the cancel (kept in history, and used by the next plan)", len(res), plural(len(res)))
		}
		return res, errorf("plan", "Calibration cancelled; %s", kept)
	case err != nil:
		return res, ErrorOf(err, "plan")
	}
	return res, nil
}
