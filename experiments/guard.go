package experiments

import (
	"fmt"
	"math"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/text"
)

// WasmMemoryLimit is a browser tab's memory in all, the guard's total
// there: one wasm32 linear memory, 2^32 bytes.
const WasmMemoryLimit = machine.WasmMemoryLimit

// The memory guard: before anything is allocated, predict how much memory
// each measured run will hold at its peak and refuse a run that will not fit
// in the machine's available memory (unless forced), with one line giving
// the prediction and what is available.
//
// A run's peak above its process's baseline is the larger of
//
//	load:  the tables' peak (core.Predict: the last growth, every shard
//	       growing at once; the new slab alone where slabs grow in place,
//	       old and new where they are copied; a row layout's arena and row
//	       array) + the loader's blocks (a file's attribute cells too:
//	       dict.RowRunBytes)
//	read:  the tables' final size + the read phase's key list (only for a
//	       file source: synthetic sources compute keys instead of listing)
//	       + a row layout's copy of the rows it finds
//
// and the guard adds the baseline of the fresh worker process (measured: this
// process's own resident memory, a Go runtime like the worker's, once the
// pass over a file has given its blocks back) when the run is isolated.
// That peak is what the worker's peak_rss_bytes measures, and tests hold
// the two within 10 % for hashed, packed and hashed_array
// (TestPredictedPeakMatchesMeasured) and within 15 % for the row layouts
// over a file of 2-6 KB Strings (TestPredictedPeakLongStrings); the table
// of measured peaks is docs/reliability.md's.

// Estimate is the predicted memory of one layout's measured run.
type Estimate struct {
	Layout          string  `json:"layout"`
	Rows            int64   `json:"rows"`             // rows the source gives
	Distinct        int64   `json:"distinct"`         // distinct keys expected (an upper bound for zipf)
	BucketCount     int64   `json:"bucket_count"`     // cells after the load
	FinalBytes      int64   `json:"final_bytes"`      // bytes_allocated after the load
	TablePeakBytes  int64   `json:"table_peak_bytes"` // the tables at their largest, during the last growth, x AllocatorFactor
	AllocatorFactor float64 `json:"allocator_factor"` // measured Go allocator overhead of the layout (see AllocatorFactor)
	LoaderBytes     int64   `json:"loader_bytes"`     // the loader's blocks in flight
	ReadBytes       int64   `json:"read_bytes"`       // the read phase's own allocations
	PeakBytes       int64   `json:"peak_bytes"`       // predicted peak_rss_bytes: max(load, read), above the baseline
	// ReloadPeakBytes is what a reload of this table would hold at its
	// peak (ReloadPeak): the serving table beside a new one at its
	// first-load peak. The guard checks the run, a first load, against the
	// memory available; this is the figure a service that reloads needs.
	ReloadPeakBytes int64 `json:"reload_peak_bytes"`
	Estimated       bool  `json:"estimated"`          // the layout's geometry is a model (sparse, gomap) or the key count a bound
	Reserved        int64 `json:"reserved,omitempty"` // keys the tables are reserved for (Config.Preallocate), 0 if they grow
}

// MemoryCheck is the guard's verdict on a whole job.
type MemoryCheck struct {
	Estimates      []Estimate `json:"estimates"`
	RuntimeBytes   int64      `json:"runtime_bytes"`   // baseline of a fresh worker process, when isolated
	NeedBytes      int64      `json:"need_bytes"`      // the largest run's peak + RuntimeBytes
	Largest        string     `json:"largest"`         // the layout of that run
	AvailableBytes int64      `json:"available_bytes"` // memory the kernel can hand out now; -1 if unknown
	// AvailableFrom says what bounds AvailableBytes: MemAvailable, or the
	// tightest cgroup memory limit less the cgroup's use (package experiments/internal/machine).
	AvailableFrom string `json:"available_from,omitempty"`
	TotalBytes    int64  `json:"total_bytes"` // installed memory; 0 if unknown
	Fits          bool   `json:"fits"`
	// RowsUnknown: the source is a stream, read once by the load, so its
	// rows are unknown and nothing was predicted (Fits is true).
	RowsUnknown bool `json:"rows_unknown,omitempty"`
}

// LargestEstimate is the estimate of the run that needs the most (Largest).
func (c MemoryCheck) LargestEstimate() Estimate {
	for _, e := range c.Estimates {
		if e.Layout == c.Largest {
			return e
		}
	}
	return Estimate{}
}

// MemoryError is a refusal by the guard (Verdict, its check of the job);
// its text is one line.
type MemoryError struct{ Verdict MemoryCheck }

func (e *MemoryError) Error() string { return e.Words(fault.Plain) }

// Words is the refusal with its advice's field named by name.
func (e *MemoryError) Words(name fault.Namer) string { return fault.Fields(e.text(), name) }

