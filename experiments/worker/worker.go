// Package worker is the engine's protocols with its workers, the
// processes a run is measured in: the lines a worker writes (Line: its
// progress, then its result or its error), the parent's side of a run
// (Run: the job line, the feed, the progress relayed, the end read), and
// the feed (feed.go), the rows a driver's worker loads, in frames on its
// stdin, and ClickHouse's source of a file's attributes (source_file.go).
// It imports the resolved config (experiments/config), never the engine:
// the engine (package experiments) serves and starts packlab's own
// workers, and the drivers start theirs, through it.
package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

// A worker, whichever program it is, speaks JSON lines on its pipes:
//
//	parent                                  worker
//	  start worker                   --->
//	  write the job as one JSON line ------> stdin (each program's own job)
//	  the feed, for a driver's worker ------> stdin: frames of rows (feed.go)
//	  relay progress        <--------------- stdout: {"progress":{...}}  every 100 ms
//	  keep the result       <--------------- stdout: {"result":{...}}  or {"error":"..."}
//	  close stdin, wait
//
// The parent keeps the worker's stdin open while it runs: when the parent
// dies, the worker reads EOF and stops. On cancel the parent kills the
// worker.

// Line is one line a worker writes.
type Line struct {
	Progress *Progress      `json:"progress,omitempty"`
	Result   *result.Result `json:"result,omitempty"`
	Error    string         `json:"error,omitempty"`
	Source   bool           `json:"source,omitempty"` // the error is the source's (a bad row, a file gone): bad input
	// File is the source's error as its reader gave it (its file, line
	// and what is wrong), with Source, when it is one of a file.
	File *SourceFile `json:"file,omitempty"`
}

// SourceFile is a source.FileError on a worker's line.
type SourceFile struct {
	Path    string `json:"path"`
	Line    int64  `json:"line,omitempty"`
	Problem string `json:"problem"`
}

// SourceFileOf is err's source.FileError for a worker's line, or nil.
func SourceFileOf(err error) *SourceFile {
	var fe *source.FileError
	if !errors.As(err, &fe) {
		return nil
	}
	return &SourceFile{Path: fe.Path, Line: fe.Line, Problem: fe.Err.Error()}
}

// Run runs one job in the worker cmd: it writes the job line, then,
// if feed is set, feed's stream (a driver's rows, DriverRun.Feed) from
// another goroutine, while it relays the worker's progress lines and keeps
// its result. stdin stays open until the worker is done. name says what
// the worker is in an error, fix what to do when it cannot be started (it
// may name a field as {name}, package fault).
func Run(ctx context.Context, cmd *exec.Cmd, job []byte, feed func(context.Context, io.Writer) error,
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
			if se := (*feedSourceError)(nil); errors.As(err, &se) {
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

	res, failed, protoErr := readWorker(stdout, progress, name)
	workerErr := failed.Error // "" when the worker sent no error
	if protoErr != nil {
		_ = cmd.Process.Kill()
	}
	// A feed that failed on its own (the source) before the worker ended
	// says why better than the pipe it left behind (below).
	stopFeed()
	_ = stdin.Close()
	waitErr := cmd.Wait()
	feedErr := <-feedDone
	var srcErr *feedSourceError
	switch {
	case ctx.Err() != nil:
		return result.Result{}, ctx.Err()
	case res != nil:
		return *res, nil
	case workerErr != "" && outOfMemory([]byte(workerErr)):
		return result.Result{}, noMemory(name) // ClickHouse's exception, 570 characters of it: the promised line instead
	case workerErr != "" && failed.Source:
		return result.Result{}, &SourceError{Msg: workerErr, File: failed.File.fileError()}
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
// its error (failed: its error line); protoErr is a line that is not the
// protocol's.
func readWorker(stdout io.Reader, progress func(Progress), name string) (res *result.Result, failed Line, protoErr error) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	for sc.Scan() {
		var line Line
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return res, failed, fmt.Errorf("%s wrote a line that is not JSON: %.80q", name, sc.Text())
		}
		switch {
		case line.Progress != nil:
			if progress != nil {
				progress(*line.Progress)
			}
		case line.Result != nil:
			res = line.Result
		case line.Error != "":
			failed = line
		}
	}
	return res, failed, sc.Err()
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

// fileError is f as its reader gave it, or nil when the worker sent none.
func (f *SourceFile) fileError() *source.FileError {
	if f == nil {
		return nil
	}
	return &source.FileError{Path: f.Path, Line: f.Line, Err: errors.New(f.Problem)}
}

// SourceError is a worker's error that the worker said is its source's
// (Line.Source): a bad row, a file gone; errors.As reaches the file's error
// (source.FileError) when the worker sent one.
type SourceError struct {
	Msg  string
	File *source.FileError // nil when the worker sent none
}

func (e *SourceError) Error() string { return e.Msg }
func (e *SourceError) Unwrap() error {
	if e.File == nil {
		return nil
	}
	return e.File
}

// feedSourceError is a feed's failure that is the source's (a bad row, a
// file gone), not the pipe's.
type feedSourceError struct{ err error }

func (e *feedSourceError) Error() string { return e.err.Error() }

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
