package planner

// The planner: which layout, max load factor and shard count for N rows of
// <K,V> in a memory budget, answered before a single row is loaded.
//
//	request (rows, types, budget, threads, read- or load-heavy)
//	  |
//	  |  every layout of core.Layouts()
//	  |  x every max load factor worth showing (the lowest that gives each
//	  |    distinct geometry at these rows: a higher one only slows reads)
//	  |  x SHARDS 1, 2, 4, ... 128
//	  v
//	core.Predict            bytes_allocated after the load; what the last
//	                        growth holds above it in every shard (they grow
//	                        at once): nothing where a slab grows in place
//	x measured overhead     RSS / bytes_allocated of the layout, measured here
//	+ the loader's blocks   -> steady bytes, peak bytes, bytes per pair
//	measured speeds         one shard's load and read rows/s, measured here
//	                        (saved results, or a short calibration run); the
//	                        gain of each extra parallel worker; the producer's
//	                        ceiling; the read model for other load factors
//	                        -> load seconds, read rows/s
//	  |
//	  v
//	rank: setups whose reload peak (the serving table + the new one at its
//	first-load peak; --first-load-only: the first load's) fits the budget
//	first; then what the user prefers: memory (the default) ranks by the
//	computed memory alone; read or load puts first the setups no other
//	setup outruns beyond both their measured ranges, and breaks ties by
//	the rule: less memory, fewer shards, core.Layouts()' order (rank)
//
// Nothing is allocated: a plan for 10^12 rows takes as long as one for
// 10^3. Every figure traces back to core.Predict or to a saved result.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner/snippet"
	"github.com/packlab/packlab/experiments/planner/speed"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// PlanRequest is the planner's question. A zero field means its default.
type PlanRequest struct {
	Rows  int64  `json:"rows"`  // distinct keys to hold, 1 to 2^62
	Key   string `json:"key"`   // default UInt64
	Value string `json:"value"` // default UInt16
	// Attributes is the dictionary's attribute types, the first the value
	// (attributes.go); with more than one the plan weighs ClickHouse's
	// layouts, each attribute in its own table (or array).
	Attributes  []string `json:"attributes"`
	MemoryBytes int64    `json:"memory_bytes"` // the budget; 0 = the memory available on this machine now
	Threads     int      `json:"threads"`      // threads the load may use; 0 = this machine's cores
	// Prefer is what decides among the setups that fit: PreferMemory (the
	// default), PreferRead or PreferLoad.
	Prefer string `json:"prefer"`
	// FirstLoadOnly checks the budget against the first load's peak; by
	// default it is checked against a reload's (the serving table and the
	// new one loading beside it, as ClickHouse's reload holds them).
	FirstLoadOnly bool `json:"first_load_only"`
	// Runtime is where the planned table will run: RuntimeNative (the
	// default, on every face, the browser's too) or RuntimeBrowser (this
	// browser's wasm memory; only in the browser build).
	Runtime string `json:"runtime"`
	// Preallocate plans tables reserved for the rows before the load
	// (core.Options.Reserve; the lab's --preallocate): no growth, so a
	// peak of the final size and faster loads, measured as such.
	Preallocate bool `json:"preallocate"`
	// CalibrationRows is the size a calibration measures at (0 = the
	// plan's keys, 1e6 to 1e7: calibrationRowsFor): given, a layout with no run within 2x of it is
	// measured there. Runs near the plan's rows give it speeds measured
	// at its size (see speedRows).
	CalibrationRows int64 `json:"calibration_rows,omitempty"`
	// ClickHouseVersion is the ClickHouse release the LAYOUT clauses are
	// for ("23.3", default DefaultClickHouseVersion): a setup the release
	// cannot build has none, with why (clickhouse_version.go).
	ClickHouseVersion string `json:"clickhouse_version"`
	// MaxKey is the largest key when the keys are dense integers from 0
	// (ids): the plan then weighs ClickHouse's FLAT, whose arrays the key
	// indexes (experiments/chdriver/flat.go). 0: not known, FLAT is not weighed.
	MaxKey int64 `json:"max_key,omitempty"`
	// GrowthPercent is how much the dictionary grows before its next
	// reload: the plan is for Rows x (1 + GrowthPercent/100) keys. Nil:
	// DefaultGrowthPercent; 0: none.
	GrowthPercent *float64 `json:"growth_percent,omitempty"`
	// SettleSeconds is the idle before each of a calibration's loads
	// (config.Config.SettleSeconds). Nil: 2.5 s (calibrationSettle: each
	// load faults fresh memory, as a table of a plan's size does); 0: none,
	// for a machine that keeps freed memory, where loads back to back
	// measure alike.
	SettleSeconds *float64 `json:"settle_seconds,omitempty"`
	// From is the table a dictionary would read, when the plan is for one
	// on a server (packlab plan --from): its CREATE DICTIONARY names it,
	// and its columns' figures stand for the lab's generated values. Nil:
	// a table named source_table, of generated values.
	From *dict.TableSource `json:"from,omitempty"`
	// ComplexKey plans ClickHouse's dictionary with its key kept whole, in
	// a COMPLEX_KEY_ layout, where a simple key's UInt64 would not hold
	// it: a key wider than 8 bytes (UUID, UInt128, Int128: always so) or
	// one whose values are not whole numbers from 0 (packlab plan --from
	// over a Float64 key with fractions, which a UInt64 would merge).
	ComplexKey bool `json:"complex_key,omitempty"`
	// For shows one answer: EngineClickHouse or EngineGo; "" both.
	For string `json:"for,omitempty"`
}

// DefaultGrowthPercent is the growth a plan leaves room for unless told:
// see docs/plan.md ("Headroom"). A dictionary is planned once and reloaded
// for months while its source grows; a plan exactly at its rows also sits
// wherever the power-of-two steps put it, so the same table's answer for
// rows a few percent apart could differ. 10 % covers a quarter's growth of
// a source that grows 3 % a month and puts the planned rows past the
// step a few percent more would cross.
const DefaultGrowthPercent = 10

// defaultGrowth is DefaultGrowthPercent; the package's tests of figures at
// exact row counts set it to 0 (main_test.go).
var defaultGrowth float64 = DefaultGrowthPercent

// MaxGrowthPercent is the most growth a plan takes.
const MaxGrowthPercent = 1000

// Growth is r's growth in percent, its default filled in.
func (r PlanRequest) Growth() float64 {
	if r.GrowthPercent == nil {
		return defaultGrowth
	}
	return *r.GrowthPercent
}

// ParseCalibrationRows reads a calibration's row count as ParseRows does,
// its errors naming calibration_rows (PlanRequest.Validate checks the range).
func ParseCalibrationRows(s string) (int64, error) { return config.ParseCount("calibration_rows", s) }

// ParseMaxKey reads the largest key as ParseRows reads a count (1e6, 10M,
// 999999), its errors naming max_key.
func ParseMaxKey(s string) (int64, error) { return config.ParseCount("max_key", s) }

// What a plan prefers among the setups that fit. Memory is the default:
// it is computed (core.Predict), so the answer is the same on every face and
// machine and whatever the history holds, and it is what a budget is about;
// speeds measured at a calibration's size vary by tens of percent between
// calibrations and rank tables of a billion rows only roughly (see
// docs/plan.md), so they decide only when asked, and only beyond their range.
const (
	// PreferBalanced (the default): memory decides among setups of
	// similar speed; one much slower to load or read than another that fits
	// loses unless it saves much memory (balanced.go).
	PreferBalanced = "balanced"
	PreferMemory   = "memory"
	PreferRead     = "read"
	PreferLoad     = "load"
)

// Where a planned table runs (PlanRequest.Runtime).
const (
	RuntimeNative  = "native"
	RuntimeBrowser = "browser"
)

// MinPlanMemory is the smallest budget the planner takes.
const MinPlanMemory = 1 << 20

// planShards are the shard counts the planner tries.
var planShards = []int{1, 2, 4, 8, 16, 32, 64, 128}

