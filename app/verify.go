//go:build !js

package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/server"
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
// attribute of it, at the plan's rows or usecase.MaxVerifyRows if fewer
// (for a plan over a table of a server, f.From: on that server over that
// table, every row of it),
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
	ask := usecase.PlanAsk{Request: req, Calibration: usecase.CalibrateNone, Store: l.store}
	var plan planner.Plan
	var on *server.Settings // the table's server, for a plan over one of its tables
	if f.from() {
		s, t, err := f.fromTable()
		if err != nil {
			return VerifyView{}, err
		}
		got, err := usecase.PlanFrom(context.Background(), usecase.PlanFromAsk{Settings: s, Table: t, Plan: ask})
		if err != nil {
			return VerifyView{}, planError(err)
		}
		plan, on = got.Plan, &s
	} else {
		a, err := usecase.Plan(context.Background(), ask)
		if err != nil {
			return VerifyView{}, planError(err)
		}
		plan = a.Plan
	}
	ctx, h, _, release, err := l.startPlanJob(PlanVerificationID, "plan verification", nil)
	if err != nil {
		return VerifyView{}, err
	}
	defer release()
	h.Store = l.store
	var building usecase.Verifying
	v, err := usecase.VerifyPlan(ctx, usecase.VerifyAsk{Plan: plan, Server: on, Hooks: h, Starting: func(b usecase.Verifying) {
		building, h.Job.Name = b, usecase.VerifyJobName(b) // before the run is kept
	}})
	switch {
	case errors.Is(err, usecase.ErrServerOnly):
		return VerifyView{}, errorf("plan", "Nothing built: %s; plan From a table of your server to build it there", err)
	case errors.Is(err, usecase.ErrNothingToVerify):
		return VerifyView{}, errorf("plan", "Nothing to build: no setup of this plan is one ClickHouse builds")
	case usecase.Cancelled(err):
		return VerifyView{}, errorf("plan", "Build in ClickHouse cancelled")
	case err != nil:
		return VerifyView{}, ErrorOf(err, "plan")
	}
	where := "built in ClickHouse"
	if on != nil {
		where = "built on " + strings.TrimSpace(f.Server.URL) + " over " + strings.TrimSpace(f.From)
	}
	out := VerifyView{Title: building.Clause + " at " + text.Rows(building.Rows) + " rows, " + where,
		Lines: formLines(v.Lines), Seconds: time.Since(start).Seconds()}
	if v.Result != nil {
		out.ResultID = v.Result.ID
	}
	return out, nil
}
