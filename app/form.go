package app

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/text"
)

// Form is the run form exactly as the person filled it in: every number is
// the text they typed ("10M", "1e6", " 4 "), so that Go, not the page,
// parses it and names the field when it is wrong.
type Form struct {
	Layouts       []string `json:"layouts"`         // layouts to compare; at least one
	Key           string   `json:"key"`             // ClickHouse key type, e.g. UInt64
	Value         string   `json:"value"`           // ClickHouse value type, e.g. UInt16
	Attributes    []string `json:"attributes"`      // every attribute's type when more than one, the first the value (Value then ignored); ch_ layouts only
	Rows          string   `json:"rows"`            // 1000000, 1e6, 1M, 2.5M, 1B; ignored for a file
	Shards        string   `json:"shards"`          // 1 to 128; "" = 1
	MaxLoadFactor string   `json:"max_load_factor"` // 0.5 to 0.99; "" = each layout's default (0.5, compact 0.9, iceberg 0.92)
	SourceKind    string   `json:"source_kind"`     // "synthetic" (the default) or "file"
	Keys          string   `json:"keys"`            // synthetic kind: random, sequential, range, zipf
	KeysParam     string   `json:"keys_param"`      // M of range:M, S of zipf:S
	Source        string   `json:"source"`          // a TSV or CSV file (optionally .gz) instead of Keys
	Header        string   `json:"header"`          // file: auto, yes, no
	KeyColumn     string   `json:"key_column"`      // file: 1-based position or header name
	ValueColumn   string   `json:"value_column"`    // file: position, name, or none
	SkipBadRows   bool     `json:"skip_bad_rows"`   // file: skip malformed rows instead of failing
	Columns       string   `json:"columns"`         // file: the columns of the attributes after the value, comma-separated; "" = by name, else 3, 4, ...
	Seed          string   `json:"seed"`            // 0 to 2^64-1; fixes keys, values and read order
	Repeats       string   `json:"repeats"`         // loads per layout, times are medians; 1 to 100
	MissRate      string   `json:"miss_rate"`       // absent-key lookups per loaded row, 0 to 1
	NoRead        bool     `json:"no_read"`         // skip the read phase
	HugePages     string   `json:"huge_pages"`      // "on" ("" = on) or "off": transparent huge pages for the tables' slabs
	Preallocate   bool     `json:"preallocate"`     // reserve the tables for the rows before the load (PREALLOCATE 1)
	Settle        string   `json:"settle"`          // seconds to idle before each load, 0 to 600; "" = 0
}

// KeySource is one synthetic key kind the form offers.
type KeySource struct {
	Kind         string `json:"kind"`          // random, sequential, range, zipf
	Label        string `json:"label"`         // what the menu shows
	Param        string `json:"param"`         // "M", "S" or "" when the kind takes none
	ParamDefault string `json:"param_default"` // filled in when the kind is picked
	ParamHint    string `json:"param_hint"`    // what the parameter means
}

// keySources are the synthetic kinds, in the order the menu shows them.
var keySources = []KeySource{
	{Kind: source.Random, Label: "random (distinct)", ParamHint: ""},
	{Kind: source.Sequential, Label: "sequential 1, 2, 3…"},
	{Kind: "range", Label: "random in range:M", Param: "M", ParamDefault: "1000000",
		ParamHint: "M: keys are drawn from M values, so they repeat (e.g. 1000000, 1e6, 1M)"},
	{Kind: "zipf", Label: "zipf:S (skewed)", Param: "S", ParamDefault: "1.1",
		ParamHint: "S: the Zipf exponent, 0 < S <= 10; larger is more skewed"},
}

// defaultForm is what the lab opens with: every layout, ClickHouse's
// <UInt64, UInt16> example, a million random keys, one shard, each layout at
// its own max load factor.
func defaultForm() Form {
	var layouts []string
	for _, l := range core.Layouts() {
		layouts = append(layouts, string(l))
	}
	return Form{
		Layouts:       layouts,
		Key:           config.DefaultKey,
		Value:         config.DefaultValue,
		Rows:          text.Rows(config.DefaultRows),
		Shards:        "1",
		MaxLoadFactor: "", // each layout's own: ClickHouse's 0.5, compact's 0.9, iceberg's 0.92
		SourceKind:    "synthetic",
		Keys:          source.Random,
		Header:        "auto",
		Seed:          "0",
		Repeats:       "1",
		MissRate:      "0",
		HugePages:     "on",
		Settle:        "0",
	}
}

