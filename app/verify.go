//go:build !js

package app

import (
	"context"
	"errors"
	"time"

	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
)

// VerifyView is the plan's ClickHouse answer built in ClickHouse itself
// (chDB), beside the plan's model of it: the lines `packlab plan --verify`
// prints.
type VerifyView struct {
	Title    string   `json:"title"`     // what was built, and at how many rows
	Lines    []string `json:"lines"`     // ClickHouse's figures beside the plan's
	ResultID string   `json:"result_id"` // the run, kept in the history
	Seconds  float64  `json:"seconds"`
}

// VerifyPlan builds the ClickHouse answer of the plan the form asks for
// (from the speeds saved here, no calibration) in ClickHouse itself, every
// attribute of it, at the plan's rows or usecase.MaxVerifyRows if fewer,
// and says what ClickHouse holds beside the plan's model
// (usecase.VerifyPlan). It reports as a run does under PlanVerificationID;
// Cancel(PlanVerificationID) stops it. Errors name the form's field, or
// "plan".
func (l *Lab) VerifyPlan(f PlanForm) (VerifyView, error) {
	start := time.Now()
	req, err := f.parse()
	if err != nil {
		return VerifyView{}, err
	}
	a, err := usecase.Plan(context.Background(), usecase.PlanAsk{Request: req, Calibration: usecase.CalibrateNone, Store: l.store})
	if err != nil {
		return VerifyView{}, planError(err)
	}
	ctx, h, _, release, err := l.startPlanJob(PlanVerificationID, "plan verification", nil)
	if err != nil {
		return VerifyView{}, err
	}
	defer release()
	h.Store = l.store
	var building usecase.Verifying
	v, err := usecase.VerifyPlan(ctx, usecase.VerifyAsk{Plan: a.Plan, Hooks: h, Starting: func(b usecase.Verifying) {
		building, h.Job.Name = b, usecase.VerifyJobName(b) // before the run is kept
	}})
	switch {
	case errors.Is(err, usecase.ErrNothingToVerify):
		return VerifyView{}, errorf("plan", "Nothing to build: no setup of this plan is one ClickHouse builds")
	case usecase.Cancelled(err):
		return VerifyView{}, errorf("plan", "Build in ClickHouse cancelled")
	case err != nil:
		return VerifyView{}, ErrorOf(err, "plan")
	}
	out := VerifyView{Title: building.Clause + " at " + text.Rows(building.Rows) + " rows, built in ClickHouse",
		Lines: formLines(v.Lines), Seconds: time.Since(start).Seconds()}
	if v.Result != nil {
		out.ResultID = v.Result.ID
	}
	return out, nil
}
