// Package cli is packlab's command line (run, sweep, plan, report, serve,
// history, version, help): a thin layer over app and the engine. Every flag
// is read and checked before any work; bad input is one line naming the
// flag, the value and what is allowed, and exit code 2. docs/cli.md lists
// every command and flag.
package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/packlab/packlab/app"
	"github.com/packlab/packlab/app/desktop"
	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/app/serve"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/refdriver"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/sweep"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
	"github.com/packlab/packlab/experiments/worker"
)

// Main is the whole command line, as main runs it: it prints an error as
// one line prefixed "packlab: " on stderr and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if err := run(args, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "packlab:", oneLine(err))
		return exitCode(err)
	}
	return 0
}

// run is the whole command line but for printing its error. Ctrl-C
// (SIGINT), SIGTERM or SIGHUP cancels the work in progress; the error names
// the signal and the exit code is 128 + its number, as a shell reports it.
func run(args []string, stdout, stderr io.Writer) error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, stopSignals...)
	defer signal.Stop(signals)
	finished := make(chan struct{})
	go func() {
		select {
		case s := <-signals:
			sig := s.(syscall.Signal)
			cancel(&signalError{sig})
			endIfStuck(sig, signals, finished, stderr)
		case <-ctx.Done():
		}
	}()
	err := runContext(ctx, args, stdout, stderr)
	close(finished)
	var se *signalError
	if errors.As(context.Cause(ctx), &se) && !errors.As(err, new(*signalError)) {
		if err == nil { // a command that stops cleanly on a signal (serve): its code all the same
			err = se
		}
		err = &signalExit{err: err, sig: se.sig}
	}
	return err
}

// stopGrace is how long a command has to end by itself after the signal
// that stops it: its worker killed, a verification's database dropped on
// the server (a minute at most).
var stopGrace = 75 * time.Second

// repeatedSignal is how soon after the first a second signal is the same
// stop sent twice, not a second one: timeout(1) sends its SIGTERM to
// packlab and then to packlab's process group, packlab in it.
const repeatedSignal = time.Second

// endIfStuck ends packlab with sig's 128+N code and one line when the
// command has not ended (finished) within stopGrace of sig, or at a second
// signal: what it waits on then is beyond a cancel, such as a write to a
// pipe or a terminal that no program reads. Its workers end with it (their
// input closes). The line is given a second to be written, for stderr may
// be such a pipe too.
func endIfStuck(sig syscall.Signal, signals <-chan os.Signal, finished <-chan struct{}, stderr io.Writer) {
	var why string
	first, grace := time.Now(), time.After(stopGrace)
	for why == "" {
		select {
		case <-finished:
			return
		case again := <-signals:
			if time.Since(first) >= repeatedSignal {
				why = fmt.Sprintf("stopped by %s, then %s: ended without waiting for the command to finish", signalName(sig), signalName(again.(syscall.Signal)))
			}
		case <-grace:
			why = fmt.Sprintf("stopped by %s, and the command had not finished %s later (waiting on output that no program reads?): ended", signalName(sig), stopGrace)
		}
	}
	written := make(chan struct{})
	go func() {
		fmt.Fprintln(stderr, "packlab: "+why)
		close(written)
	}()
	select {
	case <-written:
	case <-time.After(time.Second):
	}
	os.Exit(128 + int(sig))
}

// stopSignals are the signals that stop a command, each ending it with
// its 128+N code and one line (the Go runtime's own handling would dump
// every goroutine on SIGQUIT and exit 2, or end packlab before a worker's
// folder is removed): every signal whose default ends a process and that
// a program may catch, but SIGPIPE (the runtime's for a closed output)
// and SIGPROF (a profiler's).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGVTALRM, syscall.SIGXCPU, syscall.SIGXFSZ}

// signalError is the cause of a cancel by a signal: "stopped by SIGTERM".
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return "stopped by " + signalName(e.sig) }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "Ctrl-C (SIGINT)"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP (the terminal closed)"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return fmt.Sprintf("signal %d (%s)", int(s), s)
}

// signalExit is the command's error after a signal stopped it: its exit
// code is 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM, 129
// for SIGHUP).
type signalExit struct {
	err error
	sig syscall.Signal
}

func (e *signalExit) Error() string { return e.err.Error() }
func (e *signalExit) Unwrap() error { return e.err }

// exitCode is one code per class of outcome, as help states (flags.Rules):
// 130 after a cancel (as a shell reports Ctrl-C), 2 for bad input (a flag,
// a file's content, or the memory guard's refusal: the input asks for more
// than the machine has), 1 for a failure while running.
func exitCode(err error) int {
	var fe *fault.FieldError
	var ie *fault.InputError
	var ue *flags.UsageError
	var me *experiments.MemoryError
	var se *signalExit
	switch {
	case errors.As(err, &se):
		return 128 + int(se.sig)
	case errors.Is(err, fault.ErrCancelled):
		return 130
	case errors.As(err, &fe), errors.As(err, &ie), errors.As(err, &ue), errors.As(err, &me):
		return 2
	}
	return 1
}

// oneLine keeps an error to one line on a terminal, its control
// characters written out (text.Terminal).
func oneLine(err error) string {
	return text.Terminal(strings.Join(strings.Fields(strings.ReplaceAll(errorText(err), "\n", " ")), " "))
}

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("internal error: %v (please report it)", v)
		}
		if err != nil {
			err = &worded{err} // the engine names fields: the command line, its flags
		}
	}()
	if len(args) == 0 {
		if opened, err := desktop.Open(); opened { // the lab window, in a desktop build
			return err
		}
		_, err := fmt.Fprint(stdout, usageText()+"\n"+noWindow)
		return err
	}
	return dispatch(ctx, args, os.Stdin, stdout, stderr) // commands.go
}