// Candidate is one setup the planner weighed. The JSON is the contract of
// `packlab plan --format json` (an array of these, best first).
type Candidate struct {
	Rank          int     `json:"rank"` // 1 = recommended (or, when nothing fits, the smallest)
	Layout        string  `json:"layout"`
	KeyType       string  `json:"key_type"`
	ValueType     string  `json:"value_type"`
	Rows          int64   `json:"rows"`     // as asked
	Distinct      int64   `json:"distinct"` // keys the table holds: rows, or every value a narrow key type has
	Shards        int     `json:"shards"`
	MaxLoadFactor float64 `json:"max_load_factor"`
	Preallocate   bool    `json:"preallocate"` // reserved for the keys before the load (core.Options.Reserve)
	BucketCount   int64   `json:"bucket_count"`
	LoadFactor    float64 `json:"load_factor"` // distinct / bucket_count after the load

	BytesAllocated int64   `json:"bytes_allocated"` // computed: core.Predict's final bytes; on a ClickHouse setup its dictionary's (ClickHouse.SteadyBytes)
	Overhead       float64 `json:"overhead"`        // the allocator's factor over bytes_allocated (dict.AllocatorFactor: 1, gomap's cautious 1.4); not measured, so the same everywhere
	PeakOverhead   float64 `json:"peak_overhead"`   // the same factor over the peak
	SteadyBytes    int64   `json:"steady_bytes"`    // bytes_allocated x overhead + the loader's freed blocks: the RSS after the load
	PeakBytes      int64   `json:"peak_bytes"`      // the first load's peak: (final + growing x one shard's last growth + the loader's blocks) x peak overhead
	// ReloadPeakBytes is a reload's peak: the serving table (bytes_allocated
	// x overhead) and a new one at its first-load peak beside it; the
	// loader's blocks of the first load are reused.
	ReloadPeakBytes int64   `json:"reload_peak_bytes"`
	CheckedBytes    int64   `json:"checked_bytes"`   // what the budget is checked against: reload_peak_bytes, or peak_bytes with first_load_only
	GrowingAtOnce   int     `json:"growing_at_once"` // shards whose old and new slab are alive together at the peak
	GrowthBytes     int64   `json:"growth_bytes"`    // what one shard holds above its final size in its last growth, natively (nativeGrowth)
	LoaderBytes     int64   `json:"loader_bytes"`    // the loader's blocks in flight
	BytesPerPair    float64 `json:"bytes_per_pair"`  // steady bytes / distinct

	LoadSeconds       *float64 `json:"load_seconds"`         // null when no speed was measured for the layout
	LoadRowsPerSecond *float64 `json:"load_rows_per_second"` // the median, with this many shards and threads
	ReadSeconds       *float64 `json:"read_seconds"`         // every key looked up once, one thread
	ReadRowsPerSecond *float64 `json:"read_rows_per_second"`
	// The speeds' ranges, [slowest, fastest] rows/s over the measured
	// loads, scaled as the medians are; null where one load gave no range
	// (such a speed is shown, but cannot decide).
	LoadRange *[2]float64 `json:"load_rows_per_second_range"`
	ReadRange *[2]float64 `json:"read_rows_per_second_range"`
	// SpeedTier is the setup's place by the preferred speed: 1 = no setup
	// that fits is faster beyond both ranges; 0 when memory is preferred or
	// the setup does not fit.
	SpeedTier int `json:"speed_tier"`

	// Engine is what runs the setup: EngineGo (packlab's core, its
	// figures core.Predict's) or EngineClickHouse (ClickHouse's dictionary
	// of ClickHouseLayout, its figures by ClickHouse's own growth). A
	// table ClickHouse builds as well is two setups, one of each: each row
	// shows the memory of what would really run.
	Engine string `json:"engine"`
	// Answer marks the plan's two answers: "clickhouse" on the best
	// ClickHouse dictionary, "go" on the best Go table; "" on the others.
	Answer string `json:"answer,omitempty"`
	// HoldsUpTo is, on an answer, the most rows its setup holds in the
	// budget (the same layout, shards and load factor); beyond it the
	// answer changes. 0 elsewhere.
	HoldsUpTo int64 `json:"holds_up_to_rows,omitempty"`

	Fits             bool     `json:"fits"` // checked_bytes <= the budget
	Why              string   `json:"why"`
	Attributes       []string `json:"attributes"`            // the dictionary's attribute types when it has several, else null
	ClickHouseLayout string   `json:"clickhouse_layout"`     // a ClickHouse setup's LAYOUT(...); "" on a Go setup
	ClickHouseNote   string   `json:"clickhouse_note"`       // how ClickHouse's dictionary differs, when it does; on a Go setup, why no ClickHouse dictionary builds it
	ComplexKey       bool     `json:"complex_key,omitempty"` // a ClickHouse setup's layout is a COMPLEX_KEY_ one (PlanRequest.ComplexKey)
	// ClickHouse is, on a ClickHouse setup, the memory of its dictionary by
	// ClickHouse's own growth (dict.ClickHouseTableMemory; the setup's
	// steady and peak figures are these); null on a Go setup.
	ClickHouse       *dict.ClickHouseMemory `json:"clickhouse_memory"`
	PacklabOnly      bool                   `json:"packlab_only"`      // a Go setup no ClickHouse dictionary builds for these types
	BestClickHouse   bool                   `json:"best_clickhouse"`   // the ClickHouse answer (Answer "clickhouse")
	CreateDictionary string                 `json:"create_dictionary"` // the ClickHouse answer's statement
	GoCode           string                 `json:"go_code"`           // the Go answer's code
	Estimated        bool                   `json:"estimated"`         // the layout's geometry is a model (core.Prediction.Estimated)
	Saturated        bool                   `json:"saturated"`         // beyond 8 EiB: the figures stand at math.MaxInt64

	columns    []string // the dictionary's attribute columns when it has several
	FollowsMLF bool     `json:"-"` // the layout's geometry follows max_load_factor
	runtime    string   // where the table runs: PlanRequest.Runtime
	// loadAtLeast is the load speed with the least gain from several shards
	// the scaling pair's ranges allow (Scaling.EfficiencyRange): what the
	// balanced rule weighs (balancedTiers); nil as LoadRowsPerSecond is.
	loadAtLeast *float64
}

// Plan is the planner's whole answer.
type Plan struct {
	Request     PlanRequest   `json:"request"` // with defaults filled in
	BudgetBytes int64         `json:"budget_bytes"`
	BudgetFrom  string        `json:"budget_from"` // "{memory_bytes}" (the field, package fault), or what this machine has available
	Cores       int           `json:"cores"`
	Candidates  []Candidate   `json:"candidates"` // every setup, by rank
	Answer      string        `json:"answer"`     // one line: the recommendation, or why there is none
	Checked     string        `json:"checked"`    // the peak the budget is checked against: "reload" or "first load"
	Rule        string        `json:"rule"`       // how the plan decides, in words
	RunnersUp   []string      `json:"runners_up"` // the next setups and each layout's best, with why each lost
	RuledOut    []string      `json:"ruled_out"`  // one line per layout no setup of which fits
	Growing     string        `json:"growing"`    // how many shards grow at once, and why
	Measures    []Measure     `json:"measures"`   // where each layout's speeds and overhead come from
	Scaling     speed.Scaling `json:"scaling"`
	Notes       []string      `json:"notes"`
}

// Best is the Go answer (the best Go table), or the ClickHouse answer when
// no Go table is weighed (FLAT alone); nil for an empty plan.
func (p Plan) Best() *Candidate {
	if c := p.answer(EngineGo); c != nil {
		return c
	}
	return p.answer(EngineClickHouse)
}

// BestGo is the Go answer: the best table of packlab's core; nil when none
// is weighed.
func (p Plan) BestGo() *Candidate { return p.answer(EngineGo) }

// BestClickHouse is the ClickHouse answer: the best dictionary the
// ClickHouse release can build (the least over the budget when none fits);
// nil when it builds none.
func (p Plan) BestClickHouse() *Candidate { return p.answer(EngineClickHouse) }

func (p Plan) answer(engine string) *Candidate {
	for i := range p.Candidates {
		if p.Candidates[i].Answer == engine {
			return &p.Candidates[i]
		}
	}
	return nil
}