// config parses the form into a run configuration. It checks what only the
// form can get wrong (text that is not a number, no layout chosen, a key
// kind without its parameter); Config.Validate checks the rest.
func (f Form) config() (config.Config, error) {
	var c config.Config
	if len(f.Layouts) == 0 {
		return c, errorf("layouts", "choose at least one layout (allowed: %s)", config.LayoutNames())
	}
	c.Layouts = append([]string(nil), f.Layouts...)
	c.Key = strings.TrimSpace(f.Key)
	c.Value = strings.TrimSpace(f.Value)
	if len(f.Attributes) > 1 {
		c.Value, c.Attributes = "", f.Attributes
	}

	if err := f.numbers(&c); err != nil {
		return c, err
	}
	c.HugePages = strings.TrimSpace(f.HugePages)
	// The box is ticked by default, as the tables' own default is on: with
	// only C++ maps and ClickHouse's own dictionaries chosen it has no table
	// to apply to, and asks nothing (an explicit "on" would be refused).
	if c.HugePages == "on" && !anyPacklabLayout(c.Layouts) {
		c.HugePages = ""
	}
	c.NoRead = f.NoRead
	c.Preallocate = f.Preallocate
	if c.NoRead && c.MissRate != 0 {
		return c, errorf("miss_rate", "%s: has no effect when lookups are skipped (allowed: 0 with “skip lookups”)", strings.TrimSpace(f.MissRate))
	}
	return f.source(c)
}

// anyPacklabLayout says whether names holds one of packlab's own layouts:
// neither a C++ reference map nor one of ClickHouse's dictionaries (a name
// the table does not know is left to the engine to refuse).
func anyPacklabLayout(names []string) bool {
	for _, name := range names {
		if l, ok := dict.FindLayout(strings.TrimSpace(name)); !ok || l.Family == dict.FamilyPacklab {
			return true
		}
	}
	return false
}

// numbers reads the form's numbers into c, each error naming its field.
func (f Form) numbers(c *config.Config) error {
	var err error
	if strings.TrimSpace(f.Shards) != "" {
		if c.Shards, err = parseInt("shards", f.Shards, core.MinShards, core.MaxShards); err != nil {
			return err
		}
	}
	if s := strings.TrimSpace(f.MaxLoadFactor); s != "" {
		if c.MaxLoadFactor, err = parseFloat("max_load_factor", s, core.MinMaxLoadFactor, core.MaxMaxLoadFactor); err != nil {
			return err
		}
	}
	if s := strings.TrimSpace(f.Repeats); s != "" {
		if c.Repeats, err = parseInt("repeats", s, 1, config.MaxRepeats); err != nil {
			return err
		}
	}
	if s := strings.TrimSpace(f.MissRate); s != "" {
		if c.MissRate, err = parseFloat("miss_rate", s, 0, 1); err != nil {
			return err
		}
	}
	if s := strings.TrimSpace(f.Settle); s != "" {
		if c.SettleSeconds, err = parseFloat("settle", s, 0, config.MaxSettleSeconds); err != nil {
			return err
		}
	}
	if s := strings.TrimSpace(f.Seed); s != "" {
		seed, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil {
			return errorf("seed", "%s: not a whole number (allowed: 0 to 18446744073709551615)", s)
		}
		c.Seed = seed
	}
	return nil
}

// source reads the form's key source into c: a file and how to read it,
// or synthetic keys and their rows.
func (f Form) source(c config.Config) (config.Config, error) {
	var err error
	switch strings.TrimSpace(f.SourceKind) {
	case "", "synthetic":
	case "file":
		if strings.TrimSpace(f.Source) == "" {
			return c, errorf("source", "choose a TSV or CSV file (optionally .gz) of keys, or synthetic keys")
		}
	default:
		return c, errorf("source", "%s: unknown kind of key source (allowed: synthetic, file)", f.SourceKind)
	}
	if src := strings.TrimSpace(f.Source); src != "" {
		if strings.TrimSpace(f.Keys) != "" {
			return c, errorf("keys", "choose synthetic keys or a file, not both")
		}
		c.Source = src
		c.Header = strings.TrimSpace(f.Header)
		if c.Header == "auto" {
			c.Header = ""
		}
		c.KeyColumn = strings.TrimSpace(f.KeyColumn)
		c.ValueColumn = strings.TrimSpace(f.ValueColumn)
		c.SkipBadRows = f.SkipBadRows
		c.Columns, err = config.SplitList("columns", strings.TrimSpace(f.Columns), "column", config.FileColumnsAllowed)
		return c, err
	}
	if strings.TrimSpace(f.KeyColumn) != "" || strings.TrimSpace(f.ValueColumn) != "" || strings.TrimSpace(f.Columns) != "" || f.SkipBadRows {
		return c, errorf("source", "columns and bad-row skipping apply to a file: choose one, or clear them")
	}
	if c.Rows, err = config.ParseRows(f.Rows); err != nil {
		return c, err
	}
	keys, err := f.keySpec()
	if err != nil {
		return c, err
	}
	c.Keys = keys
	return c, nil
}

