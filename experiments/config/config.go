// Package config is a measured run as a user asks for it (Config: every
// face fills one and calls Validate before any work), and the same run
// resolved once, per layout, into the plain value the engine, its guard,
// the feed and a driver read (Resolve, Run): the types, the layout, a row
// layout's cell and source, the tables' core.Options. It also names a
// config's jobs (names.go). It imports core and the lab's model
// (experiments/dict), never the engine: the layouts run by drivers are
// known here by their names and checks alone (Driver).
package config

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/text"
)

// Config is one measured run as a user asks for it: which layouts to build,
// over which key source, with which settings. Every face (the command line,
// the desktop app, the browser) fills one and calls Validate before any
// work. A zero field means its default (see WithDefaults).
type Config struct {
	Layouts []string `json:"layouts"` // core layouts or reference maps; empty = every core layout
	Key     string   `json:"key"`     // ClickHouse key type; default UInt64
	Value   string   `json:"value"`   // ClickHouse value type; default UInt16
	// Attributes is a dictionary's attribute types, the first the value
	// (Value); more than one only with ClickHouse's layouts (attributes.go).
	Attributes    []string `json:"attributes,omitempty"`
	Rows          int64    `json:"rows"`            // rows a synthetic source produces; a file gives all its rows
	Shards        int      `json:"shards"`          // tables per map, 1 to 128; default 1
	MaxLoadFactor float64  `json:"max_load_factor"` // 0.5 to 0.99; 0 = each layout's default: ClickHouse's 0.5, compact's 0.9, iceberg's 0.92
	Keys          string   `json:"keys"`            // sequential, random, range:M, zipf:S; default random

	// A TSV or CSV file (optionally .gz) instead of Keys, and how to read it.
	Source      string `json:"source,omitempty"`
	Header      string `json:"header,omitempty"`       // auto, yes, no; default auto
	KeyColumn   string `json:"key_column,omitempty"`   // 1-based position or header name; default 1
	ValueColumn string `json:"value_column,omitempty"` // position, name, or none; default 2
	SkipBadRows bool   `json:"skip_bad_rows,omitempty"`
	// Columns are the file's columns of the attributes after the value
	// (file.go): positions or header names, or "none" for
	// values drawn from the key; default each attribute's name, else the
	// columns 3, 4, ... (after the key's and the value's defaults).
	Columns []string `json:"columns,omitempty"`

	Seed      uint64  `json:"seed"`      // fixes keys, values and the read order
	Repeats   int     `json:"repeats"`   // loads per layout; times are medians; default 1
	NoRead    bool    `json:"no_read"`   // skip the read phase
	MissRate  float64 `json:"miss_rate"` // absent-key lookups per loaded row in the read phase, 0 to 1
	InProcess bool    `json:"in_process"`
	Force     bool    `json:"force"` // run even when the memory guard predicts it will not fit

	// The loader's knobs (the seed-claims sweep varies them): how the
	// producer picks a row's shard (auto, modulo, mask; "" = auto), how many
	// rows it reads at a time (0 = core.DefaultBlockRows), and how many
	// threads the measuring process may run at once (GOMAXPROCS; 0 = every
	// core).
	ShardSelect string `json:"shard_select,omitempty"`
	BlockRows   int    `json:"block_rows,omitempty"`
	Threads     int    `json:"threads,omitempty"`

	// HugePages is whether packlab's large slabs ask for transparent huge
	// pages: "on" ("" = on, core's default) or "off" (core.SetHugePages).
	// Reads run faster on them; on a VM that returns free memory to its
	// host a fresh huge page can be slow to fault in, which slows a load.
	HugePages string `json:"huge_pages,omitempty"`

	// Preallocate reserves every table for the source's rows before the
	// load (core.Options.Reserve = Rows, each shard its share; reserve() for
	// the C++ reference maps), as ClickHouse's PREALLOCATE 1 did from the
	// source's row count. Rows, not distinct keys: a source with duplicates
	// over-reserves, as ClickHouse's did. It needs the row count before the
	// load, so a synthetic source.
	Preallocate bool `json:"preallocate,omitempty"`

	// SettleSeconds is how long to idle before each measured load, 0 to
	// MaxSettleSeconds (0: none). On a VM that hands freed memory back to
	// its host, a load that starts within about 2 s of another reuses the
	// pages that one freed and runs several times faster than one that must
	// fault in fresh pages; idling a few seconds before each load puts every
	// load of a comparison on fresh memory (the planner's calibration idles
	// 2.5 s). Recorded in each result (Result.SettleSeconds).
	SettleSeconds float64 `json:"settle_seconds,omitempty"`
}

