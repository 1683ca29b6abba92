package experiments

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
//	rank: setups whose peak fits the budget first; among them the fastest
//	(reads or loads) within planTolerance of the best, then the least memory
//
// Nothing is allocated: a plan for 10^12 rows takes as long as one for
// 10^3. Every figure traces back to core.Predict or to a saved result.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// PlanRequest is the planner's question. A zero field means its default.
type PlanRequest struct {
	Rows        int64  `json:"rows"`         // distinct keys to hold, 1 to 2^62
	Key         string `json:"key"`          // default UInt64
	Value       string `json:"value"`        // default UInt16
	MemoryBytes int64  `json:"memory_bytes"` // the budget; 0 = the memory available on this machine now
	Threads     int    `json:"threads"`      // threads the load may use; 0 = this machine's cores
	Workload    string `json:"workload"`     // "read" (read-heavy, the default) or "load" (load-heavy)
	// Preallocate plans tables reserved for the rows before the load
	// (core.Options.Reserve; the lab's --preallocate): no growth, so a
	// peak of the final size and faster loads, measured as such.
	Preallocate bool `json:"preallocate"`
	// CalibrationRows is the size a calibration measures at (0 =
	// CalibrationRows, 2M): given, a layout with no run within 2x of it is
	// measured there. Runs near the plan's rows give it speeds measured
	// at its size (see speedRows).
	CalibrationRows int64 `json:"calibration_rows,omitempty"`
}

// ParseCalibrationRows reads a calibration's row count as ParseRows does,
// its errors naming --calibrate-rows (PlanRequest.Validate checks the range).
func ParseCalibrationRows(s string) (int64, error) {
	n, err := ParseRows(s)
	if fe, ok := err.(*FieldError); ok {
		fe.Flag = "--calibrate-rows"
	}
	return n, err
}

// Workloads the planner ranks for.
const (
	WorkloadRead = "read"
	WorkloadLoad = "load"
)

// MinPlanMemory is the smallest budget the planner takes.
const MinPlanMemory = 1 << 20

// planShards are the shard counts the planner tries.
var planShards = []int{1, 2, 4, 8, 16, 32, 64, 128}

// planTolerance is how close to the fastest setup's speed another counts as
// just as fast: below it, memory decides. Speeds repeat within about 10 %
// on one machine (±30 % on a busy one), so a smaller gap is noise.
const planTolerance = 0.10

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

	BytesAllocated int64   `json:"bytes_allocated"` // core.Predict's final bytes, computed
	Overhead       float64 `json:"overhead"`        // measured RSS / bytes_allocated of the layout (at least 1)
	PeakOverhead   float64 `json:"peak_overhead"`   // measured peak RSS / the predicted peak of the layout (at least 1)
	SteadyBytes    int64   `json:"steady_bytes"`    // bytes_allocated x overhead + the loader's freed blocks: the RSS after the load
	PeakBytes      int64   `json:"peak_bytes"`      // (final + growing x one shard's last growth + the loader's blocks) x peak overhead
	GrowingAtOnce  int     `json:"growing_at_once"` // shards whose old and new slab are alive together at the peak
	GrowthBytes    int64   `json:"growth_bytes"`    // what one shard holds above its final size in its last growth (core.Prediction.GrowthBytes)
	LoaderBytes    int64   `json:"loader_bytes"`    // the loader's blocks in flight
	BytesPerPair   float64 `json:"bytes_per_pair"`  // steady bytes / distinct

	LoadSeconds       *float64 `json:"load_seconds"`         // null when no speed was measured for the layout
	LoadRowsPerSecond *float64 `json:"load_rows_per_second"` // with this many shards and threads
	ReadSeconds       *float64 `json:"read_seconds"`         // every key looked up once, one thread
	ReadRowsPerSecond *float64 `json:"read_rows_per_second"`

	Fits             bool   `json:"fits"` // peak_bytes <= the budget
	Why              string `json:"why"`
	ClickHouseLayout string `json:"clickhouse_layout"` // LAYOUT(...) of the dictionary that builds this table, "" when none does
	ClickHouseNote   string `json:"clickhouse_note"`   // how ClickHouse's dictionary differs, when it does
	PacklabOnly      bool   `json:"packlab_only"`      // no ClickHouse dictionary builds this table for these types
	BestClickHouse   bool   `json:"best_clickhouse"`   // the best setup ClickHouse can run, when rank 1 is packlab-only
	CreateDictionary string `json:"create_dictionary"` // for rank 1 and the best ClickHouse setup
	GoCode           string `json:"go_code"`           // for rank 1 and the best ClickHouse setup
	Estimated        bool   `json:"estimated"`         // the layout's geometry is a model (core.Prediction.Estimated)
	Saturated        bool   `json:"saturated"`         // beyond 8 EiB: the figures stand at math.MaxInt64

	followsMLF bool // the layout's geometry follows max_load_factor
}

