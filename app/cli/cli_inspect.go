package cli

// packlab inspect: a user's own ClickHouse server's dictionaries, each
// beside packlab's model of it, with findings and advice
// (experiments/server does the work; this file parses and prints).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/usecase"
)

const usageInspect = `packlab inspect --clickhouse URL [flags] — a ClickHouse server's dictionaries, modelled and advised

  --clickhouse URL      the server: clickhouse://host[:9000][/database] (native protocol),
                        http://host[:8123] or https://host[:8443]; a user may be in it
                        (clickhouse://alice@host), a password never
  --user NAME           the user (default: the URL's, else default)
  --database NAME       the database to connect to (default: the URL's, else default)
  --cluster NAME        every replica of this cluster (clusterAllReplicas): a row per node,
                        and a finding where replicas disagree
  --ca-file FILE        PEM CA certificates for TLS (https://, or TLS on the native port 9440)
  --secure              TLS on the native protocol with the system's CAs
  --ask-password        ask for the password on the terminal (else $` + server.PasswordEnv + `, else none)
  --connect-timeout D   connecting (default 10s)
  --query-timeout D     each query (default 60s)
  --format F            table, markdown, json (an array: one object per dictionary and node)
  --no-sample           no query of a dictionary's source table for its String lengths
                        (dictionaries with String parts are then not modelled)
  --verify DB.NAME      then build that dictionary's advice on the server and measure it:
                        a copy over its own source table in a database of its own
                        (` + server.VerifyDatabasePrefix + `...), loaded, reloaded, measured and dropped;
                        refused when its reload peak does not fit the server's free memory;
                        with --cluster, on every replica that holds it
  --verify-all          the same for every dictionary whose advice changes its layout, one
                        after another (one refused or failed says why; the others go on)

Without --verify or --verify-all it reads only: system.dictionaries, system.tables (each dictionary's
CREATE DICTIONARY), system.metrics, system.server_settings, and per source table of
dictionaries with String or Nullable parts (or FLAT) one aggregate over the rows they
load (lengths, NULLs, the largest key). Verifying, it writes only in the databases it makes, and never
touches the dictionary itself. The password comes from $` + server.PasswordEnv + `
or the prompt and is never printed, nor saved. The inspection is kept as a job of
the history: 'packlab report --list' lists it, 'packlab report --job ID' renders it.
` + flags.Rules