// PlanMachine is what the planner knows of this machine.
type PlanMachine struct {
	AvailableBytes int64 // memory a new process can have now; -1 if unknown
	TotalBytes     int64
	Cores          int
}

// ParsedRequest is a PlanRequest read and checked once (Parse), with its
// names resolved: what the plan and its calibration are made from.
type ParsedRequest struct {
	PlanRequest
	key, value core.Type
	// stringKey: the key is a String, which ClickHouse's COMPLEX_KEY_
	// layouts hold and no table of core does; key is then UInt64, the
	// geometry of their tables (dict counts the reference in each cell).
	stringKey bool
	keyPart   dict.KeyPart     // the key as given: its type, or a String with its lengths
	attrs     []dict.Attribute // the attributes, the first the value
	attrNames []string         // their column names
	distinct  int64
	chVersion dict.Release
}

// WithDefaults returns r with every zero field but MemoryBytes set.
func (r PlanRequest) WithDefaults() PlanRequest {
	r.Key = cmp.Or(r.Key, config.DefaultKey)
	if len(r.Attributes) > 0 && r.Value == "" {
		_, r.Value = config.SplitAttribute(r.Attributes[0])
	}
	r.Value = cmp.Or(r.Value, config.DefaultValue)
	r.Prefer = strings.ToLower(strings.TrimSpace(cmp.Or(r.Prefer, PreferBalanced)))
	r.Runtime = strings.ToLower(strings.TrimSpace(cmp.Or(r.Runtime, RuntimeNative)))
	r.For = strings.ToLower(strings.TrimSpace(r.For))
	r.ClickHouseVersion = strings.TrimSpace(cmp.Or(r.ClickHouseVersion, DefaultClickHouseVersion))
	return r
}

// Validate checks every field, naming the field, the value and what is
// allowed, as run does.
func (r PlanRequest) Validate() error {
	_, err := r.Parse()
	return err
}

func (r PlanRequest) Parse() (ParsedRequest, error) {
	r = r.WithDefaults()
	p := ParsedRequest{PlanRequest: r}
	var err error
	if p.keyPart, err = parseKey(r); err != nil {
		return p, err
	}
	p.key, p.stringKey = p.keyPart.Type, p.keyPart.IsString()
	if p.stringKey { // its tables' geometry is a UInt64 key's (dict counts the reference in each cell)
		p.key = core.MustType("UInt64")
	}
	types, err := config.ParseDictionaryTypes(r.Value, r.Attributes)
	if err != nil {
		return p, err
	}
	attrs := types.Attrs
	p.value, p.Attributes, p.attrNames = types.Value, types.Given, types.Names
	if err := config.CheckRows(r.Rows); err != nil {
		return p, err
	}
	if r.MemoryBytes != 0 && r.MemoryBytes < MinPlanMemory {
		return p, fault.New("memory_bytes", strconv.FormatInt(r.MemoryBytes, 10), "too small", "at least 1MiB, e.g. 24GiB, 512MiB, 1.5TiB")
	}
	if p.chVersion, err = parseClickHouseVersion(r.ClickHouseVersion); err != nil {
		return p, err
	}
	p.ClickHouseVersion = p.chVersion.String() // "v23.3-lts" is 23.3
	if r.Threads < 0 || r.Threads > config.MaxThreads {
		return p, fault.New("threads", strconv.Itoa(r.Threads), "out of range", fmt.Sprintf("1 to %d", config.MaxThreads))
	}
	if r.Prefer != PreferBalanced && r.Prefer != PreferMemory && r.Prefer != PreferRead && r.Prefer != PreferLoad {
		return p, fault.New("prefer", r.Prefer, "unknown", "balanced (less memory among setups of similar speed; the default), memory (the least memory), read (the fastest reads) or load (the fastest load)")
	}
	switch {
	case r.Runtime == RuntimeBrowser && experiments.RuntimeName() != RuntimeBrowser:
		return p, fault.New("runtime", r.Runtime, "a plan for a browser's wasm memory is made in the browser", RuntimeNative)
	case r.Runtime != RuntimeNative && r.Runtime != RuntimeBrowser:
		return p, fault.New("runtime", r.Runtime, "unknown", "native (the default) or browser (this browser's wasm memory)")
	}
	if r.For != "" && r.For != EngineClickHouse && r.For != EngineGo {
		return p, fault.New("for", r.For, "unknown", "clickhouse (the ClickHouse dictionary) or go (the Go table); without it, both")
	}
	if r.CalibrationRows != 0 && (r.CalibrationRows < planMinRows || r.CalibrationRows > source.MaxRows) {
		return p, fault.New("calibration_rows", strconv.FormatInt(r.CalibrationRows, 10), "out of range",
			fmt.Sprintf("%s to 2^62 rows, e.g. 1e8; smaller runs measure the caches more than the tables", text.Rows(planMinRows)))
	}
	if f := r.From; f != nil {
		if f.Table == "" || f.KeyColumn == "" || len(f.Figures) > len(attrs) {
			return p, fault.New("from", f.Database+"."+f.Table, fmt.Sprintf("a table with key column %q and figures for %d of %d attributes", f.KeyColumn, len(f.Figures), len(attrs)),
				"a table, its key column, and at most one figure an attribute")
		}
		f.Hold(attrs)
	}
	p.attrs = attrs
	p.ComplexKey = p.ComplexKey || dict.WideKey(p.key) || p.stringKey
	if err := r.checkMaxKey(p.key); err != nil {
		return p, err
	}
	if g := r.Growth(); math.IsNaN(g) || g < 0 || g > MaxGrowthPercent {
		return p, fault.New("growth_percent", strconv.FormatFloat(g, 'g', -1, 64), "out of range",
			fmt.Sprintf("0 to %d (percent the dictionary grows before its next reload; default %d)", MaxGrowthPercent, DefaultGrowthPercent))
	}
	if v := r.SettleSeconds; v != nil && !(*v >= 0 && *v <= config.MaxSettleSeconds) {
		return p, fault.New("settle_seconds", text.Float(*v)+"s", "out of range",
			fmt.Sprintf("0 to %d seconds (the idle before each calibration load; default %s s)", config.MaxSettleSeconds, text.Float(calibrationSettle.Seconds())))
	}
	// The keys after the growth; a key type of b bits has 2^b values: no
	// table holds more keys.
	p.distinct = plannedRows(r.Rows, r.Growth())
	if p.key.Size < 8 {
		p.distinct = min(p.distinct, int64(1)<<(8*p.key.Size))
	}
	return p, nil
}

// rowValued reports whether the dictionary's value is a row: several
// attributes, or one String or Nullable. core's plain tables hold a
// fixed-size value only; ClickHouse's layouts (a table or an array per
// attribute) and packlab's row layouts hold these.
func (p ParsedRequest) rowValued() bool { return len(p.attrs) > 1 || p.unfixedValue() }

// unfixedValue reports whether the dictionary's value, its first
// attribute, is a String or a Nullable, which no run of the lab sends.
func (p ParsedRequest) unfixedValue() bool { return len(p.attrs) > 0 && !p.attrs[0].Fixed() }

// plannedRows is rows after growing by growth percent, at most 2^62.
func plannedRows(rows int64, growth float64) int64 {
	// The growth alone in floating point: rows x 1.1 would round 4e18 to
	// 4400000000000000512 keys, the growth of 4e17 is exact.
	extra := math.Round(float64(rows) * growth / 100)
	if extra >= float64(source.MaxRows-rows) {
		return source.MaxRows
	}
	return rows + max(int64(extra), 0)
}

// ParseGrowth reads --growth: a percent, with or without its sign ("10",
// "10%", "2.5").
func ParseGrowth(s string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > MaxGrowthPercent {
		return 0, fault.New("growth_percent", s, "not a percent from 0 to 1000",
			fmt.Sprintf("e.g. 10 or 10%% (how much the dictionary grows before its next reload; default %d)", DefaultGrowthPercent))
	}
	return v, nil
}

// ParseMemory reads --memory: a size (see config.ParseBytes) of at least
// MinPlanMemory.
func ParseMemory(s string) (int64, error) {
	n, err := config.ParseBytes("memory_bytes", s)
	if err == nil && n < MinPlanMemory {
		return 0, fault.New("memory_bytes", s, "too small", "at least 1MiB, e.g. 24GiB, 512MiB, 1.5TiB")
	}
	return n, err
}

