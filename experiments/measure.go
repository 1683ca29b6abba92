package experiments

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/rowstore"
	"github.com/packlab/packlab/experiments/worker"
	"github.com/pbnjay/memory"
)

// One measured load, in the process that will hold the map (a worker, or
// the caller with --in-process):
//
//	FreeOSMemory          a GC, then free pages returned: no garbage of
//	                      earlier work in the baseline (before the run)
//	baseline              VmRSS, live heap; VmHWM reset to VmRSS
//	load                  core.Load; every 100 ms a timeline point
//	                      (seconds, rows, RSS - baseline); every 10 ms the
//	                      peak sampler reads RSS (see peakSampler)
//	verify                count and checksum of the pairs against the load's
//	stats                 bytes_allocated and its breakdown, computed
//	memory                rss_bytes = VmRSS - baseline, heap_bytes = heap in
//	                      use - baseline, as they are: nothing is collected
//	                      or returned during or after the load
//	read                  core.Read: every key once in a random order
//	peak                  peak_rss_bytes = VmHWM - baseline, over load and read
//	close                 the map's slabs released (m.Close)
//
// The lab does nothing a program that imports core would not do: the
// tables keep their slabs outside the Go heap and release each old slab the
// moment a growth has moved it (core/slab.go), so their RSS is their
// computed bytes with no collection forced. gomap's memory is the Go
// runtime's to manage, and its RSS shows what the collector has not yet
// returned.

// timelineEvery is the period of the load's timeline samples.
const timelineEvery = 100 * time.Millisecond

// typedOps is the engine's typed code of one (key size, value size) pair:
// the measure, and the count before the runs. Types are dispatched once,
// by size, in opsFor: 5 x 5 = 25 instantiations cover the 15 x 15
// ClickHouse type pairs, since maps only see bits (config.SizeClass).
type typedOps interface {
	measure(ctx context.Context, r config.Run, progress func(worker.Progress)) (result.Result, error)
	// scan reads a source to its end without building a map: the rows it
	// has and the first malformed row, before any allocation.
	// A file's attribute columns are counted too (their bytes).
	scan(ctx context.Context, spec source.Spec, key, value core.Type, progress func(worker.Progress)) (st config.FileStats, err error)
}

type typed[K, V core.Bits] struct{}

// opsFor is the typed code of key's and value's sizes (config.SizeClass).
func opsFor(key, value core.Type) typedOps {
	return typedTable[config.SizeClass(key)][config.SizeClass(value)]
}

var typedTable = [5][5]typedOps{typedRow[uint8](), typedRow[uint16](), typedRow[uint32](), typedRow[uint64](), typedRow[core.U128]()}

func typedRow[K core.Bits]() [5]typedOps {
	return [5]typedOps{typed[K, uint8]{}, typed[K, uint16]{}, typed[K, uint32]{}, typed[K, uint64]{}, typed[K, core.U128]{}}
}

func (typed[K, V]) scan(ctx context.Context, spec source.Spec, key, value core.Type, progress func(worker.Progress)) (config.FileStats, error) {
	st := config.NewFileStats(len(spec.Columns))
	src, err := source.OpenContext[K, V](ctx, spec, key, value)
	if err != nil {
		return st, err
	}
	defer src.Close()
	cells, _ := src.(core.CellSource)
	var b core.Block[K, V]
	start, last := time.Now(), time.Now()
	blockRows := config.FirstBlockRows(cells)
	for {
		if now := time.Now(); progress != nil && now.Sub(last) >= worker.CountProgressEvery {
			last = now
			progress(worker.Progress{Phase: worker.PhaseCount, Rows: st.Rows, TotalRows: -1, Seconds: now.Sub(start).Seconds()})
		}
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("checking %s cancelled after %d rows: %w", spec.Path, st.Rows, err)
		}
		before := st.Bytes()
		err := src.Next(&b, blockRows)
		st.Count(b.Len(), cells)
		blockRows = config.NextBlockRows(blockRows, b.Len(), st.Bytes()-before)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return st, err
		}
	}
}

