package report

import (
	"os"
	"testing"

	"github.com/packlab/packlab/experiments"
)

// TestMain makes this test binary a worker when the engine starts it as
// one (a run measured in a fresh process), as the engine's own tests do.
func TestMain(m *testing.M) {
	if os.Getenv(experiments.WorkerEnv) == "1" {
		os.Exit(experiments.WorkerMain())
	}
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0") // the worker children need not wait a second to exit
	}
	os.Exit(m.Run())
}