// MakePlan answers r (parsed: ParsedRequest.Plan) from core.Predict and
// the measurements in history, for the machine m.
func MakePlan(r PlanRequest, history []result.Result, m PlanMachine) (Plan, error) {
	p, err := r.Parse()
	if err != nil {
		return Plan{}, err
	}
	return p.Plan(history, m)
}

// Plan answers p from core.Predict and the measurements in history (saved
// results of this machine; CalibrationConfigs makes them), for the machine
// m. It allocates no table.
func (p ParsedRequest) Plan(history []result.Result, m PlanMachine) (Plan, error) {
	plan := Plan{Request: p.PlanRequest, Cores: max(m.Cores, 1)}
	if p.Threads == 0 {
		plan.Request.Threads = plan.Cores
	}
	switch {
	case p.MemoryBytes > 0:
		plan.BudgetBytes, plan.BudgetFrom = p.MemoryBytes, "{memory_bytes}"
	case p.Runtime == RuntimeNative && experiments.RuntimeName() != RuntimeNative:
		return Plan{}, fault.New("memory_bytes", "", "empty: this browser cannot tell how much memory the machine of a native run has", "a size such as 24GiB (or plan for this browser's wasm memory)")
	case m.AvailableBytes > 0:
		plan.BudgetBytes = m.AvailableBytes
		plan.BudgetFrom = fmt.Sprintf("available now of %s", text.Bytes(m.TotalBytes))
	default:
		return Plan{}, fault.New("memory_bytes", "", "this platform does not tell how much memory it has", "a size such as 24GiB")
	}
	measures := measuresFrom(history, p)
	plan.Scaling = scalingFrom(history, p.Runtime)
	for _, l := range core.Layouts() {
		ms := measures[l]
		if !p.stringKey { // no Go table holds it
			plan.Measures = append(plan.Measures, ms)
		}
		cands, err := layoutCandidates(p, l, ms, plan.Scaling, plan.Request.Threads)
		if err != nil {
			return Plan{}, err
		}
		plan.Candidates = append(plan.Candidates, cands...)
	}
	rows, err := rowCandidates(p, plan.Scaling, plan.Request.Threads)
	if err != nil {
		return Plan{}, err
	}
	plan.Candidates = append(plan.Candidates, rows...)
	if c, ok := flatCandidate(p); ok {
		plan.Candidates = append(plan.Candidates, c)
	}
	chm := clickHouseMeasuresFrom(history, p)
	plan.Candidates = withEngines(p, plan.Candidates, chm, plan.Scaling, plan.Request.Threads)
	for _, l := range clickHouseSpeedLayouts(p.ComplexKey) {
		if m, ok := chm[l]; ok {
			plan.Measures = append(plan.Measures, m)
		}
	}
	plan.Checked = checkedWord(p.FirstLoadOnly)
	for i := range plan.Candidates {
		c := &plan.Candidates[i]
		c.CheckedBytes = c.ReloadPeakBytes
		if p.FirstLoadOnly {
			c.CheckedBytes = c.PeakBytes
		}
		c.Fits = c.CheckedBytes <= plan.BudgetBytes
		if ch := c.ClickHouse; ch != nil {
			ch.CheckedBytes = ch.ReloadPeakBytes
			if p.FirstLoadOnly {
				ch.CheckedBytes = ch.FirstLoadPeakBytes
			}
			ch.Fits = ch.CheckedBytes <= plan.BudgetBytes
		}
	}
	rank(&plan)
	explain(&plan, p)
	for _, c := range []*Candidate{plan.BestClickHouse(), plan.BestGo()} {
		if c != nil {
			c.HoldsUpTo = holdsUpTo(p, *c, plan.BudgetBytes)
		}
	}
	return plan, nil
}

// followsMaxLoadFactor reports whether a layout's geometry follows
// max_load_factor, found the way a user would: by asking core.Predict for a
// million keys at 0.5 and at 0.99.
func followsMaxLoadFactor(l core.Layout, key, value core.Type) bool {
	lo, err1 := core.Predict(l, key, value, 1e6, core.Options{MaxLoadFactor: core.MinMaxLoadFactor}, 1)
	hi, err2 := core.Predict(l, key, value, 1e6, core.Options{MaxLoadFactor: core.MaxMaxLoadFactor}, 1)
	return err1 == nil && err2 == nil && lo.BucketCount != hi.BucketCount
}

// planLoadFactors are the max load factors tried: 0.50, 0.51, ... 0.99.
func planLoadFactors() []float64 {
	var out []float64
	for i := int(math.Round(core.MinMaxLoadFactor * 100)); i <= int(math.Round(core.MaxMaxLoadFactor*100)); i++ {
		out = append(out, float64(i)/100)
	}
	return out
}

// layoutCandidates are a layout's setups: for each shard count, the lowest
// max load factor of each distinct geometry.
func layoutCandidates(p ParsedRequest, l core.Layout, ms Measure, sc speed.Scaling, threads int) ([]Candidate, error) {
	if _, complex := dict.ComplexKeyDictionaryFor(l); p.rowValued() && !dict.AttributeLayout(l) || p.stringKey && !complex {
		return nil, nil // several attributes, or a String: ClickHouse's layouts (planNotes says so)
	}
	mlfs := []float64{0}
	follows := followsMaxLoadFactor(l, p.key, p.value)
	if follows {
		mlfs = planLoadFactors()
	}
	var out []Candidate
	for _, shards := range planShards {
		var lastBuckets int64 = -1
		for _, mlf := range mlfs {
			pr, err := dict.AttributesPrediction(l, p.key, p.attrs, p.distinct, p.attributeOptions(mlf, shards), shards)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l, err)
			}
			if pr.BucketCount == lastBuckets {
				continue // the same table as at a lower load factor, read more slowly
			}
			lastBuckets = pr.BucketCount
			c := candidate(p, l, mlf, shards, pr, ms, sc, threads)
			c.FollowsMLF = follows
			out = append(out, c)
		}
	}
	return out, nil
}

// attributeOptions are options, but for a dictionary of several attributes
// with one shard reserved for its keys, as ClickHouse 26.7 ends a table
// loaded from a table or file source (dict.clickHouseReserves).
func (p ParsedRequest) attributeOptions(mlf float64, shards int) core.Options {
	opt := p.options(mlf)
	if len(p.attrs) > 1 && shards <= 1 {
		opt.Reserve = max(opt.Reserve, p.distinct)
	}
	return opt
}

// options are the tables' options of a setup at max load factor mlf.
func (p ParsedRequest) options(mlf float64) core.Options {
	return config.TableOptions(mlf, p.Preallocate, p.distinct)
}

