package cli

// The table of the commands that take flags: each command's flags are
// defined on one flag set, parsed once (command), and then its action runs.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/app/serve"
)

// command is one of packlab's commands that take flags.
type command struct {
	name  string        // as typed: "run", "history clear"
	usage func() string // its help: packlab help NAME, or NAME -h
	// operands is how many arguments that are not flags may stand among
	// its flags (sweep's NAME).
	operands int
	// flags defines the command's flags on fs and returns what the command
	// does once fs has parsed them.
	flags func(fs *flag.FlagSet) flags.Action
}

// commands are the commands that take flags, in the order help and the
// errors name them.
var commands = []command{
	{name: "run", usage: usageRunText, flags: runCommand},
	{name: "sweep", usage: usageSweep, operands: 1, flags: sweepCommand},
	{name: "plan", usage: func() string { return usagePlan }, flags: planCommand}, // cli_plan.go
	{name: "report", usage: func() string { return usageReport }, flags: reportCommand},
	{name: "inspect", usage: func() string { return usageInspect }, flags: inspectCommand},            // cli_inspect.go
	{name: "serve", usage: func() string { return serve.Usage }, flags: serve.Flags},                  // the browser lab
	{name: "history list", usage: func() string { return usageHistory }, flags: historyListCommand},   // cli_history.go
	{name: "history clear", usage: func() string { return usageHistory }, flags: historyClearCommand}, // cli_history.go
}

// commandNames is every command's name, as the errors list them.
const commandNames = "run, sweep, plan, report, inspect, serve, history, version, help"

// dispatch runs the command args name: help, version, or one of the
// table's, its flags parsed first.
func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch args[0] {
	case "help", "-h", "--help", "-help":
		return help(args[1:], stdout)
	case "version", "--version":
		if len(args) > 1 {
			return flags.Usagef("%s: unexpected argument %q (allowed: %s alone)", args[0], args[1], args[0])
		}
		_, err := fmt.Fprint(stdout, versionText()) // a full disk is not a version
		return err
	}
	c, ok := findCommand(args)
	if !ok {
		if args[0] == "history" {
			return historyWhich(args[1:], stdout) // cli_history.go
		}
		return flags.Usagef("unknown command %q (allowed: %s)", args[0], commandNames)
	}
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	do := c.flags(fs)
	rest, help, err := flags.ParseCommand(fs, c.name, args[len(strings.Fields(c.name)):], c.operands, stdout, c.usage())
	if help || err != nil {
		return err
	}
	return do(ctx, rest, stdin, stdout, stderr)
}

// findCommand is the table's command that args start with.
func findCommand(args []string) (command, bool) {
	for _, c := range commands {
		name := strings.Fields(c.name)
		if len(args) >= len(name) && slices.Equal(args[:len(name)], name) {
			return c, true
		}
	}
	return command{}, false
}

func help(args []string, stdout io.Writer) error {
	var out string
	name := 1 // the words of args that name the command
	switch {
	case len(args) == 0:
		out = usageText()
	case args[0] == "help":
		out = "packlab help [COMMAND] — this list of commands, or a command's flags (packlab help plan)\n\n" + usageText()
	case args[0] == "version":
		out = "packlab version — the version, the Go it was built with, and what is built in: the lab window, the browser site, ClickHouse's worker (the ch_ layouts) and the C++ reference maps' worker\n"
	default:
		// A command of two words (history list, as its unknown-flag error
		// says to run), or a command's first word.
		if c, ok := findCommand(args); ok {
			out, name = c.usage(), len(strings.Fields(c.name))
			break
		}
		i := slices.IndexFunc(commands, func(c command) bool { return strings.Fields(c.name)[0] == args[0] })
		if i < 0 {
			return flags.Usagef("help %q: unknown command (allowed: %s)", args[0], commandNames)
		}
		out = commands[i].usage()
	}
	if len(args) > name {
		return flags.Usagef("help %s: unexpected argument %q (allowed: one command, e.g. packlab help plan)", strings.Join(args[:name], " "), args[name])
	}
	_, err := fmt.Fprint(stdout, out) // a full disk is not a help
	return err
}