// runFlags are the flags of run and sweep.
type runFlags struct {
	cfg        config.Config
	format     string
	resultsDir string
	noSave     bool
	maxShards  int  // sweep only
	withRefs   bool // sweep only
	withCH     bool // sweep only
}

// newRunFlags defines run's flags on fs; sweep adds --max-shards. Values are
// parsed by the flag callbacks into f.cfg, each with its own error.
func newRunFlags(fs *flag.FlagSet, sweep bool) *runFlags {
	f := &runFlags{format: "table"}
	c := &f.cfg
	fs.Func("layout", "layouts, comma-separated", func(s string) error {
		var err error
		c.Layouts, err = config.SplitList("layouts", s, "layout", "a comma-separated list of "+config.LayoutNames())
		return err
	})
	typeFlags(fs, &c.Key, &c.Value, &c.Attributes)
	rowsFlag(fs, &c.Rows)
	fs.Func("shards", "shards", func(s string) error { return intFlag("--shards", s, 1, 128, &c.Shards) })
	fs.Func("max-load-factor", "max load factor", func(s string) error {
		return floatFlag("--max-load-factor", s, 0.5, 0.99, &c.MaxLoadFactor)
	})
	fs.StringVar(&c.Keys, "keys", "", "key source")
	fs.Func("seed", "seed", func(s string) error {
		// Decimal only: Go's base prefixes would read 010 as 8 and 0x10 as
		// 16, which a user who typed them may not mean.
		t := strings.TrimSpace(s)
		v, err := strconv.ParseUint(t, 10, 64)
		problem := "not a decimal whole number"
		if errors.Is(err, strconv.ErrRange) {
			problem = "out of range" // 18446744073709551616: decimal, and one too many
		}
		if err != nil || len(t) > 1 && t[0] == '0' {
			return flags.Usagef("--seed %s: %s (allowed: 0 to %d, written in decimal without leading zeros)", fault.ShowValue(s), problem, uint64(math.MaxUint64))
		}
		c.Seed = v
		return nil
	})
	fs.StringVar(&f.format, "format", "table", "output format")
	fs.StringVar(&c.Source, "source", "", "a TSV/CSV file")
	fs.StringVar(&c.KeyColumn, "key-column", "", "key column")
	fs.StringVar(&c.ValueColumn, "value-column", "", "value column")
	fs.StringVar(&c.Header, "header", "", "header: auto, yes, no")
	fs.BoolVar(&c.SkipBadRows, "skip-bad-rows", false, "skip malformed rows")
	fs.Func("columns", "the file's columns of the attributes after the value", func(s string) (err error) {
		c.Columns, err = config.SplitList("columns", s, "column", config.FileColumnsAllowed)
		return err
	})
	fs.Func("repeats", "repeats", func(s string) error {
		return intFlag("--repeats", s, 1, config.MaxRepeats, &c.Repeats)
	})
	fs.BoolVar(&c.NoRead, "no-read", false, "skip the read phase")
	fs.Func("miss-rate", "miss rate", func(s string) error { return floatFlag("--miss-rate", s, 0, 1, &c.MissRate) })
	fs.StringVar(&c.ShardSelect, "shard-select", "", "auto, modulo or mask")
	fs.Func("block-rows", "rows per source block", func(s string) error {
		return intFlag("--block-rows", s, 1, config.MaxBlockRows, &c.BlockRows)
	})
	fs.Func("threads", "threads of the measuring process", func(s string) error {
		return intFlag("--threads", s, 1, config.MaxThreads, &c.Threads)
	})
	fs.StringVar(&c.HugePages, "huge-pages", "", "on or off")
	fs.BoolVar(&c.Preallocate, "preallocate", false, "reserve the tables for --rows before the load")
	fs.Func("settle", "idle before each load", func(s string) error { return settleFlag(s, &c.SettleSeconds) })
	fs.BoolVar(&c.InProcess, "in-process", false, "measure in this process")
	fs.BoolVar(&c.Force, "force", false, "run even if the memory guard refuses")
	fs.StringVar(&f.resultsDir, "results", "", "results folder")
	fs.BoolVar(&f.noSave, "no-save", false, "do not save results")
	if sweep {
		fs.Func("max-shards", "largest shard count", func(s string) error {
			return intFlag("--max-shards", s, 1, 128, &f.maxShards)
		})
		fs.BoolVar(&f.withRefs, "with-references", false, "add the C++ reference maps (seed-table)")
		fs.BoolVar(&f.withCH, "with-clickhouse", false, "add ClickHouse's own dictionaries (seed-table)")
	}
	return f
}

// runFlagConflicts refuses run's and sweep's flags that contradict each
// other (flags.go, and app/flags for the rules every command follows).
func runFlagConflicts(fs *flag.FlagSet, f *runFlags) error {
	if err := flags.CheckConflicts(fs, runConflicts); err != nil {
		return err
	}
	return checkLoadFactor(fs, f.cfg.Layouts)
}

// intFlag and floatFlag read a number and check its range here: in a
// Config, 0 means "the default", so an explicit 0 must be refused by the flag.
func intFlag(name, s string, lo, hi int, dst *int) error {
	v, ok := app.WholeNumber(s)
	if !ok {
		return flags.Usagef("%s %s: not a whole number (allowed: %d to %d)", name, fault.ShowValue(s), lo, hi)
	}
	if v < lo || v > hi {
		return flags.Usagef("%s %s: out of range (allowed: %d to %d)", name, fault.ShowValue(s), lo, hi)
	}
	*dst = v
	return nil
}

