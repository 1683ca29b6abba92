package cli

import (
	"flag"
	"strings"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/result"
)

// runConflicts are the pairs of run's and sweep's flags that contradict
// each other, besides those Config.Validate refuses (--keys with --source,
// --miss-rate with --no-read, a file's options without --source).
var runConflicts = []flags.Conflict{
	{A: "rows", B: "source", Why: "a file gives all its rows"},
	{A: "results", B: "no-save", Why: "--no-save saves nothing"},
	{A: "value", B: "attributes", Why: "the value is the first attribute"},
}

// typeFlags defines --key, --value and --attributes (comma-separated; the
// types are experiments' to check), as run, sweep and plan take them.
func typeFlags(fs *flag.FlagSet, key, value *string, attributes *[]string) {
	fs.StringVar(key, "key", "", "key type")
	fs.StringVar(value, "value", "", "value type")
	fs.Func("attributes", "attribute types", func(s string) error {
		*attributes = strings.Split(s, ",")
		return nil
	})
}

// rowsFlag defines --rows: a row count such as 1e9, 3B or 1_000_000.
func rowsFlag(fs *flag.FlagSet, rows *int64) {
	fs.Func("rows", "rows", func(s string) (err error) {
		*rows, err = config.ParseRows(s)
		return err
	})
}

// checkLoadFactor refuses --max-load-factor when every layout asked for
// grows by its own rule and ignores it.
func checkLoadFactor(fs *flag.FlagSet, layouts []string) error {
	if _, ok := flags.Given(fs, "max-load-factor"); !ok || len(layouts) == 0 {
		return nil
	}
	for _, l := range layouts {
		if result.UsesMaxLoadFactor(strings.ToLower(strings.TrimSpace(l))) {
			return nil
		}
	}
	return flags.Usagef("%s: %s ignores it (hashed_array, gomap and the C++ reference maps grow by their own rule; allowed: with hashed, packed, sparse, compact or iceberg)",
		flags.Shown(fs, "max-load-factor"), flags.Shown(fs, "layout"))
}