// MaxThreads bounds Config.Threads, MaxBlockRows Config.BlockRows,
// MaxSettleSeconds Config.SettleSeconds (ten minutes).
const (
	MaxThreads       = 256
	MaxBlockRows     = core.MaxBlockRows
	MaxSettleSeconds = 600
)

// Defaults of Config's zero fields.
const (
	DefaultKey     = "UInt64"
	DefaultValue   = "UInt16"
	DefaultKeys    = source.Random
	DefaultRows    = 1_000_000
	MaxRepeats     = 100
	defaultShards  = 1
	defaultRepeats = 1
)

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if len(c.Layouts) == 0 {
		for _, l := range core.Layouts() {
			c.Layouts = append(c.Layouts, string(l))
		}
	}
	if c.Key == "" {
		c.Key = DefaultKey
	}
	if c.Value == "" && len(c.Attributes) > 0 {
		_, c.Value = SplitAttribute(c.Attributes[0])
	}
	if c.Value == "" {
		c.Value = DefaultValue
	}
	if c.Rows == 0 && c.Source == "" {
		c.Rows = DefaultRows
	}
	if c.Shards == 0 {
		c.Shards = defaultShards
	}
	if c.Keys == "" && c.Source == "" {
		c.Keys = DefaultKeys
	}
	if c.Repeats == 0 {
		c.Repeats = defaultRepeats
	}
	return c
}

// Validate checks every field after defaults, before any work: layouts,
// types, rows, shards, max load factor, the key source (a file must exist
// and its options make sense), repeats and the miss rate. The error is a
// *FieldError naming the field (its JSON name), the value and what is allowed.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// resolved is a config's fields, each parsed once as Validate checks them
// in turn: what Resolve makes its runs of.
type resolved struct {
	c       Config // defaults in
	layouts []Layout
	key     dict.Key
	value   core.Type
	attrs   []dict.Attribute // the attributes, the first the value
	names   []string         // their columns' names
	spec    source.Spec
}

// resolve is Validate: each field parsed once, checked, and kept.
func (c Config) resolve() (resolved, error) {
	c = c.WithDefaults()
	r := resolved{c: c}
	seen := map[string]bool{}
	packlabs := 0 // packlab's own layouts, which HugePages applies to
	for _, name := range c.Layouts {
		l, ok := ParseLayout(name)
		if !ok {
			return r, fault.New("layouts", name, "unknown layout", LayoutNames())
		}
		if seen[l.String()] {
			return r, fault.New("layouts", name, "given twice", "each layout once")
		}
		seen[l.String()] = true
		if l.Driver == nil {
			packlabs++
		} else if err := l.Driver.Validate(c, name); err != nil { // a layout run in another program
			return r, err
		}
		r.layouts = append(r.layouts, l)
	}
	var err error
	if r.key, err = c.dictKey(); err != nil {
		return r, err
	}
	if err := c.validateKey(r.key); err != nil {
		return r, err
	}
	value, valueErr := fixedType("value", c.Value, strings.Join(core.TypeNames(), ", "))
	// The attributes before the value: the first attribute is the value.
	if r.attrs, r.names, err = c.resolveAttributes(value, valueErr); err != nil {
		return r, err
	}
	if r.attrs != nil {
		if err := c.checkAttributeLayouts(r.attrs, r.layouts); err != nil {
			return r, err
		}
	}
	if valueErr != nil {
		return r, valueErr
	}
	r.value = value
	if r.attrs == nil { // the value alone
		r.attrs, r.names = []dict.Attribute{{Type: value}}, []string{dict.AttributeName(0)}
	}
	if c.Source == "" {
		if err := CheckRows(c.Rows); err != nil {
			return r, err
		}
	}
	if c.Shards < core.MinShards || c.Shards > core.MaxShards {
		return r, fault.New("shards", strconv.Itoa(c.Shards), "out of range", fmt.Sprintf("%d to %d", core.MinShards, core.MaxShards))
	}
	if c.MaxLoadFactor != 0 && !(c.MaxLoadFactor >= core.MinMaxLoadFactor && c.MaxLoadFactor <= core.MaxMaxLoadFactor) {
		return r, fault.New("max_load_factor", text.Float(c.MaxLoadFactor), "out of range", fmt.Sprintf("%v to %v", core.MinMaxLoadFactor, core.MaxMaxLoadFactor))
	}
	if c.Repeats < 1 || c.Repeats > MaxRepeats {
		return r, fault.New("repeats", strconv.Itoa(c.Repeats), "out of range", fmt.Sprintf("1 to %d", MaxRepeats))
	}
	if !(c.SettleSeconds >= 0 && c.SettleSeconds <= MaxSettleSeconds) {
		return r, fault.New("settle_seconds", text.Float(c.SettleSeconds)+"s", "out of range", fmt.Sprintf("0 to %d seconds", MaxSettleSeconds))
	}
	if !(c.MissRate >= 0 && c.MissRate <= 1) {
		return r, fault.New("miss_rate", text.Float(c.MissRate), "out of range", "0 to 1")
	}
	if c.NoRead && c.MissRate != 0 {
		return r, fault.New("miss_rate", text.Float(c.MissRate), "has no effect with {no_read}", "0 with {no_read}")
	}
	if err := c.validateLoader(); err != nil {
		return r, err
	}
	if c.HugePages != "" && packlabs == 0 {
		return r, fault.New("huge_pages", c.HugePages, "applies to packlab's layouts; the C++ reference maps take what their allocator gives", "with at least one packlab layout")
	}
	if r.spec, err = c.sourceSpec(r.attrs); err != nil {
		return r, err
	}
	if r.spec.IsSynthetic() {
		if err := r.spec.ValidateKey(r.key.LabKey()); err != nil { // range:300 of UInt8 keys
			return r, sourceFieldErr("keys", c.Keys, r.spec, err)
		}
	}
	if c.Preallocate && c.Source != "" {
		return r, &fault.FieldError{Field: "preallocate", Problem: "needs the row count before the load, and a file's is known only once it is read",
			Allowed: "with synthetic keys ({keys})", Switch: true}
	}
	return r, nil
}

