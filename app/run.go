package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
	"github.com/packlab/packlab/experiments/worker"
)

// Events a run sends through Options.Emit, in this order: any number of
// EventProgress, one EventResult per layout measured, at most one
// EventError, then always one EventDone.
const (
	EventProgress = "run:progress" // Progress
	EventResult   = "run:result"   // RunResult
	EventError    = "run:error"    // RunError
	EventDone     = "run:done"     // RunDone
)

// Started is StartRun's answer.
type Started struct {
	ID        string   `json:"id"`
	JobID     string   `json:"job_id"`   // the job its results will name
	JobName   string   `json:"job_name"` // "run hashed,packed 1e5"
	Title     string   `json:"title"`    // "5 layouts · UInt64 → UInt16 · 1M rows · 1 shard"
	Layouts   []string `json:"layouts"`
	TotalRows int64    `json:"total_rows"` // 0 for a file source until it is read
}

// Progress is one progress event: the figures and their text, so the page
// only shows them.
type Progress struct {
	ID            string  `json:"id"`
	Layout        string  `json:"layout"`
	Repeat        int     `json:"repeat"`  // 1-based measured load (a run's repeat) of the job
	Repeats       int     `json:"repeats"` // measured loads in the job (layouts x repeats)
	Phase         string  `json:"phase"`
	Rows          int64   `json:"rows"`
	TotalRows     int64   `json:"total_rows"`
	RowsPerSecond float64 `json:"rows_per_second"`
	ETASeconds    float64 `json:"eta_seconds"` // -1 when unknown
	RSSBytes      int64   `json:"rss_bytes"`   // the worker's resident memory above its baseline
	Percent       float64 `json:"percent"`     // of the job (its loads done and this one's rows), 0 to 100; an idle's own time

	RowsText   string `json:"rows_text"`
	RateText   string `json:"rate_text"`
	ETAText    string `json:"eta_text"`
	RSSText    string `json:"rss_text"`
	LayoutText string `json:"layout_text"`
	PhaseText  string `json:"phase_text"`
}

// RunResult says that one layout's result is measured and saved.
type RunResult struct {
	ID       string `json:"id"`        // the run
	ResultID string `json:"result_id"` // the saved result, for Table, Chart, Export
	Layout   string `json:"layout"`
}

// RunError is a run's failure, named like every API error.
type RunError struct {
	ID      string `json:"id"`
	Field   string `json:"field"`
	Message string `json:"message"`
}

// RunDone ends every run.
type RunDone struct {
	ID        string   `json:"id"`
	ResultIDs []string `json:"result_ids"` // saved, in layout order; kept even when cancelled
	Cancelled bool     `json:"cancelled"`
	Failed    bool     `json:"failed"`
	Seconds   float64  `json:"seconds"`
	Message   string   `json:"message"` // "2 layouts measured in 3.1 s"
}

// Cancelled is Cancel's answer.
type Cancelled struct {
	ID string `json:"id"`
}

type job struct {
	id      string
	job     result.Job // what its results are saved under
	cancel  context.CancelFunc
	stopped atomic.Bool
}

// StartRun validates the form, asks the memory guard, and starts the run in
// the background; it returns at once with the run's id. One run at a time:
// a second one would measure the first's memory too. A form error names its
// field; the guard's refusal comes back as an error for "run", with the
// numbers. A file source is read through (to count its rows for the guard)
// inside the run, so that Cancel works during that read too: its refusal
// or a malformed row arrives as EventError.
func (l *Lab) StartRun(f Form) (Started, error) {
	cfg, err := f.Parse()
	if err != nil {
		return Started{}, err
	}
	cfg.InProcess = l.opt.InProcess
	var mc experiments.MemoryCheck
	if cfg.Source == "" {
		if mc, err = experiments.Check(context.Background(), cfg); err != nil {
			return Started{}, ErrorOf(err, "run")
		}
		if !mc.Fits {
			return Started{}, &Error{Field: "run", Message: refusal(mc)}
		}
	}

	l.mu.Lock()
	if err := l.busy("run"); err != nil {
		l.mu.Unlock()
		return Started{}, err
	}
	l.seq++
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("run-%s-%d-%s", time.Now().UTC().Format("150405"), l.seq, hex.EncodeToString(b[:]))
	ctx, cancel := context.WithCancel(context.Background())
	face := result.FaceDesktop
	if l.opt.Runtime == "browser" {
		face = result.FaceBrowser
	}
	j := &job{id: id, cancel: cancel, job: usecase.NewRunJob(cfg, face)}
	l.jobs[id] = j
	l.mu.Unlock()

	st := Started{ID: id, JobID: j.job.ID, JobName: j.job.Name, Title: describe(cfg), Layouts: cfg.WithDefaults().Layouts}
	if len(mc.Estimates) > 0 {
		st.TotalRows = mc.Estimates[0].Rows
	}
	go l.execute(ctx, j, cfg)
	return st, nil
}

