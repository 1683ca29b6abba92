package store

// Saved inspections: a user's ClickHouse server inspected (packlab inspect,
// the window's "Your ClickHouse" tab) is a job of the history, as a run is,
// though it measured no result. Its file is
//
//	<results folder>/inspections/<job id>.json
//
// one JSON object {"kind": "inspection", "job": {...}, "inspection": {...}},
// written whole as results are (a temporary file beside it, synced, renamed
// over it). The subfolder keeps every reader of results safe: List, and the
// List of every packlab before this one, reads only the folder's own *.json
// files and skips folders; so a folder with inspections reads the same in an
// older packlab (which neither lists nor clears them). The file holds no
// password: server.Inspection has no field for one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/regular"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// InspectionsFolder is the subfolder of a results folder the inspections
// are kept in.
const InspectionsFolder = "inspections"

// inspectionKind is a saved inspection's "kind".
const inspectionKind = "inspection"

// SavedInspection is one saved inspection's file.
type SavedInspection struct {
	Kind       string             `json:"kind"` // "inspection"
	Job        result.Job         `json:"job"`
	Inspection *server.Inspection `json:"inspection"`
}

// inspectionPath is the file of the inspection job id.
func (s *Store) inspectionPath(id string) string {
	return filepath.Join(s.Dir, InspectionsFolder, id+resultExt)
}

// SaveInspection keeps ins as the job j, atomically.
func (s *Store) SaveInspection(j result.Job, ins *server.Inspection) error {
	if err := checkJobID(j.ID); err != nil {
		return err
	}
	if ins == nil {
		return errors.New("saving an inspection: there is none")
	}
	data, err := json.MarshalIndent(SavedInspection{Kind: inspectionKind, Job: j, Inspection: ins}, "", "  ")
	if err != nil {
		return fmt.Errorf("saving inspection %s: %w", j.ID, err)
	}
	dir := filepath.Join(s.Dir, InspectionsFolder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("saving inspection %s: %w", j.ID, err)
	}
	path := s.inspectionPath(j.ID)
	if err := WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return nil
}

// Inspections reads every saved inspection (in no order). A file that
// cannot be read or is not an inspection is skipped and named in problems,
// as List does with results.
func (s *Store) Inspections(ctx context.Context) (saved []SavedInspection, problems []error, err error) {
	dir := filepath.Join(s.Dir, InspectionsFolder)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return nil, []error{fmt.Errorf("inspections %s: is %s, not a folder of inspections", dir, regular.Kind(st.Mode()))}, nil
		}
		return nil, nil, fmt.Errorf("listing inspections in %s: %w", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, resultExt) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("%w: reading inspections in %s (%v)", fault.ErrCancelled, dir, err)
		}
		si, err := readInspection(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		saved = append(saved, si)
	}
	return saved, problems, nil
}

// readInspection reads one saved inspection, by the rules results are read
// by (a regular file of at most MaxResultBytes).
func readInspection(path string) (SavedInspection, error) {
	data, err := regular.Read(path, MaxResultBytes, "a result file")
	if err != nil {
		return SavedInspection{}, fmt.Errorf("inspection %s: %w", path, err)
	}
	var si SavedInspection
	if err := json.Unmarshal(data, &si); err != nil {
		return SavedInspection{}, fmt.Errorf("inspection %s: not an inspection file: %w", path, jsonProblem(data, err))
	}
	if si.Kind != inspectionKind || si.Inspection == nil {
		return SavedInspection{}, fmt.Errorf("inspection %s: not an inspection file: no kind %q or no inspection", path, inspectionKind)
	}
	if si.Job.ID+resultExt != filepath.Base(path) {
		return SavedInspection{}, fmt.Errorf("inspection %s: its job id %q is not its file's name", path, text.Short(si.Job.ID, text.MaxLabel))
	}
	return si, nil
}

// DeleteInspection removes the inspection job id.
func (s *Store) DeleteInspection(id string) error {
	if err := checkJobID(id); err != nil {
		return err
	}
	err := os.Remove(s.inspectionPath(id))
	if errors.Is(err, os.ErrNotExist) {
		return s.notFound("job", id)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Join(s.Dir, InspectionsFolder)); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return err
}

// checkJobID refuses a job id that could name a file outside the folder.
func checkJobID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fault.New("job", id, "not a job id", "ids like 20261201T104000.123Z-3f2a")
	}
	return nil
}

// inspectionJobs are the saved inspections as jobs.
func inspectionJobs(saved []SavedInspection) []JobResults {
	jobs := make([]JobResults, 0, len(saved))
	for _, si := range saved {
		jobs = append(jobs, JobResults{Job: si.Job, Inspection: si.Inspection})
	}
	return jobs
}
