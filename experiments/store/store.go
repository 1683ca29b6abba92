package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/regular"
	"github.com/packlab/packlab/experiments/result"
)

// Store keeps results as one JSON file per run, <id>.json, in one folder.
// A file is written whole or not at all: to a temporary file in the same
// folder, synced, then renamed over the final name (atomic on POSIX file
// systems), and the folder synced so the rename survives a crash. A crash
// leaves at most a temporary file, which List ignores and OpenStore removes
// once it is an hour old.
type Store struct {
	Dir string
}

const (
	resultExt  = ".json"
	tempPrefix = ".tmp-" // temporary files: hidden, and never ending in resultExt
)

// DefaultResultsDir is $XDG_DATA_HOME/packlab/results, or
// ~/.local/share/packlab/results when XDG_DATA_HOME is unset.
func DefaultResultsDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "packlab", "results"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fault.Errorf("no results folder: %w (give one with {results_dir} DIR)", err)
	}
	return filepath.Join(home, ".local", "share", "packlab", "results"), nil
}

// OpenStore makes sure dir exists and is writable, by creating it and a
// probe file in it, so an unusable folder is an error before any run.
func OpenStore(dir string) (*Store, error) {
	if dir == "" {
		d, err := DefaultResultsDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	if testing.Testing() && isUsersFolder(dir) {
		// A test program writing here would put its runs into the person's
		// own history: results a test makes go to a folder it owns.
		return nil, fault.New("results_dir", dir, "a test program may not save into the user's results folder", "a folder under "+os.TempDir()+", e.g. t.TempDir()")
	}
	bad := func(err error) error {
		return fault.New("results_dir", dir, "not a writable folder: "+source.PathErrorReason(err).Error(), "a folder packlab can create and write")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, bad(err)
	}
	f, err := os.CreateTemp(dir, tempPrefix+"probe-*")
	if err != nil {
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() && errors.Is(err, fs.ErrNotExist) {
			// /proc/self and its kin: a folder that is there, in which no
			// file can be made (the system says "no such file").
			return nil, fault.New("results_dir", dir, "a folder in which no file can be created (the system's own, as /proc is)", "a folder packlab can create and write")
		}
		return nil, bad(err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return nil, bad(err)
	}
	removeStaleTemps(dir, time.Now().Add(-staleTemp))
	removeStaleTemps(filepath.Join(dir, InspectionsFolder), time.Now().Add(-staleTemp))
	return &Store{Dir: dir}, nil
}

// isUsersFolder reports whether dir is the default results folder of the
// person running the program, not one under the temporary folder (where a
// test that sets XDG_DATA_HOME puts it).
func isUsersFolder(dir string) bool {
	def, err := DefaultResultsDir()
	if err != nil {
		return false
	}
	abs, err1 := filepath.Abs(dir)
	defAbs, err2 := filepath.Abs(def)
	if err1 != nil || err2 != nil || abs != defAbs {
		return false
	}
	rel, err := filepath.Rel(os.TempDir(), abs)
	return err != nil || strings.HasPrefix(rel, "..")
}

// staleTemp is the age past which a temporary file is a crashed save's, not
// one in progress: a save takes milliseconds.
const staleTemp = time.Hour

// removeStaleTemps deletes the temporary files of saves interrupted by a
// crash, last modified before cutoff. Failures are ignored: List skips
// temporary files anyway.
func removeStaleTemps(dir string, cutoff time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) || e.IsDir() {
			continue
		}
		if info, err := e.Info(); err == nil && info.ModTime().Before(cutoff) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// Save writes r as <r.ID>.json, atomically.
func (s *Store) Save(r result.Result) error {
	if err := checkID(r.ID); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("saving result %s: %w", r.ID, err)
	}
	// 0600, as results have always been saved.
	path := filepath.Join(s.Dir, r.ID+resultExt)
	if err := WriteFile(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("saving %s: %w", path, err)
	}
	return nil
}

// List reads every saved result, newest first. A file that cannot be read or
// parsed does not stop it: it is skipped and reported in problems, one error
// per file naming it; so is anything that is not a regular file of at most
// MaxResultBytes (files.go). Temporary files of an interrupted save are
// ignored.
func (s *Store) List() (results []result.Result, problems []error, err error) {
	return s.ListContext(context.Background())
}

// ListContext is List, stopped by ctx between files (with ErrCancelled).
func (s *Store) ListContext(ctx context.Context) (results []result.Result, problems []error, err error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("listing results in %s: %w", s.Dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, resultExt) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("%w: reading results in %s (%v)", fault.ErrCancelled, s.Dir, err)
		}
		r, err := s.read(filepath.Join(s.Dir, name))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		results = append(results, r)
	}
	slices.SortStableFunc(results, func(a, b result.Result) int { return strings.Compare(b.ID, a.ID) })
	return results, problems, nil
}

