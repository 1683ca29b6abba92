package usecase

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
)

func openStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// marks are the job marks in the store's folder.
func marks(t *testing.T, s *store.Store) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(s.Dir, ".packlab-job-*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunKeepsEachResult: every result is saved before the face hears of
// it, under the face's job, while the folder is marked as saved into; the
// notes are the engine's; the bad rows skipped come from the results.
func TestRunKeepsEachResult(t *testing.T) {
	s := openStore(t)
	job := result.NewJob("usecase test", result.FaceCLI, time.Now())
	var heard []string
	cfg := config.Config{Layouts: []string{"packed", "hashed"}, Rows: 20_000, InProcess: true}
	m, err := Run(context.Background(), cfg, Hooks{Store: s, Job: &job, Measured: func(r result.Result) error {
		if _, err := s.Load(r.ID); err != nil {
			t.Errorf("%s heard of before it was saved: %v", r.ID, err)
		}
		if len(marks(t, s)) != 1 {
			t.Errorf("while %s runs, the folder's job marks are %v, want this job's", r.Layout, marks(t, s))
		}
		heard = append(heard, r.ID)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Results) != 2 || !slices.Equal(m.Saved, heard) || len(heard) != 2 {
		t.Fatalf("%d results, saved %v, heard %v", len(m.Results), m.Saved, heard)
	}
	for _, r := range m.Results {
		if r.Job.ID != job.ID {
			t.Errorf("%s saved under job %q, want the face's %q", r.Layout, r.Job.ID, job.ID)
		}
	}
	if !slices.Equal(m.Notes, experiments.ResultNotes(m.Results)) || m.Skipped != -1 || m.Seconds <= 0 {
		t.Errorf("notes %q, skipped %d, seconds %v", m.Notes, m.Skipped, m.Seconds)
	}
	if left := marks(t, s); len(left) != 0 {
		t.Errorf("the job's mark is left after it: %v", left)
	}

	// A file with a bad row, skipped on request: the count comes back.
	src := filepath.Join(t.TempDir(), "dict.tsv")
	if err := os.WriteFile(src, []byte("1\t10\n2\t20\nnot a key\t5\n3\t30\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = Run(context.Background(), config.Config{Layouts: []string{"packed"}, Source: src, SkipBadRows: true, InProcess: true}, Hooks{})
	if err != nil || m.Skipped != 1 || len(m.Saved) != 0 {
		t.Errorf("a file with one bad row skipped: skipped %d, saved %v, %v", m.Skipped, m.Saved, err)
	}
}

// TestRunSaveFails: a result that cannot be saved stops the job with an
// error naming the layout, and the face never hears of it.
// TestRunStartsItsJob: with no job given, a run keeps its results under a
// job of its own, named after the run, from the face the hooks name, and
// says which (Measured.Job).
func TestRunStartsItsJob(t *testing.T) {
	s := openStore(t)
	cfg := config.Config{Layouts: []string{"packed"}, Rows: 10_000, InProcess: true}
	m, err := Run(context.Background(), cfg, Hooks{Store: s, Face: result.FaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	if m.Job.ID == "" || m.Job.Name != config.RunJobName(cfg) || m.Job.Face != result.FaceCLI {
		t.Fatalf("job %+v; want a new one named %q from %s", m.Job, config.RunJobName(cfg), result.FaceCLI)
	}
	if r, err := s.Load(m.Saved[0]); err != nil || r.Job.ID != m.Job.ID {
		t.Errorf("saved under job %+v (%v); want %s", r.Job, err, m.Job.ID)
	}
}

func TestRunSaveFails(t *testing.T) {
	s := openStore(t)
	if err := os.RemoveAll(s.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.Dir, nil, 0o644); err != nil { // a file where the folder was
		t.Fatal(err)
	}
	m, err := Run(context.Background(), config.Config{Layouts: []string{"packed", "hashed"}, Rows: 10_000, InProcess: true},
		Hooks{Store: s, Measured: func(r result.Result) error {
			t.Errorf("heard of %s, which was not saved", r.ID)
			return nil
		}})
	if err == nil || !strings.Contains(err.Error(), "saving the result of packed") || len(m.Saved) != 0 {
		t.Errorf("saved %v, error %v; want the save's error naming packed", m.Saved, err)
	}
}

// TestPlanFromHistory: with no calibration the plan reads the saved
// results and measures nothing; the calibration's refusal by the face stops
// the plan before a load; a cancelled calibration is a CalibrationError
// that says so.
func TestPlanFromHistory(t *testing.T) {
	s := openStore(t)
	if _, err := Run(context.Background(), config.Config{Layouts: []string{"packed"}, Rows: 20_000, InProcess: true}, Hooks{Store: s}); err != nil {
		t.Fatal(err)
	}
	req := planner.PlanRequest{Rows: 1e6, MemoryBytes: 1 << 34}
	a, err := Plan(context.Background(), PlanAsk{Request: req, Store: s})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.History) != 1 || len(a.Calibrated.Results) != 0 || a.Plan.Best() == nil {
		t.Fatalf("history %d, calibrated %d, best %v", len(a.History), len(a.Calibrated.Results), a.Plan.Best())
	}

	busy := errors.New("a run is going")
	asked := 0
	_, err = Plan(context.Background(), PlanAsk{Request: req, Store: s, Calibration: CalibrateMissing, InProcess: true,
		Calibrating: func(cfgs []config.Config) (context.Context, Hooks, func(), error) {
			asked = len(cfgs)
			for _, c := range cfgs {
				if !c.InProcess {
					t.Errorf("a calibration run not in process: %+v", c)
				}
			}
			return nil, Hooks{}, nil, busy
		}})
	if !errors.Is(err, busy) || asked == 0 {
		t.Errorf("the face refused the calibration of %d configs: %v", asked, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	released := false
	a, err = Plan(context.Background(), PlanAsk{Request: req, Store: s, Calibration: CalibrateAgain, InProcess: true,
		Calibrating: func(cfgs []config.Config) (context.Context, Hooks, func(), error) {
			cancel()
			return ctx, Hooks{}, func() { released = true }, nil
		}})
	var ce *CalibrationError
	if !errors.As(err, &ce) || !Cancelled(err) || !released || !strings.HasPrefix(err.Error(), "calibrating: ") {
		t.Errorf("a cancelled calibration: %v (released %v)", err, released)
	}
	if h, _, _ := s.List(); len(h) != 1+len(a.Calibrated.Saved) {
		t.Errorf("%d results kept, want the first run's and the %d the calibration saved", len(h), len(a.Calibrated.Saved))
	}
}