// settleFlag reads --settle: seconds ("8", "2.5") or a duration ("8s",
// "1m30s"), 0 to config.MaxSettleSeconds.
func settleFlag(s string, dst *float64) error {
	allowed := fmt.Sprintf("0 to %d seconds: 8, 2.5, 8s, 1m", config.MaxSettleSeconds)
	t := strings.TrimSpace(s)
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d, derr := time.ParseDuration(t)
		if derr != nil {
			return flags.Usagef("--settle %s: not a number of seconds or a duration (allowed: %s)", fault.ShowValue(s), allowed)
		}
		v = d.Seconds()
	}
	if !(v >= 0 && v <= config.MaxSettleSeconds) {
		return flags.Usagef("--settle %s: out of range (allowed: %s)", fault.ShowValue(s), allowed)
	}
	*dst = v
	return nil
}

func floatFlag(name, s string, lo, hi float64, dst *float64) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return flags.Usagef("%s %s: not a number (allowed: %v to %v)", name, fault.ShowValue(s), lo, hi)
	}
	if v < lo || v > hi {
		return flags.Usagef("%s %s: out of range (allowed: %v to %v)", name, fault.ShowValue(s), lo, hi)
	}
	*dst = v
	return nil
}

// checkFormat refuses an unknown output format before any work.
func checkFormat(format string, allowed []string) error {
	for _, f := range allowed {
		if strings.EqualFold(strings.TrimSpace(format), f) {
			return nil
		}
	}
	return flags.Usagef("--format %s: unknown format (allowed: %s)", fault.ShowValue(format), strings.Join(allowed, ", "))
}

// runCommand is packlab run: its flags, and what it does with them.
func runCommand(fs *flag.FlagSet) flags.Action {
	f := newRunFlags(fs, false)
	return func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		if len(args) > 0 {
			return flags.Usagef("run: unexpected argument %q (flags start with --; run 'packlab help run')", args[0])
		}
		if err := runFlagConflicts(fs, f); err != nil {
			return err
		}
		return measure(f, stdout, stderr, func(h usecase.Hooks) (usecase.Measured, error) {
			return usecase.Run(ctx, f.cfg, h)
		}, func() error { return f.cfg.Validate() })
	}
}

// sweepCommand is packlab sweep NAME: its flags, and what it does with
// them; NAME may stand before the flags or among them (sweep --rows 1e5
// shards --no-save).
func sweepCommand(fs *flag.FlagSet) flags.Action {
	f := newRunFlags(fs, true)
	return func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		var name string
		if len(args) > 0 {
			name, args = args[0], args[1:]
		}
		if name == "" {
			return flags.Usagef("sweep: which one? (allowed: %s)", strings.Join(sweep.Names(), ", "))
		}
		if len(args) > 0 {
			return flags.Usagef("sweep %s: unexpected argument %q (flags start with --)", name, args[0])
		}
		if err := runFlagConflicts(fs, f); err != nil {
			return err
		}
		sw, err := sweep.Find(name)
		if err != nil {
			return flags.Usagef("sweep %q: unknown sweep (allowed: %s)", name, strings.Join(sweep.Names(), ", "))
		}
		return runSweep(ctx, sw, f, stdout, stderr)
	}
}

// runSweep measures sw with f's configuration and prints its table, with
// the claims its results measured below it.
func runSweep(ctx context.Context, sw sweep.Sweep, f *runFlags, stdout, stderr io.Writer) error {
	opt := sweep.Options{MaxShards: f.maxShards, WithReferences: f.withRefs, WithClickHouse: f.withCH}
	var measured []result.Result
	err := measure(f, stdout, stderr, func(h usecase.Hooks) (usecase.Measured, error) {
		m, err := usecase.Sweep(ctx, sw, f.cfg, opt, h)
		measured = m.Results
		return m, err
	}, func() error {
		_, err := sw.Configs(f.cfg, opt)
		return err
	})
	// Under the table, the claims its results measured (seed-claims); the
	// json and csv formats stay one array or one table.
	if err == nil && (strings.EqualFold(f.format, "table") || strings.EqualFold(f.format, "markdown")) {
		err = report.WriteClaims(stdout, measured, f.format)
	}
	return err
}

// measure is run and sweep's common part: check everything, open the
// results folder, measure with a progress bar on a terminal as one job
// (each result saved as it comes), print the table.
func measure(f *runFlags, stdout, stderr io.Writer,
	do func(usecase.Hooks) (usecase.Measured, error), validate func() error) error {
	if err := checkFormat(f.format, text.Formats()); err != nil {
		return err
	}
	if err := validate(); err != nil {
		return err
	}
	bar := newProgressBar(stderr)
	h := bar.hooks()
	h.Notice = func(s string) { fmt.Fprintln(stderr, "packlab:", text.Terminal(words(s))) }
	if !f.noSave {
		st, err := store.OpenStore(f.resultsDir)
		if err != nil {
			return err
		}
		h.Store = st
	}
	m, runErr := do(h)
	bar.clear()
	if len(m.Results) > 0 {
		if err := report.WriteTable(stdout, m.Results, f.format); err != nil {
			return err
		}
		for _, n := range m.Notes {
			fmt.Fprintln(stderr, "packlab:", text.Terminal(words(n)))
		}
	}
	if m.Skipped >= 0 {
		fmt.Fprintln(stderr, "packlab: --skip-bad-rows:", skippedText(m.Results))
	}
	if saved := len(m.Saved); saved > 0 {
		fmt.Fprintf(stderr, "packlab: saved %d result(s) in %s as job %s (%s)\n", saved, h.Store.Dir, m.Job.ID, text.Terminal(text.Short(m.Job.Name, text.MaxLabel)))
	}
	if runErr != nil && errors.Is(runErr, fault.ErrCancelled) {
		return fmt.Errorf("%w; %d result(s) measured before it", runErr, len(m.Results))
	}
	return runErr
}