// inspectCommand is packlab inspect: its flags, and what it does with them.
func inspectCommand(fs *flag.FlagSet) flags.Action {
	var s server.Settings
	var opt server.Options
	format := "table"
	var ask bool
	fs.StringVar(&s.URL, "clickhouse", "", "server URL")
	fs.StringVar(&s.User, "user", "", "user")
	fs.StringVar(&s.Database, "database", "", "database")
	fs.StringVar(&opt.Cluster, "cluster", "", "cluster")
	fs.StringVar(&s.CAFile, "ca-file", "", "CA file")
	fs.BoolVar(&s.Secure, "secure", false, "TLS on the native protocol")
	fs.BoolVar(&ask, "ask-password", false, "ask for the password")
	fs.Func("connect-timeout", "connect timeout", func(v string) error { return durationFlag("--connect-timeout", v, &s.ConnectTimeout) })
	fs.Func("query-timeout", "query timeout", func(v string) error { return durationFlag("--query-timeout", v, &s.QueryTimeout) })
	fs.StringVar(&format, "format", "table", "output format")
	fs.BoolVar(&opt.NoSample, "no-sample", false, "do not sample sources")
	verify := fs.String("verify", "", "build this dictionary's advice on the server")
	verifyAll := fs.Bool("verify-all", false, "build every advice that changes a layout on the server")
	dir := fs.String("results", "", "results folder")
	noSave := fs.Bool("no-save", false, "do not keep the inspection")
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
		if len(args) > 0 {
			return flags.Usagef("inspect: unexpected argument %q (flags start with --)", args[0])
		}
		if s.URL == "" {
			return flags.Usagef("inspect: --clickhouse is required (allowed: clickhouse://host:9000, http://host:8123 or https://host:8443)")
		}
		if err := checkFormat(format, []string{"table", "markdown", "json"}); err != nil {
			return err
		}
		if _, err := s.ParseURL(); err != nil {
			return err
		}
		if err := flags.CheckConflicts(fs, []flags.Conflict{{A: "results", B: "no-save", Why: "--no-save keeps nothing"},
			{A: "verify", B: "verify-all", Why: "--verify-all builds every advice"}}); err != nil {
			return err
		}
		var saved *store.Store
		if !*noSave {
			// Checked before the server is asked: an unusable folder is bad
			// input, not a lost inspection.
			st, err := store.OpenStore(*dir)
			if err != nil {
				return err
			}
			saved = st
		}
		s.Password = os.Getenv(server.PasswordEnv)
		if ask {
			p, err := askPassword(stdin, stderr)
			if err != nil {
				return err
			}
			s.Password = p
		}
		if *verify != "" && strings.TrimSpace(*verify) == "" {
			return flags.Usagef("inspect: --verify %q: empty (allowed: a dictionary's database.name, or its name)", *verify)
		}
		done, err := usecase.Inspect(ctx, usecase.InspectAsk{Settings: s, Options: opt, Store: saved, Face: result.FaceCLI, Verify: strings.TrimSpace(*verify), VerifyAll: *verifyAll,
			VerifyStarting: func(of, layout string, rows int64) {
				// A load and a reload of the whole dictionary: minutes for a big one.
				fmt.Fprintf(stderr, "packlab: building %s's advice on the server: %s at %s rows (a load and a reload, then dropped)\n", text.Terminal(of), text.Terminal(layout), text.Thousands(rows))
			}})
		if err != nil && done.Inspection == nil {
			return err
		}
		// Inspected but not kept (err): the inspection is printed, and the
		// save's failure is the exit's.
		if perr := printInspection(done.Inspection, format, stdout); perr != nil {
			return perr
		}
		if *verifyAll && done.VerifyErr == nil {
			fmt.Fprintf(stderr, "packlab: %s built on the server and measured (the lines 'verified:' and 'not verified:' above)\n", text.Count(done.Verified, "advice", "advice"))
		}
		if done.Saved {
			fmt.Fprintf(stderr, "packlab: kept as job %s in %s ('packlab report --job %s' renders it)\n", done.Job.ID, saved.Dir, done.Job.ID)
		}
		return errors.Join(done.VerifyErr, err)
	}
}

// printInspection prints ins in format: table, markdown or json.
func printInspection(ins *server.Inspection, format string, stdout io.Writer) error {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		ds := ins.Dictionaries
		if ds == nil {
			ds = []server.Dictionary{}
		}
		return enc.Encode(ds)
	case "markdown":
		fmt.Fprint(stdout, report.InspectionText(ins, true))
	default:
		fmt.Fprint(stdout, report.InspectionText(ins, false))
	}
	return nil
}

// durationFlag reads a timeout: a duration (10s, 2m) or seconds, 1 s to 1 h.
func durationFlag(name, v string, dst *time.Duration) error {
	t := strings.TrimSpace(v)
	d, err := time.ParseDuration(t)
	if err != nil {
		var secs float64
		if _, serr := fmt.Sscanf(t, "%g", &secs); serr != nil || fmt.Sprint(secs) != t {
			return flags.Usagef("%s %s: not a duration (allowed: 1s to 1h, e.g. 10s, 2m, 30)", name, v)
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < time.Second || d > time.Hour {
		return flags.Usagef("%s %s: out of range (allowed: 1s to 1h)", name, v)
	}
	*dst = d
	return nil
}

// askPassword reads the password from the terminal, its echo off.
func askPassword(stdin io.Reader, stderr io.Writer) (string, error) {
	if !isTerminal(stdin) {
		return "", flags.Usagef("--ask-password: standard input is not a terminal to ask on (allowed: a terminal; else set $%s)", server.PasswordEnv)
	}
	fmt.Fprint(stderr, "ClickHouse password: ")
	echo := func(on bool) {
		arg := "-echo"
		if on {
			arg = "echo"
		}
		c := exec.Command("stty", arg)
		c.Stdin = stdin.(*os.File)
		_ = c.Run()
	}
	echo(false)
	defer func() { echo(true); fmt.Fprintln(stderr) }()
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := stdin.Read(buf)
		if n == 0 || err != nil || buf[0] == '\n' || buf[0] == '\r' {
			break
		}
		b.WriteByte(buf[0])
	}
	return b.String(), nil
}
