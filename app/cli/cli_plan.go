package cli

// packlab plan: the planner on the command line (package experiments/planner).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/planner/write"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server/table"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
	"github.com/packlab/packlab/experiments/worker"
)

// cmdPlan plans what a asks for, calibrating first unless told not to,
// and verifies the plan with --verify.
func cmdPlan(ctx context.Context, a *planArgs, stdout, stderr io.Writer) error {
	saved, err := store.OpenStore(a.resultsDir)
	if err != nil {
		return err
	}
	calibration := usecase.CalibrateMissing
	switch {
	case a.noCal:
		calibration = usecase.CalibrateNone
	case a.recal:
		calibration = usecase.CalibrateAgain
	}
	var bar *progressBar
	ask := usecase.PlanAsk{Request: a.req, Calibration: calibration, Store: saved, NoSave: a.noSave,
		Calibrating: func(cfgs []config.Config) (context.Context, usecase.Hooks, func(), error) {
			fmt.Fprintln(stderr, calibrationLine(cfgs))
			bar = newProgressBar(stderr)
			bar.left = usecase.CalibrationLeft(cfgs)
			return ctx, bar.hooks(), bar.clear, nil
		}}
	var ans usecase.PlanAnswer
	if a.from.Table != "" {
		ans, err = planFrom(ctx, a, ask, stderr) // cli_plan_server.go
	} else {
		ans, err = usecase.Plan(ctx, ask)
	}
	for _, p := range ans.Problems {
		fmt.Fprintln(stderr, "packlab: skipped", oneLine(p))
	}
	if err != nil {
		return err
	}
	if bar != nil {
		fmt.Fprintf(stderr, "packlab: calibrated in %.1f s\n", ans.Calibrated.Seconds)
	}
	if a.verify && a.clickhouse == "" {
		if st := chdriver.Status(); !st.Available {
			return flags.Usagef("--verify: ClickHouse is unavailable: %s", st.Problem)
		}
	}
	plan := ans.Plan
	if err := writeWords(stdout, func(w io.Writer) error { return write.Plan(w, plan, a.format) }); err != nil || !a.verify {
		return err
	}
	if a.clickhouse != "" {
		return verifyPlanOnServer(ctx, plan, a, stdout, stderr) // cli_plan_server.go
	}
	return verifyPlan(ctx, plan, saved, a.noSave, a.format, stdout, stderr)
}

// planArgs is plan's flags, checked.
type planArgs struct {
	req                          planner.PlanRequest
	format, resultsDir           string
	noCal, recal, noSave, verify bool
	clickhouse, cluster          string        // --verify on this server, or every replica of this cluster (cli_plan_server.go)
	from                         table.Ask     // --from: the table on --clickhouse the plan is for
	queryTimeout                 time.Duration // --query-timeout: each query on --clickhouse (0: the default)
	connectTimeout               time.Duration // --connect-timeout: connecting to --clickhouse (0: the default)
}

