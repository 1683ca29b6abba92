package experiments

import (
	"os"
	"testing"
)

// TestMain lets this test binary serve as a worker process: the isolated
// runs of the tests start it again with WorkerEnv set, exactly as packlab
// starts itself with the __worker subcommand.
func TestMain(m *testing.M) {
	if os.Getenv(WorkerEnv) == "1" {
		os.Exit(WorkerMain())
	}
	os.Exit(m.Run())
}
