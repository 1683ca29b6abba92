package experiments

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/worker"
)

// Isolation: each measured load runs in a fresh worker process of the same
// binary, so that its RSS and peak RSS belong to that load alone. The
// parent starts it (packlab __worker, or a test binary with
// PACKLAB_WORKER=1) and speaks worker.Run's protocol with it: the job line
// {"config":...,"layout":"hashed"}, then its progress and result lines
// (worker.Line), which the worker writes as it measures (measure.go). The
// worker ignores SIGINT, which a terminal sends to the whole process group
// on Ctrl-C: the parent decides, and kills it.

// WorkerArg is the hidden subcommand that makes the binary a worker, and
// WorkerEnv the variable the parent sets in the worker's environment: a test
// binary, which cannot be given subcommands, checks it in TestMain and calls
// WorkerMain.
const (
	WorkerArg = "__worker"
	WorkerEnv = "PACKLAB_WORKER"
)

type workerJob struct {
	Config config.Config `json:"config"`
	Layout string        `json:"layout"`
	// SourceFD, when not 0, is the descriptor on which the parent hands the
	// worker its key source, opened already (see parentOpens).
	SourceFD int `json:"source_fd,omitempty"`
}

// sourceFD is the descriptor of the first of exec.Cmd's ExtraFiles.
const sourceFD = 3

// parentOpens reports whether a file source must be opened by the parent
// and handed to the worker: a stream (the worker cannot open a pipe's other
// end anew, and a FIFO's data would be split between two readers), or a
// name for one of the parent's own descriptors (/dev/stdin, /dev/fd/N,
// /proc/self/fd/N), which in the worker would name the worker's own: its
// stdin is the job pipe.
func parentOpens(path string) bool {
	if _, stream := source.IsStream(path); stream {
		return true
	}
	clean := filepath.Clean(path)
	for _, own := range []string{"/dev/stdin", "/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"} {
		if clean == own || strings.HasPrefix(clean, own) {
			return true
		}
	}
	return false
}

// WorkerOr is a test binary's main when its tests measure runs: the
// engine starts the test binary itself as each run's worker (WorkerEnv),
// and then it serves as one; otherwise it runs the tests (m.Run, passed as
// run), telling the race detector not to sleep a second at each worker's
// exit (atexit_sleep_ms: the tests start dozens of them). It returns the
// exit code.
func WorkerOr(run func() int) int {
	if os.Getenv(WorkerEnv) == "1" {
		return WorkerMain()
	}
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	return run()
}

// WorkerMain is a worker process's whole life: it serves one job from stdin
// to stdout and returns the exit code (0 when it wrote a result or an error
// line, 1 when it could not even do that).
func WorkerMain() int {
	signal.Ignore(os.Interrupt)
	if err := ServeWorker(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "packlab worker:", err)
		return 1
	}
	return 0
}

// ServeWorker reads one job from in, measures it in this process and writes
// progress lines, then one result or error line, to out. It stops when ctx
// is done or in reaches EOF (the parent has gone).
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	dec := json.NewDecoder(in)
	var job workerJob
	if err := dec.Decode(&job); err != nil {
		return fmt.Errorf("reading the job from stdin: %w", err)
	}
	go func() {
		_, _ = io.Copy(io.Discard, io.MultiReader(dec.Buffered(), in))
		cancel()
	}()

	var mu sync.Mutex
	enc := json.NewEncoder(out)
	write := func(l worker.Line) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(l)
	}
	defer func() {
		if v := recover(); v != nil {
			err = write(worker.Line{Error: fmt.Sprintf("internal error: %v", v)})
		}
	}()
	res, merr := measureJob(ctx, job, func(p worker.Progress) { _ = write(worker.Line{Progress: &p}) })
	if merr != nil {
		file := worker.SourceFileOf(merr)
		return write(worker.Line{Error: merr.Error(), Source: file != nil, File: file})
	}
	return write(worker.Line{Result: &res})
}

func measureJob(ctx context.Context, job workerJob, progress func(worker.Progress)) (result.Result, error) {
	name := job.Config.Source
	if job.SourceFD > 0 {
		job.Config.Source = fmt.Sprintf("/dev/fd/%d", job.SourceFD)
	}
	runs, err := config.Resolve(job.Config)
	if err != nil {
		return result.Result{}, err
	}
	l, ok := config.ParseLayout(job.Layout)
	if !ok || l.Core == "" {
		_, err := core.ParseLayout(job.Layout)
		return result.Result{}, err
	}
	i := slices.IndexFunc(runs, func(r config.Run) bool { return r.Layout == l })
	if i < 0 {
		return result.Result{}, fmt.Errorf("the job's layout %s is not among its config's %v", l, job.Config.Layouts)
	}
	r := runs[i]
	if job.SourceFD > 0 {
		// messages and the result name the user's file
		r.Source.Path, r.Spec.Path, r.Config.Source = name, name, name
		r.File = os.NewFile(uintptr(job.SourceFD), name)
	}
	return opsFor(r.Key, r.Value).measure(ctx, r, progress)
}

// workerCommand builds the worker process for one job. It is the running
// binary itself, told by WorkerArg (a packlab binary) or WorkerEnv (a test
// binary) to be a worker.
var workerCommand = func(ctx context.Context) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fault.Errorf("finding this program to start a worker: %w (use {in_process} to run without one)", err)
	}
	cmd := exec.CommandContext(ctx, exe, WorkerArg)
	cmd.Env = append(os.Environ(), WorkerEnv+"=1")
	return cmd, nil
}

// runIsolated measures one layout of cfg in a fresh worker process, relaying
// its progress. On ctx's cancel the worker is killed.
func runIsolated(ctx context.Context, cfg config.Config, layout string, progress func(worker.Progress)) (result.Result, error) {
	cmd, err := workerCommand(ctx)
	if err != nil {
		return result.Result{}, err
	}
	cfg.Layouts = []string{layout} // the worker needs only its own
	job := workerJob{Config: cfg, Layout: layout}
	if cfg.Source != "" && parentOpens(cfg.Source) {
		f, err := source.OpenFile(ctx, cfg.Source)
		if err != nil {
			return result.Result{}, err
		}
		defer f.Close()
		cmd.ExtraFiles, job.SourceFD = []*os.File{f}, sourceFD
	}
	line, _ := json.Marshal(job)
	start := time.Now()
	res, err := worker.Run(ctx, cmd, line, nil, progress, "the worker process", "use {in_process} to run without one")
	res.ProcessSeconds = time.Since(start).Seconds()
	return res, err
}
