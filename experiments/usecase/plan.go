package usecase

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/planner/speed"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/worker"
)

// Calibration is what a plan measures before it answers.
type Calibration int

const (
	CalibrateNone    Calibration = iota // saved results only: a layout with none has no times
	CalibrateMissing                    // the speeds no saved result gives (planner.CalibrationConfigs)
	CalibrateAgain                      // every layout's, saved or not
)

// PlanAsk is a plan as a face asks for it.
type PlanAsk struct {
	Request     planner.PlanRequest
	Calibration Calibration
	// Store gives the saved speeds, and keeps the calibration's results
	// unless NoSave.
	Store  *store.Store
	NoSave bool
	// InProcess measures the calibration in this process (the browser has
	// no worker processes).
	InProcess bool
	// Calibrating, if set, is told of the calibration's runs before they
	// start. It returns the context they run under, the hooks the face
	// follows them by (Store is set here) and a release called when they
	// end; an error (another job is going) stops the plan.
	Calibrating func(cfgs []config.Config) (context.Context, Hooks, func(), error)
}

// PlanAnswer is the plan, and what it was made from.
type PlanAnswer struct {
	Plan planner.Plan
	// History is the results the plan read: the saved ones and the
	// calibration's.
	History    []result.Result
	Problems   []error  // saved files that could not be read, skipped
	Calibrated Measured // the calibration's runs; none when nothing was missing
}

// CalibrationError is a calibration that failed or was cancelled: what it
// measured before is kept (PlanAnswer.Calibrated) and used by the next plan.
type CalibrationError struct{ Err error }

func (e *CalibrationError) Error() string { return "calibrating: " + e.Err.Error() }
func (e *CalibrationError) Unwrap() error { return e.Err }

// Plan answers ask: its request parsed once, the saved results, then (with
// a calibration) the missing speeds measured and kept, then the plan on
// this machine as it is after them.
func Plan(ctx context.Context, ask PlanAsk) (PlanAnswer, error) {
	var a PlanAnswer
	req, err := ask.Request.Parse()
	if err != nil {
		return a, err
	}
	history, problems, err := ask.Store.ListContext(ctx)
	if err != nil {
		return a, err
	}
	a.Problems = problems
	machine := thisMachine(ctx)
	if ask.Calibration != CalibrateNone {
		known := history
		if ask.Calibration == CalibrateAgain {
			known = nil
		}
		cfgs, err := req.CalibrationConfigs(known, machine.Cores)
		if err != nil {
			return a, err
		}
		if len(cfgs) > 0 {
			for i := range cfgs {
				cfgs[i].InProcess = ask.InProcess
			}
			cctx, h, release := ctx, Hooks{}, func() {}
			if ask.Calibrating != nil {
				if cctx, h, release, err = ask.Calibrating(cfgs); err != nil {
					return a, err
				}
			}
			if !ask.NoSave {
				h.Store = ask.Store
			}
			if h.Job == nil {
				j := result.NewJob(planner.CalibrationJobName(cfgs), h.Face, time.Now())
				h.Job = &j
			}
			a.Calibrated, err = measure(config.Config{}, h, func(ro experiments.RunOptions) ([]result.Result, error) {
				return experiments.RunConfigs(cctx, cfgs, ro) // each load after the configs' settle (planner.CalibrationConfigs)
			})
			release()
			history = append(history, a.Calibrated.Results...)
			if err != nil {
				return a, &CalibrationError{Err: err}
			}
			machine = thisMachine(ctx) // the memory the calibration's loads gave back
		}
	}
	a.History = history
	a.Plan, err = req.Plan(history, machine)
	return a, err
}

// CalibrationLeft is how long a calibration of cfgs has left at a load's
// progress, by each load's time on the lab machine
// (speed.CalibrationLoadSeconds): the loads after it, and what of its own
// remains. Loads run in cfgs' order, each layout Repeats times.
func CalibrationLeft(cfgs []config.Config) func(worker.Progress) time.Duration {
	var loads, settles []float64 // seconds a load, its idle included; its idle
	for _, c := range cfgs {
		for _, l := range c.Layouts {
			for range max(c.Repeats, 1) {
				loads = append(loads, c.SettleSeconds+speed.CalibrationLoadSeconds(l, c.Rows))
				settles = append(settles, c.SettleSeconds)
			}
		}
	}
	return func(p worker.Progress) time.Duration {
		n := min(max(p.Repeat, 1), len(loads)) // 1-based: the load running
		spent := p.Seconds
		if p.Phase != worker.PhaseSettle {
			spent += settles[n-1]
		}
		left := max(loads[n-1]-spent, 0)
		for _, s := range loads[n:] {
			left += s
		}
		return time.Duration(left * float64(time.Second))
	}
}

// RoughDuration is d as a person says it: "40 s", "6 min".
func RoughDuration(d time.Duration) string {
	if d < 2*time.Minute {
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	}
	return fmt.Sprintf("%d min", int(d.Round(time.Minute).Minutes()))
}

// thisMachine asks the memory guard what this machine has now.
func thisMachine(ctx context.Context) planner.PlanMachine {
	m := planner.PlanMachine{AvailableBytes: -1, Cores: runtime.NumCPU()}
	c, err := experiments.Check(ctx, config.Config{Layouts: []string{string(core.Layouts()[0])}, Rows: 1, InProcess: true})
	if err == nil {
		m.AvailableBytes, m.TotalBytes = c.AvailableBytes, c.TotalBytes
	}
	return m
}
