package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/sweep"
)

// exampleRows is the size every example of docs/cli.md runs at here
// (exampleRowCount as a number).
const (
	exampleRows           = "2e4"
	exampleRowCount int64 = 2e4
)

// TestCLIExamples runs every example of docs/cli.md (its lines that start
// with "bin/packlab "), in order, into one results folder, as written but
// smaller: a run's or a sweep's --rows is exampleRows (a sweep without one
// gets it), a plan takes its speeds from the runs before it
// (--no-calibrate: a calibration takes a minute), an --out file goes to the
// test's folder, and a report's "--job ID" takes the last job's id. An
// example of ClickHouse's layouts or the C++ maps needs its worker (make
// chdb, make refs), as the other tests of those do. So an example naming a
// command, a flag, a value or a layout the command line no longer takes
// fails here, and the page cannot rot.
func TestCLIExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example of docs/cli.md: not in -short")
	}
	doc, err := os.ReadFile(filepath.Join("docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The seed-claims sweep's speed runs are sweep.SeedClaimsSpeedRows
	// whatever --rows says: 45 loads of 4M rows, 70 of this test's 110 s.
	// At the examples' size the command still runs every one and prints
	// its claims (TestSeedClaimsReport holds the claims to their runs).
	speedRows := sweep.SeedClaimsSpeedRows
	t.Cleanup(func() { sweep.SeedClaimsSpeedRows = speedRows })
	sweep.SeedClaimsSpeedRows = exampleRowCount
	dir := t.TempDir()
	results := filepath.Join(dir, "results")
	n := 0
	for _, line := range strings.Split(string(doc), "\n") {
		if !strings.HasPrefix(line, "bin/packlab ") {
			continue
		}
		n++
		cmd, _, _ := strings.Cut(line, "#")
		args := exampleArgs(t, cmd, dir, results)
		t.Run(strings.Join(args[:min(len(args), 4)], " "), func(t *testing.T) {
			switch {
			case slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "ch_") }):
				needClickHouse(t)
			case slices.ContainsFunc(args, func(a string) bool {
				return strings.Contains(a, "boost_flat") || strings.Contains(a, "sparse_hash_map") || a == "--with-references"
			}):
				needRefs(t)
			}
			if _, stderr, err := packlab(t, args...); err != nil {
				t.Errorf("docs/cli.md's example %q, run as packlab %s: %v\n%s", strings.TrimSpace(cmd), strings.Join(args, " "), err, stderr)
			}
		})
	}
	if n < 10 {
		t.Errorf("docs/cli.md has %d examples 'bin/packlab ...'; want its tour of every command", n)
	}
}

// exampleArgs is an example's command line as the test runs it (see
// TestCLIExamples): its words as a shell splits them (shellWords), made
// smaller and pointed at the test's folders.
func exampleArgs(t *testing.T, cmd, dir, results string) []string {
	t.Helper()
	args := shellWords(cmd)[1:]
	if len(args) == 0 || args[0] == "help" {
		return args
	}
	sized := args[0] == "run" || args[0] == "sweep"
	hasRows := false
	for i := 1; i < len(args)-1; i++ {
		switch args[i] {
		case "--rows":
			hasRows = true
			if sized {
				args[i+1] = exampleRows
			}
		case "--out":
			args[i+1] = filepath.Join(dir, filepath.Base(args[i+1]))
		case "--job":
			jobs, _, err := (&store.Store{Dir: results}).Jobs(context.Background())
			if err != nil || len(jobs) == 0 {
				t.Fatalf("--job %s: no job saved by the examples before it (%v)", args[i+1], err)
			}
			args[i+1] = jobs[0].ID
		}
	}
	if args[0] == "sweep" && !hasRows {
		args = append(args, "--rows", exampleRows)
	}
	if args[0] == "plan" {
		args = append(args, "--no-calibrate")
	}
	return append(args, "--results", results)
}

// shellWords splits a command line as a POSIX shell does for the docs'
// examples: blanks separate words, 'single quotes' and "double quotes"
// keep blanks in one, and a backslash outside single quotes escapes the
// next character.
func shellWords(cmd string) []string {
	var words []string
	var w strings.Builder
	in, quote, escaped := false, rune(0), false
	for _, r := range cmd {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case r == '\\' && quote != '\'':
			escaped, in = true, true
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	for cmd, want := range map[string][]string{
		`bin/packlab run --key 'Tuple(String(16), UInt64)' --rows 1e6`: {"bin/packlab", "run", "--key", "Tuple(String(16), UInt64)", "--rows", "1e6"},
		`a "b c" d\ e 'f\g' ''`: {"a", "b c", "d e", `f\g`, ""},
	} {
		if got := shellWords(cmd); !slices.Equal(got, want) {
			t.Errorf("shellWords(%q) = %q, want %q", cmd, got, want)
		}
	}
}