// validateLoader checks the loader's knobs.
func (c Config) validateLoader() error {
	switch core.ShardSelect(strings.ToLower(strings.TrimSpace(c.ShardSelect))) {
	case "", core.ShardSelectAuto, core.ShardSelectModulo:
	case core.ShardSelectMask:
		if c.Shards&(c.Shards-1) != 0 {
			return fault.New("shard_select", c.ShardSelect, fmt.Sprintf("needs a power-of-two shard count, not {shards} %d", c.Shards), "auto or modulo; mask with {shards} 1, 2, 4, ... 128")
		}
	default:
		return fault.New("shard_select", c.ShardSelect, "unknown", "auto, modulo, mask")
	}
	if c.BlockRows < 0 || c.BlockRows > MaxBlockRows {
		return fault.New("block_rows", strconv.Itoa(c.BlockRows), "out of range", fmt.Sprintf("1 to %d", MaxBlockRows))
	}
	if c.Threads < 0 || c.Threads > MaxThreads {
		return fault.New("threads", strconv.Itoa(c.Threads), "out of range", fmt.Sprintf("1 to %d", MaxThreads))
	}
	if _, ok := HugePagesOn(c.HugePages); !ok {
		return fault.New("huge_pages", c.HugePages, "unknown", "on, off")
	}
	return nil
}

