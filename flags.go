package main

// The rules every command's flags follow, stated in help (flagRules):
//
//   - each flag is given once: a repeated flag is refused, naming both
//     values, rather than the last one silently winning;
//   - a flag that takes a value needs one: an empty value is refused (except
//     --title), and a value that is itself one of the command's flags means
//     the value was left out ("--rows --results"), which the message says;
//   - flags that contradict each other are refused, naming both (conflicts).

import (
	"errors"
	"flag"
	"strings"

	"github.com/packlab/packlab/experiments"
)

const flagRules = `
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
	var ue *usageError
	var fe *experiments.FieldError
	if errors.As(err, &ue) || errors.As(err, &fe) {
		v.err = err
	}
	return err
}

func (v *strictValue) set1(s string) error {
	if v.set {
		if v.isBool {
			return usagef("--%s: given twice (allowed: each flag once)", v.name)
		}
		return usagef("--%s %s: given twice, first as --%s %s (allowed: each flag once)",
			v.name, experiments.ShowValue(s), v.name, experiments.ShowValue(v.given))
	}
	v.set, v.given = true, s
	if !v.isBool {
		if strings.TrimSpace(s) == "" && !v.allowEmpty {
			return usagef("--%s %s: empty (allowed: a value; run 'packlab help %s', or leave the flag out for its default)",
				v.name, experiments.ShowValue(s), v.cmd)
		}
		if name, ok := strings.CutPrefix(s, "-"); ok {
			name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
			if v.fs.Lookup(name) != nil {
				return usagef("--%s: needs a value, but the next argument is the flag %s (run 'packlab help %s')", v.name, s, v.cmd)
			}
		}
	}
	return v.Value.Set(s)
}

// strictFlags puts every flag of fs under the rules; call it once every
// flag is defined and before fs.Parse.
func strictFlags(fs *flag.FlagSet, cmd string) {
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

// given is the value the user gave flag name, and whether they gave it.
func given(fs *flag.FlagSet, name string) (string, bool) {
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

// shownFlag is a given flag as the user wrote it: "--rows 5", or "--open"
// for a switch.
func shownFlag(fs *flag.FlagSet, name string) string {
	v, _ := given(fs, name)
	if sv, ok := fs.Lookup(name).Value.(*strictValue); ok && sv.isBool {
		if v == "true" {
			return "--" + name
		}
		return "--" + name + "=" + v
	}
	return "--" + name + " " + experiments.ShowValue(v)
}

// conflict is a pair of flags that cannot be given together, and why.
type conflict struct{ a, b, why string }

// checkConflicts refuses the first pair of cs whose flags were both given:
// "--rows 5: cannot be combined with --source big.tsv (a file gives all its
// rows; allowed: one of the two)".
func checkConflicts(fs *flag.FlagSet, cs []conflict) error {
	for _, c := range cs {
		_, a := given(fs, c.a)
		_, b := given(fs, c.b)
		if a && b {
			return usagef("%s: cannot be combined with %s (%s; allowed: one of the two)", shownFlag(fs, c.a), shownFlag(fs, c.b), c.why)
		}
	}
	return nil
}

// runConflicts are the pairs of run's and sweep's flags that contradict
// each other, besides those Config.Validate refuses (--keys with --source,
// --miss-rate with --no-read, a file's options without --source).
var runConflicts = []conflict{
	{"rows", "source", "a file gives all its rows"},
	{"results", "no-save", "--no-save saves nothing"},
}

// checkLoadFactor refuses --max-load-factor when every layout asked for
// grows by its own rule and ignores it.
func checkLoadFactor(fs *flag.FlagSet, layouts []string) error {
	if _, ok := given(fs, "max-load-factor"); !ok || len(layouts) == 0 {
		return nil
	}
	for _, l := range layouts {
		if experiments.UsesMaxLoadFactor(strings.ToLower(strings.TrimSpace(l))) {
			return nil
		}
	}
	return usagef("%s: %s ignores it (hashed_array, gomap and the C++ reference maps grow by their own rule; allowed: with hashed, packed, sparse or compact)",
		shownFlag(fs, "max-load-factor"), shownFlag(fs, "layout"))
}
