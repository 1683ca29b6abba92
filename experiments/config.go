package experiments

import (
	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/worker"
)

// The engine's configuration is package experiments/config's: what a face
// fills and checks (Config), resolved once per layout (config.Run). These
// names hand it on, so that a face asks the engine alone.

// Config is one measured run as a user asks for it (config.Config).
type Config = config.Config

// Defaults and bounds of Config's fields (package config's), and the
// phases of a Progress.
const (
	DefaultKey       = config.DefaultKey
	DefaultValue     = config.DefaultValue
	DefaultKeys      = config.DefaultKeys
	DefaultRows      = config.DefaultRows
	MaxRepeats       = config.MaxRepeats
	MaxThreads       = config.MaxThreads
	MaxBlockRows     = config.MaxBlockRows
	MaxSettleSeconds = config.MaxSettleSeconds

	// Phases of a Progress (worker's).
	PhaseCount  = worker.PhaseCount
	PhaseSettle = worker.PhaseSettle
	PhaseLoad   = worker.PhaseLoad
	PhaseRead   = worker.PhaseRead
	PhaseDone   = worker.PhaseDone
)

// FieldError is bad input in one of a configuration's fields, named by
// its JSON name ("shards"), with the value, what is wrong and what is
// allowed; each face names the field in its own words (package fault).
type FieldError = fault.FieldError

// InputError is bad input found by reading it before any work, such as a
// malformed row of a source file.
type InputError = fault.InputError

// ErrCancelled is wrapped by the error of a job stopped by its context.
var ErrCancelled = fault.ErrCancelled

// ShowValue writes a value the user gave as a message shows it (fault.ShowValue).
func ShowValue(v string) string { return fault.ShowValue(v) }

// NewFieldError is a FieldError of field (its JSON name) without a cause.
func NewFieldError(field, value, problem, allowed string) error {
	return fault.New(field, value, problem, allowed)
}

// ParseRows reads a row count as users write it (config.ParseRows).
func ParseRows(s string) (int64, error) { return config.ParseRows(s) }

// LayoutNames lists what Config.Layouts takes (config.LayoutNames).
func LayoutNames() string { return config.LayoutNames() }

// SplitAttribute is an Attributes entry's name and type (config.SplitAttribute).
func SplitAttribute(s string) (name, typ string) { return config.SplitAttribute(s) }

// AttributeNames is each attribute's column name (config.AttributeNames).
func AttributeNames(list []string) ([]string, error) { return config.AttributeNames(list) }

// ParseAttributes checks an Attributes list against its value and
// resolves its types (config.ParseAttributes).
func ParseAttributes(value string, list []string) ([]dict.Attribute, error) {
	return config.ParseAttributes(value, list)
}

// AttributesText is a result's attributes as the table shows them
// (config.AttributesText).
func AttributesText(given []string, types []dict.Attribute) string {
	return config.AttributesText(given, types)
}

// RunJobName names a run of cfg as a person would say it (config.RunJobName).
func RunJobName(cfg Config) string { return config.RunJobName(cfg) }

// SweepJobName names a sweep (config.SweepJobName).
func SweepJobName(sweep string, cfg Config) string { return config.SweepJobName(sweep, cfg) }

// CheckRow refuses attributes no row layout holds (config.CheckRow).
func CheckRow(attrs []dict.Attribute) error { return config.CheckRow(attrs) }

// TableOptions are the tables' options at max load factor mlf, reserved
// for keys when preallocate (config.TableOptions).
func TableOptions(mlf float64, preallocate bool, keys int64) core.Options {
	return config.TableOptions(mlf, preallocate, keys)
}

// Progress is a running measurement's state, as a progress bar draws it
// (worker.Progress: a worker's lines carry it).
type Progress = worker.Progress
