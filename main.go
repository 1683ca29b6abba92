// Command packlab is a tuning lab for memory-dense, sharded hash maps.
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "packlab:", err)
		os.Exit(2)
	}
}

const version = "0.1.0-dev"

// run is the whole command line: main only wires it to the process.
func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "packlab", version)
		return nil
	}
	return fmt.Errorf("unknown command %q (run 'packlab help' for the list)", args[0])
}

const usage = `packlab — a tuning lab for memory-dense, sharded hash maps

Usage:
  packlab version    print the version
  packlab help       this text
`
