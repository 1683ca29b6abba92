package experiments

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/worker"
)

// RunOptions are the caller's hooks into a running job.
type RunOptions struct {
	// Progress, if set, receives every measured load's progress, about
	// every 100 ms, from the goroutine that called Run.
	Progress func(worker.Progress)
	// OnResult, if set, is called with each layout's result as soon as it
	// is measured (the command line saves it then, so a later failure or a
	// cancel loses nothing). An error from it stops the job.
	OnResult func(result.Result) error
	// Notice, if set, receives one-line notes about the job once it is
	// accepted, before the first run: a stream source that the guard could
	// not check.
	Notice func(string)
	// Job is the job every result is tagged with (Result.Job). Nil starts
	// one named after the run or sweep, from no face (a library caller).
	Job *result.Job
}

// Run validates cfg, checks that every layout's run fits in memory (unless
// cfg.Force), then measures each layout in turn, cfg.Repeats times: in a
// fresh worker process each time, or in this one with cfg.InProcess. It
// returns the results measured so far even when it fails or is cancelled.
// Bad input and the guard's refusal come back before any run.
func Run(ctx context.Context, cfg config.Config, opt RunOptions) ([]result.Result, error) {
	if opt.Job == nil {
		j := result.NewJob(config.RunJobName(cfg), "", time.Now())
		opt.Job = &j
	}
	return RunConfigs(ctx, []config.Config{cfg}, opt)
}

// RunConfigs is Run for several configs measured as one job (a sweep's, a
// plan's calibration): every config is checked, its source read through
// and the guard asked before the first run; opt.Job must be set.
func RunConfigs(ctx context.Context, cfgs []config.Config, opt RunOptions) ([]result.Result, error) {
	runs, err := prepare(ctx, cfgs, opt.Progress)
	if err != nil {
		return nil, err
	}
	return execute(ctx, runs, opt)
}

// runSpec is one layout's measured run, ready to go.
type runSpec struct {
	run config.Run
	est Estimate
}

// prepare does everything that comes before the first allocation for every
// config of a job: validation, reading a file source through once (its row
// count for the guard, and its first malformed row as an error now rather
// than minutes into a load), and the memory guard.
func prepare(ctx context.Context, cfgs []config.Config, progress func(worker.Progress)) ([]runSpec, error) {
	all := make([][]config.Run, len(cfgs)) // each config's runs, one a layout
	for i, cfg := range cfgs {
		runs, err := config.Resolve(cfg)
		if err != nil {
			return nil, err
		}
		all[i] = runs
	}
	if err := checkStreamLoads(all); err != nil {
		return nil, err
	}
	var specs []runSpec
	scanned := map[string]config.FileStats{}
	for _, runs := range all {
		var err error
		// A file is read through once however many configs load it; a
		// generator's rows are each config's own (a growth sweep's differ).
		first := runs[0] // the source, key and attributes every run of the config reads
		spec := first.Source
		spec.CheckCell = nil // a func prints as its address: the attributes say what it checks
		key := fmt.Sprintf("%+v|%s|%s|%v", spec, first.Key.Name, first.Attrs[0].Name, first.Attrs)
		st, ok := scanned[key]
		if spec.IsSynthetic() {
			st, ok = config.FileStats{Rows: first.Config.Rows}, true
		}
		if !ok {
			if st, err = sourceRows(ctx, first, progress); err != nil {
				return nil, err
			}
			scanned[key] = st
		}
		runs, rows := withFile(runs, st), st.Rows
		check, err := checkMemory(runs, rows)
		if err != nil {
			return nil, err
		}
		if !check.Fits && !first.Config.Force {
			return nil, &MemoryError{Verdict: check}
		}
		if !check.Fits && first.Config.InProcess {
			// Forced past the guard, a run may run out of memory; in this
			// process the Go runtime would end it with its trace, a worker's
			// end is one line (runFailure).
			return nil, &fault.FieldError{Field: "in_process", Switch: true,
				Problem: "the memory guard predicts the run will not fit, and running out of memory in this process ends it in the Go runtime's trace",
				Allowed: "{force} without {in_process}: the run in its own worker, whose end is one line"}
		}
		for i, r := range runs {
			specs = append(specs, runSpec{run: r, est: check.Estimates[i]})
		}
	}
	return specs, nil
}

