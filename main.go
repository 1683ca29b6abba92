// Command packlab is a tuning lab for memory-dense, sharded hash maps: the
// command line (app/cli), which opens the lab window in a desktop build
// (app/desktop) and serves the browser lab (app/serve). This file only
// wires them to the process; main_desktop.go and main_embedweb.go hand the
// faces the files a package below cannot embed.
package main

import (
	"os"

	"github.com/packlab/packlab/app/cli"
	"github.com/packlab/packlab/experiments"
)

func main() {
	// A measured run's worker process: the same binary, started by run.
	if len(os.Args) > 1 && os.Args[1] == experiments.WorkerArg {
		os.Exit(experiments.WorkerMain())
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
