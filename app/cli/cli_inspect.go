package cli

// packlab inspect: a user's own ClickHouse server's dictionaries, each
// beside packlab's model of it, with findings and advice
// (experiments/server does the work; this file parses and prints).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
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

It reads only: system.dictionaries, system.tables (each dictionary's CREATE DICTIONARY),
system.metrics, system.server_settings, and per dictionary with String parts one query
of at most 100,000 rows of its source table. The password comes from $` + server.PasswordEnv + `
or the prompt and is never printed. An inspection is not saved in the history.
` + flags.Rules

func cmdInspect(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
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
	if help, err := flags.ParseCommand(fs, "inspect", args, stdout, usageInspect); help || err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return flags.Usagef("inspect: unexpected argument %q (flags start with --)", fs.Arg(0))
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
	s.Password = os.Getenv(server.PasswordEnv)
	if ask {
		p, err := askPassword(stdin, stderr)
		if err != nil {
			return err
		}
		s.Password = p
	}
	ins, err := server.Inspect(ctx, s, opt)
	if err != nil {
		return err
	}
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
		fmt.Fprint(stdout, inspectionText(ins, true))
	default:
		fmt.Fprint(stdout, inspectionText(ins, false))
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

// inspectionText is the inspection for a terminal or, md, as Markdown: a
// line per node, a table of the dictionaries, then each one's findings and
// advice. Everything the server said is made safe to print
// (text.Terminal, text.Markdown).
func inspectionText(ins *server.Inspection, md bool) string {
	safe := text.Terminal
	if md {
		safe = text.Markdown
	}
	var b strings.Builder
	where := ins.Server
	if ins.Cluster != "" {
		where += fmt.Sprintf(", cluster %s (%d nodes)", ins.Cluster, len(ins.Nodes))
	}
	fmt.Fprintf(&b, "ClickHouse %s at %s: %d dictionaries, inspected in %.2f s\n", safe(ins.Release), safe(where), len(ins.Dictionaries), ins.Seconds)
	for _, n := range ins.Nodes {
		limit := "no memory limit known"
		if n.MemoryLimitBytes > 0 {
			limit = "limit " + text.Bytes(n.MemoryLimitBytes) + " (" + n.MemoryLimitFrom + ")"
		}
		fmt.Fprintf(&b, "node %s: holds %s, %s\n", safe(n.Name), text.Bytes(n.TrackedBytes), limit)
	}
	b.WriteString("\n")
	header := []string{"node", "dictionary", "layout", "status", "rows", "bytes_allocated", "model", "real", "reload peak"}
	numeric := []bool{false, false, false, false, true, true, true, true, true}
	var rows [][]string
	for _, d := range ins.Dictionaries {
		model, real, peak := "not modelled", "-", "-"
		if d.Modelled {
			model, real, peak = text.Bytes(d.ModelBytes), text.Bytes(d.RealBytes), text.Bytes(d.ReloadPeakBytes)
		}
		rows = append(rows, []string{safe(d.Node), safe(dictName(d)), safe(text.OrDash(d.Layout)), safe(d.Status),
			text.Thousands(d.ElementCount), text.Bytes(d.BytesAllocated), model, real, peak})
	}
	text.Grid(&b, header, numeric, rows, md)
	for _, f := range ins.Findings {
		fmt.Fprintf(&b, "\n%s\n", safe(f))
	}
	for _, d := range ins.Dictionaries {
		fmt.Fprintf(&b, "\n%s on %s", safe(dictName(d)), safe(d.Node))
		if md {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\n  key %s; attributes %s; source %s; lifetime %d-%d s\n",
			safe(columns(d.KeyNames, d.KeyTypes)), safe(columns(d.AttributeNames, d.AttributeTypes)), safe(text.OrDash(d.Source)), d.LifetimeMin, d.LifetimeMax)
		if d.NotModelled != "" {
			fmt.Fprintf(&b, "  not modelled: %s\n", safe(d.NotModelled))
		}
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "  note: %s\n", safe(n))
		}
		for _, f := range d.Findings {
			fmt.Fprintf(&b, "  finding: %s\n", safe(f))
		}
		if a := d.Advice; a != nil {
			fmt.Fprintf(&b, "  advice: %s, %s steady, %s at a reload's peak: %s\n", safe(a.Layout), text.Bytes(a.SteadyBytes), text.Bytes(a.ReloadPeakBytes), safe(a.Why))
			if md {
				fmt.Fprintf(&b, "\n```sql\n%s\n```\n", strings.ReplaceAll(text.Terminal(a.DDL), "```", "` ` `"))
			} else {
				for _, line := range strings.Split(a.DDL, "\n") {
					fmt.Fprintf(&b, "    %s\n", text.Terminal(line))
				}
			}
		}
	}
	return b.String()
}

func dictName(d server.Dictionary) string {
	if d.Database == "" {
		return d.Name
	}
	return d.Database + "." + d.Name
}

func columns(names, types []string) string {
	var out []string
	for i, n := range names {
		t := "?"
		if i < len(types) {
			t = types[i]
		}
		out = append(out, n+" "+t)
	}
	return text.OrDash(strings.Join(out, ", "))
}