func (e *MemoryError) text() string {
	c := e.Verdict
	big := c.LargestEstimate()
	about := "about "
	switch {
	case c.NeedBytes == math.MaxInt64:
		about = "more than " // core.Predict's figures saturate there
	case big.Estimated:
		about = "at most about "
	}
	bound := ""
	if c.AvailableFrom != "" {
		bound = ", bounded by " + c.AvailableFrom
	}
	reserved := ""
	if big.Reserved > 0 {
		reserved = fmt.Sprintf(" reserved for %s rows by {preallocate}", text.Rows(big.Reserved))
		if big.Distinct < big.Reserved {
			reserved += fmt.Sprintf(", about %s distinct keys", text.Rows(big.Distinct))
		}
	}
	return fmt.Sprintf("not enough memory: %s at %s rows needs %s%s at its peak (tables %s%s + loader %s + read %s + runtime %s), but %s of %s is available%s (use {force} to run anyway)",
		c.Largest, text.Rows(big.Rows), about, text.Bytes(c.NeedBytes),
		text.Bytes(big.TablePeakBytes), reserved, text.Bytes(big.LoaderBytes), text.Bytes(big.ReadBytes), text.Bytes(c.RuntimeBytes),
		text.Bytes(c.AvailableBytes), text.Bytes(c.TotalBytes), bound)
}

// estimate predicts run r, of a layout of core's, whose source gives rows
// rows.
func estimate(r config.Run, rows int64) (Estimate, error) {
	c, l := r.Config, r.Layout.Core
	distinct, bound := source.ExpectedDistinct(r.Spec, r.Key, rows)
	var pr core.Prediction
	var err error
	var loadHeap, readHeap int64 // a row run's heap beside its table (dict.RowRunBytes)
	if r.Layout.Row {
		// The row's table and its Strings' arena, as the plan counts
		// them; a file's cells in the loader's block, and the read's copy
		// of the rows it finds beside the last block's cells, not yet
		// collected (dict.RowRunBytes).
		pr, err = dict.RowPrediction(l, r.Key, r.Attrs, distinct, r.Options, c.Shards)
		loadHeap, readHeap = dict.RowRunBytes(r.Attrs, c.BlockRows, rows, !c.NoRead)
	} else {
		pr, err = core.Predict(l, r.Key, r.Value, distinct, r.Options, c.Shards)
	}
	if err != nil {
		return Estimate{}, err
	}
	f := dict.AllocatorFactor(l)
	e := Estimate{
		Layout: r.Layout.String(), Rows: rows, Distinct: distinct, // packed_row, not its table's packed
		BucketCount: pr.BucketCount, FinalBytes: pr.FinalBytes,
		TablePeakBytes:  dict.ScaleBytes(pr.PeakBytes, f),
		AllocatorFactor: f,
		LoaderBytes:     loaderBytesOf(r, rows),
		Estimated:       pr.Estimated || bound,
		Reserved:        r.Options.Reserve,
	}
	if !c.NoRead && !r.Spec.IsSynthetic() {
		// core.Read lists the map's distinct keys and shuffles them.
		e.ReadBytes = core.SaturatingMul(distinct, int64(r.Key.Size))
	}
	e.LoaderBytes, e.ReadBytes = core.SaturatingAdd(e.LoaderBytes, loadHeap), core.SaturatingAdd(e.ReadBytes, readHeap)
	e.PeakBytes = max(core.SaturatingAdd(e.TablePeakBytes, e.LoaderBytes), core.SaturatingAdd(dict.ScaleBytes(e.FinalBytes, f), e.ReadBytes))
	e.ReloadPeakBytes = dict.ReloadPeak(dict.ScaleBytes(e.FinalBytes, f), core.SaturatingAdd(e.TablePeakBytes, e.LoaderBytes))
	return e, nil
}

// A reload holds two tables. ClickHouse builds a dictionary's new version
// while the old one serves (ExternalLoader: the new object replaces the old
// only once it has loaded; a failed load keeps the old): "during load
// dictionary uses double memory" (ClickHouse issue #71047); users with
// 200-500 GB dictionaries ask for shard-by-shard reloads (#45390); reloads
// fail on memory limits (#43503); update_field keeps its last block too
// (#39128). No setting avoids the second copy. A Go program that builds a
// new map and then swaps it in does the same. So a reload's peak is
//
//	the serving table (its steady bytes)
//	+ the new table at its first-load peak (its growth, and the loader's blocks)
//
// and the planner checks a budget against it unless asked to check the
// first load alone (PlanRequest.FirstLoadOnly).

// loaderBytesOf is what core.Load holds besides the tables: per shard up to
// Backlog+2 sub-blocks of ceil(BlockRows/shards) rows (queued, being
// inserted, being filled), plus with several shards the source block being
// split; a file source adds its read and decompression buffers. A source
// smaller than a block only ever fills that many rows.
func loaderBytesOf(r config.Run, rows int64) int64 {
	return dict.LoaderBytes(r.Key, r.Value, r.Config.Shards, r.Config.BlockRows, rows, !r.Spec.IsSynthetic())
}
