package planner

import (
	"os"
	"testing"

	"github.com/packlab/packlab/experiments"
)

// TestMain makes this test binary a worker when the engine starts it as
// one (a run measured in a fresh process), as the engine's tests do.
// The figures of its tests are for the rows they ask for: no growth
// unless a test asks for it (TestPlanGrowth, TestPlanAnswersAreStable).
func TestMain(m *testing.M) {
	defaultGrowth = 0
	os.Exit(experiments.WorkerOr(m.Run))
}
