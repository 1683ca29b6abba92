//go:build !js

package usecase

import (
	"context"
	"fmt"
	"time"

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
}

// Inspected is an inspection and the job it is kept as.
type Inspected struct {
	Inspection *server.Inspection
	Job        result.Job // named after what was found (Inspection.JobName), started when the inspection did
	Saved      bool       // kept in the store
}

// Inspect inspects the server (server.Inspect: every dictionary beside
// packlab's model, the findings, the advice) and keeps the inspection in
// the history as a job of its own. A failed inspection keeps nothing; an
// inspection that cannot be kept is returned with the save's error.
func Inspect(ctx context.Context, ask InspectAsk) (Inspected, error) {
	start := time.Now()
	ins, err := server.Inspect(ctx, ask.Settings, ask.Options)
	if err != nil {
		return Inspected{}, err
	}
	out := Inspected{Inspection: ins, Job: result.NewJob(ins.JobName(), ask.Face, start)}
	if ask.Store == nil || ask.NoSave {
		return out, nil
	}
	if err := ask.Store.SaveInspection(out.Job, ins); err != nil {
		return out, fmt.Errorf("keeping the inspection in the history: %w", err)
	}
	out.Saved = true
	return out, nil
}