// HugePagesOn reads Config.HugePages: "" and "on" are on, "off" off.
func HugePagesOn(s string) (on, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

// TableOptions are the tables' options at max load factor mlf, reserved
// for keys when preallocate (a run's rows, a plan's distinct keys, a plan
// chart's row count).
func TableOptions(mlf float64, preallocate bool, keys int64) core.Options {
	o := core.Options{MaxLoadFactor: mlf}
	if preallocate {
		o.Reserve = keys
	}
	return o
}

// SourceSpec turns the key-source fields into core's description of the
// source, checked: a synthetic kind with Rows and Seed, or a file that exists
// with its reading options. Errors name the field.
func (c Config) SourceSpec() (source.Spec, error) {
	c = c.WithDefaults()
	attrs, _ := c.attributes() // a file's columns are checked with valid attributes only
	return c.sourceSpec(attrs)
}

// sourceSpec is SourceSpec of c (defaults in) with its attributes
// resolved (nil when they are not valid).
func (c Config) sourceSpec(attrs []dict.Attribute) (source.Spec, error) {
	if c.Source != "" {
		if c.Keys != "" {
			return source.Spec{}, fault.New("keys", c.Keys, "cannot be combined with {source}", "one of {keys} or {source}")
		}
		spec := source.Spec{Kind: source.File, Path: c.Source, Values: source.ValuesHash,
			Header: c.Header, KeyColumn: c.KeyColumn, ValueColumn: c.ValueColumn, SkipBadRows: c.SkipBadRows, Seed: c.Seed}
		if err := c.fileColumns(&spec, attrs); err != nil {
			return spec, err
		}
		c.attributeNames(&spec)
		st, err := os.Stat(c.Source)
		switch {
		case errors.Is(err, os.ErrNotExist):
			return spec, fault.New("source", c.Source, "no such file", "an existing TSV or CSV file, optionally .gz")
		case err != nil:
			return spec, fault.New("source", c.Source, "cannot be read: "+source.PathErrorReason(err).Error(), "a readable TSV or CSV file")
		case st.IsDir():
			return spec, fault.New("source", c.Source, "is a directory", "a TSV or CSV file, optionally .gz")
		}
		if err := spec.Validate(); err != nil {
			var oe *source.OptionError
			if !errors.As(err, &oe) {
				return spec, sourceFieldErr("source", c.Source, spec, err)
			}
			field := fileOptionField[oe.Option]
			value := map[string]string{"key_column": c.KeyColumn, "value_column": c.ValueColumn, "header": c.Header, "columns": strings.Join(c.Columns, ",")}[field]
			problem := oe.Problem // the field and the value say what oe.What says
			if field == "columns" {
				problem = oe.What + " is " + oe.Problem // which of the columns
			}
			return spec, &fault.FieldError{Field: field, Value: value, Problem: problem, Allowed: oe.Allowed}
		}
		return spec, nil
	}
	for _, f := range []struct {
		field, value string
		set          bool
	}{{"header", c.Header, c.Header != ""}, {"key_column", c.KeyColumn, c.KeyColumn != ""},
		{"value_column", c.ValueColumn, c.ValueColumn != ""}, {"skip_bad_rows", "", c.SkipBadRows}, {"columns", strings.Join(c.Columns, ","), len(c.Columns) > 0}} {
		if f.set {
			return source.Spec{}, &fault.FieldError{Field: f.field, Value: f.value, Problem: "applies only to a file",
				Allowed: "with {source} FILE", Switch: f.field == "skip_bad_rows"}
		}
	}
	// What keys takes: core's generators, not its files (source's).
	const keysAllowed = "sequential, random, range:M, zipf:S; use {source} for a file"
	spec, err := source.Parse(c.Keys)
	if err != nil {
		err = sourceFieldErr("keys", c.Keys, spec, err)
		if fe := err.(*fault.FieldError); fe.Allowed == source.AllowedKinds {
			fe.Allowed = keysAllowed // core's ends "or a file", which keys refuses
		}
		return spec, err
	}
	if spec.Kind == source.File {
		return spec, fault.New("keys", c.Keys, "is not a key generator", keysAllowed)
	}
	spec.Rows, spec.Seed = c.Rows, c.Seed
	if err := spec.Validate(); err != nil {
		return spec, sourceFieldErr("keys", c.Keys, spec, err)
	}
	return spec, nil
}

// fileOptionField is the Config field of each of core's file options
// (source.OptionError).
var fileOptionField = map[string]string{"Header": "header", "KeyColumn": "key_column", "ValueColumn": "value_column", "Columns": "columns"}

// sourceFieldErr wraps an error of core's source parsing (a generator's,
// or a file's path), dropping its `source "X": ` prefix since the field
// and the value (the user's, exactly) already say it.
func sourceFieldErr(field, value string, spec source.Spec, err error) error {
	msg := err.Error()
	for _, p := range []string{fmt.Sprintf("source %q: ", value), fmt.Sprintf("source %q: ", spec.String())} {
		msg = strings.TrimPrefix(msg, p)
	}
	problem, allowed := msg, ""
	if i := strings.LastIndex(msg, " (allowed: "); i >= 0 && strings.HasSuffix(msg, ")") {
		problem, allowed = msg[:i], msg[i+len(" (allowed: "):len(msg)-1]
	}
	return &fault.FieldError{Field: field, Value: value, Problem: problem, Allowed: allowed}
}

// LayoutNames lists what Layouts takes: core's layouts, the row layouts,
// then each driver's.
func LayoutNames() string {
	names := make([]string, 0, 5)
	for _, l := range core.Layouts() {
		names = append(names, string(l))
	}
	list := strings.Join(names, ", ") + "; rows of every attribute: " + strings.Join(dict.RowLayoutNames(), ", ")
	for _, d := range drivers {
		list += "; " + d.LayoutNames()
	}
	return list
}

// ParseBytes reads a memory size as users write it: 24GiB, 24G (binary),
// 32GB (decimal), 512MiB, 1.5TiB, or a plain count of bytes (1073741824,
// or 1e9 as a row count is written; 1E is 1 EiB). field names the field in
// the error.
func ParseBytes(field, s string) (int64, error) {
	text := strings.TrimSpace(s)
	bad := fault.Of(field, s, "a size such as 24GiB, 512MiB, 1.5TiB, 32GB or 1073741824 (bytes)")
	if text == "" {
		return 0, bad("empty")
	}
	v, err := strconv.ParseFloat(text, 64)
	mult := 1.0 // a count of bytes
	if err != nil {
		i := 0 // the number: a sign, digits and a point
		if text[0] == '-' || text[0] == '+' {
			i++
		}
		for i < len(text) && (text[i] >= '0' && text[i] <= '9' || text[i] == '.') {
			i++
		}
		num, unit := text[:i], strings.ToLower(strings.TrimSpace(text[i:]))
		if v, err = strconv.ParseFloat(num, 64); err != nil {
			return 0, bad("not a number")
		}
		mult = map[string]float64{
			"b": 1,
			"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
			"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
			"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
			"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
			"p": 1 << 50, "pib": 1 << 50, "pb": 1e15,
			"e": 1 << 60, "eib": 1 << 60, "eb": 1e18,
		}[unit]
		if mult == 0 {
			return 0, bad("unknown unit " + strconv.Quote(text[i:]))
		}
	}
	b := v * mult
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0, bad("not a number")
	case v < 0:
		return 0, bad("negative")
	case b < 1:
		return 0, bad("not positive")
	case b >= math.MaxInt64:
		return 0, bad("too large")
	}
	return int64(b), nil
}