// Jobs reads every saved result and groups them into jobs, with every
// saved inspection a job of its own (Inspection set, no results), newest
// job first (see Jobs); problems are as List's and Inspections'.
func (s *Store) Jobs(ctx context.Context) (jobs []JobResults, problems []error, err error) {
	results, problems, err := s.ListContext(ctx)
	if err != nil {
		return nil, problems, err
	}
	saved, more, err := s.Inspections(ctx)
	if err != nil {
		return nil, problems, err
	}
	jobs = append(Jobs(results), inspectionJobs(saved)...)
	sortJobs(jobs)
	return jobs, append(problems, more...), nil
}

// FindJob returns the saved job with the given id (a legacy group's id too).
func (s *Store) FindJob(ctx context.Context, id string) (JobResults, error) {
	jobs, _, err := s.Jobs(ctx)
	if err != nil {
		return JobResults{}, err
	}
	for _, j := range jobs {
		if j.ID == id {
			return j, nil
		}
	}
	return JobResults{}, s.notFound("job", id)
}

// DeleteJob removes a job: every result it measured, or its inspection's
// file. It returns the ids of the results deleted; on an error, those
// deleted before it.
func (s *Store) DeleteJob(ctx context.Context, id string) ([]string, error) {
	j, err := s.FindJob(ctx, id)
	if err != nil {
		return nil, err
	}
	if j.Inspection != nil {
		if err := s.DeleteInspection(j.ID); err != nil {
			return nil, fmt.Errorf("deleting job %s: %w", id, err)
		}
		return nil, nil
	}
	var deleted []string
	for _, r := range j.Results {
		if err := s.Delete(r.ID); err != nil {
			return deleted, fmt.Errorf("deleting job %s: %w", id, err)
		}
		deleted = append(deleted, r.ID)
	}
	return deleted, nil
}

// Load reads the result with the given id.
func (s *Store) Load(id string) (result.Result, error) {
	if err := checkID(id); err != nil {
		return result.Result{}, err
	}
	r, err := s.read(filepath.Join(s.Dir, id+resultExt))
	if errors.Is(err, os.ErrNotExist) {
		return result.Result{}, s.notFound("ids", id)
	}
	return r, err
}

// Delete removes the result with the given id.
func (s *Store) Delete(id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(s.Dir, id+resultExt))
	if errors.Is(err, os.ErrNotExist) {
		return s.notFound("ids", id)
	}
	if err == nil {
		if d, derr := os.Open(s.Dir); derr == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return err
}

func (s *Store) read(path string) (result.Result, error) {
	data, err := regular.Read(path, MaxResultBytes, "a result file")
	if err != nil {
		return result.Result{}, fmt.Errorf("result %s: %w", path, err)
	}
	var r result.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return result.Result{}, fmt.Errorf("result %s: not a result file: %w", path, jsonProblem(data, err))
	}
	if err := r.Validate(); err != nil {
		return result.Result{}, fmt.Errorf("result %s: %w", path, err)
	}
	if missing := missingFields(data); len(missing) > 0 {
		return result.Result{}, fmt.Errorf("result %s: not a whole result: no %s (allowed: a result as packlab saves it, with every one of %s)",
			path, strings.Join(missing, ", "), strings.Join(requiredFields, ", "))
	}
	return r, nil
}

