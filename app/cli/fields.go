package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/store"
)

// flagOfField is the command line's flag of each field the engine's
// errors and texts name (package fault): the JSON names of
// config.Config, planner.PlanRequest, sweep.Options,
// server.Settings, and the results folder's own (a job, result ids). The
// command line's one table of them: every message it prints names the
// flag a user types.
var flagOfField = map[string]string{
	// config.Config
	"layouts":         "layout",
	"key":             "key",
	"value":           "value",
	"attributes":      "attributes",
	"rows":            "rows",
	"shards":          "shards",
	"max_load_factor": "max-load-factor",
	"keys":            "keys",
	"source":          "source",
	"header":          "header",
	"key_column":      "key-column",
	"value_column":    "value-column",
	"skip_bad_rows":   "skip-bad-rows",
	"columns":         "columns",
	"seed":            "seed",
	"repeats":         "repeats",
	"no_read":         "no-read",
	"miss_rate":       "miss-rate",
	"in_process":      "in-process",
	"force":           "force",
	"shard_select":    "shard-select",
	"block_rows":      "block-rows",
	"threads":         "threads",
	"huge_pages":      "huge-pages",
	"preallocate":     "preallocate",
	"settle_seconds":  "settle",
	// planner.PlanRequest, and the plan's calibration
	"memory_bytes":       "memory",
	"prefer":             "prefer",
	"first_load_only":    "first-load-only",
	"runtime":            "runtime",
	"calibration_rows":   "calibrate-rows",
	"clickhouse_version": "clickhouse-version",
	"max_key":            "max-key",
	"growth_percent":     "growth",
	"for":                "for",
	"from":               "from",
	"calibrate":          "calibrate",
	"no_calibrate":       "no-calibrate",
	// sweep.Options
	"max_shards":      "max-shards",
	"with_references": "with-references",
	"with_clickhouse": "with-clickhouse",
	// server.Settings
	"url":      "clickhouse",
	"user":     "user",
	"database": "database",
	"cluster":  "cluster",
	"verify":   "verify",
	"ca_file":  "ca-file",
	"secure":   "secure",
	// a timeout's setting (server.Error.Setting)
	"connect_timeout": "connect-timeout",
	"query_timeout":   "query-timeout",
	// the results folder
	"results_dir": "results",
	"job":         "job",
	"ids":         "ids",
}

// flagName is fault's Namer of the command line: a field's flag, "--shards"
// ("attributes[2]" is --attributes); "" for a field it has no flag of.
func flagName(field string) string {
	if field == "password" { // the command line takes it only from the environment
		return "$" + server.PasswordEnv
	}
	if f, ok := flagOfField[fault.Base(field)]; ok {
		return "--" + f
	}
	return ""
}

// writeWords is write's output in the command line's words (words): a
// plan's notes name fields.
func writeWords(w io.Writer, write func(io.Writer) error) error {
	var b bytes.Buffer
	err := write(&b)
	if _, werr := io.WriteString(w, words(b.String())); err == nil {
		err = werr
	}
	return err
}

// errorText is err in the command line's words: its fields named by
// their flags, and its advice the command line's.
func errorText(err error) string {
	msg := fault.Render(err, flagName)
	var fe *fault.FieldError
	var nf *store.NotFoundError
	if errors.As(err, &fe) && errors.As(fe.Err, &nf) {
		advised := *fe
		advised.Allowed = "ids listed by 'packlab report --list --all'"
		if nf.Job {
			advised.Allowed = "job ids listed by 'packlab report --list'"
		}
		msg = strings.Replace(msg, fe.Words(flagName), advised.Words(flagName), 1)
	}
	return msg
}

// worded is an error in the command line's words (errorText); errors.Is
// and As reach the engine's error inside.
type worded struct{ err error }

func (e *worded) Error() string { return errorText(e.err) }
func (e *worded) Unwrap() error { return e.err }

// words is an engine's text (a note, a plan's line) in the command line's
// words: its {field}s named by their flags.
func words(s string) string { return fault.Fields(s, flagName) }
