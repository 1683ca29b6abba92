//go:build !js

package usecase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/store"
)

// InspectAsk is an inspection of a user's ClickHouse as a face asks for it.
type InspectAsk struct {
	Settings server.Settings // the server; its password is used, never kept
	Options  server.Options
	// Store keeps the inspection as a job of the history
	// (Store.SaveInspection), unless NoSave or nil.
	Store  *store.Store
	NoSave bool
	Face   string // result.FaceCLI, result.FaceDesktop
	// Verify names a dictionary (database.name) whose advice is then built
	// on the server and measured there (server.VerifyAdvice), "" for none;
	// VerifyAll builds every advice that changes a layout
	// (server.VerifyEveryAdvice).
	Verify    string
	VerifyAll bool
	// VerifyStarting, if set, is told of each advice about to be built.
	VerifyStarting server.AdviceStarting
}

// Inspected is an inspection and the job it is kept as.
type Inspected struct {
	Inspection *server.Inspection
	Job        result.Job // named after what was found (Inspection.JobName), started when the inspection did
	Saved      bool       // kept in the store
	// Verified is how many advice were built on the server and measured
	// (each is on its dictionary: Dictionary.Verification), VerifyErr why
	// the one asked for was not (each dictionary's own reason is its
	// VerifyProblem).
	Verified  int
	VerifyErr error
}

// Inspect inspects the server (server.Inspect: every dictionary beside
// packlab's model, the findings, the advice), with ask.Verify builds that
// dictionary's advice there (server.VerifyAdvice), and keeps the
// inspection, its verification in it, in the history as a job of its own.
// A failed or cancelled inspection keeps nothing; a verification refused
// or failed is Inspected.VerifyErr, the inspection kept without it; one
// cancelled keeps the inspection and the advice built before the cancel,
// whose error it returns; an inspection that cannot be kept is returned
// with the save's error.
func Inspect(ctx context.Context, ask InspectAsk) (Inspected, error) {
	start := time.Now()
	ins, err := server.Inspect(ctx, ask.Settings, ask.Options)
	if err != nil {
		return Inspected{}, err
	}
	out := Inspected{Inspection: ins, Job: result.NewJob(ins.JobName(), ask.Face, start)}
	// A cancel while advice is built stops the verifications; the
	// inspection, and the advice built before it, are kept all the same.
	var stopped error
	verified := func(n int, err error, what string) {
		out.Verified = n
		switch {
		case errors.Is(err, fault.ErrCancelled) || ctx.Err() != nil:
			stopped = cmp.Or(err, ctx.Err())
		case err != nil:
			out.VerifyErr = fmt.Errorf("verifying the advice%s: %w", what, err)
		}
	}
	switch {
	case ask.Verify != "":
		n, err := server.VerifyAdvice(ctx, ask.Settings, ins, ask.Verify, ask.VerifyStarting)
		verified(n, err, " for "+ask.Verify)
	case ask.VerifyAll:
		n, err := server.VerifyEveryAdvice(ctx, ask.Settings, ins, ask.VerifyStarting)
		verified(n, err, "")
	}
	out.Job.Name = ins.JobName() // with the advice built
	if ask.Store == nil || ask.NoSave {
		return out, stopped
	}
	if err := ask.Store.SaveInspection(out.Job, ins); err != nil {
		return out, errors.Join(stopped, fmt.Errorf("keeping the inspection in the history: %w", err))
	}
	out.Saved = true
	return out, stopped
}