// candidate fills in one setup's figures. Memory is computed, never taken
// from a measurement: core.Predict's bytes, the growth of the runtime the
// plan is for (dict.TargetGrowth), the allocator's fixed factor and the loader's
// blocks, so that it is the same whatever the history holds. Speeds are
// ms's, scaled to the setup.
func candidate(p ParsedRequest, l core.Layout, mlf float64, shards int, pr core.Prediction, ms Measure, sc speed.Scaling, threads int) Candidate {
	f := dict.AllocatorFactor(l)
	c := Candidate{
		Layout: string(l), KeyType: p.keyType(), ValueType: p.value.Name, Attributes: dict.AttributesList(p.attrs),
		columns: dict.AttributeColumns(p.attrNames, p.attrs),
		Rows:    p.Rows, Distinct: p.distinct, Shards: shards,
		MaxLoadFactor:  dict.EffectiveMLF(l, mlf),
		Preallocate:    p.Preallocate,
		BucketCount:    pr.BucketCount,
		BytesAllocated: pr.FinalBytes,
		Overhead:       f,
		PeakOverhead:   f,
		GrowingAtOnce:  growingAtOnce(shards),
		LoaderBytes:    dict.LoaderBytes(p.key, p.value, shards, 0, p.distinct, false),
		Estimated:      pr.Estimated,
		Saturated:      pr.Saturated,
		GrowthBytes:    dict.TargetGrowth(p.Runtime == RuntimeBrowser, l, pr),
		runtime:        p.Runtime,
	}
	if pr.BucketCount > 0 {
		c.LoadFactor = float64(p.distinct) / float64(pr.BucketCount)
	}
	tables := core.SaturatingAdd(pr.FinalBytes, core.SaturatingMul(int64(c.GrowingAtOnce), c.GrowthBytes))
	// The loader's blocks are garbage once the load ends, which the Go
	// runtime keeps (and reuses) rather than returning: they stay in RSS.
	c.SteadyBytes = core.SaturatingAdd(dict.ScaleBytes(pr.FinalBytes, f), c.LoaderBytes)
	// The peak is never below what the tables and the loader's blocks hold
	// at the end of the load.
	c.PeakBytes = max(dict.ScaleBytes(core.SaturatingAdd(tables, c.LoaderBytes), f), c.SteadyBytes)
	c.ReloadPeakBytes = dict.ReloadPeak(dict.ScaleBytes(pr.FinalBytes, f), c.PeakBytes)
	c.BytesPerPair = float64(c.SteadyBytes) / float64(p.distinct)
	if ms.LoadRowsPerSecond > 0 && !p.rowValued() { // several attributes' loads are not measured yet
		// A load at another max load factor than the measured one: scaled
		// by the layout's fitted load cost (speed.LoadCost).
		lscale := 1.0
		if ms.MaxLoadFactor > 0 {
			lscale = speed.LoadCost(l, ms.MaxLoadFactor) / speed.LoadCost(l, c.MaxLoadFactor)
		}
		rate := sc.LoadRate(ms.LoadRowsPerSecond*lscale, shards, threads)
		c.LoadRowsPerSecond = ptr(rate)
		c.loadAtLeast = ptr(sc.LoadRateAt(ms.LoadRowsPerSecond*lscale, sc.LeastEfficiency(), shards, threads))
		c.LoadSeconds = ptr(float64(p.distinct) / rate)
		if ms.LoadRange != nil {
			r := sc.LoadRange([2]float64{ms.LoadRange[0] * lscale, ms.LoadRange[1] * lscale}, shards, threads)
			c.LoadRange = &r
		}
	}
	if ms.ReadRowsPerSecond > 0 {
		scale := 1 / speed.ShardReadCost(l, shards) // measured at one shard: several sort each batch of keys by shard
		// A read (dictGet of one attribute) probes one attribute's table.
		cells := pr.FinalBytes - dict.StringArenaBytes(p.attrs, p.distinct, shards)
		if cell := float64(cells) / float64(len(p.attrs)) / float64(max(pr.BucketCount, 1)); ms.LoadFactor > 0 && c.LoadFactor > 0 {
			scale *= speed.ReadCost(l, ms.LoadFactor, cell) / speed.ReadCost(l, c.LoadFactor, cell)
		}
		rate := ms.ReadRowsPerSecond * scale
		c.ReadRowsPerSecond = ptr(rate)
		c.ReadSeconds = ptr(float64(p.distinct) / rate)
		if ms.ReadRange != nil {
			c.ReadRange = &[2]float64{ms.ReadRange[0] * scale, ms.ReadRange[1] * scale}
		}
	}
	c.ClickHouseLayout, c.ClickHouseNote, c.PacklabOnly = snippet.ClickHouseFor(p.chVersion, l, p.keyType(), p.value, shards, mlf, p.ComplexKey, p.rowValued())
	for _, t := range p.attrs[1:] {
		if ok, why := p.chVersion.Builds(l, t.Type, shards, mlf); !ok && c.ClickHouseLayout != "" {
			c.ClickHouseLayout, c.ClickHouseNote, c.PacklabOnly = "", why, true
		}
	}
	if c.ClickHouseLayout != "" {
		// ClickHouse ignores PREALLOCATE since 23.1: its tables grow, but
		// one shard's are reserved for the rows read so far before each
		// block of the table source (dict.SourceReserve): on a 26.7
		// server 200,000 rows of a UInt64 key, a UInt16 and a String held
		// 25,162,192 bytes in HASHED(), as reserved; grown, 46.1 MB.
		opt := config.TableOptions(mlf, false, p.distinct)
		if shards <= 1 {
			opt.Reserve = p.distinct
		}
		if c.ComplexKey = p.ComplexKey; c.ComplexKey {
			c.ClickHouse = dict.ClickHouseComplexKeyMemory(l, p.chKey(), p.attrs, p.distinct, opt, shards)
		} else {
			c.ClickHouse = dict.ClickHouseAttributesMemory(l, p.attrs, p.distinct, opt, shards)
		}
	}
	return c
}

// growingAtOnce is how many of a map's shards can hold their old and their
// new slab at the same moment during a load: all of them. The loader deals
// rows out by hash, each shard about an equal share of every block, so the
// shards reach their growth points together (those a little fuller a
// little earlier: core.Predict's spread), and
// nothing keeps them from growing together but chance: a shard whose queue
// is full while it grows stalls the producer, and with it the shards that
// have not reached their point yet. Measured here (packed, 16e6 rows, 2
// threads, peak minus steady RSS over one shard's old slab, two runs each):
// 1.0 and 1.9 of 2 shards, 1.9 and 2.6 of 4, 3.1 and 4.5 of 8 (4.9 of 8 on
// one thread). A plan must hold in the worst case, so the peak counts every
// shard; sharding spreads the load over threads, it does not bound the peak.
func growingAtOnce(shards int) int { return shards }

func ptr(v float64) *float64 { return &v }

// rank orders the candidates: those whose checked peak fits the budget
// first, in what the plan prefers; then those that do not fit, by the rule
// (the smallest checked peak first).
//
// Preferring memory, the setups that fit are ordered by the rule alone, so
// nothing measured moves the answer. Preferring reads or loads, they are
// first put in speed tiers (speedTiers): a setup ranks below another only
// when its fastest measured speed is below the other's slowest, so speeds
// that differ by less than their own spread never decide; within a tier
// the rule does. The rule (byRule): the least checked peak, then the least
// steady memory (each within 1 %), then fewer shards, then the layout's
// place in core.Layouts(), then the lower load factor.
func rank(plan *Plan) {
	fitting := map[string][]*Candidate{} // by engine: each answer is the best of its kind
	for i := range plan.Candidates {
		c := &plan.Candidates[i]
		c.SpeedTier = 0
		if c.Fits {
			fitting[engineOf(*c)] = append(fitting[engineOf(*c)], c)
		}
	}
	prefer := plan.Request.Prefer
	for _, cs := range fitting {
		if prefer == PreferBalanced {
			balancedTiers(cs)
		} else {
			speedTiers(cs, prefer)
		}
	}
	rule := byRule
	if prefer == PreferBalanced {
		rule = byBalancedRule
	}
	slices.SortStableFunc(plan.Candidates, func(a, b Candidate) int {
		if a.Fits != b.Fits {
			return boolFirst(a.Fits, b.Fits)
		}
		return cmp.Or(cmp.Compare(a.SpeedTier, b.SpeedTier), rule(a, b))
	})
	for i := range plan.Candidates {
		plan.Candidates[i].Rank = i + 1
		plan.Candidates[i].Answer, plan.Candidates[i].BestClickHouse = "", false
	}
	markAnswers(plan)
}

// byRule is the plan's fixed order of setups that tie on what it prefers.
func byRule(a, b Candidate) int {
	return cmp.Or(cmp.Compare(onePercent(float64(a.CheckedBytes)), onePercent(float64(b.CheckedBytes))),
		cmp.Compare(onePercent(float64(a.SteadyBytes)), onePercent(float64(b.SteadyBytes))),
		cmp.Compare(a.Shards, b.Shards), cmp.Compare(dict.SetupIndex(a.Layout), dict.SetupIndex(b.Layout)),
		cmp.Compare(a.MaxLoadFactor, b.MaxLoadFactor), cmp.Compare(a.CheckedBytes, b.CheckedBytes))
}

// speedRange is c's range of the speed prefer names, [slowest, fastest]
// rows/s; a speed with no measured range (or none at all) spans everything:
// it can neither win nor lose by speed.
func speedRange(c Candidate, prefer string) (lo, hi float64) {
	r := c.ReadRange
	if prefer == PreferLoad {
		r = c.LoadRange
	}
	if r == nil {
		return 0, math.Inf(1)
	}
	return r[0], r[1]
}