// skippedText says how many malformed rows a file source's load skipped:
// "skipped 2 bad rows of dict.tsv (4,998 rows loaded)". Every layout reads
// the same file, so the first result speaks for all.
func skippedText(results []result.Result) string {
	r := results[0]
	rows := "rows"
	if r.SkippedRows == 1 {
		rows = "row"
	}
	return fmt.Sprintf("skipped %s bad %s of %s (%s rows loaded)", text.Thousands(r.SkippedRows), rows, r.Source, text.Thousands(r.Rows))
}

// progressBar draws one line on a terminal's stderr, redrawn in place, once
// a load has run for a second. On anything but a terminal it draws nothing.
type progressBar struct {
	w     io.Writer
	on    bool
	drawn bool
	// left, if set, says how long the job has left (a plan's calibration:
	// calibrationLeft), after the load's own progress.
	left func(worker.Progress) time.Duration
}

func newProgressBar(stderr io.Writer) *progressBar {
	b := &progressBar{w: stderr}
	if f, ok := stderr.(*os.File); ok && os.Getenv("TERM") != "dumb" { // a dumb terminal has no ESC[K
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			b.on = true
		}
	}
	return b
}

func (b *progressBar) update(p worker.Progress) {
	if !b.on {
		return
	}
	if p.Phase == worker.PhaseDone || p.Seconds < 1 {
		b.clear() // a finished run, or the first second of a load after an idle's line
		return
	}
	line := progressLine(p)
	if b.left != nil {
		line += "  calibration: about " + usecase.RoughDuration(b.left(p)) + " left"
	}
	fmt.Fprint(b.w, "\r"+line+"\x1b[K")
	b.drawn = true
}

func (b *progressBar) clear() {
	if b.drawn {
		fmt.Fprint(b.w, "\r\x1b[K")
		b.drawn = false
	}
}

// progressLine is the bar's text: run n of m, layout, rows, rows/s, ETA, RSS.
func progressLine(p worker.Progress) string {
	if p.Phase == worker.PhaseCount {
		return fmt.Sprintf("counting the source's rows before the load (the memory check needs them): %s rows  %s rows/s",
			shortCount(p.Rows), shortCount(int64(float64(p.Rows)/max(p.Seconds, 1e-9))))
	}
	s := fmt.Sprintf("[%d/%d] %s ", p.Repeat, p.Repeats, p.Layout)
	if p.Phase == worker.PhaseSettle {
		return s + fmt.Sprintf("idling %s of %s before the load, so that it starts on fresh memory",
			time.Duration(p.Seconds*float64(time.Second)).Round(time.Second), time.Duration(p.SettleSeconds*float64(time.Second)).Round(100*time.Millisecond))
	}
	if p.Phase == worker.PhaseRead {
		return s + fmt.Sprintf("loaded %s rows, reading ...  RSS %s", text.Rows(p.Rows), text.Bytes(p.RSSBytes))
	}
	rate := float64(p.Rows) / p.Seconds
	if p.TotalRows > 0 {
		const width = 24
		done := min(float64(p.Rows)/float64(p.TotalRows), 1)
		n := int(done * width)
		s += "[" + strings.Repeat("#", n) + strings.Repeat(".", width-n) + "] "
		s += fmt.Sprintf("%s/%s rows", shortCount(p.Rows), shortCount(p.TotalRows))
	} else {
		s += shortCount(p.Rows) + " rows"
	}
	s += fmt.Sprintf("  %s rows/s", shortCount(int64(rate)))
	if p.TotalRows > 0 && rate > 0 {
		eta := time.Duration(float64(p.TotalRows-p.Rows) / rate * float64(time.Second))
		s += "  ETA " + eta.Round(time.Second).String()
	}
	return s + "  RSS " + text.Bytes(p.RSSBytes)
}

// shortCount writes 12345678 as 12.3M.
func shortCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1fK", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// reportCommand is packlab report: its flags, and what it does with them.
func reportCommand(fs *flag.FlagSet) flags.Action {
	a := &reportArgs{}
	fs.StringVar(&a.dir, "results", "", "results folder")
	jobIDs := fs.String("job", "", "job ids, comma-separated")
	fs.BoolVar(&a.all, "all", false, "every job")
	fs.StringVar(&a.since, "since", "", "jobs started since")
	ids := fs.String("ids", "", "result ids, comma-separated")
	fs.StringVar(&a.out, "out", "", "output file")
	fs.StringVar(&a.format, "format", "html", "html or markdown")
	fs.StringVar(&a.title, "title", "", "report title")
	fs.BoolVar(&a.list, "list", false, "list saved jobs")
	fs.BoolVar(&a.force, "force", false, "replace an existing --out file")
	return func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		if err := a.check(fs, args, *ids, *jobIDs); err != nil {
			return err
		}
		return cmdReport(ctx, a, stdout, stderr)
	}
}

