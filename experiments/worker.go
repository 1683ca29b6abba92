package experiments

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
)

// Isolation: each measured load runs in a fresh worker process of the same
// binary, so that its RSS and peak RSS belong to that load alone.
//
//	parent                                  worker: packlab __worker
//	  start worker, env PACKLAB_WORKER=1 --->
//	  write the job as one JSON line ------> stdin: {"config":...,"layout":"hashed"}
//	                                         measure (measure.go)
//	  relay progress        <--------------- stdout: {"progress":{...}}  every 100 ms
//	  keep the result       <--------------- stdout: {"result":{...}}  or {"error":"..."}
//	  close stdin, wait
//
// The parent keeps the worker's stdin open while it runs: when the parent
// dies, the worker reads EOF and stops. On cancel the parent kills the
// worker. The worker ignores SIGINT, which a terminal sends to the whole process
// group on Ctrl-C: the parent decides, and kills it.

// WorkerArg is the hidden subcommand that makes the binary a worker, and
// WorkerEnv the variable the parent sets in the worker's environment: a test
// binary, which cannot be given subcommands, checks it in TestMain and calls
// WorkerMain.
const (
	WorkerArg = "__worker"
	WorkerEnv = "PACKLAB_WORKER"
)

type workerJob struct {
	Config Config `json:"config"`
	Layout string `json:"layout"`
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

type workerLine struct {
	Progress *Progress      `json:"progress,omitempty"`
	Result   *result.Result `json:"result,omitempty"`
	Error    string         `json:"error,omitempty"`
	Source   bool           `json:"source,omitempty"` // the error is the source's (a bad row, a file gone): bad input
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
	write := func(l workerLine) error {
		mu.Lock()
		defer mu.Unlock()
		return enc.Encode(l)
	}
	defer func() {
		if v := recover(); v != nil {
			err = write(workerLine{Error: fmt.Sprintf("internal error: %v", v)})
		}
	}()
	res, merr := measureJob(ctx, job, func(p Progress) { _ = write(workerLine{Progress: &p}) })
	if merr != nil {
		var fe *source.FileError
		return write(workerLine{Error: merr.Error(), Source: errors.As(merr, &fe)})
	}
	return write(workerLine{Result: &res})
}

func measureJob(ctx context.Context, job workerJob, progress func(Progress)) (result.Result, error) {
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
func runIsolated(ctx context.Context, cfg Config, layout string, progress func(Progress)) (result.Result, error) {
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
	res, err := RunWorker(ctx, cmd, line, nil, progress, "the worker process", "use {in_process} to run without one")
	res.ProcessSeconds = time.Since(start).Seconds()
	return res, err
}

// RunWorker runs one job in the worker cmd: it writes the job line, then,
// if feed is set, feed's stream (a driver's rows, DriverRun.Feed) from
// another goroutine, while it relays the worker's progress lines and keeps
// its result. stdin stays open until the worker is done. name says what
// the worker is in an error, fix what to do when it cannot be started (it
// may name a field as {name}, package fault).
func RunWorker(ctx context.Context, cmd *exec.Cmd, job []byte, feed func(context.Context, io.Writer) error,
	progress func(Progress), name, fix string) (result.Result, error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return result.Result{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return result.Result{}, err
	}
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		// fix may name a field ({in_process}): it is the format's, a face words it.
		return result.Result{}, fault.Errorf("starting %s: %w ("+strings.ReplaceAll(fix, "%", "%%")+")", name, err)
	}
	// The job goes in one write; stdin stays open until the worker is done.
	_, werr := stdin.Write(append(job, '\n'))

	feedCtx, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	feedDone := make(chan error, 1)
	if feed != nil && werr == nil {
		go func() {
			err := feed(feedCtx, stdin)
			if se := (*sourceError)(nil); errors.As(err, &se) {
				// The source failed (a bad row, a truncated stream): the
				// worker waits for frames that will never come, and the
				// pipe stays open until it ends. End it: the error is the
				// source's, as the in-process load's would be.
				_ = cmd.Process.Kill()
			}
			feedDone <- err
		}()
	} else {
		feedDone <- nil
	}

	res, workerErr, workerSource, protoErr := readWorker(stdout, progress, name)
	if protoErr != nil {
		_ = cmd.Process.Kill()
	}
	// A feed that failed on its own (the source) before the worker ended
	// says why better than the pipe it left behind (below).
	stopFeed()
	_ = stdin.Close()
	waitErr := cmd.Wait()
	feedErr := <-feedDone
	var srcErr *sourceError
	switch {
	case ctx.Err() != nil:
		return result.Result{}, ctx.Err()
	case res != nil:
		return *res, nil
	case workerErr != "" && outOfMemory([]byte(workerErr)):
		return result.Result{}, noMemory(name) // ClickHouse's exception, 570 characters of it: the promised line instead
	case workerErr != "" && workerSource:
		return result.Result{}, &workerSourceError{workerErr}
	case workerErr != "":
		return result.Result{}, errors.New(workerErr)
	case protoErr != nil:
		return result.Result{}, protoErr
	case errors.As(feedErr, &srcErr):
		return result.Result{}, srcErr.err
	}
	return result.Result{}, workerEnded(name, waitErr, werr, stderr)
}

// readWorker reads a worker's lines: its progress, relayed, then its result or
// its error; protoErr is a line that is not the protocol's.
func readWorker(stdout io.Reader, progress func(Progress), name string) (res *result.Result, workerErr string, workerSource bool, protoErr error) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for sc.Scan() {
		var line workerLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return res, workerErr, workerSource, fmt.Errorf("%s wrote a line that is not JSON: %.80q", name, sc.Text())
		}
		switch {
		case line.Progress != nil:
			if progress != nil {
				progress(*line.Progress)
			}
		case line.Result != nil:
			res = line.Result
		case line.Error != "":
			workerErr, workerSource = line.Error, line.Source
		}
	}
	return res, workerErr, workerSource, sc.Err()
}