// Streams: a source that is not a regular file (a pipe, a FIFO, a character
// device, /dev/stdin, a shell's <(process substitution)) can be read only
// once, as it comes. It is not pre-scanned: its rows are unknown until the
// load has read them (the guard cannot check the run, and the progress has
// no ETA), a malformed row stops the load rather than the pre-scan, and a
// job that would load it more than once (several layouts, Repeats, a
// sweep) is refused before anything is read.

// checkStreamLoads refuses a job that loads a stream more than once (all:
// each config's runs).
func checkStreamLoads(all [][]config.Run) error {
	loads := map[string]int{}
	var order []string
	for _, runs := range all {
		spec := runs[0].Source
		if spec.IsSynthetic() {
			continue
		}
		if _, stream := source.IsStream(spec.Path); stream {
			if loads[spec.Path] == 0 {
				order = append(order, spec.Path)
			}
			loads[spec.Path] += len(runs) * runs[0].Config.Repeats
		}
	}
	for _, path := range order {
		if n := loads[path]; n > 1 {
			kind, _ := source.IsStream(path)
			return fault.New("source", path, fmt.Sprintf("is %s, which can be read only once, but this job loads it %d times", kind, n),
				"one layout, {repeats} 1 and no sweep for a pipe or device; or save it to a regular file first")
		}
	}
	return nil
}

// settleProgressEvery is how often an idle before a load reports.
const settleProgressEvery = 250 * time.Millisecond