// speedTiers sets each candidate's SpeedTier for prefer read or load: tier 1
// is every setup whose fastest speed reaches the slowest speed of the
// fastest setup (no other is faster beyond both ranges); tier 2 the same
// among the rest, and so on. Which setups share a tier follows from where
// the ranges lie, not from the medians inside them, so measurements that
// move within their spread leave the tiers as they are.
func speedTiers(cs []*Candidate, prefer string) {
	if prefer == PreferMemory {
		return
	}
	left := cs
	for tier := 1; len(left) > 0; tier++ {
		floor := 0.0
		for _, c := range left {
			lo, _ := speedRange(*c, prefer)
			floor = max(floor, lo)
		}
		var rest []*Candidate
		for _, c := range left {
			if _, hi := speedRange(*c, prefer); hi >= floor {
				c.SpeedTier = tier
			} else {
				rest = append(rest, c)
			}
		}
		left = rest
	}
}

// onePercent buckets a size or a speed by 1 %: figures in one bucket count
// as equal when ranking, so a few header bytes per extra shard, or the read
// model's last digits, do not decide.
func onePercent(v float64) int64 {
	if v <= 0 {
		return math.MinInt64
	}
	return int64(math.Floor(math.Log(v) / math.Log1p(0.01)))
}

func boolFirst(a, b bool) int {
	if a && !b {
		return -1
	}
	if b && !a {
		return 1
	}
	return 0
}

// explain writes each candidate's why, the answer, the rule, the
// runners-up, the layouts ruled out, and the ClickHouse and Go text of the
// setups worth copying.
func explain(plan *Plan, p ParsedRequest) {
	budget := text.Bytes(plan.BudgetBytes)
	byKind := map[growthKind][]string{}
	for _, l := range core.Layouts() {
		if i := slices.IndexFunc(plan.Candidates, func(c Candidate) bool { return c.Layout == string(l) && engineOf(c) == EngineGo }); i >= 0 {
			k := growthOf(plan.Candidates[i])
			byKind[k] = append(byKind[k], string(l))
		}
	}
	plan.Growing = "every shard can grow at once: the loader deals rows out by hash, each shard about an equal share, so the shards reach their growth points together (measured on the 2-core lab machine: up to 1.9 of 2 shards, 2.6 of 4, 4.9 of 8 at once)"
	for _, k := range []growthKind{growthCopies, growthInPlace, growthBehind, growthPaged} {
		if ls := byKind[k]; len(ls) > 0 {
			plan.Growing += "; " + strings.Join(ls, ", ") + ": " + growthKindWords[k]
		}
	}
	plan.Rule = planRule(p)
	if plan.Best() == nil {
		plan.Answer = "no layout to plan"
		return
	}
	// Each setup is weighed against its engine's answer.
	fitting, tied := map[string]int{}, map[string]int{}
	answers := map[string]*Candidate{EngineGo: plan.BestGo(), EngineClickHouse: plan.BestClickHouse()}
	for _, c := range plan.Candidates {
		e := engineOf(c)
		if c.Fits {
			fitting[e]++
			if c.SpeedTier == answers[e].SpeedTier {
				tied[e]++
			}
		}
	}
	for i := range plan.Candidates {
		c := &plan.Candidates[i]
		e := engineOf(*c)
		best := answers[e]
		switch {
		case !c.Fits && fitting[e] == 0 && c.Answer != "":
			over := text.Bytes2(c.CheckedBytes-plan.BudgetBytes) + " over"
			if c.CheckedBytes == math.MaxInt64 {
				over = "beyond what 8 EiB counts"
			}
			c.Why = fmt.Sprintf("nothing %s fits in %s; this is the smallest: %s peak %s, %s", engineWords(e), budget, plan.Checked,
				text.Bytes2(c.CheckedBytes), over)
		case !c.Fits:
			c.Why = fmt.Sprintf("doesn't fit: %s peak %s > the %s budget (%s)", plan.Checked, text.Bytes2(c.CheckedBytes), budget, reloadWords(*c, p.FirstLoadOnly))
		case c.Answer != "":
			c.Why = bestWhy(*c, p.Prefer, plan.Checked, fitting[e], tied[e], budget)
		default:
			c.Why = lostWhy(*c, *best, p.Prefer, plan.Checked)
		}
	}
	var lines []string
	for _, c := range []*Candidate{plan.BestClickHouse(), plan.BestGo()} {
		if c != nil {
			lines = append(lines, answerLine(*plan, *c))
		}
	}
	plan.Answer = strings.Join(lines, "; ")
	plan.RunnersUp = runnersUp(plan.Candidates)
	// Layouts with no setup that fits, and why.
	for _, l := range core.Layouts() {
		var smallest *Candidate
		ok := false
		for i := range plan.Candidates {
			c := &plan.Candidates[i]
			if c.Layout != string(l) || engineOf(*c) != EngineGo {
				continue
			}
			ok = ok || c.Fits
			if smallest == nil || c.CheckedBytes < smallest.CheckedBytes {
				smallest = c
			}
		}
		if !ok && smallest != nil {
			plan.RuledOut = append(plan.RuledOut, fmt.Sprintf("%s: every setup's %s peak is above %s; its smallest, %s, peaks at %s (%s)",
				l, plan.Checked, budget, SetupName(*smallest), text.Bytes2(smallest.CheckedBytes), reloadWords(*smallest, p.FirstLoadOnly)))
		}
	}
	if ch := plan.BestClickHouse(); ch != nil {
		ch.CreateDictionary = createDictionary(*ch, p.From)
	}
	if g := plan.BestGo(); g != nil {
		g.GoCode = goCode(*g)
	}
	plan.Notes = planNotes(plan, p)
}

// planRule says, in a sentence, how the plan decides.
func planRule(p ParsedRequest) string {
	checked := "a reload's peak (the serving table and the new one at its first-load peak; {first_load_only} checks the first load)"
	if p.FirstLoadOnly {
		checked = "the first load's peak ({first_load_only}; a reload holds the serving table beside it)"
	}
	order := "then fewer shards, then the layout order " + strings.Join(dict.SetupOrder(), ", ") + ", then the lower load factor"
	if p.Prefer == PreferBalanced {
		return fmt.Sprintf("prefer balanced (the default): each answer is the best setup of its kind, a ClickHouse dictionary or a Go table. A setup fits when %s is within the budget; of those, one that another outruns by %s or more, loading or reading (medians, as measured here and scaled by the load factor and the shards), ranks below it unless it needs at most %s of the other's %s peak; then the least %s peak wins (within 1 %%), each doubling of the shards counting as %.0f %% more%s, then the least steady memory, %s. A setup with no measured speed is weighed on memory alone",
			checked, text.Float(text.Round(balancedSlower, 2))+"x", text.Float(text.Round(balancedSaves, 2)), checkedWord(p.FirstLoadOnly), checkedWord(p.FirstLoadOnly), 100*balancedShardCost, layoutCostWords(), order)
	}
	if p.Prefer == PreferMemory {
		return fmt.Sprintf("prefer memory: a setup fits when %s is within the budget; of those, the least %s peak wins (within 1 %%), then the least steady memory, %s. All of it is computed, so the answer is the same on every face and machine; speeds are shown with their range but do not decide ({prefer} read or load to rank by them)",
			checked, checkedWord(p.FirstLoadOnly), order)
	}
	what := map[string]string{PreferRead: "reads", PreferLoad: "loads"}[p.Prefer]
	return fmt.Sprintf("prefer %s: a setup fits when %s is within the budget; of those, one ranks below another only when its fastest measured %s are slower than the other's slowest (the ranges do not overlap); setups whose ranges overlap tie, as do setups with no measured range, and the tie goes to the least %s peak (within 1 %%), then the least steady memory, %s",
		p.Prefer, checked, what, checkedWord(p.FirstLoadOnly), order)
}

func checkedWord(firstLoadOnly bool) string {
	if firstLoadOnly {
		return "first load"
	}
	return "reload"
}