// workerEnded says why a worker ended without a result or an error of its
// own: out of memory (its runtime said so), killed, or it exited, with the
// last line it wrote on stderr.
func workerEnded(name string, waitErr, werr error, stderr *tailBuffer) error {
	why := "it exited"
	if waitErr != nil {
		why = waitErr.Error()
		if strings.Contains(why, "signal: killed") {
			why += ", perhaps by the kernel's out-of-memory killer"
		}
	} else if werr != nil {
		why = "it did not take the job: " + werr.Error()
	}
	if stderr.ranOutOfMemory() {
		return noMemory(name)
	}
	msg := fmt.Sprintf("%s ended without a result (%s)", name, why)
	if last := stderr.lastLine(); last != "" {
		msg += ": " + last
	}
	return errors.New(msg)
}

// workerSourceError is a worker's error that the worker said is its
// source's (workerLine.Source).
type workerSourceError struct{ msg string }

func (e *workerSourceError) Error() string { return e.msg }

// sourceError is a feed's failure that is the source's (a bad row, a file
// gone), not the pipe's.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return e.err.Error() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
	oom bool // the process wrote that it ran out of memory
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// The Go runtime's "fatal error: runtime: out of memory" opens a trace
	// that may be longer than the tail kept: remembered as it passes.
	t.oom = t.oom || outOfMemory(p)
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) ranOutOfMemory() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.oom
}

// outOfMemory reports whether a worker's words say it ran out of memory:
// the Go runtime's, C++'s (std::bad_alloc), ClickHouse's exceptions, or a
// thread the system could not give a stack (EAGAIN: "Resource temporarily
// unavailable" under an address-space limit).
func outOfMemory(p []byte) bool {
	lower := bytes.ToLower(p)
	for _, w := range []string{"out of memory", "cannot allocate memory", "bad_alloc", "memory_limit_exceeded",
		"cannot_allocate_memory", "memory limit", "resource temporarily unavailable"} {
		if bytes.Contains(lower, []byte(w)) {
			return true
		}
	}
	return false
}

// noMemory is a worker's end by running out of memory, in one line.
func noMemory(name string) error {
	return fmt.Errorf("%w: %s could not get more memory (the machine's, a cgroup's or an address-space limit such as ulimit -v) and ended", ErrOutOfMemory, name)
}

// ErrOutOfMemory is a run that ran out of memory in its worker: the run's
// error says which, with the guard's figure and what to try.
var ErrOutOfMemory = errors.New("out of memory")

// lastLine is the first line of a panic, or else the last non-empty line.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte("panic: ")) || bytes.HasPrefix(l, []byte("fatal error: ")) {
			return string(l)
		}
	}
	return string(lines[len(lines)-1])
}