// Plan is the planner's whole answer.
type Plan struct {
	Request     PlanRequest `json:"request"` // with defaults filled in
	BudgetBytes int64       `json:"budget_bytes"`
	BudgetFrom  string      `json:"budget_from"` // "--memory", or what this machine has available
	Cores       int         `json:"cores"`
	Candidates  []Candidate `json:"candidates"` // every setup, by rank
	Answer      string      `json:"answer"`     // one line: the recommendation, or why there is none
	RuledOut    []string    `json:"ruled_out"`  // one line per layout no setup of which fits
	Growing     string      `json:"growing"`    // how many shards grow at once, and why
	Measures    []Measure   `json:"measures"`   // where each layout's speeds and overhead come from
	Scaling     Scaling     `json:"scaling"`
	Notes       []string    `json:"notes"`
}

// Best is rank 1, or nil for an empty plan.
func (p Plan) Best() *Candidate {
	if len(p.Candidates) == 0 {
		return nil
	}
	return &p.Candidates[0]
}

// BestClickHouse is the best setup ClickHouse can run when rank 1 is
// packlab-only, else nil.
func (p Plan) BestClickHouse() *Candidate {
	for i := range p.Candidates {
		if p.Candidates[i].BestClickHouse {
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

// ThisMachine asks the memory guard what this machine has now.
func ThisMachine(ctx context.Context) PlanMachine {
	m := PlanMachine{AvailableBytes: -1, Cores: runtime.NumCPU()}
	c, err := Check(ctx, Config{Layouts: []string{string(core.Layouts()[0])}, Rows: 1, InProcess: true})
	if err == nil {
		m.AvailableBytes, m.TotalBytes = c.AvailableBytes, c.TotalBytes
	}
	return m
}

// parsedPlan is a validated PlanRequest with its names resolved.
type parsedPlan struct {
	PlanRequest
	key, value core.Type
	distinct   int64
}

// WithDefaults returns r with every zero field but MemoryBytes set.
func (r PlanRequest) WithDefaults() PlanRequest {
	r.Key = cmp.Or(r.Key, DefaultKey)
	r.Value = cmp.Or(r.Value, DefaultValue)
	r.Workload = strings.ToLower(strings.TrimSpace(cmp.Or(r.Workload, WorkloadRead)))
	return r
}

// Validate checks every field, naming the flag, the value and what is
// allowed, as run does.
func (r PlanRequest) Validate() error {
	_, err := r.parse()
	return err
}

func (r PlanRequest) parse() (parsedPlan, error) {
	r = r.WithDefaults()
	p := parsedPlan{PlanRequest: r}
	var err error
	if p.key, err = core.ParseType(r.Key); err != nil {
		return p, fieldErr("--key", r.Key, "unknown type", strings.Join(core.TypeNames(), ", "))
	}
	if p.value, err = core.ParseType(r.Value); err != nil {
		return p, fieldErr("--value", r.Value, "unknown type", strings.Join(core.TypeNames(), ", "))
	}
	if r.Rows < 1 || r.Rows > core.MaxSourceRows {
		return p, fieldErr("--rows", strconv.FormatInt(r.Rows, 10), "out of range", fmt.Sprintf("1 to %d", core.MaxSourceRows))
	}
	if r.MemoryBytes != 0 && r.MemoryBytes < MinPlanMemory {
		return p, fieldErr("--memory", strconv.FormatInt(r.MemoryBytes, 10), "too small", "at least 1MiB, e.g. 24GiB, 512MiB, 1.5TiB")
	}
	if r.Threads < 0 || r.Threads > MaxThreads {
		return p, fieldErr("--threads", strconv.Itoa(r.Threads), "out of range", fmt.Sprintf("1 to %d", MaxThreads))
	}
	if r.Workload != WorkloadRead && r.Workload != WorkloadLoad {
		return p, fieldErr("--workload", r.Workload, "unknown", "read (read-heavy) or load (load-heavy)")
	}
	if r.CalibrationRows != 0 && (r.CalibrationRows < planMinRows || r.CalibrationRows > core.MaxSourceRows) {
		return p, fieldErr("--calibrate-rows", strconv.FormatInt(r.CalibrationRows, 10), "out of range",
			fmt.Sprintf("%s to 2^62 rows, e.g. 1e8; smaller runs measure the caches more than the tables", FormatRows(planMinRows)))
	}
	// A key type of b bits has 2^b values: no table holds more keys.
	p.distinct = r.Rows
	if p.key.Size < 8 {
		p.distinct = min(r.Rows, int64(1)<<(8*p.key.Size))
	}
	return p, nil
}

// ParseMemory reads --memory: a size (see ParseBytes) of at least
// MinPlanMemory.
func ParseMemory(s string) (int64, error) {
	n, err := ParseBytes("--memory", s)
	if err == nil && n < MinPlanMemory {
		return 0, fieldErr("--memory", s, "too small", "at least 1MiB, e.g. 24GiB, 512MiB, 1.5TiB")
	}
	return n, err
}

// ParseBytes reads a memory size as users write it: 24GiB, 24G (binary),
// 32GB (decimal), 512MiB, 1.5TiB, or a plain count of bytes. flag names
// the flag in the error.
func ParseBytes(flag, s string) (int64, error) {
	text := strings.TrimSpace(s)
	bad := func(problem string) error {
		return fieldErr(flag, s, problem, "a size such as 24GiB, 512MiB, 1.5TiB, 32GB or 1073741824 (bytes)")
	}
	if text == "" {
		return 0, bad("empty")
	}
	i := strings.IndexFunc(text, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := text, ""
	if i >= 0 {
		num, unit = text[:i], strings.ToLower(strings.TrimSpace(text[i:]))
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, bad("not a number")
	}
	mult := map[string]float64{
		"": 1, "b": 1,
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
	b := v * mult
	switch {
	case b < 1:
		return 0, bad("not positive")
	case b >= math.MaxInt64:
		return 0, bad("too large")
	}
	return int64(b), nil
}

// MakePlan answers r from core.Predict and the measurements in history
// (saved results of this machine; see Calibrate for making them), for the
// machine m. It allocates no table.
func MakePlan(r PlanRequest, history []Result, m PlanMachine) (Plan, error) {
	p, err := r.parse()
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Request: p.PlanRequest, Cores: max(m.Cores, 1)}
	if p.Threads == 0 {
		plan.Request.Threads = plan.Cores
	}
	switch {
	case p.MemoryBytes > 0:
		plan.BudgetBytes, plan.BudgetFrom = p.MemoryBytes, "--memory"
	case m.AvailableBytes > 0:
		plan.BudgetBytes = m.AvailableBytes
		plan.BudgetFrom = fmt.Sprintf("available now of %s", FormatBytes(m.TotalBytes))
	default:
		return Plan{}, fieldErr("--memory", "", "this platform does not tell how much memory it has", "a size such as 24GiB")
	}
	measures := measuresFrom(history, p)
	plan.Scaling = scalingFrom(history)
	for _, l := range core.Layouts() {
		ms := measures[l]
		plan.Measures = append(plan.Measures, ms)
		cands, err := layoutCandidates(p, l, ms, plan.Scaling, plan.Request.Threads)
		if err != nil {
			return Plan{}, err
		}
		plan.Candidates = append(plan.Candidates, cands...)
	}
	for i := range plan.Candidates {
		c := &plan.Candidates[i]
		c.Fits = c.PeakBytes <= plan.BudgetBytes
	}
	rank(&plan)
	explain(&plan, p)
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
func layoutCandidates(p parsedPlan, l core.Layout, ms Measure, sc Scaling, threads int) ([]Candidate, error) {
	mlfs := []float64{0}
	follows := followsMaxLoadFactor(l, p.key, p.value)
	if follows {
		mlfs = planLoadFactors()
	}
	var out []Candidate
	for _, shards := range planShards {
		var lastBuckets int64 = -1
		for _, mlf := range mlfs {
			pr, err := core.Predict(l, p.key, p.value, p.distinct, p.options(mlf), shards)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", l, err)
			}
			if pr.BucketCount == lastBuckets {
				continue // the same table as at a lower load factor, read more slowly
			}
			lastBuckets = pr.BucketCount
			c := candidate(p, l, mlf, shards, pr, ms, sc, threads)
			c.followsMLF = follows
			out = append(out, c)
		}
	}
	return out, nil
}

// options are the tables' options of a setup at max load factor mlf.
func (p parsedPlan) options(mlf float64) core.Options {
	return tableOptions(mlf, p.Preallocate, p.distinct)
}

// candidate fills in one setup's figures.
func candidate(p parsedPlan, l core.Layout, mlf float64, shards int, pr core.Prediction, ms Measure, sc Scaling, threads int) Candidate {
	c := Candidate{
		Layout: string(l), KeyType: p.key.Name, ValueType: p.value.Name,
		Rows: p.Rows, Distinct: p.distinct, Shards: shards,
		MaxLoadFactor:  effectiveMLF(l, mlf),
		Preallocate:    p.Preallocate,
		BucketCount:    pr.BucketCount,
		BytesAllocated: pr.FinalBytes,
		Overhead:       ms.Overhead,
		GrowingAtOnce:  growingAtOnce(shards),
		LoaderBytes:    loaderBytesFor(p.key, p.value, shards, 0, p.distinct, false),
		Estimated:      pr.Estimated,
		Saturated:      pr.Saturated,
		GrowthBytes:    pr.GrowthBytes,
	}
	if pr.BucketCount > 0 {
		c.LoadFactor = float64(p.distinct) / float64(pr.BucketCount)
	}
	tables := core.SaturatingAdd(pr.FinalBytes, core.SaturatingMul(int64(c.GrowingAtOnce), pr.GrowthBytes))
	// The loader's blocks are garbage once the load ends, which the Go
	// runtime keeps (and reuses) rather than returning: they stay in RSS.
	c.SteadyBytes = core.SaturatingAdd(scaleBytes(pr.FinalBytes, ms.Overhead), c.LoaderBytes)
	// The peak is never below what the tables and the loader's blocks hold
	// at the end of the load.
	c.PeakBytes = max(scaleBytes(core.SaturatingAdd(tables, c.LoaderBytes), ms.PeakOverhead), c.SteadyBytes)
	c.PeakOverhead = ms.PeakOverhead
	c.BytesPerPair = float64(c.SteadyBytes) / float64(p.distinct)
	if ms.LoadRowsPerSecond > 0 {
		rate := sc.loadRate(ms.LoadRowsPerSecond, shards, threads)
		c.LoadRowsPerSecond = ptr(rate)
		c.LoadSeconds = ptr(float64(p.distinct) / rate)
	}
	if ms.ReadRowsPerSecond > 0 {
		rate := ms.ReadRowsPerSecond
		if cell := float64(pr.FinalBytes) / float64(max(pr.BucketCount, 1)); ms.LoadFactor > 0 && c.LoadFactor > 0 {
			rate *= probeLinesOf(l, ms.LoadFactor, cell) / probeLinesOf(l, c.LoadFactor, cell)
		}
		c.ReadRowsPerSecond = ptr(rate)
		c.ReadSeconds = ptr(float64(p.distinct) / rate)
	}
	c.ClickHouseLayout, c.ClickHouseNote, c.PacklabOnly = clickHouseFor(l, p.key, p.value, shards, mlf)
	return c
}

// growingAtOnce is how many of a map's shards can hold their old and their
// new slab at the same moment during a load: all of them. The loader deals
// rows evenly, so the shards reach their growth points together, and
// nothing keeps them from growing together but chance: a shard whose queue
// is full while it grows stalls the producer, and with it the shards that
// have not reached their point yet. Measured here (packed, 16e6 rows, 2
// threads, peak minus steady RSS over one shard's old slab, two runs each):
// 1.0 and 1.9 of 2 shards, 1.9 and 2.6 of 4, 3.1 and 4.5 of 8 (4.9 of 8 on
// one thread). A plan must hold in the worst case, so the peak counts every
// shard; sharding spreads the load over threads, it does not bound the peak.
func growingAtOnce(shards int) int { return shards }

// probeLines is the cache lines a successful lookup touches in a
// linear-probing table at load factor a whose cells are cell bytes: the
// first, plus the extra probes ((1 + 1/(1-a))/2 - 1 of them, Knuth) that
// run past it, cell/64 of a line each. Read speeds measured at one load
// factor are scaled by it to another: a model, stated as such in the plan.
func probeLines(a, cell float64) float64 {
	a = min(a, 0.999)
	probes := (1 + 1/(1-a)) / 2
	return 1 + (probes-1)*min(cell, 64)/64
}

// probeLinesOf is probeLines as the layout's batched lookups (the lab's
// read phase) wait on them: compact's GetMany prefetches the line after the
// home slot's too from core.CompactTwoLineFill on, so there a lookup waits
// for one line less, and never for less than one. Checked with `packlab run
// --layout compact` (3 runs of 3 repeats, medians): 17.5 M rows/s at fill
// 0.962 (2.8M rows, mlf 0.97), 26.0 at 0.893 (2.6M), 24.4 at 0.77 (2.8M):
// 0.67x and 0.94x of 0.893's where this says 0.63x and 0.83x (probeLines
// alone: 0.59x and 1.26x).
func probeLinesOf(l core.Layout, a, cell float64) float64 {
	lines := probeLines(a, cell)
	if l == core.LayoutCompact && a >= core.CompactTwoLineFill {
		lines = max(1, lines-1)
	}
	return lines
}

func ptr(v float64) *float64 { return &v }

// rank orders the candidates: those that fit first, the fastest (within
// planTolerance of the best) and then the least memory; then those that do
// not fit, smallest peak first.
func rank(plan *Plan) {
	load := plan.Request.Workload == WorkloadLoad
	speed := func(c Candidate) float64 { // higher is better; 0 = not measured
		switch {
		case load && c.LoadRowsPerSecond != nil:
			return *c.LoadRowsPerSecond
		case !load && c.ReadRowsPerSecond != nil:
			return *c.ReadRowsPerSecond
		}
		return 0
	}
	best := 0.0
	for _, c := range plan.Candidates {
		if c.Fits {
			best = max(best, speed(c))
		}
	}
	near := func(c Candidate) bool { return speed(c) >= best*(1-planTolerance) }
	secondary := func(c Candidate) float64 { // the other speed, higher is better
		if load {
			return deref(c.ReadRowsPerSecond)
		}
		return deref(c.LoadRowsPerSecond)
	}
	slices.SortStableFunc(plan.Candidates, func(a, b Candidate) int {
		if a.Fits != b.Fits {
			return boolFirst(a.Fits, b.Fits)
		}
		if !a.Fits {
			return cmp.Or(cmp.Compare(a.PeakBytes, b.PeakBytes), cmp.Compare(a.SteadyBytes, b.SteadyBytes), cmp.Compare(a.Shards, b.Shards))
		}
		if na, nb := near(a), near(b); na != nb {
			return boolFirst(na, nb)
		} else if !na {
			if c := cmp.Compare(onePercent(speed(b)), onePercent(speed(a))); c != 0 {
				return c
			}
		}
		return cmp.Or(cmp.Compare(onePercent(float64(a.SteadyBytes)), onePercent(float64(b.SteadyBytes))),
			cmp.Compare(onePercent(float64(a.PeakBytes)), onePercent(float64(b.PeakBytes))),
			cmp.Compare(onePercent(secondary(b)), onePercent(secondary(a))), cmp.Compare(a.Shards, b.Shards))
	})
	for i := range plan.Candidates {
		plan.Candidates[i].Rank = i + 1
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

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// explain writes each candidate's why, the answer, the layouts ruled out,
// and the ClickHouse and Go text of the setups worth copying.
func explain(plan *Plan, p parsedPlan) {
	budget := FormatBytes(plan.BudgetBytes)
	load := p.Workload == WorkloadLoad
	byKind := map[growthKind][]string{}
	for _, l := range core.Layouts() {
		if i := slices.IndexFunc(plan.Candidates, func(c Candidate) bool { return c.Layout == string(l) }); i >= 0 {
			k := growthOf(plan.Candidates[i])
			byKind[k] = append(byKind[k], string(l))
		}
	}
	plan.Growing = "every shard can grow at once: the loader deals rows evenly, so the shards reach their growth points together (measured on the 2-core lab machine: up to 1.9 of 2 shards, 2.6 of 4, 4.9 of 8 at once)"
	for _, k := range []growthKind{growthCopies, growthInPlace, growthBehind, growthPaged} {
		if ls := byKind[k]; len(ls) > 0 {
			plan.Growing += "; " + strings.Join(ls, ", ") + ": " + growthKindWords[k]
		}
	}
	best := plan.Best()
	if best == nil {
		plan.Answer = "no layout to plan"
		return
	}
	fitting := 0
	for _, c := range plan.Candidates {
		if c.Fits {
			fitting++
		}
	}
	what, unit := "reads", "rows/s read"
	if load {
		what, unit = "loads", "rows/s loaded"
	}
	speedOf := func(c Candidate) *float64 {
		if load {
			return c.LoadRowsPerSecond
		}
		return c.ReadRowsPerSecond
	}
	for i := range plan.Candidates {
		c := &plan.Candidates[i]
		switch {
		case !c.Fits && fitting == 0 && c.Rank == 1:
			c.Why = fmt.Sprintf("nothing fits in %s; this is the smallest setup: peak %s", budget, formatBytes(c.PeakBytes))
		case !c.Fits:
			c.Why = fmt.Sprintf("peak %s (%s) is above the %s budget", formatBytes(c.PeakBytes), growthWords(*c), budget)
		case c.Rank == 1 && speedOf(*c) == nil:
			c.Why = fmt.Sprintf("the least memory of the %d setups that fit in %s (speeds not measured here, so memory alone decides)", fitting, budget)
		case c.Rank == 1:
			c.Why = fmt.Sprintf("the fastest %s of the %d setups that fit in %s (%s %s; within %d %% counts as as fast), and the least memory of those",
				what, fitting, budget, rowsRate(*speedOf(*c)), unit, int(planTolerance*100))
		default:
			c.Why = compareWhy(*c, *best, speedOf, what)
		}
	}
	if fitting == 0 {
		plan.Answer = fmt.Sprintf("nothing fits in %s (%s): the smallest setup is %s with a peak of %s",
			budget, plan.BudgetFrom, setupName(*best), formatBytes(best.PeakBytes))
	} else {
		plan.Answer = fmt.Sprintf("%s: steady %s, peak %s, %.2f bytes/pair — %s", setupName(*best),
			FormatBytes(best.SteadyBytes), FormatBytes(best.PeakBytes), best.BytesPerPair, best.Why)
	}
	// Layouts with no setup that fits, and why.
	for _, l := range core.Layouts() {
		var smallest *Candidate
		ok := false
		for i := range plan.Candidates {
			c := &plan.Candidates[i]
			if c.Layout != string(l) {
				continue
			}
			ok = ok || c.Fits
			if smallest == nil || c.PeakBytes < smallest.PeakBytes {
				smallest = c
			}
		}
		if !ok && smallest != nil {
			plan.RuledOut = append(plan.RuledOut, fmt.Sprintf("%s: every setup's peak is above %s; its smallest, %s, peaks at %s (%s)",
				l, budget, setupName(*smallest), formatBytes(smallest.PeakBytes), growthWords(*smallest)))
		}
	}
	best.CreateDictionary, best.GoCode = createDictionary(*best), goCode(*best)
	if best.PacklabOnly {
		for i := range plan.Candidates {
			c := &plan.Candidates[i]
			if !c.PacklabOnly && (c.Fits || fitting == 0) {
				c.BestClickHouse = true
				c.CreateDictionary, c.GoCode = createDictionary(*c), goCode(*c)
				break
			}
		}
	}
	plan.Notes = planNotes(plan, p)
}

// compareWhy says why a fitting setup ranks below the best.
func compareWhy(c, best Candidate, speedOf func(Candidate) *float64, what string) string {
	s, b := speedOf(c), speedOf(best)
	if s != nil && b != nil && *s < *b*(1-planTolerance) {
		return fmt.Sprintf("fits; %s %.0f %% slower than #1", what, 100*(1 - *s / *b))
	}
	if c.SteadyBytes > best.SteadyBytes {
		return fmt.Sprintf("fits, as fast as #1 within %d %%, but holds %s more", int(planTolerance*100), FormatBytes(c.SteadyBytes-best.SteadyBytes))
	}
	if c.PeakBytes > best.PeakBytes {
		return fmt.Sprintf("fits, as fast and as small as #1, but peaks %s higher", FormatBytes(c.PeakBytes-best.PeakBytes))
	}
	return "fits; as fast and as small as #1 within the model's precision"
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
	return c.Layout == string(core.LayoutCompact) && core.CompactReleasesBehind
}

// setupName is how the plan names a setup: "packed SHARDS 8 MLF 0.94".
func setupName(c Candidate) string {
	s := fmt.Sprintf("%s SHARDS %d", c.Layout, c.Shards)
	if c.followsMLF {
		s += " MLF " + fmtFloat(c.MaxLoadFactor)
	}
	return s
}

// rowsRate writes rows per second the short way: 3.1M, 850K.
func rowsRate(v float64) string {
	switch {
	case v >= 1e9:
		return strconv.FormatFloat(v/1e9, 'f', 2, 64) + "B"
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "K"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// measuredFarBelow reports whether m's speeds were measured at a third of
// distinct keys or fewer: a table that size misses the caches (and, on a
// VM, faults in fresh memory) more, so the plan expects it slower.
func measuredFarBelow(distinct int64, m Measure) bool {
	return m.Rows > 0 && distinct > 3*m.Rows
}

// planNotes says where the figures come from and how far to trust them.
func planNotes(plan *Plan, p parsedPlan) []string {
	var notes []string
	if p.distinct < p.Rows {
		notes = append(notes, fmt.Sprintf("a %s key has only %s values: the table holds at most %s keys, not %s", p.key.Name,
			GroupThousands(p.distinct), GroupThousands(p.distinct), GroupThousands(p.Rows)))
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
			guessed = append(guessed, fmt.Sprintf("%s x%s", m.Layout, fmtFloat(m.Overhead)))
		}
	}
	if len(unmeasured) > 0 {
		notes = append(notes, fmt.Sprintf("no speed measured here for %s <%s,%s>: their times are left out (a calibration of about half a minute measures them: `packlab plan` does it unless --no-calibrate; in the lab, tick \"measure missing speeds first\")",
			strings.Join(unmeasured, ", "), p.key.Name, p.value.Name))
	}
	if len(guessed) > 0 {
		notes = append(notes, "overhead not measured here, the memory guard's cautious bound used: "+strings.Join(guessed, ", "))
	}
	if len(small) > 0 {
		note := fmt.Sprintf("speeds of %s were measured at up to %s rows; a table of %s rows misses the CPU caches more (and faults in more fresh memory), so expect it slower than shown",
			strings.Join(small, ", "), FormatRows(largest), FormatRows(p.distinct))
		// Runs of up to 1e8 rows fit a machine like this lab's (24 GiB)
		// for every layout; suggest them only where they are nearer.
		if nearer := min(p.distinct, 100_000_000); nearer > 2*largest {
			note += fmt.Sprintf(". The plan compares the layouts at one size, each by its one-shard run nearest it: runs of every layout nearer %s rows give it speeds measured there (`packlab plan --rows %s --calibrate-rows %s`, minutes a layout, or `packlab run --layout %s --rows %s`)",
				FormatRows(p.distinct), FormatRows(p.Rows), FormatRows(nearer), strings.Join(measured, ","), FormatRows(nearer))
		}
		notes = append(notes, note)
	}
	if plan.Scaling.From != "" { // measured, if only to add nothing
		notes = append(notes, fmt.Sprintf("load with several shards: each extra worker adds %.0f %% of one worker's speed (measured %s), up to %d threads and the producer's %s rows/s",
			100*plan.Scaling.Efficiency, plan.Scaling.From, plan.Request.Threads, rowsRate(plan.Scaling.ProducerRowsPerSecond)))
	} else {
		notes = append(notes, "no multi-shard load measured here: load times assume one worker's speed whatever the shard count")
	}
	notes = append(notes, "read rows/s: one thread looking every key up once in random order; other load factors than the measured one are scaled by a linear-probing model (cache lines per lookup)")
	if p.Preallocate {
		notes = append(notes, fmt.Sprintf("preallocated: every table reserved for its share of the %s keys before the load (core.Options{Reserve: %d}), so none grows and the peak is the final size; speeds from preallocated runs only. ClickHouse ignores PREALLOCATE since 23.1: its CREATE DICTIONARY leaves it out",
			GroupThousands(p.distinct), p.distinct))
	}
	return notes
}