// keySpec joins the key kind and its parameter into experiments' spelling:
// "random", "range:1000000", "zipf:1.1".
func (f Form) keySpec() (string, error) {
	kind := strings.ToLower(strings.TrimSpace(f.Keys))
	param := strings.TrimSpace(f.KeysParam)
	if kind == "" {
		kind = config.DefaultKeys
	}
	for _, ks := range keySources {
		if ks.Kind != kind {
			continue
		}
		if ks.Param == "" {
			if param != "" {
				return "", errorf("keys_param", "%s: %s keys take no parameter", param, kind)
			}
			return kind, nil
		}
		if param == "" {
			return "", errorf("keys_param", "%s keys need %s (%s)", kind, ks.Param, ks.ParamHint)
		}
		if kind == "range" {
			// M is a count: accept the row spellings (1M, 1e6) as for rows.
			m, err := config.ParseRows(param)
			if err != nil {
				return "", errorf("keys_param", "%s: not a whole number of key values (allowed: 1 or more, e.g. 1000000, 1e6, 1M)", param)
			}
			param = strconv.FormatInt(m, 10)
		}
		return kind + ":" + param, nil
	}
	var kinds []string
	for _, ks := range keySources {
		kinds = append(kinds, ks.Kind)
	}
	return "", errorf("keys", "%s: unknown key kind (allowed: %s)", f.Keys, strings.Join(kinds, ", "))
}

// WholeNumber reads a small count as a form or a flag gives it: 64,
// 1_000, or 1e2 and 4.0 where they are whole numbers; ok is false for
// anything else (2.5, "x"); one past int's range stands at its end.
func WholeNumber(text string) (n int, ok bool) {
	s := strings.ReplaceAll(strings.TrimSpace(text), "_", "")
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange), f != math.Trunc(f):
		return 0, false
	case f >= math.MaxInt: // 1e300: whole, and out of any range
		return math.MaxInt, true
	case f <= math.MinInt:
		return math.MinInt, true
	}
	return int(f), true
}

func parseInt(field, text string, lo, hi int) (int, error) {
	s := strings.TrimSpace(text)
	n, ok := WholeNumber(s)
	if !ok {
		return 0, errorf(field, "%s: not a whole number (allowed: %d to %d)", s, lo, hi)
	}
	if n < lo || n > hi {
		return 0, errorf(field, "%s: out of range (allowed: %d to %d)", s, lo, hi)
	}
	return n, nil
}

func parseFloat(field, text string, lo, hi float64) (float64, error) {
	s := strings.TrimSpace(text)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errorf(field, "%s: not a number (allowed: %g to %g)", s, lo, hi)
	}
	if !(v >= lo && v <= hi) {
		return 0, errorf(field, "%s: out of range (allowed: %g to %g)", s, lo, hi)
	}
	return v, nil
}

// describe is a run's one-line title: "5 layouts · UInt64 → UInt16 · 1M rows".
func describe(c config.Config) string {
	c = c.WithDefaults()
	what := c.Layouts[0]
	if len(c.Layouts) > 1 {
		what = fmt.Sprintf("%d layouts", len(c.Layouts))
	}
	rows := text.Rows(c.Rows) + " rows"
	if c.Source != "" {
		rows = c.Source
	}
	return fmt.Sprintf("%s · %s → %s · %s · %s", what, c.Key, c.Value, rows, text.Count(c.Shards, "shard", "shards"))
}

// Parse is config followed by experiments' own validation, with every error
// made an *Error that names its form field.
func (f Form) Parse() (config.Config, error) {
	c, err := f.config()
	if err != nil {
		return c, ErrorOf(err, "run")
	}
	if err := c.Validate(); err != nil {
		e := ErrorOf(err, "run")
		if e.Field == "keys" && strings.TrimSpace(f.KeysParam) != "" {
			e.Field = "keys_param" // the kind comes from a menu: the parameter is what is wrong
		}
		return c, e
	}
	return c, nil
}
