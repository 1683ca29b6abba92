// Package refdriver is the C++ reference maps' driver: the maps a user
// would pick instead of packlab's layouts (boost_flat, absl_flat ...),
// measured in their own worker program, packlab-refs, beside packlab's.
// It registers with the engine (Register) and runs through the engine's
// driver seam (experiments.Driver): the engine parses the config and
// streams the rows; this package names the maps, finds and asks the
// worker, models the maps' memory for the guard, and runs them.
package refdriver

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/program"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/worker"
)

// Reference maps: the C++ maps a user would pick instead of packlab's
// layouts, measured by the lab beside them, the same way. They are not core
// tables (core cannot build them): a C++ worker program, packlab-refs (its
// source is reference/ at the repository's top, built by `make refs`),
// holds them, and speaks the Go worker's JSON lines (the engine's worker.go).
// The lab streams it the rows of the run's own key source and the read
// phase's keys in the lab's order (run.go), so a reference map loads exactly
// what packlab's layouts load; the element count and the checksum over the
// loaded pairs prove it.
//
// A reference map runs with its library's default hasher and growth rule,
// as one table: --max-load-factor does not apply to it, and --shards must
// be 1. It always runs in its own process, --in-process or not.

// Reference is one C++ reference map: its name, C++ type and line
// (dict's, which names the maps for every room) and its growth rule.
type Reference struct {
	dict.ReferenceMap
	growth refGrowth
}

// refGrowth is a reference map's growth rule, as the memory guard models it
// (the worker reports the real geometry after the load).
type refGrowth struct {
	mlf        float64 // the table grows when elements would exceed cells * mlf
	groupCells int64   // cells come in groups of this many (boost: 15), each with groupMeta bytes
	groupMeta  int64
	cellExtra  int64   // bytes each cell carries besides the pair (hopscotch: its neighbourhood bitmap)
	tailCells  int64   // cells past the power of two (hopscotch: a neighbourhood's worth)
	ctrlBytes  int64   // bytes of control per cell (absl: 1), plus 16 cloned ones
	sparse     bool    // only occupied cells are stored, in groups of 48 with a 16-byte header
	allocator  float64 // what malloc adds, from measurements (sparse: many small arrays)
}

// growths are the reference maps' growth rules, by name.
var growths = map[string]refGrowth{
	"boost_flat":      {mlf: 0.875, groupCells: 15, groupMeta: 16, allocator: 1},
	"absl_flat":       {mlf: 7.0 / 8, ctrlBytes: 1, allocator: 1},
	"dense_hash_map":  {mlf: 0.5, allocator: 1},
	"sparse_hash_map": {mlf: 0.8, sparse: true, allocator: 1.3},
	"hopscotch":       {mlf: 0.9, cellExtra: 8, tailCells: 61, allocator: 1},
}

// references are dict's reference maps with their growth rules, in the
// order the lab shows them.
var references = func() []Reference {
	var rs []Reference
	for _, m := range dict.ReferenceMaps() {
		rs = append(rs, Reference{m, growths[m.Name]})
	}
	return rs
}()

// References lists the reference maps, in the order the lab shows them.
func References() []Reference { return append([]Reference(nil), references...) }

// FindReference finds a reference map by name, as ParseLayout reads names:
// case and '-' for '_' do not matter.
func FindReference(name string) (Reference, bool) {
	m, ok := dict.FindReferenceMap(name)
	return Reference{m, growths[m.Name]}, ok
}

// Driver runs the reference maps: the engine's experiments.Driver.
type Driver struct{}

// Register registers the reference maps' driver with the engine.
func Register() { experiments.RegisterDriver(Driver{}) }

// Layout resolves a --layout name to a reference map's.
func (Driver) Layout(name string) (string, bool) {
	r, ok := FindReference(name)
	return r.Name, ok
}

// LayoutNames lists the reference maps for --layout's list of names.
func (Driver) LayoutNames() string {
	return "C++ reference maps: " + dict.Names(dict.LayoutsOf(dict.FamilyReference))
}

// Validate checks c for a reference map (name as given): one table, and
// the worker here.
func (Driver) Validate(c config.Config, name string) error {
	if c.Shards > 1 {
		r, _ := FindReference(name)
		return fault.New("shards", strconv.Itoa(c.Shards), "a C++ reference map ("+r.Name+") runs as one table", "1 with a reference map")
	}
	if st := Status(); !st.Available {
		return fault.New("layouts", name, "unavailable: "+st.Problem, "")
	}
	return nil
}

// Notes: a reference map's runs add no lines under a table of results.
func (Driver) Notes([]result.Result) []string { return nil }

// Where the worker is, and how to get it.
const (
	// BuildCommand is the one command that builds the reference maps.
	BuildCommand = "make refs"
	// WorkerEnv, when set, is the path of the worker to use.
	WorkerEnv = "PACKLAB_REFS_WORKER"
	// WorkerName is the worker's file name: bin/packlab-refs beside
	// bin/packlab, or on PATH.
	WorkerName = "packlab-refs"
	// refsProtocol is reference/worker.h's kProtocol.
	refsProtocol = 2
)

