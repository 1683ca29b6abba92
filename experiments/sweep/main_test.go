package sweep

import (
	"os"
	"testing"

	"github.com/packlab/packlab/experiments"
)

// TestMain lets this test binary serve as a worker process: the sweeps'
// runs start it again as one, as packlab starts itself.
func TestMain(m *testing.M) { os.Exit(experiments.WorkerOr(m.Run)) }
