package config

// Job names: a run's or a sweep's job named as a person would say it
// (RunJobName, SweepJobName). What a job is, and the Job every result
// carries, is package result's.

import (
	"cmp"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/text"
)

// RunJobName names a run of cfg as a person would say it: "run
// packed,hashed 1e7", "run sparse dict.tsv.gz", "run all layouts 1e6
// UInt32→UInt8 shards 4". Settings left at their defaults are not named.
func RunJobName(cfg Config) string {
	layouts := "all layouts"
	if len(cfg.Layouts) > 0 {
		layouts = strings.Join(cfg.Layouts, ",")
	}
	return "run " + layouts + settingsName(cfg, true)
}

// SweepJobName names a sweep: "sweep types", "sweep types 1e5", "sweep
// shards packed 2e6". Rows appear when given, layouts when chosen.
func SweepJobName(sweep string, cfg Config) string {
	name := "sweep " + sweep
	if len(cfg.Layouts) > 0 {
		name += " " + strings.Join(cfg.Layouts, ",")
	}
	return name + settingsName(cfg, false)
}

// settingsName is the part of a job's name after its layouts: the rows (or
// the file) and each setting that is not its default.
func settingsName(cfg Config, rowsByDefault bool) string {
	var parts []string
	switch {
	case cfg.Source != "":
		parts = append(parts, filepath.Base(cfg.Source))
	case cfg.Rows > 0:
		parts = append(parts, shortRows(cfg.Rows))
	case rowsByDefault:
		parts = append(parts, shortRows(DefaultRows))
	}
	if cfg.Source == "" && cfg.Keys != "" && cfg.Keys != DefaultKeys {
		parts = append(parts, cfg.Keys)
	}
	switch {
	case len(cfg.Attributes) > 1: // a dictionary of several attributes names them all
		parts = append(parts, cmp.Or(cfg.Key, DefaultKey)+"→"+strings.Join(cfg.Attributes, ","))
	case cfg.Key != "" || cfg.Value != "":
		k, v := cmp.Or(cfg.Key, DefaultKey), cmp.Or(cfg.Value, DefaultValue)
		if k != DefaultKey || v != DefaultValue {
			parts = append(parts, k+"→"+v)
		}
	}
	if cfg.Shards > 1 {
		parts = append(parts, "shards "+strconv.Itoa(cfg.Shards))
	}
	if cfg.MaxLoadFactor != 0 && cfg.MaxLoadFactor != core.DefaultMaxLoadFactor {
		parts = append(parts, "mlf "+text.Float(cfg.MaxLoadFactor))
	}
	if on, ok := HugePagesOn(cfg.HugePages); ok && !on {
		parts = append(parts, "hugepages off")
	}
	if cfg.Preallocate {
		parts = append(parts, "preallocate")
	}
	if cfg.SettleSeconds > 0 {
		parts = append(parts, "settle "+text.Float(cfg.SettleSeconds)+"s")
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

// shortRows writes a row count as people type it: 1e7, 2.5e6, 12345.
func shortRows(n int64) string {
	for exp := 18; exp >= 3; exp-- {
		p := int64(1)
		for range exp {
			p *= 10
		}
		if n < p {
			continue
		}
		if n%(p/10) == 0 { // at most two significant digits
			return strconv.FormatFloat(float64(n)/float64(p), 'f', -1, 64) + "e" + strconv.Itoa(exp)
		}
		break
	}
	return strconv.FormatInt(n, 10)
}