// State says whether the reference maps can run here.
type State struct {
	Available bool              `json:"available"`
	Path      string            `json:"path,omitempty"`      // the worker
	Problem   string            `json:"problem,omitempty"`   // why not, ending with how to build them
	Libraries map[string]string `json:"libraries,omitempty"` // name -> "boost::unordered_flat_map (Boost 1.81)"
}

var refsCache program.Cache[State]

// Status finds the worker ($PACKLAB_REFS_WORKER, else
// packlab-refs beside this program, else on PATH) and asks it what it holds
// (packlab-refs --describe); the answer is kept while the file does not
// change. In the browser the reference maps never run.
func Status() State {
	return refsCache.Status(WorkerEnv, WorkerName, "the C++ reference maps", BuildCommand, describeRefs,
		func(path, problem string) State { return State{Path: path, Problem: problem} })
}

// refsDescription is packlab-refs --describe's answer.
type refsDescription struct {
	KeyBytes   []int `json:"key_bytes"`
	ValueBytes []int `json:"value_bytes"`
	Maps       []struct {
		Name    string `json:"name"`
		Map     string `json:"map"`
		Library string `json:"library"`
	} `json:"maps"`
}

func describeRefs(path string) State {
	st := State{Path: path}
	var d refsDescription
	if st.Problem = program.Describe(path, 10*time.Second, refsProtocol, BuildCommand, &d); st.Problem != "" {
		return st
	}
	for _, sizes := range [][]int{d.KeyBytes, d.ValueBytes} {
		for _, want := range []int{1, 2, 4, 8, 16} {
			if !slices.Contains(sizes, want) {
				st.Problem = fmt.Sprintf("%s holds no %d-byte keys or values; rebuild it with: %s", path, want, BuildCommand)
				return st
			}
		}
	}
	st.Libraries = map[string]string{}
	for _, m := range d.Maps {
		st.Libraries[m.Name] = m.Map + " (" + m.Library + ")"
	}
	for _, r := range references {
		if _, ok := st.Libraries[r.Name]; !ok {
			st.Problem = fmt.Sprintf("%s has no %s; rebuild it with: %s", path, r.Name, BuildCommand)
			st.Libraries = nil
			return st
		}
	}
	st.Available = true
	return st
}

// Estimate is the guard's prediction of a reference map's run: its
// growth rule (refGrowth) replayed to the final table, and the peak of the
// last growth, when the old table and the new one are both alive (a sparse
// table frees its old groups as it moves them, so its peak is its size).
// It is a model of another library, so it is marked estimated.
func (Driver) Estimate(run *experiments.DriverRun, rows int64) experiments.Estimate {
	r, _ := FindReference(run.Layout)
	distinct := run.ExpectedDistinct(rows)
	g := r.growth
	cell := int64(core.PaddedCellBytes(run.Key, run.Value))
	cells := func(n int64) int64 { // cells of a table that holds n
		need := int64(math.Ceil(float64(n) / g.mlf))
		switch {
		case g.groupCells > 0:
			return nextPow2((need+g.groupCells-1)/g.groupCells) * g.groupCells
		case g.ctrlBytes > 0: // capacity 2^k - 1
			return nextPow2(need+1) - 1
		}
		return max(nextPow2(need), 32)
	}
	tableBytes := func(c, n int64) int64 {
		if g.sparse {
			return core.SaturatingAdd(core.SaturatingMul(n, cell), core.SaturatingMul((c+47)/48, 16))
		}
		b := core.SaturatingMul(c+g.tailCells, cell+g.cellExtra)
		if g.groupCells > 0 {
			b = core.SaturatingAdd(b, core.SaturatingMul(c/g.groupCells, g.groupMeta))
		}
		return core.SaturatingAdd(b, core.SaturatingMul(c+16, g.ctrlBytes))
	}
	c := cells(distinct)
	final := tableBytes(c, distinct)
	peak := final
	if !g.sparse && c > 32 {
		peak = core.SaturatingAdd(final, tableBytes(c/2, distinct))
	}
	e := experiments.Estimate{
		Layout: r.Name, Rows: rows, Distinct: distinct, BucketCount: c,
		FinalBytes:      final,
		TablePeakBytes:  dict.ScaleBytes(peak, g.allocator),
		AllocatorFactor: g.allocator,
		// The worker holds one frame of rows and one chunk of keys; the
		// lab's own loader runs in this process.
		LoaderBytes: int64(worker.FrameRows * (run.Key.Size + run.Value.Size)),
		Estimated:   true,
	}
	if !run.Config.NoRead && !run.Source.IsSynthetic() {
		// This process lists the file's keys for the read order.
		e.ReadBytes = core.SaturatingMul(max(rows, distinct), int64(run.Key.Size))
	}
	e.PeakBytes = max(core.SaturatingAdd(e.TablePeakBytes, e.LoaderBytes), core.SaturatingAdd(dict.ScaleBytes(final, g.allocator), e.ReadBytes))
	return e
}

// nextPow2 is the smallest power of two >= n (1 for n <= 1), saturating.
func nextPow2(n int64) int64 {
	if n <= 1 {
		return 1
	}
	if n > 1<<62 {
		return math.MaxInt64
	}
	return 1 << bits.Len64(uint64(n-1))
}
