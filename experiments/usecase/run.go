// Package usecase is what a user does with the lab, one entry point each,
// below every face: measure a job of runs and keep its results (Run,
// Sweep), plan with the calibration that measures what the plan lacks
// (Plan), build the plan's ClickHouse answer in chDB or on a server
// (VerifyPlan), and inspect a server (Inspect). The command line, the
// window and the page only parse, bind and print: a sequence written here
// is written once.
package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/sweep"
	"github.com/packlab/packlab/experiments/worker"
)

// Hooks are a face's part in a job of runs: where results are kept, the
// job they are saved under, and what the face hears while it runs.
type Hooks struct {
	// Store keeps every result as soon as it is measured, so that a later
	// failure or a cancel loses nothing; nil keeps nothing.
	Store *store.Store
	// Job is the job the results are saved under; nil starts one named after
	// the run, the sweep or the calibration, from Face (Measured.Job says
	// which). A face that shows the job before it runs makes it (NewRunJob).
	Job *result.Job
	// Face is the face a job started here is from (result.FaceCLI, ...).
	Face string
	// Progress receives every load's progress (experiments.RunOptions).
	Progress func(worker.Progress)
	// Notice receives the engine's one-line notes before the first run.
	Notice func(string)
	// Measured is told of each result once it is kept; an error from it
	// stops the job.
	Measured func(result.Result) error
}

// Measured is what a job of runs measured, cancelled or failed included.
type Measured struct {
	Job     result.Job // the job the results are kept under (Hooks.Job)
	Results []result.Result
	Saved   []string // the ids kept in Hooks.Store, in the order measured
	Notes   []string // the lines for under a table of these results (experiments.ResultNotes)
	// Skipped is the bad rows of a file source skipped on request
	// (Config.SkipBadRows); -1 when no result says.
	Skipped int64
	Seconds float64
}

// Run measures cfg's layouts as one job (experiments.RunConfigs, under
// the job h names or one named after the run) and keeps each result as it
// comes. It returns what was measured even on an error; a
// cancel's error wraps fault.ErrCancelled.
func Run(ctx context.Context, cfg config.Config, h Hooks) (Measured, error) {
	if h.Job == nil {
		j := NewRunJob(cfg, h.Face)
		h.Job = &j
	}
	return measure(cfg, h, func(ro experiments.RunOptions) ([]result.Result, error) {
		return experiments.RunConfigs(ctx, []config.Config{cfg}, ro)
	})
}

// NewRunJob is the job a run of cfg from face is kept under, named after
// the run (config.RunJobName).
func NewRunJob(cfg config.Config, face string) result.Job {
	return result.NewJob(config.RunJobName(cfg), face, time.Now())
}

// Sweep measures sw over base (Sweep.Run) as one job and keeps each
// result as it comes.
func Sweep(ctx context.Context, sw sweep.Sweep, base config.Config, opt sweep.Options, h Hooks) (Measured, error) {
	if h.Job == nil {
		j := result.NewJob(config.SweepJobName(sw.Name, base), h.Face, time.Now())
		h.Job = &j
	}
	return measure(base, h, func(ro experiments.RunOptions) ([]result.Result, error) {
		return sw.Run(ctx, base, opt, ro)
	})
}

// measure runs do with h's hooks: the store is marked as saved into for
// the job's length (a history clear waits), each result is saved before
// the face hears of it.
func measure(cfg config.Config, h Hooks, do func(experiments.RunOptions) ([]result.Result, error)) (Measured, error) {
	start := time.Now()
	m := Measured{Skipped: -1}
	if h.Store != nil {
		defer h.Store.MarkJob()()
	}
	ro := experiments.RunOptions{Job: h.Job, Progress: h.Progress, Notice: h.Notice, OnResult: func(r result.Result) error {
		if h.Store != nil {
			if err := h.Store.Save(r); err != nil {
				return fmt.Errorf("saving the result of %s: %w", r.Layout, err)
			}
			m.Saved = append(m.Saved, r.ID)
		}
		if h.Measured != nil {
			return h.Measured(r)
		}
		return nil
	}}
	var err error
	m.Results, err = do(ro)
	m.Notes = experiments.ResultNotes(m.Results)
	if cfg.SkipBadRows && len(m.Results) > 0 {
		m.Skipped = m.Results[0].SkippedRows // every layout reads the same file: the first result speaks for all
	}
	m.Seconds = time.Since(start).Seconds()
	m.Job = *h.Job
	return m, err
}

// Cancelled reports whether err is a job's cancel (its context's or the
// engine's).
func Cancelled(err error) bool {
	return errors.Is(err, fault.ErrCancelled) || errors.Is(err, context.Canceled)
}
