// Package program is a driver's worker program on this machine: where it
// is (Find), what it says it holds (Describe, one JSON line from its
// --describe), and that answer kept while the file does not change (Cache,
// whose Status does all three).
// Starting a run in it is the engine's (worker.Run).
package program

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/packlab/packlab/core/source"
)

// Find finds a driver's worker program: $env, else name beside this
// program, else on PATH; problem says why not and how to build what (a
// plural: "the C++ reference maps") with build.
func Find(env, name, what, build string) (path, problem string) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("%s=%s: %v; build %s with: %s", env, p, source.PathErrorReason(err), what, build)
		}
		return p, ""
	}
	var beside string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		beside = filepath.Join(filepath.Dir(exe), name)
		if st, err := os.Stat(beside); err == nil && !st.IsDir() {
			return beside, ""
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, ""
	}
	where := "on PATH"
	if beside != "" {
		where = "at " + beside + " or on PATH"
	}
	return "", fmt.Sprintf("%s are not built (no %s %s); build them with: %s", what, name, where, build)
}

// Cache keeps what a worker program says of itself (its --describe)
// while its file does not change, so that a face may ask often.
type Cache[S any] struct {
	mu  sync.Mutex
	key string
	s   S
}

// Get is describe(path)'s answer, asked again only when the file at path
// has changed (size or time) since; err is the file's stat error.
func (c *Cache[S]) Get(path string, describe func(string) S) (S, error) {
	st, err := os.Stat(path)
	if err != nil {
		var zero S
		return zero, err
	}
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.key != key {
		c.key, c.s = key, describe(path)
	}
	return c.s, nil
}

// Status finds a driver's worker (Find's env, name, what and build) and is
// its describe answer, kept while the file does not change; where there is
// no worker to ask (none found, or in the browser, where no worker runs),
// failed(path, problem) says why, ending with build.
func (c *Cache[S]) Status(env, name, what, build string, describe func(path string) S, failed func(path, problem string) S) S {
	if runtime.GOOS == "js" {
		return failed("", "the browser lab runs packlab's Go layouts only; "+what+" run in the desktop lab and 'packlab run' (build them there with: "+build+")")
	}
	path, problem := Find(env, name, what, build)
	if problem != "" {
		return failed("", problem)
	}
	st, err := c.Get(path, describe)
	if err != nil {
		return failed(path, fmt.Sprintf("%s: %v; build it with: %s", path, source.PathErrorReason(err), build))
	}
	return st
}

// Describe runs a worker's --describe (for at most timeout) and reads
// its one JSON line into d. problem says what went wrong, ending with how
// to rebuild it (build): the worker failed, answered with an "error", or
// speaks another protocol than this packlab's; "" when it answered.
func Describe(path string, timeout time.Duration, protocol int, build string, d any) (problem string) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "--describe")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var w struct {
		Protocol int    `json:"protocol"`
		Error    string `json:"error"`
	}
	if err == nil {
		err = json.Unmarshal(bytes.TrimSpace(out), &w)
	}
	if err == nil && w.Error != "" {
		err = errors.New(w.Error)
	}
	if err == nil {
		err = json.Unmarshal(bytes.TrimSpace(out), d)
	}
	if err != nil {
		why := err.Error()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			why += ": " + strings.SplitN(s, "\n", 2)[0]
		}
		return fmt.Sprintf("%s --describe failed (%s); rebuild it with: %s", path, why, build)
	}
	if w.Protocol != protocol {
		return fmt.Sprintf("%s speaks protocol %d, this packlab %d; rebuild it with: %s", path, w.Protocol, protocol, build)
	}
	return ""
}
