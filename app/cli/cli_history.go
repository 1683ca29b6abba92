package cli

// packlab history clear: delete every saved result of a results folder
// (the desktop's History tab deletes a selection the same way, through the
// store).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/store"
)

const usageHistory = `packlab history list [flags] — the saved jobs, newest first: runs, sweeps, inspections
packlab history clear [flags] — delete every saved result and inspection

  --results DIR         results folder (default as for run)
  --yes                 clear: delete without asking (required when not on a terminal)

'packlab history list' is 'packlab report --list'; 'packlab report --job ID' reports one.
Files in the folder that are not results or inspections are left alone.
` + flags.Rules

// historyWhich answers history followed by neither list nor clear: its
// help, or what it takes.
func historyWhich(args []string, stdout io.Writer) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprint(stdout, usageHistory)
		return nil
	}
	what := "nothing"
	if len(args) > 0 {
		what = fmt.Sprintf("%q", args[0])
	}
	if len(args) > 0 && strings.HasPrefix(args[0], "-") {
		// history --results DIR list: the flags are list's or clear's.
		return flags.Usagef("history: %s before list or clear (allowed: list or clear first, then its flags, e.g. packlab history list --results DIR)", what)
	}
	return flags.Usagef("history: %s after history (allowed: list, clear)", what)
}

// historyClearCommand is packlab history clear: its flags, and what it
// does with them.
func historyClearCommand(fs *flag.FlagSet) flags.Action {
	yes := fs.Bool("yes", false, "delete without asking")
	results := fs.String("results", "", "results folder")
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
		folder, err := historyFolder(fs.Name(), *results, args, "nothing to clear", stderr)
		if folder == "" || err != nil {
			return err
		}
		return historyClear(ctx, folder, *yes, stdin, stderr)
	}
}

// historyClear deletes every saved result and inspection in folder, once
// asked (or with yes).
func historyClear(ctx context.Context, folder string, yes bool, stdin io.Reader, stderr io.Writer) error {
	saved := &store.Store{Dir: folder}
	if pids := saved.JobsSaving(); len(pids) > 0 {
		// Deleting now would take what a running job has saved, and the
		// job would go on saving (a sweep said "saved 1350" of none).
		return fmt.Errorf("history clear: a job is saving into %s (packlab process %d): nothing deleted; clear it once that job has ended", folder, pids[0])
	}
	jobs, problems, err := saved.Jobs(ctx)
	if err != nil {
		return err
	}
	n, inspected := 0, 0
	for _, j := range jobs {
		n += len(j.Results)
		if j.Inspection != nil {
			inspected++
		}
	}
	if n == 0 && inspected == 0 {
		fmt.Fprintf(stderr, "packlab: no results in %s: nothing to clear\n", folder)
		return nil
	}
	question := fmt.Sprintf("delete %d result(s) of %d job(s) in %s", n, len(jobs), folder)
	if inspected > 0 {
		question = fmt.Sprintf("delete %d result(s) and %d inspection(s), %d job(s) in all, in %s", n, inspected, len(jobs), folder)
	}
	if ok, err := confirm(ctx, question, yes, stdin, stderr); !ok || err != nil {
		return err
	}
	deleted, deletedInspections := 0, 0
	for _, j := range jobs {
		if j.Inspection != nil {
			if err := saved.DeleteInspection(j.ID); err != nil {
				return fmt.Errorf("history clear: %d of %d inspections deleted, then: %w", deletedInspections, inspected, err)
			}
			deletedInspections++
		}
		for _, r := range j.Results {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("%w: history clear after %d of %d results (%v)", fault.ErrCancelled, deleted, n, err)
			}
			if err := saved.Delete(r.ID); err != nil {
				return fmt.Errorf("history clear: %d of %d results deleted, then: %w", deleted, n, err)
			}
			deleted++
		}
	}
	if inspected > 0 {
		fmt.Fprintf(stderr, "packlab: deleted %d result(s) and %d inspection(s), %d job(s), from %s\n", deleted, deletedInspections, len(jobs), folder)
	} else {
		fmt.Fprintf(stderr, "packlab: deleted %d result(s) of %d job(s) from %s\n", deleted, len(jobs), folder)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "packlab: left %d file(s) that are not readable results (they are named above)\n", len(problems))
		for _, p := range problems {
			fmt.Fprintln(stderr, "packlab: skipped", oneLine(p))
		}
	}
	return nil
}

