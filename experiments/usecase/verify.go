//go:build !js

package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// VerifyAsk is a plan's ClickHouse answer to build and measure: in the
// lab's own ClickHouse (chDB) when Server is nil, else on that server, and
// with Cluster on every replica of it.
type VerifyAsk struct {
	Plan    planner.Plan
	Server  *server.Settings
	Cluster string
	// Hooks follow the chDB run (its progress, and the store that keeps
	// it; its job, when nil, is named VerifyJobName, from Face); a
	// server's verification keeps nothing.
	Hooks Hooks
	Face  string // result.FaceCLI, result.FaceDesktop
	// Starting, if set, is told what is about to be built, before it is.
	Starting func(Verifying)
}

// Verifying is what a verification builds: the dictionary's LAYOUT clause
// at Rows rows (the plan's, or planner.MaxVerifyRows if fewer), ClickHouse's
// layout as the lab names it (ch_sparse_hashed).
type Verifying struct {
	Clause string
	Rows   int64
	Layout string
}

// Verified is a verification's figures beside the plan's model, in lines,
// and what they came from.
type Verified struct {
	Verifying
	Lines         []string               // planner.VerifyLines or each Verification's Lines
	Result        *result.Result         // the chDB run
	Verifications []*server.Verification // one a node, on a server
}

// VerifyJobName is the name a chDB verification's job is kept under.
func VerifyJobName(v Verifying) string {
	return "plan verification " + v.Layout + " " + text.Rows(v.Rows)
}

// ErrNothingToVerify is a plan with no setup ClickHouse builds.
var ErrNothingToVerify = errors.New("no setup of this plan is one ClickHouse builds")

// VerifyPlan builds the plan's best ClickHouse dictionary, every attribute
// of it, where ask says, and says what it holds beside the plan's model.
func VerifyPlan(ctx context.Context, ask VerifyAsk) (Verified, error) {
	cfg, c, ok := planner.VerifyConfig(ask.Plan)
	if !ok {
		return Verified{}, fmt.Errorf("%w (%s/%s)", ErrNothingToVerify, ask.Plan.Request.Key, ask.Plan.Request.Value)
	}
	d, ok := dict.FindClickHouseDictionary(cfg.Layouts[0])
	if !ok {
		return Verified{}, fmt.Errorf("%s is not a ClickHouse layout", cfg.Layouts[0])
	}
	v := Verified{Verifying: Verifying{Clause: c.ClickHouseLayout, Rows: cfg.Rows, Layout: cfg.Layouts[0]}}
	if ask.Starting != nil {
		ask.Starting(v.Verifying)
	}
	if ask.Server == nil {
		h := ask.Hooks
		if h.Job == nil {
			j := result.NewJob(VerifyJobName(v.Verifying), ask.Face, time.Now())
			h.Job = &j
		}
		m, err := Run(ctx, cfg, h)
		if err != nil {
			return v, err
		}
		v.Result = &m.Results[0]
		v.Lines = planner.VerifyLines(c, m.Results[0])
		return v, nil
	}
	attrs, err := config.ParseAttributes(ask.Plan.Request.Value, ask.Plan.Request.Attributes)
	if err != nil {
		return v, err
	}
	req := server.VerifyRequest{Layout: d.Layout, Shards: cfg.Shards, MaxLoadFactor: cfg.MaxLoadFactor, Attributes: attrs, Rows: cfg.Rows}
	if ask.Cluster != "" {
		v.Verifications, err = server.VerifyCluster(ctx, *ask.Server, ask.Cluster, req)
	} else {
		var one *server.Verification
		if one, err = server.Verify(ctx, *ask.Server, req); one != nil {
			v.Verifications = append(v.Verifications, one)
		}
	}
	if err != nil {
		return v, err
	}
	for _, one := range v.Verifications {
		v.Lines = append(v.Lines, one.Lines()...)
	}
	return v, nil
}
