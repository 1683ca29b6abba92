// Package result is the lab's contract: Result, one measured run of one
// layout as every face reads and writes it (JSON, snake_case, in the words
// of ClickHouse's system.dictionaries), the Job that measured it, the run
// labels a table or chart names it by, and the notes a table of results
// carries. It asks core and the memory model (experiments/dict) only.
package result

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/text"
)

// Result is one measured run of one layout: the JSON contract of the lab
// (snake_case, in the words of DESIGN.md section 2 and ClickHouse's
// system.dictionaries). Every face reads and writes exactly this.
type Result struct {
	ID        string `json:"id"`         // unique, sortable by time: e.g. 20261130T205800Z-hashed-3f2a
	Job       *Job   `json:"job"`        // the job that measured it; null in results saved before jobs
	StartedAt string `json:"started_at"` // RFC 3339, UTC
	Layout    string `json:"layout"`
	KeyType   string `json:"key_type"`
	ValueType string `json:"value_type"`
	// Attributes is a dictionary's attribute types when it has more than
	// one ("UInt16,UInt32,Float64"; ValueType is the first): ClickHouse's
	// layouts and the row layouts (experiments/config/attributes.go).
	Attributes string `json:"attributes"`
	// AttributeColumns are the source file's columns the attributes after
	// the value were read from (experiments/config/file.go); empty when they were
	// drawn from the key.
	AttributeColumns []string `json:"attribute_columns"`
	Rows             int64    `json:"rows"` // rows the source produced
	Shards           int      `json:"shards"`
	MaxLoadFactor    float64  `json:"max_load_factor"`
	Source           string   `json:"source"` // "random", "range:1000000", "zipf:1.1", "sequential", or a file path
	Seed             uint64   `json:"seed"`
	ClickHouseLayout string   `json:"clickhouse_layout"` // e.g. LAYOUT(SPARSE_HASHED(SHARDS 16 MAX_LOAD_FACTOR 0.9)), or ""

	ElementCount int64 `json:"element_count"`
	// InformationLimit is the fewest bytes any structure can hold
	// element_count distinct random keys of this type and their values in:
	// log2 C(2^key bits, n) + n * value bits, over 8. 0 in results saved
	// before it was recorded (InformationLimitOf works it out).
	InformationLimit int64   `json:"information_limit_bytes"`
	Duplicates       int64   `json:"duplicates"`   // rows whose key was already loaded (first occurrence wins)
	SkippedRows      int64   `json:"skipped_rows"` // bad file rows skipped on request
	BucketCount      int64   `json:"bucket_count"`
	LoadFactor       float64 `json:"load_factor"`
	BytesAllocated   int64   `json:"bytes_allocated"`
	PayloadBytes     int64   `json:"payload_bytes"`
	PaddingBytes     int64   `json:"padding_bytes"`
	EmptyBytes       int64   `json:"empty_bytes"`
	MetadataBytes    int64   `json:"metadata_bytes"`
	// KeyCopyBytes is the key held again, once in each attribute's table
	// past the first (ClickHouse's HASHED and SPARSE_HASHED with several
	// attributes): a part of bytes_allocated beside the four above.
	KeyCopyBytes int64 `json:"key_copy_bytes"`
	// AttributeCells are the cells of each attribute's table, with several
	// fixed-size attributes in HASHED or SPARSE_HASHED
	// (fillAttributesBreakdown): the padding chart shows each; empty
	// otherwise.
	AttributeCells []AttributeCell `json:"attribute_cells"`
	Estimated      bool            `json:"estimated"`      // bytes_allocated is read from a structure packlab does not own (gomap, some reference maps)
	SlotBytes      int64           `json:"slot_bytes"`     // a reference map's slot, as its library lays it out
	Checksum       string          `json:"checksum"`       // sum of core.PairChecksum over the loaded pairs, hex: equal for every layout that loaded the same pairs
	HeapBytes      int64           `json:"heap_bytes"`     // Go heap in use after the load (objects, none collected on purpose) minus the baseline; a reference map: malloc's bytes in use
	RSSBytes       int64           `json:"rss_bytes"`      // resident memory after the load minus before it
	PeakRSSBytes   int64           `json:"peak_rss_bytes"` // high-water mark during the run minus resident memory before it
	PredictedPeak  int64           `json:"predicted_peak_bytes"`

	LoadSeconds       float64 `json:"load_seconds"`
	LoadRowsPerSecond float64 `json:"load_rows_per_second"`
	// LoadKernelSeconds is the CPU time the kernel spent for the measuring
	// process during the load, every thread (Linux: getrusage): page faults
	// above all, the kernel mapping and zeroing the tables' new memory. 0
	// where unknown (other platforms, the C++ reference maps, results saved
	// before it was recorded).
	LoadKernelSeconds float64 `json:"load_kernel_seconds"`
	// ProcessSeconds is the worker process's whole life, started to its
	// result, wall time: at small sizes its start-up and the source's
	// generation outweigh the load, which load_seconds times alone
	// (ProcessNotes says so). 0 in process and in results before it.
	ProcessSeconds    float64 `json:"process_seconds"`
	ReadSeconds       float64 `json:"read_seconds"`
	ReadRowsPerSecond float64 `json:"read_rows_per_second"`
	FoundRate         float64 `json:"found_rate"`
	Repeats           int     `json:"repeats"` // times are medians over this many loads
	// Spread is the range of the times over the repeats; null for one load.
	Spread *Spread `json:"spread"`

	// The loader's knobs (see Config): "" and 0 in results saved before
	// they were recorded, meaning the defaults (auto, 65,536 rows) and an
	// unknown thread count.
	ShardSelect string `json:"shard_select"` // auto, modulo or mask
	BlockRows   int    `json:"block_rows"`   // rows the producer read at a time
	Threads     int    `json:"threads"`      // GOMAXPROCS of the measuring process during the load
	// HugePages: "on" where the tables' large slabs asked for transparent
	// huge pages, "off" where they refused them, "none" where the platform
	// has none (js/wasm, macOS); "" in results saved before it was recorded
	// and for the C++ reference maps, which take what their allocator gives.
	HugePages string `json:"huge_pages"`
	// Preallocate: the tables were reserved for the source's rows before
	// the load (Config.Preallocate); false in results saved before it was
	// recorded, which never were.
	Preallocate bool `json:"preallocate"`
	// SettleSeconds is how long the job idled before each of this result's
	// loads (Config.SettleSeconds: --settle, 2.5 s in a calibration): loads on
	// this VM are several times faster right after another freed its
	// memory. 0 in results saved before it was recorded.
	SettleSeconds float64 `json:"settle_seconds"`

	Workers  []Worker        `json:"workers"`
	Producer Producer        `json:"producer"`
	Timeline []TimelinePoint `json:"timeline"`

	// Reference names the C++ map and library of a reference layout
	// ("boost::unordered_flat_map (Boost 1.81)"); empty for packlab's own.
	Reference string `json:"reference"`
	// ClickHouse is what a run of one of ClickHouse's own dictionaries
	// (package experiments/chdriver) adds: its version, DDL, memory around the load and
	// packlab's computed figure beside it; null for every other layout.
	ClickHouse *ClickHouseRun `json:"clickhouse"`

	Isolated bool   `json:"isolated"` // ran in a fresh worker process, so RSS figures are its own
	Runtime  string `json:"runtime"`  // "native" or "browser"
	Host     Host   `json:"host"`
}