// busy refuses a measurement while another goes on (a run, or the Plan
// tab's calibration): two at once would each slow the other. field is the
// form field the refusal belongs to; l.mu is held.
func (l *Lab) busy(field string) error {
	for id := range l.jobs {
		if id == PlanCalibrationID {
			return errorf(field, "the Plan tab's calibration is still going: cancel it or wait for it to finish")
		}
		if id == PlanVerificationID {
			return errorf(field, "the Plan tab's build in ClickHouse is still going: cancel it or wait for it to finish")
		}
		return errorf(field, "run %s is still going: cancel it or wait for it to finish", id)
	}
	return nil
}

// execute is one run's goroutine: it measures, saves each result as it
// comes, and reports.
func (l *Lab) execute(ctx context.Context, j *job, cfg config.Config) {
	start := time.Now()
	var ids []string
	defer func() {
		if v := recover(); v != nil { // a bug must not leave the run "going" forever
			l.mu.Lock()
			delete(l.jobs, j.id)
			l.mu.Unlock()
			msg := fmt.Sprintf("internal error: %v (please report it)", v)
			l.emit(EventError, RunError{ID: j.id, Field: "run", Message: msg})
			l.emit(EventDone, RunDone{ID: j.id, ResultIDs: append([]string{}, ids...), Failed: true, Message: "Failed: " + msg})
		}
	}()
	m, err := usecase.Run(ctx, cfg, usecase.Hooks{
		Store:    l.store,
		Job:      &j.job,
		Progress: func(p worker.Progress) { l.emit(EventProgress, progressOf(j.id, p)) },
		Measured: func(r result.Result) error {
			ids = append(ids, r.ID)
			l.emit(EventResult, RunResult{ID: j.id, ResultID: r.ID, Layout: r.Layout})
			return nil
		},
	})
	skipped := m.Skipped
	done := RunDone{ID: j.id, ResultIDs: ids, Seconds: time.Since(start).Seconds()}
	if done.ResultIDs == nil {
		done.ResultIDs = []string{}
	}
	measured := measuredText(len(ids), done.Seconds)
	if skipped >= 0 {
		measured += "; " + text.Count(skipped, "bad row", "bad rows") + " of the file skipped"
	}
	switch {
	case err != nil && (j.stopped.Load() || usecase.Cancelled(err)):
		done.Cancelled = true
		done.Message = cancelledText(measured, len(ids))
	case err != nil:
		e := ErrorOf(err, "run")
		l.emit(EventError, RunError{ID: j.id, Field: e.Field, Message: e.Message})
		done.Failed = true
		done.Message = "Failed: " + e.Message
	default:
		done.Message = measured
	}
	// The run is over before the page hears so: a StartRun right after
	// EventDone must not find it still going.
	j.cancel()
	l.mu.Lock()
	delete(l.jobs, j.id)
	l.mu.Unlock()
	l.emit(EventDone, done)
}

// Cancel stops a run at any moment: while it reads a file source, loads or
// reads (the worker process is killed). Results already measured are kept.
// The run's EventDone follows. Cancel(PlanCalibrationID) stops the Plan
// tab's calibration the same way; its Plan call then returns the cancel.
func (l *Lab) Cancel(id string) (Cancelled, error) {
	l.mu.Lock()
	j, ok := l.jobs[id]
	l.mu.Unlock()
	if !ok {
		if strings.TrimSpace(id) == "" {
			return Cancelled{}, errorf("cancel", "no run id given")
		}
		return Cancelled{}, errorf("cancel", "no run %s is going (it has finished, or never started)", id)
	}
	j.stopped.Store(true)
	j.cancel()
	return Cancelled{ID: id}, nil
}

// Running returns the ids of runs not yet finished.
func (l *Lab) Running() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := []string{}
	for id := range l.jobs {
		ids = append(ids, id)
	}
	return ids, nil
}