// speedWords names the speed prefer ranks by: "reads", "loads".
func speedWords(prefer string) (what string, of func(Candidate) (*float64, *[2]float64)) {
	if prefer == PreferLoad {
		return "loads", func(c Candidate) (*float64, *[2]float64) { return c.LoadRowsPerSecond, c.LoadRange }
	}
	return "reads", func(c Candidate) (*float64, *[2]float64) { return c.ReadRowsPerSecond, c.ReadRange }
}

// rangeText writes a speed with its range: "25.1M rows/s (22.0M–27.3M)";
// "25.1M rows/s (one load, no range)"; "not measured".
func rangeText(v *float64, r *[2]float64) string {
	switch {
	case v == nil:
		return "not measured"
	case r == nil:
		return text.RowsRate(*v) + " rows/s (one load: no range)"
	}
	return fmt.Sprintf("%s rows/s (%s–%s)", text.RowsRate(*v), text.RowsRate(r[0]), text.RowsRate(r[1]))
}

// bestWhy says why rank 1 won.
func bestWhy(c Candidate, prefer, checked string, fitting, tied int, budget string) string {
	if prefer == PreferBalanced {
		if tied == fitting {
			return fmt.Sprintf("the least memory at a %s of the %d setups %s that fit in %s, none of them much faster to load or read", checked, fitting, engineWords(engineOf(c)), budget)
		}
		return fmt.Sprintf("the least memory at a %s of the %d setups %s that fit in %s and that no other outruns by %sx (%d more are that much slower without saving a third of the memory)",
			checked, tied, engineWords(engineOf(c)), budget, text.Float(text.Round(balancedSlower, 2)), fitting-tied)
	}
	if prefer == PreferMemory {
		return fmt.Sprintf("the least memory at a %s of the %d setups that fit in %s (prefer memory: computed, so the same on every machine; speeds shown, not used)",
			checked, fitting, budget)
	}
	what, of := speedWords(prefer)
	v, r := of(c)
	switch {
	case tied == 1:
		return fmt.Sprintf("%s fastest beyond the measured range of every other setup that fits in %s: %s", what, budget, rangeText(v, r))
	case tied == fitting:
		return fmt.Sprintf("no setup's %s are faster than another's beyond their measured ranges (%s here), so the rule decides: the least memory at a %s of the %d that fit in %s",
			what, rangeText(v, r), checked, fitting, budget)
	}
	return fmt.Sprintf("%d of the %d setups that fit in %s tie on %s (their ranges overlap the fastest's; here %s), and of those this has the least memory at a %s",
		tied, fitting, budget, what, rangeText(v, r), checked)
}

// lostWhy says why a fitting setup ranks below the best: slower beyond the
// spread, more memory, or a tie broken by the rule.
func lostWhy(c, best Candidate, prefer, checked string) string {
	what, of := speedWords(prefer)
	cv, cr := of(c)
	bv, br := of(best)
	if prefer == PreferBalanced && c.SpeedTier > best.SpeedTier {
		return fmt.Sprintf("much slower: load %s, read %s against the answer's (#%d) %s and %s, for less than a third less memory",
			rangeText(c.LoadRowsPerSecond, c.LoadRange), rangeText(c.ReadRowsPerSecond, c.ReadRange), best.Rank,
			rangeText(best.LoadRowsPerSecond, best.LoadRange), rangeText(best.ReadRowsPerSecond, best.ReadRange))
	}
	if c.SpeedTier > best.SpeedTier {
		return fmt.Sprintf("slower beyond spread: %s %s against #1's %s", what, rangeText(cv, cr), rangeText(bv, br))
	}
	tie := ""
	if prefer == PreferRead || prefer == PreferLoad {
		tie = fmt.Sprintf("ties #1 on %s (%s against %s); ", what, rangeText(cv, cr), rangeText(bv, br))
	}
	switch {
	case prefer == PreferBalanced && c.CheckedBytes < best.CheckedBytes && balancedWeight(c) > balancedWeight(best):
		return fmt.Sprintf("%sless memory (%s peak %s against the answer's (#%d) %s), but not the %.0f %% more it must save: %s", tie, checked, text.Bytes2(c.CheckedBytes), best.Rank, text.Bytes2(best.CheckedBytes),
			100*(balancedWeight(c)/balancedWeight(best)-1), balancedWeightWhy(c, best))
	case onePercent(float64(c.CheckedBytes)) != onePercent(float64(best.CheckedBytes)):
		return fmt.Sprintf("%smore memory: %s peak %s against the answer's (#%d) %s", tie, checked, text.Bytes2(c.CheckedBytes), best.Rank, text.Bytes2(best.CheckedBytes))
	case onePercent(float64(c.SteadyBytes)) != onePercent(float64(best.SteadyBytes)):
		return fmt.Sprintf("%smore memory: steady %s against the answer's (#%d) %s", tie, text.Bytes2(c.SteadyBytes), best.Rank, text.Bytes2(best.SteadyBytes))
	case c.Shards != best.Shards:
		return fmt.Sprintf("%stie broken by rule: the same memory within 1 %%, and more shards (%d against %d)", tie, c.Shards, best.Shards)
	case c.Layout != best.Layout:
		return fmt.Sprintf("%stie broken by rule: the same memory within 1 %% and shards; %s comes before %s in the layout order", tie, best.Layout, c.Layout)
	}
	return fmt.Sprintf("%stie broken by rule: the same memory within 1 %%; the lower load factor first", tie)
}

// runnersUp are the lines under the answers: of each engine the next two
// setups and each other layout's best, with why each lost.
func runnersUp(cs []Candidate) []string {
	var out []string
	for _, engine := range []string{EngineClickHouse, EngineGo} {
		seen := map[string]bool{}
		n := 0
		for _, c := range cs {
			if engineOf(c) != engine {
				continue
			}
			if c.Answer != "" {
				seen[c.Layout] = true
				continue
			}
			if n < 2 || !seen[c.Layout] {
				out = append(out, fmt.Sprintf("#%d %s (%s): %s", c.Rank, SetupName(c), engineWords(engine), c.Why))
			}
			n++
			seen[c.Layout] = true
		}
	}
	return out
}

// reloadWords says what a setup's checked peak is made of.
func reloadWords(c Candidate, firstLoadOnly bool) string {
	if engineOf(c) == EngineClickHouse && c.Layout != FlatLayout {
		grown := "the final tables and every buffer their growth freed, which jemalloc holds through the load"
		if firstLoadOnly {
			return grown
		}
		return fmt.Sprintf("the serving dictionary, %s, beside a new one at its first-load peak of %s: %s", text.Bytes2(servingBytes(c)), text.Bytes2(c.PeakBytes), grown)
	}
	if firstLoadOnly {
		return growthWords(c)
	}
	return fmt.Sprintf("the serving table, %s, beside a new one at its first-load peak of %s: %s", text.Bytes2(servingBytes(c)), text.Bytes2(c.PeakBytes), growthWords(c))
}

// growthKind is how a candidate's layout grows, which decides its peak.
type growthKind int

const (
	growthCopies  growthKind = iota // old and new slab alive together
	growthInPlace                   // the slab remapped in place: no old one
	growthBehind                    // the pass releases the old slab as it goes (compact)
	growthPaged                     // the vectors move page by page through a shared pool (sparse)
)

// growthKindWords ends the plan's sentence on the layouts of each kind.
var growthKindWords = map[growthKind]string{
	growthCopies:  "the peak counts the old and the new table of each",
	growthInPlace: "slabs grow in place (mremap, then an in-place rehash, as ClickHouse's allocator does), so the peak is the final tables",
	growthBehind:  "the growth pass hands the old slab back as it leaves it, so the peak is the final tables and a few MiB a shard",
	growthPaged:   "the vectors move page by page through a pool the old and the new table share, so the peak is the final tables and the old groups",
}

func growthOf(c Candidate) growthKind {
	switch {
	case c.GrowthBytes == 0 && !c.Estimated:
		return growthInPlace
	case releasesBehind(c):
		return growthBehind
	case c.Layout == string(core.LayoutSparse):
		return growthPaged
	}
	return growthCopies
}

