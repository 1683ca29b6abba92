package report

import (
	"os"
	"testing"

	"github.com/packlab/packlab/experiments"
)

// TestMain makes this test binary a worker when the engine starts it as
// one (a run measured in a fresh process), as the engine's tests do.
func TestMain(m *testing.M) { os.Exit(experiments.WorkerOr(m.Run)) }
