package sweep

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/refdriver"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// Options are the settings only some sweeps take.
type Options struct {
	// MaxShards is the largest shard count of the shards sweep (1, 2, 4, ...
	// up to it, and it); 0 means DefaultMaxShards.
	MaxShards int `json:"max_shards"`
	// WithReferences adds the C++ reference maps (package refdriver) to the
	// seed-table sweep's layouts: the seed's table beside the maps people
	// would pick instead.
	WithReferences bool `json:"with_references"`
	// WithClickHouse adds ClickHouse's own simple-key dictionaries
	// (package chdriver: ch_hashed, ch_sparse_hashed, ch_hashed_array) to the
	// seed-table sweep: the seed's table beside what ClickHouse builds.
	WithClickHouse bool `json:"with_clickhouse"`
}

// DefaultMaxShards is the shards sweep's default top: four workers per core
// of a small machine is already past where more shards help.
const DefaultMaxShards = 8

// Sweep describes one scenario.
type Sweep struct {
	Name string
	// Doc is one line for 'packlab help sweep'.
	Doc string
	// Rows is the default row count when none is given.
	Rows int64
	// Layouts is the default layouts when none are given; nil means all.
	Layouts []string
	// RowsDoc, when set, says what the default rows are instead of Rows.
	RowsDoc string
	// Varies is the Config setting the sweep sets itself, so the user may
	// not: "" or a Config field's JSON name ("seed-claims": most of them).
	Varies  string
	configs func(base config.Config, opt Options) []config.Config
}

// All lists every scenario, in the order help shows them.
func All() []Sweep {
	return []Sweep{
		{Name: "seed-table", Doc: "every layout at {rows} (<UInt64,UInt16> by default): the seed table (load, read, bytes_allocated, RSS, peak RSS); {with_references} adds the C++ maps people pick instead, {with_clickhouse} ClickHouse's own dictionaries",
			Rows: 1_000_000, configs: seedTable},
		{Name: "shards", Doc: "shards 1, 2, 4, ... up to {max_shards}: load rows/s in total and per worker",
			Rows: 2_000_000, Layouts: []string{"hashed", "packed"}, Varies: "shards", configs: shardsSweep},
		{Name: "types", Doc: "every key type x value type: bytes/entry and padding share per layout",
			Rows: 100_000, Varies: "key/value", configs: typesSweep},
		{Name: "growth", Doc: "row counts in steps of sqrt(2) from 10,000 up to {rows}: bytes_allocated and RSS against rows",
			Rows: 1_000_000, configs: growthSweep},
		{Name: "load-factor", Doc: "max_load_factor 0.5, 0.6, 0.7, 0.8, 0.9, 0.99: bytes/entry against read rows/s",
			Rows: 2_000_000, Layouts: []string{"hashed", "packed", "sparse"}, Varies: "max_load_factor", configs: loadFactorSweep},
		{Name: "seed-claims", Doc: "the seed's claims measured here: shard selection by modulo vs mask, blocks of 65536 x shards, " +
			"load speed against shards and threads (packed, 4M rows, medians of 3), and hashed, packed and sparse at {rows} " +
			"projected to 1e9 by the planner beside ClickHouse's 35/22/26 GiB; the report shows each claim beside the measurement",
			RowsDoc: "the largest of 1M, 10M, 100M that fits", Varies: "seed-claims", configs: seedClaimsConfigs},
	}
}

// Names lists the scenarios' names.
func Names() []string {
	var names []string
	for _, s := range All() {
		names = append(names, s.Name)
	}
	return names
}

// Find returns the named scenario, or an error listing them.
func Find(name string) (Sweep, error) {
	for _, s := range All() {
		if s.Name == strings.ToLower(strings.TrimSpace(name)) {
			return s, nil
		}
	}
	return Sweep{}, fault.New("sweep", name, "unknown sweep", strings.Join(Names(), ", "))
}

