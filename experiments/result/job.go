package result

// Jobs: what a person asked for in one go — one `packlab run`, one `packlab
// sweep`, one Run in the desktop or browser lab — with the results it
// measured. A job is not a file of its own: every result names its job
// (Result.Job), so a job is the results that name it, saved and deleted with
// them, and a crash never leaves a job without its results or the reverse.
//
// Results saved before jobs existed name none. They still load: package store's Jobs
// groups them by time into jobs of their own (Legacy), one per burst of results
// measured back to back on one machine.

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
)

// Job names one job; every result it measured carries it.
type Job struct {
	ID        string `json:"id"`         // unique, sortable by start: 20261201T104000.123Z-3f2a
	Name      string `json:"name"`       // what was asked: "run packed,hashed 1e7", "sweep types"
	StartedAt string `json:"started_at"` // RFC 3339, UTC
	Face      string `json:"face"`       // FaceCLI, FaceDesktop, FaceBrowser, or "" (a program using the library)
}

// The faces a job is started from.
const (
	FaceCLI     = "command line"
	FaceDesktop = "desktop"
	FaceBrowser = "browser"
)

// NewID is a result's ID (Result.ID), unique and sorted by time:
// 20261130T205800.123Z-hashed-3f2a.
func NewID(layout string, t time.Time) string {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405.000Z") + "-" + layout + "-" + hex.EncodeToString(b[:])
}

// NewJob starts a job named name, from face, at t.
func NewJob(name, face string, t time.Time) Job {
	var b [2]byte
	_, _ = rand.Read(b[:])
	return Job{
		ID:        t.UTC().Format("20060102T150405.000Z") + "-" + hex.EncodeToString(b[:]),
		Name:      name,
		StartedAt: t.UTC().Format(time.RFC3339),
		Face:      face,
	}
}

// CalibrationJobPrefix starts the name of every planner's calibration job
// (CalibrationJobName): runs the planner made to measure speeds, not runs a
// person asked for.
const CalibrationJobPrefix = "plan calibration"

// Calibration says whether the job is a planner's calibration.
func (j Job) Calibration() bool { return strings.HasPrefix(j.Name, CalibrationJobPrefix) }