func (typed[K, V]) measure(ctx context.Context, r config.Run, progress func(worker.Progress)) (result.Result, error) {
	src, err := config.Open[K, V](ctx, r)
	if err != nil {
		return result.Result{}, err
	}
	defer src.Close()
	rs := rowStoreFor(r) // a row's Strings and wide rows, beside the table
	defer rs.Close()
	src = rowstore.Source(src, rs)

	heap0, rss0, hwm0 := machine.Baseline()

	// core.Load calls Progress from this goroutine: no lock needed.
	timeline := []result.TimelinePoint{{Seconds: 0, Rows: 0, RSSBytes: 0}}
	rel := func(rss int64) int64 {
		if rss < 0 || rss0 < 0 {
			return 0
		}
		return rss - rss0
	}
	report := func(phase string, rows int64, elapsed time.Duration, rss int64) {
		if progress != nil {
			progress(worker.Progress{Layout: r.Layout.String(), Phase: phase, Rows: rows, TotalRows: src.Rows(), Seconds: elapsed.Seconds(), RSSBytes: rel(rss)})
		}
	}
	threads, restore := applySettings(r.Config)
	defer restore()
	lc := r.LoadConfig()
	lc.ProgressEvery = timelineEvery
	lc.Progress = func(lp core.LoadProgress) {
		rss := machine.CurrentRSS()
		timeline = append(timeline, result.TimelinePoint{Seconds: lp.Elapsed.Seconds(), Rows: lp.Rows, RSSBytes: rel(rss)})
		report(worker.PhaseLoad, lp.Rows, lp.Elapsed, rss)
	}
	started := time.Now()
	rec := machine.StartPeakSampler(rss0)
	kernel0 := machine.KernelCPU()
	m, lr, err := core.Load(ctx, src, lc)
	kernel1 := machine.KernelCPU()
	sampledPeak := rec.Stop()
	if err != nil {
		return result.Result{}, err
	}
	defer m.Close()
	if err := m.Verify(lr); err != nil {
		return result.Result{}, err
	}
	st := m.Stats()
	rss1, _ := machine.StatusMemory()
	heap1 := machine.HeapInUse()

	var rr core.ReadReport
	if !r.Config.NoRead {
		report(worker.PhaseRead, lr.Rows, time.Duration(lr.Seconds*float64(time.Second)), machine.CurrentRSS())
		if rr, err = core.ReadVisit(ctx, m, src, core.ReadOptions{Seed: r.Config.Seed, MissRate: r.Config.MissRate}, rowstore.CopyRows[V](rs)); err != nil {
			return result.Result{}, err
		}
	}
	_, hwm1 := machine.StatusMemory()
	// The peak is at least every RSS this run read: VmHWM is updated only at
	// some events (an munmap, not the runtime's MADV_DONTNEED), so read after
	// the collector returned pages it can be below the RSS read before.
	sampledPeak = max(sampledPeak, machine.CurrentRSS(), rss1)
	res := resultOf(r, st, lr, rr, lc)
	addRowBytes(&res, rowstore.Count(rs, m, lr.Duplicates, res.ElementCount))
	res.StartedAt = started.UTC().Format(time.RFC3339)
	res.Threads = threads
	res.HeapBytes = max(heap1-heap0, 0)
	res.RSSBytes = max(rel(rss1), 0)
	res.PeakRSSBytes = max(machine.PeakOf(rss0, hwm0, hwm1, sampledPeak), 0)
	res.LoadKernelSeconds = machine.KernelSeconds(kernel0, kernel1)
	res.Timeline = timeline
	if last := res.Timeline[len(res.Timeline)-1]; last.Rows != lr.Rows {
		res.Timeline = append(res.Timeline, result.TimelinePoint{Seconds: lr.Seconds, Rows: lr.Rows, RSSBytes: last.RSSBytes})
	}
	report(worker.PhaseDone, lr.Rows, time.Duration(lr.Seconds*float64(time.Second)), rss1)
	return res, nil
}

// applySettings gives this process the run's threads and huge pages, and
// returns the threads it runs with and what puts them back.
func applySettings(c config.Config) (threads int, restore func()) {
	procs, huge := runtime.GOMAXPROCS(0), core.HugePages()
	if c.Threads > 0 {
		runtime.GOMAXPROCS(c.Threads)
	}
	if c.HugePages != "" { // else core's own: on, or PACKLAB_HUGEPAGES=off
		on, _ := config.HugePagesOn(c.HugePages)
		core.SetHugePages(on)
	}
	return runtime.GOMAXPROCS(0), func() {
		runtime.GOMAXPROCS(procs)
		core.SetHugePages(huge)
	}
}