// Worker is one shard's loader goroutine.
type Worker struct {
	Shard         int     `json:"shard"`
	Rows          int64   `json:"rows"`
	BusySeconds   float64 `json:"busy_seconds"`
	WaitSeconds   float64 `json:"wait_seconds"`
	RowsPerSecond float64 `json:"rows_per_second"` // rows / busy seconds
}

// Producer is the goroutine that reads the source and splits blocks by shard.
type Producer struct {
	ReadSeconds  float64 `json:"read_seconds"`  // generating or reading and parsing rows
	SplitSeconds float64 `json:"split_seconds"` // splitting blocks by shard
	WaitSeconds  float64 `json:"wait_seconds"`  // blocked on full shard queues
}

// TimelinePoint is one sample taken during the load.
type TimelinePoint struct {
	Seconds  float64 `json:"seconds"`
	Rows     int64   `json:"rows"`
	RSSBytes int64   `json:"rss_bytes"`
}

// Host describes the machine a result was measured on.
type Host struct {
	CPUs        int    `json:"cpus"`
	TotalMemory uint64 `json:"total_memory_bytes"`
	GoVersion   string `json:"go_version"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
}

// IsReference reports whether r measured a C++ reference map rather than
// one of packlab's layouts.
func (r Result) IsReference() bool { return r.Reference != "" || IsReference(r.Layout) }

// IsClickHouse reports whether r measured one of ClickHouse's own
// dictionaries, run by ClickHouse.
func (r Result) IsClickHouse() bool { return r.ClickHouse != nil || dict.IsClickHouse(r.Layout) }

// InformationLimitOf is r's information limit in bytes: as recorded, or
// worked out from its types and element count for a result saved before it
// was recorded; 0 when the types are unknown.
func InformationLimitOf(r Result) int64 {
	if r.InformationLimit > 0 || r.ElementCount <= 0 {
		return r.InformationLimit
	}
	k, err1 := core.ParseType(r.KeyType)
	v, err2 := core.ParseType(r.ValueType)
	if err1 != nil || err2 != nil {
		return 0
	}
	return InformationLimit(k, v, r.ElementCount)
}

// Spread is the fastest and slowest of a result's repeated loads and reads,
// in seconds (0 where the read phase was off). Rows a second follow: the
// fastest is rows / the least seconds.
type Spread struct {
	LoadSecondsMin float64 `json:"load_seconds_min"`
	LoadSecondsMax float64 `json:"load_seconds_max"`
	ReadSecondsMin float64 `json:"read_seconds_min"`
	ReadSecondsMax float64 `json:"read_seconds_max"`
}

// spread is r.Spread, or zeros (no range) for one load.
func (r Result) SpreadOrZero() Spread {
	if r.Spread == nil {
		return Spread{}
	}
	return *r.Spread
}

// SpeedRanges are r's load and read speeds' ranges in rows/s, from its
// repeats' slowest and fastest times; nil for one load.
func (r Result) SpeedRanges() (load, read *[2]float64) {
	sp := r.Spread
	if sp == nil || r.Repeats < 2 {
		return nil, nil
	}
	if sp.LoadSecondsMin > 0 {
		rows := float64(r.Rows)
		load = &[2]float64{rows / sp.LoadSecondsMax, rows / sp.LoadSecondsMin}
	}
	if sp.ReadSecondsMin > 0 && r.ReadSeconds > 0 {
		lookups := r.ReadRowsPerSecond * r.ReadSeconds
		read = &[2]float64{lookups / sp.ReadSecondsMax, lookups / sp.ReadSecondsMin}
	}
	return load, read
}

// PreallocateNotes says, once, what a preallocated load was and what
// ClickHouse makes of the setting today, when any result was one.
func PreallocateNotes(results []Result) []string {
	n := 0
	for _, r := range results {
		if r.Preallocate {
			n++
		}
	}
	which := "every table was" // the labels do not say it when all runs share it
	switch {
	case n == 0:
		return nil
	case n < len(results):
		which = "the runs marked so had their tables"
	}
	return []string{"PREALLOCATE: " + which + " reserved for the source's rows before the load (for the C++ maps, reserve()), so none grew; " +
		"ClickHouse's HASHED and SPARSE_HASHED had PREALLOCATE 1 from 2021 (#23979, from the source's row count) and ignore it since 23.1 (#45388), where SHARDS is its answer to slow loads: the LAYOUT clauses leave it out"}
}

// KernelNotes says, for each result whose load kept the kernel busy for at
// least a fifth of its time (and 50 ms), how long, in one short line each:
// such a load is slow in page faults, not in the table's code, and the
// lines say so under the table rather than leave it to be read as the
// layout's speed. What that time is (and, where huge pages were on, why it
// is long on a virtual machine) is said once after them, not once a run.
// Where loads of several results ran without an idle before them, one more
// line says that their order decides part of it (--settle).
func KernelNotes(results []Result) []string {
	var notes []string
	labels := TableSettings(results)
	huge := 0
	for i, r := range results {
		if r.LoadKernelSeconds < 0.05 || r.LoadKernelSeconds < r.LoadSeconds/5 {
			continue
		}
		if HugePagesOf(r) == "on" && !r.IsReference() && !r.IsClickHouse() {
			huge++ // packlab's own tables: the others take what their allocator gives
		}
		notes = append(notes, fmt.Sprintf("%s: the kernel spent %.2f s of CPU time in its %.2f s load",
			labels[i], r.LoadKernelSeconds, r.LoadSeconds))
	}
	if len(notes) == 0 {
		return nil
	}
	why := "the kernel's time in a load is page faults: mapping and zeroing the tables' new memory"
	if huge > 0 {
		which := "those loads"
		if huge < len(notes) {
			which = "some of those loads"
		}
		why += "; huge pages were on for " + which + ", and a fresh 2 MiB page is slow to fault in on a virtual machine that hands free memory back to its host: compare a run with huge pages off"
	}
	notes = append(notes, why)
	if len(results) > 1 && slices.ContainsFunc(results, func(r Result) bool { return r.SettleSeconds == 0 }) {
		notes = append(notes, "loads that ran back to back: one that starts within about 2 s of another reuses the memory that one freed and spends less time in the kernel, "+
			"so their times follow their order; an idle of 8 s before each load ({settle_seconds} 8) puts every load on fresh memory")
	}
	return notes
}

// LimitNotes says, for each compact result, how many bytes a pair it holds
// against the information limit at its element count, and that ClickHouse
// has no such layout: one short line each, for under a table.
func LimitNotes(results []Result) []string {
	var notes []string
	labels := TableSettings(results)
	for i, r := range results {
		lim := InformationLimitOf(r)
		if core.Layout(r.Layout) != core.LayoutCompact || lim <= 0 || r.ElementCount <= 0 {
			continue
		}
		n := float64(r.ElementCount)
		notes = append(notes, fmt.Sprintf("%s: %.2f bytes a pair for %s pairs, %.2fx the information limit of %.2f (no ClickHouse layout is like it)",
			labels[i], float64(r.BytesAllocated)/n, text.Thousands(r.ElementCount), float64(r.BytesAllocated)/float64(lim), float64(lim)/n))
	}
	return notes
}

// Limits of a result read from disk: what no run measures. A result past
// them was edited or damaged, and is skipped with a line saying which
// field, rather than drawn.
const (
	maxResultSeconds = 365 * 24 * 3600 // a year
	maxResultBytes   = int64(1) << 62  // 4 EiB
)

// Validate checks a result read from disk: counts and bytes in range,
// times and rates finite and in range.
func (r Result) Validate() error {
	// Names become labels of every table row and chart series: a layout
	// name of thousands of characters (an edited file) would break both.
	for _, f := range []struct {
		name, v string
		max     int
	}{{"layout", r.Layout, 64}, {"key_type", r.KeyType, 32}, {"value_type", r.ValueType, 32}, {"attributes", r.Attributes, 33 * dict.MaxAttributes}} {
		if len(f.v) > f.max {
			return fmt.Errorf("%s of %d characters is too long for a label (allowed: at most %d)", f.name, len(f.v), f.max)
		}
	}
	counts := []struct {
		name string
		v    int64
		max  int64
	}{
		{"rows", r.Rows, source.MaxRows}, {"element_count", r.ElementCount, source.MaxRows},
		{"duplicates", r.Duplicates, source.MaxRows}, {"bucket_count", r.BucketCount, maxResultBytes},
		{"bytes_allocated", r.BytesAllocated, maxResultBytes}, {"rss_bytes", r.RSSBytes, maxResultBytes},
		{"peak_rss_bytes", r.PeakRSSBytes, maxResultBytes}, {"payload_bytes", r.PayloadBytes, maxResultBytes},
		{"padding_bytes", r.PaddingBytes, maxResultBytes}, {"empty_bytes", r.EmptyBytes, maxResultBytes},
		{"metadata_bytes", r.MetadataBytes, maxResultBytes}, {"key_copy_bytes", r.KeyCopyBytes, maxResultBytes},
		{"shards", int64(r.Shards), core.MaxShards},
	}
	for _, c := range counts {
		// RSS may be below the baseline (the kernel took pages back): a
		// small negative is a measurement, not damage.
		min := int64(0)
		if c.name == "rss_bytes" || c.name == "peak_rss_bytes" {
			min = -maxResultBytes
		}
		if c.v < min || c.v > c.max {
			return fmt.Errorf("%s %d is out of range (allowed: %d to %d)", c.name, c.v, max(min, 0), c.max)
		}
	}
	times := []struct {
		name string
		v    float64
		max  float64
	}{
		{"load_seconds", r.LoadSeconds, maxResultSeconds}, {"read_seconds", r.ReadSeconds, maxResultSeconds},
		{"load_rows_per_second", r.LoadRowsPerSecond, 1e12}, {"read_rows_per_second", r.ReadRowsPerSecond, 1e12},
		{"load_factor", r.LoadFactor, 1}, {"max_load_factor", r.MaxLoadFactor, 1}, {"found_rate", r.FoundRate, 1},
	}
	// Every other figure a chart or a table draws: a sample of the
	// timeline at 1e308 s made every chart's JSON fail (+Inf).
	times = append(times, []struct {
		name string
		v    float64
		max  float64
	}{
		{"process_seconds", r.ProcessSeconds, maxResultSeconds}, {"settle_seconds", r.SettleSeconds, maxResultSeconds},
		{"load_kernel_seconds", r.LoadKernelSeconds, maxResultSeconds},
		{"producer.read_seconds", r.Producer.ReadSeconds, maxResultSeconds}, {"producer.split_seconds", r.Producer.SplitSeconds, maxResultSeconds},
		{"producer.wait_seconds", r.Producer.WaitSeconds, maxResultSeconds},
	}...)
	for i, w := range r.Workers {
		times = append(times, []struct {
			name string
			v    float64
			max  float64
		}{
			{fmt.Sprintf("workers[%d].busy_seconds", i), w.BusySeconds, maxResultSeconds},
			{fmt.Sprintf("workers[%d].wait_seconds", i), w.WaitSeconds, maxResultSeconds},
			{fmt.Sprintf("workers[%d].rows_per_second", i), w.RowsPerSecond, 1e12},
		}...)
	}
	if r.Spread != nil {
		sp := r.Spread
		times = append(times, []struct {
			name string
			v    float64
			max  float64
		}{
			{"load_seconds_min", sp.LoadSecondsMin, maxResultSeconds}, {"load_seconds_max", sp.LoadSecondsMax, maxResultSeconds},
			{"read_seconds_min", sp.ReadSecondsMin, maxResultSeconds}, {"read_seconds_max", sp.ReadSecondsMax, maxResultSeconds},
		}...)
	}
	for _, c := range times {
		if math.IsNaN(c.v) || c.v < 0 || c.v > c.max {
			return fmt.Errorf("%s %v is out of range (allowed: 0 to %v)", c.name, c.v, c.max)
		}
	}
	for i, p := range r.Timeline {
		switch {
		case math.IsNaN(p.Seconds) || p.Seconds < 0 || p.Seconds > maxResultSeconds:
			return fmt.Errorf("timeline[%d].seconds %v is out of range (allowed: 0 to %v)", i, p.Seconds, maxResultSeconds)
		case p.Rows < 0 || p.Rows > source.MaxRows:
			return fmt.Errorf("timeline[%d].rows %d is out of range (allowed: 0 to %d)", i, p.Rows, source.MaxRows)
		case p.RSSBytes < -maxResultBytes || p.RSSBytes > maxResultBytes:
			return fmt.Errorf("timeline[%d].rss_bytes %d is out of range (allowed: at most %d)", i, p.RSSBytes, maxResultBytes)
		}
	}
	return nil
}

// ProcessNotes says, once, where a run's worker process lived several times
// longer than its load and read: at that size the table is not what the
// wall clock measures (starting a process, generating the keys), and the
// load and read times shown are the table's own.
func ProcessNotes(results []Result) []string {
	var which []string
	var worst float64
	generated, read := false, false
	labels := TableSettings(results)
	for i, r := range results {
		work := r.LoadSeconds + r.ReadSeconds
		if r.ProcessSeconds <= 0 || work <= 0 || r.ProcessSeconds < 3*work {
			continue
		}
		which = append(which, labels[i])
		worst = max(worst, r.ProcessSeconds/work)
		if spec, err := source.Parse(r.Source); err == nil && spec.Kind == source.File {
			read = true
		} else {
			generated = true
		}
	}
	if len(which) == 0 {
		return nil
	}
	what := "generating the keys"
	switch {
	case read && generated:
		what = "generating or reading the keys"
	case read:
		what = "reading the file"
	}
	return []string{fmt.Sprintf("%s: the worker process lived up to %.0fx its load and read (start-up, %s); the times shown are the table's own, timed inside it: at this size the process, not the table, is what a stopwatch would see (try 1e7 rows)",
		FewOf(which, 5), worst, what)}
}

// FewOf is a list for a note: its first n items and how many more (a
// sweep's 1,350 runs made one note a line of 40 KB).
func FewOf(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// ShardSelectOf is a result's shard selection, with the default for
// results saved before it was recorded.
func ShardSelectOf(r Result) string { return cmp.Or(r.ShardSelect, string(core.ShardSelectAuto)) }

// BlockRowsOf is a result's loader block rows, with the default for
// results saved before they were recorded.
func BlockRowsOf(r Result) int { return cmp.Or(r.BlockRows, core.DefaultBlockRows) }

// HugePagesOf is a result's huge-page setting; results saved before it was
// recorded ran with core's default, on.
func HugePagesOf(r Result) string { return cmp.Or(r.HugePages, "on") }

// ThreadsOf is the threads a result's load had: recorded, or the host's cores.
func ThreadsOf(r Result) int {
	if r.Threads > 0 {
		return r.Threads
	}
	return r.Host.CPUs
}

// IDDistance orders result ids by how far apart in time they were made:
// ids start with their time, so the length of the common prefix does.
func IDDistance(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return -n
}

// AttributeCell is one attribute's table cell: the key (UInt64, as
// ClickHouse keeps a simple key), the attribute, and the padding after.
type AttributeCell struct {
	Name         string `json:"name"`
	Type         string `json:"type"`
	CellBytes    int64  `json:"cell_bytes"`
	PaddingBytes int64  `json:"padding_bytes"` // of one cell
}

// ClickHouseRun is what a run of one of ClickHouse's own dictionaries adds
// to its result: what ClickHouse says, the worker's memory around it, and
// packlab's computed figure for the same dictionary beside it.
type ClickHouseRun struct {
	Version string `json:"version"` // SELECT version()
	DDL     string `json:"ddl"`     // the CREATE DICTIONARY statement it ran
	// KeyTypes is system.dictionaries.key.types: UInt64 for every simple
	// key, whatever the key column's type.
	KeyTypes string `json:"key_types"`
	// LoadingDurationSeconds is system.dictionaries.loading_duration; the
	// result's load_seconds is the SYSTEM RELOAD DICTIONARY call's time.
	LoadingDurationSeconds float64 `json:"loading_duration_seconds"`
	// BaselineRSSBytes is the worker's RSS with ClickHouse started and the
	// dictionary created but not loaded: taken off rss_bytes and
	// peak_rss_bytes.
	BaselineRSSBytes int64 `json:"baseline_rss_bytes"`
	// RSSPurgedBytes is the RSS above the baseline after SYSTEM JEMALLOC
	// PURGE: jemalloc keeps the growth's freed buffers until purged (right
	// after a load at 1e7 RSS is about twice bytes_allocated).
	RSSPurgedBytes int64 `json:"rss_purged_bytes"`
	// TrackedBytes is what ClickHouse's own memory tracker (the
	// MemoryTracking metric) gained over the load: every live allocation,
	// freed buffers not counted, whatever bytes_allocated leaves out.
	TrackedBytes int64 `json:"tracked_bytes"`
	// ReadThreads and the speed with every thread (max_threads); the
	// result's read_seconds is one thread's (max_threads = 1).
	ReadThreads                 int     `json:"read_threads"`
	ReadAllThreadsSeconds       float64 `json:"read_all_threads_seconds"`
	ReadAllThreadsRowsPerSecond float64 `json:"read_all_threads_rows_per_second"`
	KeyCut                      bool    `json:"key_cut"` // a 16-byte key was cut to its low 64 bits (a simple key)
	// ReloadPeakRSSBytes is the worker's peak over a second SYSTEM RELOAD
	// DICTIONARY, above the baseline: the old version serving while the
	// new one loads, as a dictionary in service reloads; ModelReloadPeakBytes
	// is the plan's model of it (dict.ClickHouseTableMemory), 0 where it has none.
	ReloadPeakRSSBytes   int64   `json:"reload_peak_rss_bytes"`
	ReloadSeconds        float64 `json:"reload_seconds"`
	ModelReloadPeakBytes int64   `json:"model_reload_peak_bytes"`
	// ModelBytes is packlab's computed figure for this dictionary (the same
	// rows, keys as ClickHouse keeps them), compared with ComparedWith's
	// figure; DifferencePercent is (measured - model) / model.
	ModelBytes        int64   `json:"model_bytes"`
	ComparedWith      string  `json:"compared_with"` // bytes_allocated or tracked_bytes
	DifferencePercent float64 `json:"difference_percent"`
	// Note says where ClickHouse's own figure cannot be taken as it is.
	Note string `json:"note,omitempty"`
}

// IsReference reports whether a run's layout is a C++ reference map's
// (dict.ReferenceMaps), typed in any case.
func IsReference(layout string) bool {
	_, ok := dict.FindReferenceMap(layout)
	return ok
}

// ValueText is a result's value as labels show it: its attributes when it
// has several.
func ValueText(r Result) string {
	return cmp.Or(r.Attributes, r.ValueType)
}

// InformationLimit is the fewest bytes n distinct random keys of key and
// their values can be held in (core.InformationLimitBits), rounded up.
func InformationLimit(key, value core.Type, n int64) int64 {
	b := core.InformationLimitBits(8*key.Size, 8*value.Size, n)
	if !(b > 0) || b/8 > math.MaxInt64 {
		return 0 // no pairs, or more than the key type has
	}
	return int64(math.Ceil(b / 8))
}