// settle idles for d, or until ctx is done (its error), reporting how long
// it has idled to progress (if not nil) now and every settleProgressEvery.
func settle(ctx context.Context, d time.Duration, progress func(idled time.Duration)) error {
	if d <= 0 {
		return nil
	}
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(settleProgressEvery)
	defer tick.Stop()
	for {
		if progress != nil {
			progress(time.Since(start))
		}
		select {
		case <-t.C:
			return nil
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// execute measures runs in order; each layout Repeats times.
func execute(ctx context.Context, runs []runSpec, opt RunOptions) ([]result.Result, error) {
	total := 0
	for _, r := range runs {
		total += r.run.Config.Repeats
		if r.est.Rows < 0 && opt.Notice != nil {
			kind, _ := source.IsStream(r.run.Source.Path)
			opt.Notice(fmt.Sprintf("{source} %s is %s: read once as it comes, so its rows are not counted first, the memory guard cannot check the run, and the progress has no ETA", r.run.Source.Path, kind))
		}
	}
	var results []result.Result
	var failed []string
	n := 0
	for _, r := range runs {
		var reps []result.Result
		for rep := range r.run.Config.Repeats {
			n++
			if ctx.Err() != nil {
				return results, stopped(r, context.Cause(ctx))
			}
			progress := func(pr worker.Progress) {
				if opt.Progress != nil {
					pr.Repeat, pr.Repeats = n, total
					opt.Progress(pr)
				}
			}
			idle := time.Duration(r.run.Config.SettleSeconds * float64(time.Second))
			idled := func(d time.Duration) {
				progress(worker.Progress{Layout: r.run.Layout.String(), Phase: worker.PhaseSettle, TotalRows: r.est.Rows,
					Seconds: d.Seconds(), SettleSeconds: idle.Seconds()})
			}
			if err := settle(ctx, idle, idled); err != nil {
				return results, stopped(r, cmp.Or(context.Cause(ctx), err))
			}
			res, err := measureOne(ctx, r, rep == r.run.Config.Repeats-1, progress)
			if err != nil {
				if ctx.Err() != nil {
					return results, stopped(r, context.Cause(ctx)) // the signal, where one stopped it
				}
				line, stop := runFailure(r, err)
				if stop != nil {
					return results, stop
				}
				failed = append(failed, line)
				n += r.run.Config.Repeats - rep - 1
				reps = nil
				break
			}
			if err := checkSameRows(r, res); err != nil {
				return results, err
			}
			reps = append(reps, res)
		}
		if reps == nil {
			continue
		}
		res := result.Combine(reps)
		res.SettleSeconds = r.run.Config.SettleSeconds
		res.PredictedPeak = r.est.PeakBytes
		res.ID = result.NewID(res.Layout, time.Now())
		if opt.Job != nil {
			job := *opt.Job
			res.Job = &job
		}
		results = append(results, res)
		if opt.OnResult != nil {
			if err := opt.OnResult(res); err != nil {
				return results, err
			}
		}
	}
	if len(failed) > 0 {
		return results, &RunsFailedError{Failed: failed, Measured: len(results)}
	}
	return results, nil
}

// runFailure words how run r failed: a stop of the whole job (packlab's own
// layouts, and a source's bad content: bad input), or a line for the job's
// failures when r is another program's (a reference map or ClickHouse: its
// crash or error is that run's, and the job's other runs go on). Running
// out of memory says the guard's figure and what to try.
func runFailure(r runSpec, err error) (line string, stop error) {
	if se := (*core.SlabError)(nil); errors.As(err, &se) && !errors.Is(err, worker.ErrOutOfMemory) {
		// In this process (InProcess): a table's slab the system
		// refused is the same end as a worker's.
		err = fmt.Errorf("%w: %w", worker.ErrOutOfMemory, err)
	}
	if errors.Is(err, worker.ErrOutOfMemory) {
		err = fault.Errorf("%w at %s rows (the guard predicted a peak of %s); try fewer {rows}, more {shards} or a layout that needs less (a plan for %s rows)",
			err, text.Rows(r.est.Rows), text.Bytes(r.est.PeakBytes), text.Rows(r.est.Rows))
	}
	if !r.run.Source.IsSynthetic() && isSourceFault(err) && !errors.Is(err, worker.ErrOutOfMemory) {
		// The source's content (a stream, read only by the load:
		// /dev/stdin, a pipe, a device): bad input, exit 2, the source
		// field's at its line as a counted file's check says it.
		if fe := (*source.FileError)(nil); errors.As(err, &fe) {
			err = sourceFault(r.run.Source.Path, fe)
		}
		return "", &fault.InputError{Err: fmt.Errorf("%s: %w", r.run.Layout, err)}
	}
	if r.run.Layout.Driver == nil {
		return "", fmt.Errorf("%s: %w", r.run.Layout, err)
	}
	return fmt.Sprintf("%s: %v", r.run.Layout, err), nil
}

// isSourceFault reports whether err is the source's: a bad row of a file,
// a file gone (core's FileError, in this process or the feed's), or a
// worker's error that its worker marked as its source's (workerLine.Source).
func isSourceFault(err error) bool {
	var fe *source.FileError
	var we *worker.SourceError
	return errors.As(err, &fe) || errors.As(err, &we)
}

// checkSameRows stops a job whose file source changed under it: the count
// before the runs (the guard's) and a run's rows differ, so its layouts
// would be compared over different rows (a file that grew while read
// loaded different row counts per layout, silently).
func checkSameRows(r runSpec, res result.Result) error {
	if r.run.Source.IsSynthetic() || r.est.Rows < 0 || res.Rows == r.est.Rows {
		return nil
	}
	return fault.Errorf("{source} %s changed while this job read it: it held %s rows when counted before the runs, and %s loaded %s; the results measured before it are kept (a file that does not change during the job, or a copy of it)",
		r.run.Source.Path, text.Thousands(r.est.Rows), r.run.Layout, text.Thousands(res.Rows))
}

// RunsFailedError says which runs of a job failed while the others went on
// (reference maps only: a failure of packlab's own stops the job).
type RunsFailedError struct {
	Failed   []string // one line each: "boost_flat: ..."
	Measured int      // results measured all the same
}

func (e *RunsFailedError) Error() string {
	return fmt.Sprintf("%d run(s) failed, %d measured: %s", len(e.Failed), e.Measured, strings.Join(e.Failed, "; "))
}

// stopped is the error of a job cancelled at run r (err: why).
func stopped(r runSpec, err error) error {
	what := fmt.Sprintf("%s at %s rows", r.run.Layout, text.Rows(r.est.Rows))
	if r.est.Rows < 0 {
		what = fmt.Sprintf("%s loading %s", r.run.Layout, r.run.Source.Path) // a stream: its rows are unknown
	}
	return fmt.Errorf("%w: %s was stopped before it finished (%v)", fault.ErrCancelled, what, err)
}

// measureOne runs one measured load of r, isolated unless asked otherwise.
// A panic in this process's part becomes an error.
func measureOne(ctx context.Context, r runSpec, last bool, progress func(worker.Progress)) (res result.Result, err error) {
	if d := driverOf(r.run.Layout); d != nil { // always a process of its own
		dr := newDriverRun(r.run)
		dr.startedAt, dr.LastRepeat = time.Now(), last
		return d.Measure(ctx, dr, progress)
	}
	if !r.run.Config.InProcess {
		res, err = runIsolated(ctx, r.run.Config, r.run.Layout.String(), progress)
		res.Isolated = err == nil
		return res, err
	}
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error: %v", v)
		}
	}()
	return opsFor(r.run.Key, r.run.Value).measure(ctx, r.run, progress)
}