// historyFolder is the results folder a history command (cmd) reads:
// --results (results), or this user's default; args are the arguments that
// are not flags. It is "" when there is no such folder, which a line on
// stderr says, ending in nothing (what there is to do then).
func historyFolder(cmd, results string, args []string, nothing string, stderr io.Writer) (string, error) {
	if len(args) > 0 {
		return "", flags.Usagef("%s: unexpected argument %q (flags start with --)", cmd, args[0])
	}
	dir := results
	if dir == "" {
		d, err := store.DefaultResultsDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if err := notAFolder(dir); err != nil {
		return "", err
	}
	if _, err := os.Stat(dir); err != nil {
		fmt.Fprintf(stderr, "packlab: no results folder at %s: %s\n", dir, nothing)
		return "", nil
	}
	return dir, nil
}

// notAFolder refuses a results folder that is there but is not a folder
// (a result file or any other file given for it by mistake), or that
// cannot be one, a file standing in its path (history list said "nothing
// saved", exit 0); nil for a folder, or for nothing there, which each
// command words its own way.
func notAFolder(dir string) error {
	const allowed = "(allowed: a folder of saved results, as 'packlab run --results DIR' makes)"
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return flags.Usagef("--results %s: not a folder %s", fault.ShowValue(dir), allowed)
	case errors.Is(err, syscall.ENOTDIR):
		return flags.Usagef("--results %s: not a folder: a file stands in its path %s", fault.ShowValue(dir), allowed)
	}
	return nil
}

// historyListCommand is packlab history list: the saved jobs, as report
// --list prints them (a run's results' count, an inspection's word).
func historyListCommand(fs *flag.FlagSet) flags.Action {
	results := fs.String("results", "", "results folder")
	return func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		folder, err := historyFolder(fs.Name(), *results, args, "nothing saved", stderr)
		if folder == "" || err != nil {
			return err
		}
		return historyList(ctx, folder, stdout, stderr)
	}
}

// historyList prints the saved jobs of folder.
func historyList(ctx context.Context, folder string, stdout, stderr io.Writer) error {
	jobs, problems, err := (&store.Store{Dir: folder}).Jobs(ctx)
	if err != nil {
		return err
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, "packlab: skipped", oneLine(p))
	}
	return listJobs(stdout, jobs, false)
}

// confirm asks on stdin whether to do what question says, unless yes (the
// --yes flag) answers it; with no terminal to ask on it refuses, saying how
// to confirm. It gives up, deleting nothing, at the end of the input, on
// an answer that is not one (a line longer than maxAnswer bytes: /dev/zero
// is read no further) and on a signal (ctx's cancel: the signal's exit).
func confirm(ctx context.Context, question string, yes bool, stdin io.Reader, stderr io.Writer) (bool, error) {
	if yes {
		return true, nil
	}
	if !isTerminal(stdin) {
		return false, flags.Usagef("history clear: would %s; add --yes to confirm (standard input is not a terminal to ask on)", question)
	}
	fmt.Fprintf(stderr, "packlab: %s? [y/N] ", question)
	answer, err := readAnswer(ctx, stdin)
	if err != nil {
		fmt.Fprintln(stderr)
		return false, fmt.Errorf("%w: history clear asked and deleted nothing (%v)", fault.ErrCancelled, context.Cause(ctx))
	}
	if answer = strings.TrimSpace(answer); answer != "y" && answer != "Y" && answer != "yes" {
		fmt.Fprintln(stderr, "packlab: nothing deleted")
		return false, nil
	}
	return true, nil
}

// maxAnswer is the longest line a prompt reads as an answer.
const maxAnswer = 64

// readAnswer reads one line from r, at most maxAnswer bytes of it (a longer
// one comes back cut, which answers no prompt), or what came before the end
// of the input; ctx's end stops the wait (the read itself goes on in its
// goroutine until the process ends: a terminal's read cannot be stopped).
func readAnswer(ctx context.Context, r io.Reader) (string, error) {
	got := make(chan string, 1)
	go func() {
		var line []byte
		b := make([]byte, 1)
		for len(line) <= maxAnswer {
			n, err := r.Read(b)
			if n == 1 {
				if b[0] == '\n' {
					break
				}
				line = append(line, b[0])
			}
			if err != nil {
				break
			}
		}
		got <- string(line)
	}()
	select {
	case a := <-got:
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// isTerminal says whether r is a terminal to ask on (not only a character
// device: /dev/null and /dev/zero are devices too).
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && terminal(f)
}