// cmdReport writes the report a asks for, or its list of jobs.
func cmdReport(ctx context.Context, a *reportArgs, stdout, stderr io.Writer) error {
	var output *store.Output
	if a.out != "" {
		// Checked and opened before any result is read (experiments/store/files.go).
		o, err := store.CreateOutput("--out", a.out, a.force)
		if err != nil {
			return err
		}
		output = o
		defer o.Abort()
		defer o.StopWith(ctx)() // a named pipe's reader that does not read
	}
	if a.dir == "" {
		d, err := store.DefaultResultsDir()
		if err != nil {
			return err
		}
		a.dir = d
	}
	if err := notAFolder(a.dir); err != nil {
		return err
	}
	if _, err := os.Stat(a.dir); err != nil {
		return flags.Usagef("--results %s: no such folder (allowed: a folder of saved results; run 'packlab run' first)", a.dir)
	}
	results, jobs, err := a.pick(ctx, stderr)
	if err != nil {
		return err
	}
	if a.list {
		return listJobs(stdout, jobs, len(a.jobs) > 0 || a.all)
	}
	if len(results) == 0 && len(inspections(jobs)) == 0 {
		return fmt.Errorf("no results in %s (run 'packlab run' first)", a.dir)
	}
	return a.write(ctx, results, jobs, output, stdout, stderr)
}

// reportArgs is report's flags, checked.
type reportArgs struct {
	dir, out, format, title, since string
	titleSet, all, list, force     bool
	ids, jobs                      []string  // --ids, --job
	after                          time.Time // --since, parsed; zero if not given
}

// check checks report's flags once fs has parsed them, with --ids and
// --job as given; args are the arguments that are not flags.
func (a *reportArgs) check(fs *flag.FlagSet, args []string, ids, jobIDs string) error {
	if len(args) > 0 {
		return flags.Usagef("report: unexpected argument %q (flags start with --)", args[0])
	}
	const pick = "each picks the jobs or results to report"
	if err := flags.CheckConflicts(fs, []flags.Conflict{
		{A: "out", B: "list", Why: "--list prints the ids"}, {A: "format", B: "list", Why: "--list prints the ids"}, {A: "title", B: "list", Why: "--list prints the ids"},
		{A: "job", B: "all", Why: pick}, {A: "job", B: "since", Why: pick}, {A: "job", B: "ids", Why: pick}, {A: "all", B: "since", Why: pick}, {A: "all", B: "ids", Why: pick}, {A: "since", B: "ids", Why: pick},
		{A: "ids", B: "list", Why: "--list lists jobs; --list --job ID lists a job's results"},
	}); err != nil {
		return err
	}
	if err := checkFormat(a.format, []string{"html", "markdown"}); err != nil {
		return err
	}
	var err error
	if a.ids, err = idsFlag("ids", ids, "result id", "packlab report --list --all"); err != nil {
		return err
	}
	if a.jobs, err = idsFlag("job", jobIDs, "job id", "packlab report --list"); err != nil {
		return err
	}
	if _, set := flags.Given(fs, "since"); set {
		if a.after, err = parseSince(a.since, time.Now()); err != nil {
			return err
		}
	}
	_, a.titleSet = flags.Given(fs, "title")
	if a.out == "-" {
		a.out = "" // standard output, as the default
	}
	return nil
}

