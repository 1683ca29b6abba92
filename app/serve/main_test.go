package serve

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packlab/packlab/app/flags"
)

func TestMain(m *testing.M) {
	// The tests name the project's files as a user in its root does
	// (frontend/, build/web).
	if err := os.Chdir(filepath.Join("..", "..")); err != nil {
		panic(err)
	}
	os.Exit(m.Run())
}

// runContext runs the command line `packlab serve ...` in this process, as
// the command line does (its table of commands: serve's flags parsed, then
// Flags' action): args start with "serve".
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "serve" {
		return errors.New("not a serve command line: " + strings.Join(args, " "))
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serve := Flags(fs)
	rest, help, err := flags.ParseCommand(fs, "serve", args[1:], 0, stdout, Usage)
	if help || err != nil {
		return err
	}
	return serve(ctx, rest, nil, stdout, stderr)
}

// packlab is runContext with a background context, its output as strings.
func packlab(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = runContext(context.Background(), args, &o, &e)
	return o.String(), e.String(), err
}

// exitCode is the command line's exit code for a serve error: 2 for bad
// input, else 1 (app/cli's exitCode, for the errors serve returns).
func exitCode(err error) int {
	if errors.As(err, new(*flags.UsageError)) {
		return 2
	}
	return 1
}