// planCommand is packlab plan: its flags, and what it does with them.
func planCommand(fs *flag.FlagSet) flags.Action {
	a := &planArgs{format: "table"}
	req := &a.req
	rowsFlag(fs, &req.Rows)
	typeFlags(fs, &req.Key, &req.Value, &req.Attributes)
	fs.Func("memory", "memory budget", func(s string) error {
		n, err := planner.ParseMemory(s)
		req.MemoryBytes = n
		return err
	})
	fs.Func("threads", "loader threads", func(s string) error {
		return intFlag("--threads", s, 1, config.MaxThreads, &req.Threads)
	})
	fs.StringVar(&req.Prefer, "prefer", "", "balanced, memory, read or load")
	fs.Func("growth", "percent the dictionary grows before its next reload", func(s string) error {
		g, err := planner.ParseGrowth(s)
		req.GrowthPercent = &g
		return err
	})
	fs.StringVar(&req.For, "for", "", "clickhouse or go: show that answer alone")
	fs.BoolVar(&req.FirstLoadOnly, "first-load-only", false, "check the budget against the first load's peak alone")
	fs.BoolVar(&req.Preallocate, "preallocate", false, "plan tables reserved for the rows")
	fs.StringVar(&a.format, "format", "table", "output format")
	fs.StringVar(&a.resultsDir, "results", "", "results folder")
	fs.Func("calibrate-rows", "the calibration's rows", func(s string) (err error) {
		req.CalibrationRows, err = planner.ParseCalibrationRows(s)
		return err
	})
	fs.Func("settle", "idle before each calibration load", func(s string) error {
		var v float64
		req.SettleSeconds = &v
		return settleFlag(s, &v)
	})
	fs.Func("max-key", "the largest key of dense integer keys", func(s string) (err error) {
		req.MaxKey, err = planner.ParseMaxKey(s)
		return err
	})
	fs.BoolVar(&a.noCal, "no-calibrate", false, "use saved results only")
	fs.BoolVar(&a.recal, "calibrate", false, "measure this machine again")
	fs.BoolVar(&a.noSave, "no-save", false, "do not save the calibration's results")
	fs.BoolVar(&a.verify, "verify", false, "build the chosen dictionary in ClickHouse and compare")
	fs.StringVar(&req.ClickHouseVersion, "clickhouse-version", "", "the ClickHouse release the LAYOUT clauses are for")
	fs.StringVar(&a.clickhouse, "clickhouse", "", "--verify on this ClickHouse server")
	fs.StringVar(&a.cluster, "cluster", "", "--verify on every replica of this cluster")
	fs.Func("query-timeout", "each query on --clickhouse", func(v string) error { return durationFlag("--query-timeout", v, &a.queryTimeout) })
	fs.Func("connect-timeout", "connecting to --clickhouse", func(v string) error { return durationFlag("--connect-timeout", v, &a.connectTimeout) })
	fs.StringVar(&a.from.Table, "from", "", "plan for a dictionary over this table on --clickhouse")
	fs.StringVar(&a.from.KeyColumn, "key-column", "", "with --from: the key column")
	fs.Func("columns", "with --from: the attribute columns", func(s string) (err error) {
		a.from.Columns, err = config.SplitList("columns", s, "column", table.ColumnsAllowed)
		return err
	})
	return func(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
		if err := a.check(fs, args); err != nil {
			return err
		}
		return cmdPlan(ctx, a, stdout, stderr)
	}
}

