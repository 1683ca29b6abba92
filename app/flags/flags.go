// Package flags holds the rules every packlab command's flags follow, and
// its usage errors (exit code 2): each flag once, a value for every flag
// that takes one, contradicting flags refused naming both, and the flag
// package's messages turned into one line that names the flag and value.
package flags

// The rules every command's flags follow, stated in help (flagRules):
//
//   - each flag is given once: a repeated flag is refused, naming both
//     values, rather than the last one silently winning;
//   - a flag that takes a value needs one: an empty value is refused (except
//     --title), and a value that is itself one of the command's flags means
//     the value was left out ("--rows --results"), which the message says;
//   - flags that contradict each other are refused, naming both (conflicts).

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
)

// Rules is the rules as help states them.
const Rules = `
Flags: each flag at most once, a value for every flag that takes one (--title may
be empty); flags that contradict each other are refused, naming both.
Exit codes: 0 done, 2 bad input (a flag, a file's content, or the memory guard's
refusal), 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; what
was measured is kept), 1 a failure while running.
`

// strictValue wraps one flag's Value with the rules above; it remembers
// what the user gave, exactly, for the messages of conflicts.
type strictValue struct {
	flag.Value
	fs         *flag.FlagSet
	cmd, name  string
	given      string
	set        bool
	isBool     bool
	allowEmpty bool
	err        error // the refusal, kept whole (the flag package would reword a switch's)
}

// IsBoolFlag keeps a switch a switch (--force alone means true).
func (v *strictValue) IsBoolFlag() bool { return v.isBool }

func (v *strictValue) Set(s string) error {
	err := v.set1(s)
	var ue *UsageError
	var fe *fault.FieldError
	if errors.As(err, &ue) || errors.As(err, &fe) {
		v.err = err
	}
	return err
}

func (v *strictValue) set1(s string) error {
	if v.set {
		if v.isBool {
			return Usagef("--%s: given twice (allowed: each flag once)", v.name)
		}
		return Usagef("--%s %s: given twice, first as --%s %s (allowed: each flag once)",
			v.name, fault.ShowValue(s), v.name, fault.ShowValue(v.given))
	}
	v.set, v.given = true, s
	if !v.isBool {
		if strings.TrimSpace(s) == "" && !v.allowEmpty {
			return Usagef("--%s %s: empty (allowed: a value; run 'packlab help %s', or leave the flag out for its default)",
				v.name, fault.ShowValue(s), v.cmd)
		}
		if name, ok := strings.CutPrefix(s, "-"); ok {
			name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
			if v.fs.Lookup(name) != nil {
				return Usagef("--%s: needs a value, but the next argument is the flag %s (run 'packlab help %s')", v.name, s, v.cmd)
			}
		}
	}
	return v.Value.Set(s)
}

// Strict puts every flag of fs under the rules; call it once every
// flag is defined and before fs.Parse.
func Strict(fs *flag.FlagSet, cmd string) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, done := f.Value.(*strictValue); done {
			return
		}
		b, ok := f.Value.(interface{ IsBoolFlag() bool })
		f.Value = &strictValue{Value: f.Value, fs: fs, cmd: cmd, name: f.Name,
			isBool: ok && b.IsBoolFlag(), allowEmpty: f.Name == "title"}
	})
}

// refusal is the first flag's refusal kept whole by strictValue, if any.
func refusal(fs *flag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v, ok := f.Value.(*strictValue); ok && v.err != nil && err == nil {
			err = v.err
		}
	})
	return err
}

// Given is the value the user gave flag name, and whether they gave it.
func Given(fs *flag.FlagSet, name string) (string, bool) {
	f := fs.Lookup(name)
	if f == nil {
		return "", false
	}
	if v, ok := f.Value.(*strictValue); ok {
		return v.given, v.set
	}
	set := false
	fs.Visit(func(g *flag.Flag) { set = set || g.Name == name })
	return f.Value.String(), set
}

// Shown is a given flag as the user wrote it: "--rows 5", or "--open"
// for a switch.
func Shown(fs *flag.FlagSet, name string) string {
	v, _ := Given(fs, name)
	if sv, ok := fs.Lookup(name).Value.(*strictValue); ok && sv.isBool {
		if v == "true" {
			return "--" + name
		}
		return "--" + name + "=" + v
	}
	return "--" + name + " " + fault.ShowValue(v)
}

// Conflict is a pair of flags that cannot be given together, and why.
type Conflict struct{ A, B, Why string }

// CheckConflicts refuses the first pair of cs whose flags were both given:
// "--rows 5: cannot be combined with --source big.tsv (a file gives all its
// rows; allowed: one of the two)".
func CheckConflicts(fs *flag.FlagSet, cs []Conflict) error {
	for _, c := range cs {
		_, a := Given(fs, c.A)
		_, b := Given(fs, c.B)
		if a && b {
			return Usagef("%s: cannot be combined with %s (%s; allowed: one of the two)", Shown(fs, c.A), Shown(fs, c.B), c.Why)
		}
	}
	return nil
}

// UsageError is bad input on the command line (exit code 2).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Usagef is a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// Parse parses args with fs, turning the flag package's messages into
// packlab's one-line form; the flag callbacks' own messages pass through.
// -h and --help return flag.ErrHelp.
func Parse(fs *flag.FlagSet, cmd string, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	Strict(fs, cmd) // once each, a value for each, no flag as a value
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	if r := refusal(fs); r != nil {
		return r
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return Usagef("unknown flag --%s for %s (run 'packlab help %s' for the flags)", strings.TrimLeft(name, "-"), cmd, cmd)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return Usagef("--%s: needs a value (run 'packlab help %s')", strings.TrimLeft(name, "-"), cmd)
	}
	// `invalid value "x" for flag -name: <callback's message>`, or
	// `invalid boolean value "x" for -name: parse error`.
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		value, name, _ := strings.Cut(rest, " for -")
		name, _, _ = strings.Cut(name, ":")
		return Usagef("--%s=%s: not a boolean (allowed: --%s alone, or --%s=true or false)", name, strings.Trim(value, `"`), name, name)
	}
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		if _, why, ok := strings.Cut(msg[i+len(" for flag -"):], ": "); ok {
			return Usagef("%s", why)
		}
	}
	return Usagef("%s", msg)
}

// Action is what a command does once its flags are parsed: args are the
// command line's arguments that are not flags, in their order (sweep's
// NAME, or what the command refuses as unexpected).
type Action func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// ParseCommand is Parse for a command's flags, among which up to operands
// arguments that are not flags may stand (sweep NAME --rows 1e5, sweep
// --rows 1e5 NAME --no-save): the flags after each are parsed too. It
// returns the arguments that are not flags. On -h or --help it writes
// usage to stdout and says so (help), and the command returns at once,
// with no error unless the usage could not be written.
func ParseCommand(fs *flag.FlagSet, cmd string, args []string, operands int, stdout io.Writer, usage string) (rest []string, help bool, err error) {
	for {
		err = Parse(fs, cmd, args)
		if errors.Is(err, flag.ErrHelp) {
			_, err := fmt.Fprint(stdout, usage) // a full disk is not a help
			return nil, true, err
		}
		if err != nil || fs.NArg() == 0 || len(rest) == operands {
			return append(rest, fs.Args()...), false, err
		}
		rest, args = append(rest, fs.Arg(0)), fs.Args()[1:]
	}
}