// Configs returns the sweep's runs for a base config whose zero fields take
// the sweep's defaults. It refuses a base that sets what the sweep varies.
func (s Sweep) Configs(base config.Config, opt Options) ([]config.Config, error) {
	base, err := s.checkBase(base)
	if err != nil {
		return nil, err
	}
	if base, err = s.withExtraLayouts(base, opt); err != nil {
		return nil, err
	}
	if opt.MaxShards != 0 && s.Name != "shards" {
		return nil, fault.New("max_shards", strconv.Itoa(opt.MaxShards), "applies only to the shards sweep", "sweep shards")
	}
	if opt.MaxShards == 0 {
		opt.MaxShards = DefaultMaxShards
	}
	if opt.MaxShards < core.MinShards || opt.MaxShards > core.MaxShards {
		return nil, fault.New("max_shards", strconv.Itoa(opt.MaxShards), "out of range", fmt.Sprintf("%d to %d", core.MinShards, core.MaxShards))
	}
	if base.Rows == 0 && base.Source == "" {
		base.Rows = s.Rows
	}
	if len(base.Layouts) == 0 && s.Layouts != nil {
		base.Layouts = append([]string(nil), s.Layouts...)
	}
	if err := base.Validate(); err != nil {
		return nil, err
	}
	cfgs := s.configs(base.WithDefaults(), opt)
	for _, c := range cfgs {
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	return cfgs, nil
}

// checkBase refuses what base sets that the sweep varies itself, and fills
// in what the sweep needs (seed-claims' rows).
func (s Sweep) checkBase(base config.Config) (config.Config, error) {
	switch s.Varies {
	case "shards":
		if base.Shards != 0 {
			return base, fault.New("shards", strconv.Itoa(base.Shards), "the shards sweep sets the shard count itself", "{max_shards} N")
		}
	case "max_load_factor":
		if base.MaxLoadFactor != 0 {
			return base, fault.New("max_load_factor", text.Float(base.MaxLoadFactor), "the load-factor sweep sets it itself", "no {max_load_factor}")
		}
	case "key/value":
		if len(base.Attributes) > 0 {
			return base, fault.New("attributes", strings.Join(base.Attributes, ","), "the types sweep runs every value type", "no {attributes}")
		}
		if base.Key != "" {
			return base, fault.New("key", base.Key, "the types sweep runs every key type", "no {key}")
		}
		if base.Value != "" {
			return base, fault.New("value", base.Value, "the types sweep runs every value type", "no {value}")
		}
	case "seed-claims":
		if err := seedClaimsRefuses(base); err != nil {
			return base, err
		}
		if base.Rows == 0 {
			base.Rows = seedClaimsRows(context.Background(), base)
		}
	}
	return base, nil
}

// withExtraLayouts adds the C++ reference maps (--with-references) and
// ClickHouse's own dictionaries (--with-clickhouse) to the seed table's
// layouts, where they are available.
func (s Sweep) withExtraLayouts(base config.Config, opt Options) (config.Config, error) {
	extra := []struct {
		on     bool
		field  string
		status func() (bool, string)
		names  []string
	}{
		{opt.WithReferences, "with_references", func() (bool, string) { st := refdriver.Status(); return st.Available, st.Problem }, referenceNames()},
		{opt.WithClickHouse, "with_clickhouse", func() (bool, string) { st := chdriver.Status(); return st.Available, st.Problem }, simpleClickHouseNames()},
	}
	for _, x := range extra {
		if !x.on {
			continue
		}
		if s.Name != "seed-table" {
			return base, &fault.FieldError{Field: x.field, Problem: "applies only to the seed-table sweep", Allowed: "sweep seed-table {" + x.field + "}", Switch: true}
		}
		if ok, problem := x.status(); !ok {
			return base, &fault.FieldError{Field: x.field, Problem: "unavailable: " + problem, Switch: true}
		}
		if len(base.Layouts) == 0 {
			base.Layouts = base.WithDefaults().Layouts
		}
		base.Layouts = slices.Clone(base.Layouts)
		for _, name := range x.names {
			if !slices.ContainsFunc(base.Layouts, func(n string) bool { return core.LayoutKey(n) == name }) {
				base.Layouts = append(base.Layouts, name)
			}
		}
	}
	return base, nil
}

// Run measures the sweep over base as one job, ro.Job, which must be set
// (usecase.Sweep names it after the sweep).
func (s Sweep) Run(ctx context.Context, base config.Config, opt Options, ro experiments.RunOptions) ([]result.Result, error) {
	cfgs, err := s.Configs(base, opt)
	if err != nil {
		return nil, err
	}
	return experiments.RunConfigs(ctx, cfgs, ro)
}

func seedTable(base config.Config, _ Options) []config.Config {
	return []config.Config{base}
}

// seedClaimsRefuses refuses the settings the seed-claims sweep makes itself:
// the claims are about ClickHouse's <UInt64,UInt16> example, random keys.
func seedClaimsRefuses(base config.Config) error {
	const allowed = "{rows}, {seed}, {repeats} and the output flags"
	switch {
	case len(base.Layouts) > 0:
		return fault.New("layouts", strings.Join(base.Layouts, ","), "the seed-claims sweep picks the layouts of each claim", allowed)
	case base.Shards != 0:
		return fault.New("shards", strconv.Itoa(base.Shards), "the seed-claims sweep sets the shard count itself", allowed)
	case base.ShardSelect != "":
		return fault.New("shard_select", base.ShardSelect, "the seed-claims sweep tries modulo and mask itself", allowed)
	case base.BlockRows != 0:
		return fault.New("block_rows", strconv.Itoa(base.BlockRows), "the seed-claims sweep sets the block rows itself", allowed)
	case base.Threads != 0:
		return fault.New("threads", strconv.Itoa(base.Threads), "the seed-claims sweep tries every thread count itself", allowed)
	case base.MaxLoadFactor != 0:
		return fault.New("max_load_factor", text.Float(base.MaxLoadFactor), "the seed's figures are at ClickHouse's default 0.5", allowed)
	case base.Key != "" && base.Key != config.DefaultKey:
		return fault.New("key", base.Key, "the seed's claims are about <UInt64,UInt16>", allowed)
	case base.Value != "" && base.Value != config.DefaultValue:
		return fault.New("value", base.Value, "the seed's claims are about <UInt64,UInt16>", allowed)
	case base.Source != "":
		return fault.New("source", base.Source, "the seed's claims are about random keys", allowed)
	case base.Keys != "" && base.Keys != config.DefaultKeys:
		return fault.New("keys", base.Keys, "the seed's claims are about random keys", allowed)
	}
	return nil
}

func shardsSweep(base config.Config, opt Options) []config.Config {
	var cfgs []config.Config
	for n := 1; ; n *= 2 {
		c := base
		c.Shards = min(n, opt.MaxShards)
		cfgs = append(cfgs, c)
		if n >= opt.MaxShards {
			return cfgs
		}
	}
}

func typesSweep(base config.Config, _ Options) []config.Config {
	var cfgs []config.Config
	for _, k := range core.Types() {
		for _, v := range core.Types() {
			c := base
			c.Key, c.Value = k.Name, v.Name
			cfgs = append(cfgs, c)
		}
	}
	return cfgs
}

// growthSteps is 10,000 (or rows/1024 if larger) times sqrt(2)^i up to rows,
// and rows itself: two points per doubling, so each layout's growth steps
// (x2 or x4 in cells) show between neighbours.
func growthSteps(rows int64) []int64 {
	start := max(int64(10_000), rows/1024)
	if rows <= start {
		return []int64{rows}
	}
	var steps []int64
	for x := float64(start); int64(math.Round(x)) < rows; x *= math.Sqrt2 {
		steps = append(steps, int64(math.Round(x)))
	}
	return append(steps, rows)
}

func growthSweep(base config.Config, _ Options) []config.Config {
	var cfgs []config.Config
	for _, n := range growthSteps(base.Rows) {
		c := base
		c.Rows = n
		cfgs = append(cfgs, c)
	}
	return cfgs
}

// LoadFactors are the max load factors the load-factor sweep tries.
var LoadFactors = []float64{0.5, 0.6, 0.7, 0.8, 0.9, 0.99}

// loadFactorSweep runs each layout that follows max_load_factor at every
// value; hashed_array and gomap ignore it, so they run once, as references.
func loadFactorSweep(base config.Config, _ Options) []config.Config {
	var follow, fixed []string
	for _, name := range base.Layouts {
		l, _ := core.ParseLayout(name)
		if l == core.LayoutHashedArray || l == core.LayoutGoMap {
			fixed = append(fixed, name)
		} else {
			follow = append(follow, name)
		}
	}
	var cfgs []config.Config
	if len(follow) > 0 {
		for _, mlf := range LoadFactors {
			c := base
			c.Layouts, c.MaxLoadFactor = follow, mlf
			cfgs = append(cfgs, c)
		}
	}
	if len(fixed) > 0 {
		c := base
		c.Layouts = fixed
		cfgs = append(cfgs, c)
	}
	return cfgs
}

// referenceNames and simpleClickHouseNames are the layouts the seed-table
// sweep adds with --with-references and --with-clickhouse.
func referenceNames() []string {
	var names []string
	for _, r := range refdriver.References() {
		names = append(names, r.Name)
	}
	return names
}

// simpleClickHouseNames are ClickHouse's hash layouts of a simple key, which
// any keys load (FLAT takes small dense keys only).
func simpleClickHouseNames() []string {
	var names []string
	for _, d := range dict.ClickHouseDictionaries() {
		if !d.ComplexKey && d.Layout != "FLAT" {
			names = append(names, d.Name)
		}
	}
	return names
}