// check checks plan's flags once fs has parsed them; args are the
// arguments that are not flags.
func (a *planArgs) check(fs *flag.FlagSet, args []string) error {
	req := &a.req
	_, rowsGiven := flags.Given(fs, "rows")
	switch {
	case len(args) > 0:
		return flags.Usagef("plan: unexpected argument %q (flags start with --; run 'packlab help plan')", args[0])
	case !rowsGiven && a.from.Table == "":
		return flags.Usagef("plan: --rows is missing (allowed: a whole number of rows from 1 to 2^62, e.g. --rows 1e9, or --from TABLE --clickhouse URL)")
	case a.from.Table == "" && (a.from.KeyColumn != "" || a.from.Columns != nil):
		return flags.Usagef("--key-column and --columns: need --from (allowed: plan --clickhouse URL --from DB.TABLE --key-column ID --columns A,B)")
	case a.queryTimeout != 0 && a.clickhouse == "":
		return flags.Usagef("--query-timeout: needs --clickhouse (allowed: plan --clickhouse URL --from DB.TABLE --query-timeout 5m)")
	case a.connectTimeout != 0 && a.clickhouse == "":
		return flags.Usagef("--connect-timeout: needs --clickhouse (allowed: plan --clickhouse URL --from DB.TABLE --connect-timeout 30s)")
	case a.from.Table != "" && a.clickhouse == "":
		return flags.Usagef("--from: needs --clickhouse (allowed: plan --clickhouse URL --from DB.TABLE)")
	case a.noCal && a.recal:
		return flags.Usagef("--calibrate and --no-calibrate: contradict each other (allowed: one of them)")
	case a.cluster != "" && a.clickhouse == "":
		return flags.Usagef("--cluster: needs --clickhouse (allowed: plan --verify --clickhouse URL --cluster NAME)")
	case a.clickhouse != "" && !a.verify && a.from.Table == "":
		return flags.Usagef("--clickhouse: needs --verify or --from (allowed: plan --verify --clickhouse URL builds the plan's dictionary on that server; plan --clickhouse URL --from DB.TABLE plans one over that table)")
	case a.noCal && req.CalibrationRows != 0:
		return flags.Usagef("--calibrate-rows and --no-calibrate: contradict each other (allowed: one of them)")
	}
	fromTable := "the table's columns say it"
	if err := flags.CheckConflicts(fs, []flags.Conflict{{A: "value", B: "attributes", Why: "the value is the first attribute"},
		{A: "from", B: "rows", Why: "the table's rows are planned (--growth plans for more)"}, {A: "from", B: "key", Why: fromTable},
		{A: "from", B: "value", Why: fromTable}, {A: "from", B: "attributes", Why: fromTable}, {A: "from", B: "max-key", Why: fromTable},
		{A: "from", B: "cluster", Why: "the table is read on the --clickhouse node alone, and a verification there builds over that node's rows"}}); err != nil {
		return err
	}
	if err := checkFormat(a.format, text.Formats()); err != nil {
		return err
	}
	check := *req
	if a.from.Table != "" {
		check.Rows = 1 // the table's, once read (usecase.PlanFrom); the rest is checked before the server is asked
	}
	return asGiven(fs, check.Validate(), "max_key", "calibration_rows")
}

// asGiven is err with the value of a field error of fields as its flag was
// given: --max-key 5e3, where the engine, holding the number, says 5000.
func asGiven(fs *flag.FlagSet, err error, fields ...string) error {
	var fe *fault.FieldError
	if !errors.As(err, &fe) || !slices.Contains(fields, fe.Field) {
		return err
	}
	given, ok := flags.Given(fs, strings.TrimPrefix(flagName(fe.Field), "--"))
	if !ok {
		return err
	}
	shown := *fe
	shown.Value = given
	return &shown
}

// verifyPlan builds the plan's best ClickHouse dictionary in ClickHouse
// itself (usecase.VerifyPlan), at the plan's rows or MaxVerifyRows if
// fewer, and says what it holds beside the plan's model: after the plan on
// standard output (on standard error for csv and json, which stay one
// document).
func verifyPlan(ctx context.Context, plan planner.Plan, saved *store.Store, noSave bool, format string, stdout, stderr io.Writer) error {
	bar := newProgressBar(stderr)
	h := bar.hooks()
	if !noSave {
		h.Store = saved
	}
	v, err := usecase.VerifyPlan(ctx, usecase.VerifyAsk{Plan: plan, Hooks: h, Starting: func(v usecase.Verifying) {
		fmt.Fprintf(stderr, "packlab: verifying in ClickHouse: %s at %s rows\n", v.Clause, text.Rows(v.Rows))
	}})
	bar.clear()
	if errors.Is(err, usecase.ErrServerOnly) {
		return fmt.Errorf("--verify: %w; give --clickhouse URL to build it there", err)
	}
	if err != nil {
		return fmt.Errorf("--verify: %w", err)
	}
	printVerified(v, format, stdout, stderr)
	return nil
}

// printVerified prints a verification's lines after the plan: on standard
// output, or on standard error for csv and json.
func printVerified(v usecase.Verified, format string, stdout, stderr io.Writer) {
	out, prefix := stdout, ""
	if format == "csv" || format == "json" {
		out, prefix = stderr, "packlab: "
	} else {
		fmt.Fprintln(out)
	}
	for _, line := range v.Lines {
		fmt.Fprintln(out, prefix+text.Terminal(line))
	}
}