// requiredFields are the fields of every result packlab has saved, since
// the contract's first version: a file without one (`{}`, or only an id
// and a layout) was cut or made by hand, and shown it would read as a run
// of 0 rows at SHARDS 0.
var requiredFields = []string{"id", "started_at", "layout", "key_type", "value_type", "rows", "shards", "element_count", "bytes_allocated"}

// missingFields are the required fields data, a JSON object, does not hold
// (or holds as null; an id or a layout as "", which names nothing).
func missingFields(data []byte) []string {
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(data, &fields) // it decoded as a result: an object, or null
	var missing []string
	for _, f := range requiredFields {
		v := strings.TrimSpace(string(fields[f]))
		if v == "" || v == "null" || v == `""` && (f == "id" || f == "layout") {
			missing = append(missing, f)
		}
	}
	return missing
}

// jsonProblem is why data, a file of the folder, did not decode (err), in
// a reader's words rather than the decoder's ("cannot unmarshal array into
// Go value of type result.Result"): empty, cut short, not JSON, or a field
// of the wrong kind (the decoder's words only for JSON that is not JSON).
func jsonProblem(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(strings.TrimSpace(string(data))) == 0:
		return fmt.Errorf("empty (%d bytes)", len(data))
	case errors.As(err, &syn) && syn.Offset >= int64(len(data)): // "unexpected end of JSON input"
		return fmt.Errorf("cut short: its JSON stops at byte %d", len(data))
	case errors.As(err, &syn):
		return fmt.Errorf("not JSON at byte %d: %w", syn.Offset, err)
	case errors.As(err, &typ) && typ.Field == "":
		return fmt.Errorf("a JSON %s, not an object", typ.Value)
	case errors.As(err, &typ):
		return fmt.Errorf("field %s: a JSON %s, where %s belongs", typ.Field, typ.Value, jsonKind(typ.Type.Kind().String()))
	}
	return err
}

// jsonKind names what a Go kind holds, as a JSON file's reader knows it.
func jsonKind(kind string) string {
	switch {
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "uint"):
		return "a whole number that fits in 64 bits"
	case strings.HasPrefix(kind, "float"):
		return "a number"
	case kind == "string":
		return "a string"
	case kind == "bool":
		return "true or false"
	case kind == "slice", kind == "array":
		return "an array"
	}
	return "an object"
}

// NotFoundError is a job or a result the folder does not hold; a face
// says where its user finds the ones it holds (the command line: 'packlab
// report --list').
type NotFoundError struct {
	Job bool   // a job's id, else a result's
	Dir string // the results folder
}

func (e *NotFoundError) Error() string {
	if e.Job {
		return "no such job in " + e.Dir
	}
	return "no such result in " + e.Dir
}

// notFound is the field error of an id of field ("job" or "ids") the
// folder does not hold.
func (s *Store) notFound(field, id string) error {
	allowed := "the id of a result in the history"
	if field == "job" {
		allowed = "the id of a job in the history"
	}
	return fault.Wrap(field, id, "", &NotFoundError{Job: field == "job", Dir: s.Dir}, allowed)
}

// checkID refuses an id that could name a file outside the folder.
func checkID(id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return fault.New("ids", id, "not a result id", "ids like 20261130T205800.123Z-hashed-3f2a")
	}
	return nil
}

// isSavedResult reports whether path is a result file of a history: a
// .json file that reads as a Result (an id and a layout) or as a saved
// inspection (inspections.go). A report's
// --out never replaces one, --force or not.
func isSavedResult(path string) bool {
	if !strings.HasSuffix(path, resultExt) {
		return false
	}
	if _, err := (&Store{}).read(path); err == nil {
		return true
	}
	_, err := readInspection(path)
	return err == nil
}