// pick reads the results to report: those of --ids, or of the jobs picked
// (newest first; none with --ids), the results in the order they were run.
func (a *reportArgs) pick(ctx context.Context, stderr io.Writer) ([]result.Result, []store.JobResults, error) {
	st := &store.Store{Dir: a.dir}
	var results []result.Result
	if len(a.ids) > 0 {
		for _, id := range a.ids {
			if err := ctx.Err(); err != nil {
				return nil, nil, fmt.Errorf("%w: report (%v)", fault.ErrCancelled, err)
			}
			r, err := st.Load(id)
			if err != nil {
				return nil, nil, err
			}
			results = append(results, r)
		}
		return results, nil, nil
	}
	saved, problems, err := st.Jobs(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range problems {
		fmt.Fprintln(stderr, "packlab: skipped", oneLine(p))
	}
	if len(saved) == 0 {
		return nil, nil, fmt.Errorf("no results in %s (run 'packlab run' first)", a.dir)
	}
	jobs, err := a.pickJobs(saved)
	if err != nil {
		return nil, nil, err
	}
	for i := range jobs {
		if len(a.jobs) == 0 { // the report reads in the order the runs were made
			i = len(jobs) - 1 - i
		}
		results = append(results, jobs[i].Results...)
	}
	return results, jobs, nil
}

// pickJobs is the saved jobs (newest first) that --job, --all, --since or
// --list pick; by default the last job asked for, not a plan's calibration.
func (a *reportArgs) pickJobs(saved []store.JobResults) ([]store.JobResults, error) {
	var jobs []store.JobResults
	switch {
	case len(a.jobs) > 0:
		for _, id := range a.jobs {
			i := slices.IndexFunc(saved, func(j store.JobResults) bool { return j.ID == id })
			if i < 0 {
				return nil, flags.Usagef("--job %s: no such job in %s (allowed: job ids listed by 'packlab report --list')", fault.ShowValue(id), a.dir)
			}
			jobs = append(jobs, saved[i])
		}
	case a.all:
		jobs = saved
	case !a.after.IsZero():
		for _, j := range saved {
			if t, err := time.Parse(time.RFC3339, j.StartedAt); err == nil && !t.Before(a.after) {
				jobs = append(jobs, j)
			}
		}
		if len(jobs) == 0 {
			return nil, flags.Usagef("--since %s: no job started since %s in %s (allowed: a time before the last job, %s)",
				fault.ShowValue(a.since), a.after.Local().Format("2006-01-02 15:04:05"), a.dir, localTime(saved[0].StartedAt))
		}
	case a.list:
		jobs = saved
	default:
		last, _ := store.LastAsked(saved)
		jobs = []store.JobResults{last}
	}
	return jobs, nil
}

// write writes the report to output (or stdout when nil) and says on
// stderr what it wrote; a cancel writes nothing.
func (a *reportArgs) write(ctx context.Context, results []result.Result, jobs []store.JobResults, output *store.Output, stdout, stderr io.Writer) error {
	ins := inspections(jobs)
	if len(a.jobs) == 0 { // in the order they were made, as the results
		slices.Reverse(ins)
	}
	picked := fmt.Sprintf("%d results", len(results))
	if len(ins) > 0 {
		picked = fmt.Sprintf("%d results and %d inspection(s)", len(results), len(ins))
	}
	title := a.title
	if len(jobs) == 1 {
		picked = strings.TrimPrefix(picked, "0 results and ")
		picked += " of job " + jobs[0].ID + " (" + text.Terminal(text.Short(jobs[0].Name, text.MaxLabel)) + ")"
		if !a.titleSet {
			title = report.DefaultReportTitle + ": " + text.Short(jobs[0].Name, text.MaxLabel)
		}
	} else if len(jobs) > 1 {
		picked += fmt.Sprintf(" of %d jobs", len(jobs))
	}
	w := stdout
	if output != nil {
		w = output
	}
	var err error
	if strings.EqualFold(a.format, "markdown") {
		err = report.WriteJobsReportMarkdown(w, results, ins, title)
	} else {
		err = report.WriteJobsReport(w, results, ins, title)
	}
	if ctx.Err() != nil {
		written := "nothing written"
		if output == nil || output.Direct() {
			written = "what was written may be cut short"
		}
		err = fmt.Errorf("%w: report (%v); %s", fault.ErrCancelled, context.Cause(ctx), written)
	}
	if output != nil && err == nil {
		if err = output.Commit(); err == nil {
			fmt.Fprintf(stderr, "packlab: wrote %s (%s)\n", a.out, picked)
		}
	}
	if err == nil && len(jobs) == 1 && len(a.jobs) == 0 && !a.all && a.after.IsZero() {
		fmt.Fprintf(stderr, "packlab: reported the last job (a run, sweep or inspection; a plan's calibration is reported only with --job); 'packlab report --list' lists them, --job ID picks one, --all reports every job\n")
	}
	return err
}

// inspections are the saved inspections among jobs, in their order.
func inspections(jobs []store.JobResults) []report.InspectionJob {
	var out []report.InspectionJob
	for _, j := range jobs {
		if j.Inspection != nil {
			out = append(out, report.InspectionJob{Job: j.Job, Inspection: j.Inspection})
		}
	}
	return out
}

// idsFlag splits a comma-separated list of ids (config.SplitList: an
// empty one is refused, naming which); one given twice is refused.
func idsFlag(name, value, what, lister string) ([]string, error) {
	ids, err := config.SplitList(name, value, what, "ids listed by '"+lister+"', comma-separated")
	if err != nil {
		return nil, err
	}
	var list []string
	for _, id := range ids {
		if slices.Contains(list, id) { // reported twice, the second as a run of its own ("#2")
			return nil, flags.Usagef("--%s %s: given twice (allowed: each %s once)", name, fault.ShowValue(id), what)
		}
		list = append(list, id)
	}
	return list, nil
}

// parseSince reads --since: a duration back from now (90m, 2h, 3d), a date
// (2026-12-01, local midnight) or a local time (2026-12-01T10:00,
// 2026-12-01 10:00:05), or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(s)
	const allowed = "allowed: a duration back from now like 90m, 2h or 3d, up to 99999d; a date 2026-12-01; a time 2026-12-01T10:00"
	if days, ok := strings.CutSuffix(v, "d"); ok {
		// A number of days, or none a job could have started in
		// ("99999999d" and "-3d" were "not a time").
		switch n, err := strconv.ParseFloat(days, 64); {
		case err == nil && n >= 0 && n < 1e5:
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		case err == nil && n < 0:
			return time.Time{}, flags.Usagef("--since %s: negative (%s)", fault.ShowValue(s), allowed)
		case err == nil && !math.IsNaN(n), errors.Is(err, strconv.ErrRange):
			return time.Time{}, flags.Usagef("--since %s: out of range (%s)", fault.ShowValue(s), allowed)
		}
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, flags.Usagef("--since %s: negative (%s)", fault.ShowValue(s), allowed)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, flags.Usagef("--since %s: not a time (%s)", fault.ShowValue(s), allowed)
}

// localTime shows an RFC 3339 time in this machine's zone.
func localTime(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return text.Terminal(s)
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// listJobs prints one line per job, newest first: its id, when it started,
// where, how many results, its name; with results, each job's results
// below it, in the order they were measured.
func listJobs(out io.Writer, jobs []store.JobResults, results bool) error {
	w := bufio.NewWriter(out) // keeps the first write error: a full disk is not a list
	for _, j := range jobs {
		face := j.Face
		if face == "" {
			face = "-"
		}
		n, count := "results", text.Thousands(int64(len(j.Results)))
		if len(j.Results) == 1 {
			n = "result"
		}
		if j.Inspection != nil {
			n, count = "inspection", "" // an inspection measured no result
		}
		line := fmt.Sprintf("%s  %s  %-12s  %5s %-7s  %s", j.ID, localTime(j.StartedAt), face, count, n, text.Short(j.Name, text.MaxLabel))
		fmt.Fprintln(w, text.Terminal(line))
		if !results {
			continue
		}
		if j.Inspection != nil {
			for _, d := range j.Inspection.Dictionaries {
				line := fmt.Sprintf("    %s.%s on %s  %s  %s rows  %s", d.Database, d.Name, d.Node, text.OrDash(d.Layout), text.Thousands(d.ElementCount), text.Bytes(d.BytesAllocated))
				fmt.Fprintln(w, text.Terminal(line))
			}
		}
		for _, r := range j.Results {
			line := fmt.Sprintf("    %s  %s  %s/%s  %s rows  shards %d", r.ID, r.Layout, r.KeyType, r.ValueType, text.Rows(r.Rows), r.Shards)
			fmt.Fprintln(w, text.Terminal(line))
		}
	}
	return w.Flush()
}

// noWindow ends the help that packlab with no command prints when this
// binary has no lab window (a desktop build opens the window instead).
const noWindow = `This packlab has no lab window: it was built without the desktop tags.
For the window, 'make lab' builds bin/packlab-desktop and opens it (or
'make desktop' only builds it); for the lab in a browser, 'packlab serve --open'.
`

// versionText says which packlab this is and what is built into it: the
// lab window (make desktop) and the browser lab's site (make web-binary).
func versionText() string {
	window := "not built in ('make desktop' builds bin/packlab-desktop with it)"
	if desktop.BuiltIn {
		window = "built in (packlab with no command opens it)"
	}
	site := "not built in ('packlab serve' builds build/web/ from the source; 'make web-binary' builds bin/packlab-web with it inside)"
	if serve.EmbeddedSite() != nil {
		site = "built in ('packlab serve' needs no folder)"
	}
	return fmt.Sprintf("packlab %s (%s, %s/%s)\nlab window: %s\nbrowser site: %s\n%s\n",
		app.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, window, site, workersText())
}

// workersText says which workers this packlab finds: ClickHouse's (the ch_
// layouts, the plan's --verify) and the C++ reference maps'.
func workersText() string {
	ch := chdriver.Status()
	chLine := "ClickHouse's dictionaries (ch_ layouts): not built: " + ch.Problem
	if ch.Available {
		chLine = fmt.Sprintf("ClickHouse's dictionaries (ch_ layouts): built, ClickHouse %s (%s)", ch.Version, ch.Path)
	}
	refs := refdriver.Status()
	refsLine := "C++ reference maps: not built: " + refs.Problem
	if refs.Available {
		refsLine = "C++ reference maps: built (" + refs.Path + ")"
	}
	return chLine + "\n" + refsLine
}

const usage = `packlab — a tuning lab for memory-dense, sharded hash maps

Usage:
  packlab run [flags]           measure layouts at one configuration
  packlab sweep NAME [flags]    a scenario: seed-table, shards, types, growth, load-factor, seed-claims
  packlab plan --rows N [flags] which layout, load factor and shards for N rows in a budget
  packlab report [flags]        an HTML report (or markdown) of saved results and inspections
  packlab inspect --clickhouse URL  a ClickHouse server's dictionaries, modelled and advised
  packlab serve [flags]         the lab in a browser, on 127.0.0.1 ('packlab serve -h')
  packlab history list          the saved jobs, newest first (runs, sweeps, inspections)
  packlab history clear         delete every saved result and inspection (--yes: no question)
  packlab version               print the version
  packlab help [COMMAND]        this text, or a command's flags

Example:
  packlab run --layout hashed,packed --key UInt64 --value UInt16 --rows 1e7

Each layout is measured in a fresh worker process, so its RSS is its own;
results are saved as JSON in {{results}} (--results DIR).
Every run and sweep is a job: 'packlab report' reports the last one,
'packlab report --list' lists them.
` + flags.Rules

const usageRun = `packlab run [flags] — measure layouts at one configuration

What to build:
  --layout L,L          layouts, comma-separated (default: all of packlab's):
                        {{layouts}}.
                        A C++ reference map runs as one table with its library's
                        own growth ({{refs}}).
                        A ch_ layout is ClickHouse itself, embedded, loading the
                        same rows; --shards and --max-load-factor apply
                        ({{ch}})
  --key TYPE            key type (default UInt64): UInt8..UInt128, Int8..Int128,
                        Float32, Float64, UUID, Date, DateTime; in the
                        ch_complex_key_ layouts also String, String(16),
                        String(8..32) or Tuple(String, UInt64), derived from
                        the generated keys
  --value TYPE          value type (default UInt16)
  --attributes T,T,...  a dictionary's attribute types, the first the value:
                        UInt16,UInt32,Float64, or with names country:UInt16,...;
                        String values are 8 to 32 bytes, String(4..16) or
                        String(16) for others, Nullable(T) a tenth of them NULL;
                        ch_ layouts (HASHED and SPARSE_HASHED keep a table per
                        attribute, HASHED_ARRAY one index and an array per
                        attribute) and packed_row, compact_row (the row in
                        one cell; a row over 16 bytes in an array beside it)
  --shards N            tables per map, 1 to 128 (default 1)
  --max-load-factor F   0.5 to 0.99 (default 0.5, ClickHouse's; compact's 0.9, iceberg's 0.92)
  --preallocate         reserve every table for --rows before the load (the C++
                        maps too: reserve()), as ClickHouse's PREALLOCATE 1 did:
                        no growth, so a faster load and no growth peak; rows, not
                        distinct keys, so range:M and zipf keys over-reserve.
                        Needs a synthetic source (--keys)

Keys:
  --rows N              rows: 1000000, 1e6, 1M, 2.5M, 1B (default 1M)
  --keys KIND           sequential, random, range:M, zipf:S (default random)
  --seed N              seed of keys, values and read order (default 0)
  --source FILE         a TSV or CSV file (.gz too) instead of --keys; all its rows.
                        A pipe, FIFO, /dev/stdin or <(cmd) is read once, as it comes:
                        no row count first (no memory check, no ETA), one layout,
                        no --repeats, no sweep
  --key-column C        its key column: 1-based position or header name (default 1)
  --value-column C      its value column, or none (default 2)
  --header H            auto, yes, no (default auto)
  --skip-bad-rows       skip malformed rows instead of stopping at the first
  --columns C,C,...     with --attributes, the file's column of each attribute
                        after the value: positions or header names (default:
                        an attribute's name in the header, else columns
                        3, 4, ... in order); none: drawn from the key.
                        A cell that does not parse as its type stops the run
                        before it starts, naming the file, line and column

Loader (ClickHouse's parallel loader: one producer, one worker per shard):
  --shard-select S      how the producer picks a row's shard from its hash:
                        modulo (a division, as ClickHouse), mask (shards must
                        be a power of two), auto (mask when it can; default).
                        Every choice puts a key in the same shard.
  --block-rows N        rows the producer reads and splits at a time, 1 to
                        16777216 (default 65536, ClickHouse's max_block_size)
  --threads N           threads the measuring process runs at once (GOMAXPROCS),
                        1 to 256 (default: every core); the shards' workers share them

Measuring:
  --huge-pages on|off   whether packlab's slabs from 4 MiB ask Linux for
                        transparent huge pages (default on): reads run faster;
                        on a VM that hands free memory back to its host a
                        fresh huge page is slow to fault in, so loads may be
                        slower (compare both: they are labelled apart)
  --repeats N           loads per layout; times are medians (default 1)
  --settle T            idle T before each load: seconds or a duration (8, 8s,
                        1m; 0 to 10 minutes; default 0). On a VM that hands
                        freed memory back to its host, a load right after
                        another reuses its pages and runs several times
                        faster; a few seconds' idle (8s on the lab's VM) puts
                        every load on fresh memory, so that loads compare fairly
  --no-read             skip the read phase
  --miss-rate F         absent-key lookups per loaded row, 0 to 1 (default 0)
  --in-process          measure in this process, not a fresh worker (RSS less clean)
  --force               run even if the memory guard predicts it will not fit in
                        the smaller of MemAvailable and the cgroup's memory limit

Output:
  --format F            table, markdown, csv, json (a JSON array and nothing else)
  --results DIR         results folder (default {{results}},
                        from $XDG_DATA_HOME, else ~/.local/share)
  --no-save             do not save results
` + flags.Rules

// usageRunText is usageRun with what this machine has of the reference maps.
func usageRunText() string {
	layouts := strings.ReplaceAll(config.LayoutNames(), "; ", ";\n                        ")
	return strings.NewReplacer("{{layouts}}", layouts, "{{refs}}", referencesStatus(), "{{ch}}", clickHouseStatus(), "{{results}}", resultsDirText()).Replace(usageRun)
}

// usageText is usage with this user's results folder.
func usageText() string { return strings.ReplaceAll(usage, "{{results}}", resultsDirText()) }

// resultsDirText is the results folder the help names: the one a run
// without --results would use for this user now (XDG_DATA_HOME honoured).
func resultsDirText() string {
	d, err := store.DefaultResultsDir()
	if err != nil {
		return "$XDG_DATA_HOME/packlab/results (" + oneLine(err) + ")"
	}
	return d
}

// referencesStatus says whether the C++ reference maps can run here, and
// how to get them when they cannot.
func referencesStatus() string {
	st := refdriver.Status()
	if !st.Available {
		return "unavailable: " + st.Problem
	}
	return "built: " + st.Path
}

// clickHouseStatus says whether ClickHouse's own dictionaries can run
// here, and how to get them when they cannot.
func clickHouseStatus() string {
	st := chdriver.Status()
	if !st.Available {
		return "unavailable: " + st.Problem
	}
	return "ClickHouse " + st.Version + ": " + st.Path
}

func usageSweep() string {
	var b strings.Builder
	b.WriteString("packlab sweep NAME [flags] — a family of runs, measured one after the other\n\nSweeps:\n")
	for _, s := range sweep.All() {
		rows := text.Rows(s.Rows)
		if s.RowsDoc != "" {
			rows = s.RowsDoc
		}
		fmt.Fprintf(&b, "  %-12s %s (default rows %s)\n", s.Name, words(s.Doc), rows)
	}
	b.WriteString("\nFlags: those of 'packlab run' (a sweep refuses the one it varies), and\n")
	b.WriteString("  --max-shards N        shards sweep: the largest shard count (default 8)\n")
	b.WriteString("  --with-references     seed-table sweep: the C++ reference maps too (" + referencesStatus() + ")\n")
	b.WriteString("  --with-clickhouse     seed-table sweep: ClickHouse's own dictionaries too (" + clickHouseStatus() + ")\n")
	b.WriteString(flags.Rules)
	return b.String()
}

const usageReport = `packlab report [flags] — a self-contained HTML report of saved results

Every run, sweep and inspection (packlab inspect) is a job, the desktop's Runs
and inspections and the browser's Runs too; the report is of the last job asked
for (a run, sweep or inspection, not a plan's calibration) unless told otherwise:
  --job ID,ID           these jobs (ids from --list)
  --all                 every job in the folder
  --since WHEN          the jobs started since WHEN: 90m, 2h, 3d, 2026-12-01, 2026-12-01T10:00
  --ids ID,ID           these results, in this order

  --results DIR         results folder (default as for run)
  --out FILE            write to FILE (default, or -: stdout); a file that exists
                        is refused unless --force (a saved result never is replaced)
  --force               replace the --out file if it exists
  --format F            html (charts and table) or markdown (the table and its notes);
                        an inspection: its dictionaries, findings and advice, as inspect prints them
  --title T             the report's title (default: the job's name)
  --list                list the jobs instead, newest first; with --job or --all,
                        each job's results below it
` + flags.Rules