// hooks are a job's hooks on the command line: the bar shows its progress
// and steps aside while each result is kept.
func (b *progressBar) hooks() usecase.Hooks {
	return usecase.Hooks{Face: result.FaceCLI, Progress: b.update, Measured: func(result.Result) error {
		b.clear()
		return nil
	}}
}

// calibrationLine says what the planner's calibration measures and about
// how long it takes.
func calibrationLine(cfgs []config.Config) string {
	var what []string
	for i, c := range cfgs {
		switch {
		case c.Shards > 1 && i > 0 && cfgs[i-1].Shards <= 1:
			what[len(what)-1] = fmt.Sprintf("%s at 1 and %d shards", strings.Join(c.Layouts, ", "), c.Shards)
		case c.Shards > 1:
			what = append(what, fmt.Sprintf("%s at %d shards", strings.Join(c.Layouts, ", "), c.Shards))
		default:
			what = append(what, strings.Join(c.Layouts, ", "))
		}
	}
	loads := 0
	for _, c := range cfgs {
		loads += len(c.Layouts) * max(c.Repeats, 1)
	}
	seconds := usecase.CalibrationLeft(cfgs)(worker.Progress{Repeat: 1, Phase: worker.PhaseSettle}).Seconds()
	took := fmt.Sprintf("about %d s", int(math.Round(seconds)))
	if seconds >= 120 {
		took = fmt.Sprintf("about %d minutes", int(math.Round(seconds/60)))
	}
	return fmt.Sprintf("packlab: calibrating this machine: %s, %s rows each, %d loads in all for medians and ranges (%s on the 2-core lab machine; Ctrl-C stops it and keeps what was measured; saved results are used next time)",
		strings.Join(what, "; "), text.Rows(cfgs[0].Rows), loads, took)
}