// growthWords says what the peak is made of.
func growthWords(c Candidate) string {
	if c.Layout == FlatLayout {
		return "the final arrays and the halves their last doubling left (ClickHouse's FLAT)"
	}
	switch growthOf(c) {
	case growthInPlace:
		return "the final tables: a growth remaps its slab in place and holds no old one"
	case growthBehind:
		return "the final tables and a few MiB a shard: a growth pass releases the old slab as it goes"
	case growthPaged:
		if c.Shards == 1 {
			return "the final table and the old one's groups: a growth moves the vectors page by page through a pool both share"
		}
		return fmt.Sprintf("the final tables and the old groups of %d shards growing at once: a growth moves the vectors page by page", c.GrowingAtOnce)
	}
	if c.GrowthBytes == 0 {
		return "the final tables: its last growth held no more"
	}
	if c.Shards == 1 {
		return "the last growth, old and new slab alive together"
	}
	return fmt.Sprintf("the last growth, %d shards growing at once", c.GrowingAtOnce)
}

// releasesBehind: c's layout is compact where its growth pass releases the
// old slab as it goes, so its growth holds a few MiB, not the old slab.
func releasesBehind(c Candidate) bool {
	return (c.Layout == string(core.LayoutCompact) || c.Layout == string(core.LayoutIceberg)) && c.runtime == RuntimeNative
}

// SetupName is how the plan names a setup: "packed SHARDS 8 MLF 0.94".
func SetupName(c Candidate) string {
	if engineOf(c) == EngineClickHouse && c.ClickHouseLayout != "" {
		return strings.TrimSuffix(strings.TrimPrefix(c.ClickHouseLayout, "LAYOUT("), ")")
	}
	s := fmt.Sprintf("%s SHARDS %d", c.Layout, c.Shards)
	if c.FollowsMLF {
		s += " MLF " + text.Float(c.MaxLoadFactor)
	}
	return s
}

// measuredFarBelow reports whether m's speeds were measured at a third of
// distinct keys or fewer: a table that size misses the caches (and, on a
// VM, faults in fresh memory) more, so the plan expects it slower.
func measuredFarBelow(distinct int64, m Measure) bool {
	return m.Rows > 0 && distinct > 3*m.Rows
}

// planNotes says where the figures come from and how far to trust them.
func planNotes(plan *Plan, p ParsedRequest) []string {
	var notes []string
	if rows := ", and packlab's packed_row and compact_row (the key once, the row beside it, or a row wider than 16 bytes in an array beside the table and its number in the cell)"; p.rowValued() {
		if p.stringKey {
			rows = ""
		}
		notes = append(notes, fmt.Sprintf("%s (%s): the setups are ClickHouse's layouts, HASHED and SPARSE_HASHED a hash table per attribute (each holding the key again; with SHARDS one per shard and attribute), HASHED_ARRAY one key-to-row index and an array per attribute, as ClickHouse 26.7 was measured to hold them here (docs/clickhouse.md)%s; their load speeds are not measured with several attributes or a String or Nullable value, so they are left out, and a read is one attribute's dictGet",
			text.Count(int64(len(p.attrs)), "attribute", "attributes"), strings.Join(p.Attributes, ","), rows))
	}
	if p.stringKey {
		notes = append(notes, "a String key: the setups are ClickHouse's COMPLEX_KEY_ layouts, each row's key serialized in an arena (its 8-byte size and its bytes) and a 16-byte reference to it in each cell, "+
			"as packlab inspect models a user's dictionary; packlab's core holds no String key, so there is no Go answer; their speeds are the lab's ch_complex_key_ loads of "+p.labKey()+" keys")
	}
	if p.MaxKey == 0 && !p.stringKey {
		notes = append(notes, "FLAT is not weighed: it indexes an array by the key, so it needs the largest key; give {max_key} N when the keys are integers from 0 to N (ids)")
	}
	if p.distinct < p.Rows {
		notes = append(notes, fmt.Sprintf("a %s key has only %s values: the table holds at most %s keys, not %s", p.key.Name,
			text.Thousands(p.distinct), text.Thousands(p.distinct), text.Thousands(p.Rows)))
	}
	var unmeasured, guessed, measured, small []string
	largest := int64(0) // of the runs measured at a third of the plan's rows or less
	for _, m := range plan.Measures {
		switch {
		case m.LoadRowsPerSecond == 0:
			unmeasured = append(unmeasured, m.Layout)
		case measuredFarBelow(p.distinct, m):
			small = append(small, m.Layout)
			largest = max(largest, m.Rows)
			fallthrough
		default:
			measured = append(measured, m.Layout)
		}
		if !m.OverheadMeasured {
			guessed = append(guessed, fmt.Sprintf("%s x%s", m.Layout, text.Float(m.Overhead)))
		}
	}
	if len(unmeasured) > 0 && !p.unfixedValue() { // a String or Nullable value: no run measures it
		notes = append(notes, fmt.Sprintf("no speed measured here for %s <%s,%s>: their times are left out (a calibration of about half a minute measures them: {calibrate})",
			strings.Join(unmeasured, ", "), p.labKey(), p.value.Name))
	}
	if len(guessed) > 0 {
		notes = append(notes, "overhead not measured here, the memory guard's cautious bound used: "+strings.Join(guessed, ", "))
	}
	if len(small) > 0 {
		note := fmt.Sprintf("speeds of %s were measured at up to %s rows; a table of %s rows misses the CPU caches more (and faults in more fresh memory), so expect it slower than shown",
			strings.Join(small, ", "), text.Rows(largest), text.Rows(p.distinct))
		// Runs of up to 1e8 rows fit a machine like this lab's (24 GiB)
		// for every layout; suggest them only where they are nearer.
		if nearer := min(p.distinct, 100_000_000); nearer > 2*largest {
			note += fmt.Sprintf(". The plan compares the layouts at one size, each by its one-shard run nearest it: runs of every layout nearer %s rows give it speeds measured there (a calibration at {calibration_rows} %s, minutes a layout, or runs of %s at %s rows)",
				text.Rows(p.distinct), text.Rows(nearer), strings.Join(measured, ","), text.Rows(nearer))
		}
		notes = append(notes, note)
	}
	if plan.Scaling.From != "" { // measured, if only to add nothing
		between := ""
		if r := plan.Scaling.EfficiencyRange; r != nil {
			between = fmt.Sprintf(", %.0f to %.0f %% by the loads' ranges", 100*r[0], 100*r[1])
		}
		notes = append(notes, fmt.Sprintf("load with several shards: each extra worker adds %.0f %% of one worker's speed%s (measured %s), up to %d threads and the producer's %s rows/s",
			100*plan.Scaling.Efficiency, between, plan.Scaling.From, plan.Request.Threads, text.RowsRate(plan.Scaling.ProducerRowsPerSecond)))
	} else {
		notes = append(notes, "no multi-shard load measured here: load times assume one worker's speed whatever the shard count")
	}
	notes = append(notes, "read rows/s: one thread looking every key up once in random order; other load factors than the measured one are scaled by each layout's cost against the probe length (compact's, hashed's and packed's fitted at 1e7 rows; the others' by the cache lines a probe touches), and several shards by what sorting each batch of keys by shard costs (measured at 1e7 rows: x1.1 to x2.3 from SHARDS 2 to 128; a ClickHouse setup by its Go layout's cost): docs/plan.md")
	if p.Preallocate {
		notes = append(notes, fmt.Sprintf("preallocated: every table reserved for its share of the %s keys before the load (core.Options{Reserve: %d}), so none grows and the peak is the final size; speeds from preallocated runs only. ClickHouse ignores PREALLOCATE since 23.1: its CREATE DICTIONARY leaves it out",
			text.Thousands(p.distinct), p.distinct))
	}
	return notes
}

// servingBytes is the serving table a reload's peak holds beside the new
// one: the reload peak less the first load's, or, where the reload peak
// stands saturated at math.MaxInt64, the steady table itself (the
// difference of two saturated figures says nothing).
func servingBytes(c Candidate) int64 {
	if c.ReloadPeakBytes == math.MaxInt64 {
		return c.SteadyBytes
	}
	return c.ReloadPeakBytes - c.PeakBytes
}
