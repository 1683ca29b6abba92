// Command packlab is a tuning lab for memory-dense, sharded hash maps.
package main

import (
	"fmt"
	"os"

	"github.com/packlab/packlab/experiments"
)

func main() {
	// A measured run's worker process: the same binary, started by run.
	if len(os.Args) > 1 && os.Args[1] == experiments.WorkerArg {
		os.Exit(experiments.WorkerMain())
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "packlab:", oneLine(err))
		os.Exit(exitCode(err))
	}
}

const version = "0.1.0-dev"