const usagePlan = `packlab plan [flags] — which layout, load factor and shard count, before loading a row

  --rows N              rows (distinct keys) to hold: 1000, 1e9, 1B, 1T ... up to 2^62
                        (required, unless --from)
  --from DB.TABLE       with --clickhouse URL: plan the dictionary over that table of
                        the server: its rows (distinct keys), its key's and columns'
                        types, each String column's mean length and each Nullable's
                        NULL share, read in one pass over the table (as a reload of
                        the dictionary reads it); the CREATE DICTIONARY names the
                        table and its columns, and --verify builds it there
  --key-column NAME     with --from: the key (default: the table's primary key, when
                        it is one column)
  --columns A,B,...     with --from: the attribute columns (default: all but the key);
                        a fixed-size one goes first, as the plan's value
  --key TYPE            key type (default UInt64)
  --value TYPE          value type (default UInt16)
  --max-key N           the largest key, when the keys are integers from 0 to N
                        (ids): the plan weighs ClickHouse's FLAT, an array per
                        attribute indexed by the key
  --attributes T,T,...  a dictionary's attribute types, the first the value:
                        the plan then weighs ClickHouse's layouts, a table (or
                        an array) per attribute, and writes every attribute in
                        its CREATE DICTIONARY; a String (8 to 32 bytes, or
                        String(4..16)) adds its arena of values
  --memory SIZE         the memory budget: 24GiB, 512MiB, 32GB (default: what this
                        machine has available now)
  --threads N           threads the load may use, 1 to 256 (default: this machine's cores)
  --prefer P            what decides among the setups that fit: balanced (the
                        default: less memory among setups of similar speed; a
                        setup 4/3x slower to load or read than another that fits
                        loses unless it needs at most 2/3 of its memory, and
                        more shards must save more memory: the plan's rule
                        line says how much), memory (the
                        least memory: computed, the same on every machine), read
                        (the fastest reads) or load (the fastest load); with read
                        or load a speed decides only where two setups' measured
                        ranges do not overlap, else the tie goes to less memory,
                        fewer shards, the layout order
  --growth PERCENT      how much the dictionary grows before its next reload:
                        the plan is for rows x (1 + PERCENT/100) (default 10)
  --for WHAT            clickhouse or go: show that answer alone (default both:
                        the best ClickHouse dictionary, then the best Go table)
  --first-load-only     check the budget against the first load's peak; by
                        default a reload's (the serving table beside a new one
                        loading, as ClickHouse reloads a dictionary)
  --preallocate         plan tables reserved for the rows before the load
                        (core.Options.Reserve, run's --preallocate): no growth, so
                        the peak is the final size; speeds from preallocated runs
  --format F            table, markdown, csv, json (an array of every setup, best first)
  --clickhouse-version V  the ClickHouse release the CREATE DICTIONARY is for
                        (default 26.7, the one the lab runs): a setup it cannot
                        build has none, with why (SHARDS from 23.1, PackedHashMap
                        and MAX_LOAD_FACTOR from 23.5, HASHED_ARRAY's SHARDS from 23.12)

Every layout, every max load factor worth showing and SHARDS 1, 2, 4 ... 128
is computed by core.Predict (no table is allocated): steady bytes, the first
load's peak (every shard grows at once), a reload's peak, bytes per pair, and
load and read time from speeds measured on this machine, each with its range.
Two answers, each the best of its kind: in ClickHouse, the best dictionary
the release can build (its CREATE DICTIONARY, its memory by ClickHouse's own
growth, whether it fits and by how much), and in Go, the best table of
packlab's core (its Go code); each with why, and the runners-up with why
each lost. A table both can build is two setups, each with its own memory.

Speeds come from saved results (one shard, random keys, these key and value
sizes), compared at one size: each layout's run nearest the plan's rows
when every layout has one near them (a run of 1e8 rows speaks for 1e9
better than the 1e7 of a calibration). What is missing is measured first
by a calibration (at the plan's rows, 1e6 to 1e7 a layout, three loads
each for a median and a range, each in its own process; ClickHouse's own
loads of HASHED, SPARSE_HASHED and HASHED_ARRAY too where make chdb built
its worker): at 1e7 13 minutes on the shared 2-core lab machine, 5 without
ClickHouse's; it says how long first, Ctrl-C stops it and keeps what was
measured, and it is saved like any run:
  --calibrate-rows N    measure at N rows (default the plan's, 1e6 to 1e7), each layout that has no
                        run within 2x of N: runs near the plan's rows give it
                        speeds measured at its size (1e8 takes minutes a layout;
                        2e6 sooner, in cache)
  --settle T            idle T before each calibration load (default 2.5 s, so that
                        each load faults fresh memory as a big table does; 0 on a
                        machine that keeps freed memory): seconds or a duration
  --no-calibrate        use saved results only (a layout with none shows no times)
  --verify              then build the plan's ClickHouse dictionary in ClickHouse
                        itself (make chdb), at the plan's rows or 1e7 if fewer,
                        and print its memory and speeds beside the plan's model
  --clickhouse URL      the server of --from's table; with --verify: build the
                        plan's dictionary on that ClickHouse server instead, in
                        a database packlab_verify_... dropped afterwards; refused
                        when the reload would not fit under the server's limit
                        (the password from $CLICKHOUSE_PASSWORD; see 'packlab help inspect')
  --cluster NAME        with --clickhouse: on every replica of that cluster, one by one
  --query-timeout D     with --clickhouse: each query's (default 60s; a big --from table's
                        one pass, and a --verify's load, may need more): 1s to 1h
  --connect-timeout D   with --clickhouse: connecting (default 10s): 1s to 1h
  --calibrate           measure again even when saved results exist
  --no-save             do not save the calibration's results
  --results DIR         results folder (default as for run)
` + flags.Rules
