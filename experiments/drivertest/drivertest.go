// Package drivertest holds what the drivers' tests share: a test binary
// that serves as the Go worker too, a run that fails the test on any
// error, and a driver's worker found or the test skipped (the command
// line's tests too).
package drivertest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/result"
)

// Main is a driver package's TestMain: it registers the driver, lets the
// test binary serve as the Go worker process (packlab's own layouts run
// beside the driver's), and returns m.Run's exit code.
func Main(m *testing.M, register func()) int {
	register()
	return experiments.WorkerOr(m.Run)
}

// RunOrFail runs cfg with no result saved and fails the test on any error;
// the results by layout.
func RunOrFail(t *testing.T, cfg config.Config) map[string]result.Result {
	t.Helper()
	results, err := experiments.Run(context.Background(), cfg, experiments.RunOptions{})
	if err != nil {
		t.Fatalf("Run(%v %s/%s %d rows %s): %v", cfg.Layouts, cfg.Key, cfg.Value, cfg.Rows, cfg.Keys, err)
	}
	byLayout := map[string]result.Result{}
	for _, r := range results {
		byLayout[r.Layout] = r
	}
	return byLayout
}

// DriverBin is the checkout's bin folder from a driver's package, the
// folder its tests run in.
var DriverBin = filepath.Join("..", "..", "bin")

// NeedWorker points the lab at a driver's worker for a test: $env (make
// test sets it, and then the worker must work), or else name in bin, the
// checkout's bin folder from the test's working directory (DriverBin in a
// driver's package); the test skips when neither is built (build: how to
// build it) and fails when the worker is there but available says it
// cannot run (problem, the driver's Status's).
func NeedWorker(t *testing.T, bin, env, name, build string, available func() (bool, string)) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		abs, err := filepath.Abs(filepath.Join(bin, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(abs); err != nil {
			t.Skipf("%s is not built (run: %s)", abs, build)
		}
		path = abs
		t.Setenv(env, path)
	}
	if ok, problem := available(); !ok {
		t.Fatalf("%s=%s, but its worker cannot run: %s", env, path, problem)
	}
	return path
}