// resultOf is run r's Result from what its table, load and read reported;
// measure adds what it measured around them (memory, kernel time, the
// timeline).
func resultOf(r config.Run, st core.Stats, lr core.LoadReport, rr core.ReadReport, lc core.LoadConfig) result.Result {
	c, l := r.Config, r.Layout.Core
	res := result.Result{
		Layout:            r.Layout.String(),
		KeyType:           r.Key.Name,
		ValueType:         r.Value.Name,
		Rows:              lr.Rows,
		Shards:            c.Shards,
		MaxLoadFactor:     dict.EffectiveMLF(l, c.MaxLoadFactor),
		Source:            r.Spec.String(),
		Seed:              c.Seed,
		ClickHouseLayout:  dict.ResultLayoutClause(l, r.Key, r.Value, c.Shards, c.MaxLoadFactor),
		ElementCount:      st.ElementCount,
		InformationLimit:  result.InformationLimit(r.Key, r.Pairs(), st.ElementCount),
		Duplicates:        lr.Duplicates,
		SkippedRows:       lr.Skipped,
		BucketCount:       st.BucketCount,
		LoadFactor:        st.LoadFactor,
		BytesAllocated:    st.BytesAllocated,
		PayloadBytes:      st.PayloadBytes,
		PaddingBytes:      st.PaddingBytes,
		EmptyBytes:        st.EmptyBytes,
		MetadataBytes:     st.MetadataBytes,
		Estimated:         st.Estimated,
		Checksum:          worker.Checksum(lr.Checksum),
		LoadSeconds:       lr.Seconds,
		ReadSeconds:       rr.Seconds,
		ReadRowsPerSecond: rr.RowsPerSecond,
		FoundRate:         rr.FoundRate,
		Repeats:           1,
		ShardSelect:       cmp.Or(string(lc.ShardSelect), string(core.ShardSelectAuto)),
		BlockRows:         cmp.Or(lc.BlockRows, core.DefaultBlockRows),
		HugePages:         hugePagesName(),
		Preallocate:       c.Preallocate,
		Workers:           make([]result.Worker, len(lr.Workers)),
		Producer:          result.Producer{ReadSeconds: lr.Producer.ReadSeconds, SplitSeconds: lr.Producer.SplitSeconds, WaitSeconds: lr.Producer.WaitSeconds},
		Isolated:          false,
		Runtime:           RuntimeName(),
		Host:              hostInfo(),
	}
	if r.Layout.Row { // packlab's own: no ClickHouse layout keeps a row
		res.Attributes, res.ClickHouseLayout = config.AttributesText(c.Attributes, r.Attrs), ""
		res.AttributeColumns = r.FileColumns()
	}
	if lr.Seconds > 0 {
		res.LoadRowsPerSecond = float64(lr.Rows) / lr.Seconds
	}
	for i, w := range lr.Workers {
		res.Workers[i] = result.Worker{Shard: w.Shard, Rows: w.Rows, BusySeconds: w.BusySeconds, WaitSeconds: w.WaitSeconds, RowsPerSecond: w.RowsPerSecond}
	}
	return res
}

func RuntimeName() string {
	if runtime.GOOS == "js" {
		return "browser"
	}
	return "native"
}

var (
	hostOnce sync.Once
	host     result.Host
)

func hostInfo() result.Host {
	hostOnce.Do(func() {
		host = result.Host{CPUs: runtime.NumCPU(), TotalMemory: memory.TotalMemory(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	})
	return host
}

// hugePagesName is Result.HugePages for the tables made now.
func hugePagesName() string {
	switch {
	case !core.HugePagesSupported:
		return "none"
	case core.HugePages():
		return "on"
	}
	return "off"
}

// rowStoreFor is r's row store (rowstore.New): nil when r is not a row's
// run or its row has no Strings, no Nullables and fits in a cell.
func rowStoreFor(r config.Run) *rowstore.Store {
	if !r.Layout.Row {
		return nil
	}
	cells, from := 0, 0
	if r.Spec.Kind == source.File && r.Spec.NoValueColumn() {
		cells, from = len(r.Spec.Columns), r.CellsFrom()
	}
	return rowstore.New(r.Attrs, r.Value.Size, cells, from)
}

// addRowBytes adds a row store's arena and row array to r (rowstore.Count).
func addRowBytes(r *result.Result, b rowstore.Bytes) {
	r.BytesAllocated += b.Allocated
	r.PayloadBytes += b.Payload
	r.EmptyBytes += b.Empty
	r.MetadataBytes += b.Metadata
}