func progressOf(id string, p worker.Progress) Progress {
	out := Progress{
		ID: id, Layout: p.Layout, Repeat: p.Repeat, Repeats: p.Repeats, Phase: p.Phase,
		Rows: p.Rows, TotalRows: p.TotalRows, RSSBytes: p.RSSBytes, ETASeconds: -1,
	}
	if p.Seconds > 0 {
		out.RowsPerSecond = float64(p.Rows) / p.Seconds
	}
	if p.TotalRows > 0 {
		out.Percent = math.Min(100, 100*float64(p.Rows)/float64(p.TotalRows))
		if out.RowsPerSecond > 0 && p.Phase == worker.PhaseLoad {
			out.ETASeconds = float64(p.TotalRows-p.Rows) / out.RowsPerSecond
		}
	}
	switch p.Phase {
	case worker.PhaseLoad:
	case worker.PhaseSettle: // the bar and the ETA count the idle down
		out.RowsPerSecond, out.Percent, out.ETASeconds = 0, 0, 0
		if p.SettleSeconds > 0 {
			out.Percent = math.Min(100, 100*p.Seconds/p.SettleSeconds)
			out.ETASeconds = math.Max(0, p.SettleSeconds-p.Seconds)
		}
	default:
		out.Percent, out.ETASeconds = 100, 0
	}
	// The bar is the job's: loads done before this one fill their share,
	// so that "hashed (1 of 3)" reading shows a third, not a full bar. An
	// idle counts its own time down.
	if p.Repeats > 1 && p.Repeat >= 1 && p.Phase != worker.PhaseSettle {
		out.Percent = (100*float64(p.Repeat-1) + out.Percent) / float64(p.Repeats)
	}
	out.RowsText = text.Thousands(p.Rows)
	if p.TotalRows > 0 {
		out.RowsText += " / " + text.Thousands(p.TotalRows)
	}
	out.RateText = rate(out.RowsPerSecond)
	out.ETAText = "–"
	if out.ETASeconds >= 0 {
		out.ETAText = seconds(out.ETASeconds)
	}
	out.RSSText = text.Bytes(p.RSSBytes)
	out.LayoutText = p.Layout
	if p.Repeats > 1 {
		out.LayoutText = fmt.Sprintf("%s (%d of %d)", p.Layout, p.Repeat, p.Repeats)
	}
	switch p.Phase {
	case worker.PhaseCount:
		out.PhaseText = fmt.Sprintf("counting the source's rows before the load (the memory check needs them): %s so far", text.Rows(p.Rows))
	case worker.PhaseSettle:
		out.PhaseText = fmt.Sprintf("idling %s of %s before loading %s, so that it starts on fresh memory",
			seconds(p.Seconds), seconds(p.SettleSeconds), p.Layout)
	case worker.PhaseLoad:
		out.PhaseText = "loading " + p.Layout
	case worker.PhaseRead:
		out.PhaseText = "reading every key of " + p.Layout + " in random order"
	case worker.PhaseDone:
		out.PhaseText = p.Layout + " measured"
	default:
		out.PhaseText = p.Phase
	}
	return out
}

// rate writes rows per second: "850 K/s", "12.4 M/s".
func rate(v float64) string {
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return "–"
	case v >= 1e9:
		return fmt.Sprintf("%.2f G/s", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.1f M/s", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.0f K/s", v/1e3)
	}
	return fmt.Sprintf("%.0f /s", v)
}

// RunCancelled is the RunDone of a run whose worker was stopped after it
// saved ids in secs (in a browser the page cancels a run by stopping the
// Web Worker that runs it; its successor words the end), worded as a run
// cancelled here.
func RunCancelled(id string, ids []string, secs float64) RunDone {
	if ids == nil {
		ids = []string{}
	}
	return RunDone{ID: id, ResultIDs: ids, Cancelled: true, Seconds: secs,
		Message: cancelledText(measuredText(len(ids), secs), len(ids))}
}

// measuredText says how many layouts a run measured, and in how long.
func measuredText(n int, secs float64) string {
	return text.Count(n, "layout", "layouts") + " measured in " + seconds(secs)
}

// cancelledText is a cancelled run's message, measured its n layouts' line.
func cancelledText(measured string, n int) string {
	if n == 0 {
		return "Cancelled before any layout finished; nothing was saved"
	}
	return "Cancelled; " + measured + " before the cancel (kept in history)"
}

// seconds writes a duration for people: "0.4 s", "12 s", "3 min 5 s", "2 h 10 min".
func seconds(s float64) string {
	switch {
	case s < 0 || math.IsNaN(s) || math.IsInf(s, 0):
		return "–"
	case s < 10:
		return fmt.Sprintf("%.1f s", s)
	case s < 60:
		return fmt.Sprintf("%.0f s", s)
	case s < 3600:
		m := int(s) / 60
		return fmt.Sprintf("%d min %d s", m, int(s)-60*m)
	}
	h := int(s) / 3600
	return fmt.Sprintf("%d h %d min", h, (int(s)-3600*h)/60)
}