// CheckRows is the rule for a row count, the config's and the plan's: 1 to
// source.MaxRows, else a FieldError for rows.
func CheckRows(n int64) error {
	if n < 1 || n > source.MaxRows {
		return fault.New("rows", strconv.FormatInt(n, 10), "out of range", fmt.Sprintf("1 to %d", source.MaxRows))
	}
	return nil
}

// ParseRows reads a row count as users write it: 1000000, 1e6, 1M, 10M, 1B,
// 2.5M, 1_000_000, 2^62. Suffixes are powers of 1000: K (thousand), M (million),
// B or G (billion), T (trillion). The count must be a whole number of rows,
// at least 1 and at most 2^62.
func ParseRows(s string) (int64, error) { return ParseCount("rows", s) }

// ParseCount reads a count as ParseRows does, its errors naming field (a
// plan's calibration_rows, its max_key).
func ParseCount(field, s string) (int64, error) {
	text := strings.TrimSpace(s)
	what, tooMany := "a whole number of rows", "too many"
	if !strings.HasSuffix(field, "rows") {
		what, tooMany = "a whole number", "too large" // max_key: a key, not rows
	}
	bad := fault.Of(field, s, what+" from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B")
	if text == "" {
		return 0, bad("empty")
	}
	num := strings.ReplaceAll(text, "_", "")
	if num == "" {
		return 0, bad("not a number") // "_" alone (found by FuzzParseRows)
	}
	if base, exp, ok := strings.Cut(num, "^"); ok {
		// A power, as the allowed range writes its end (2^62) and
		// text.Rows a power of two: whole numbers only.
		b, berr := strconv.ParseInt(base, 10, 64)
		e, eerr := strconv.ParseInt(exp, 10, 64)
		switch {
		case berr != nil || eerr != nil || strings.ContainsAny(base+exp, "+-"):
			return 0, bad("not a number")
		case b == 0:
			return 0, bad("not positive")
		case b == 1:
			return 1, nil
		case e > 62 || new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil).Cmp(big.NewInt(source.MaxRows)) > 0:
			return 0, bad(tooMany)
		}
		return new(big.Int).Exp(big.NewInt(b), big.NewInt(e), nil).Int64(), nil
	}
	mult := int64(1)
	switch num[len(num)-1] {
	case 'k', 'K':
		mult = 1e3
	case 'm', 'M':
		mult = 1e6
	case 'b', 'B', 'g', 'G':
		mult = 1e9
	case 't', 'T':
		mult = 1e12
	}
	if mult != 1 {
		num = num[:len(num)-1]
	}
	if num == "" || strings.ContainsAny(num, "xXpPnNoObB/") {
		return 0, bad("not a number")
	}
	// Exact decimal arithmetic: 4.35M is 4,350,000 rows, not 4,349,999.99...
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return 0, bad("not a number")
	}
	r.Mul(r, new(big.Rat).SetInt64(mult))
	switch {
	case r.Sign() <= 0:
		return 0, bad("not positive")
	case r.Cmp(new(big.Rat).SetInt64(source.MaxRows)) > 0:
		return 0, bad(tooMany)
	case !r.IsInt():
		return 0, bad("not " + what)
	}
	return r.Num().Int64(), nil
}
