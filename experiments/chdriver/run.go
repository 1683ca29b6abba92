package chdriver

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/dict/alloc"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
	"github.com/packlab/packlab/experiments/worker"
)

// A ClickHouse dictionary's run, the lab's side (the worker's is
// reference/chdb/worker.cpp):
//
//	parent (this process)                   worker: packlab-ch (ClickHouse inside)
//	  make the run's folder; start worker
//	  the job line: dir, ddl, types  ------> chdb_connect(--path=dir/db --user_files_path=dir/files)
//	  [u32 n][n keys][n values] ...  ------> written to dir/files/rows.bin (RowBinary)
//	  [u32 0]                        ------> CREATE DICTIONARY; SYSTEM RELOAD DICTIONARY (timed);
//	                                         system.dictionaries; JEMALLOC PURGE; count + checksum
//	  [u64 hits][u64 0][u32 n][keys] ------> a Memory table of the keys in the lab's order;
//	                                         sum(dictGet) with max_threads 1, then every thread
//	  relay progress, keep the result <----- {"progress":...} ... {"result":...}
//
// The frames are the engine's (experiments.DriverRun.Feed), so ClickHouse loads exactly the
// rows packlab's layouts load; the worker checks ClickHouse's count and
// checksum against what it wrote, and the lab checks the rows against what
// it sent. The folder is removed by the worker, and again here after a
// crash.

// chJob is packlab-ch's job line.
type chJob struct {
	Protocol     int    `json:"protocol"`
	Layout       string `json:"layout"`
	KeyBytes     int    `json:"key_bytes"`
	ValueBytes   int    `json:"value_bytes"`
	DictKeyBytes int    `json:"dict_key_bytes"`
	DictKeyType  string `json:"dict_key_type"`
	ValueType    string `json:"value_type"`
	ComplexKey   bool   `json:"complex_key"`
	TotalRows    int64  `json:"total_rows"` // -1 when the source cannot know
	NoRead       bool   `json:"no_read"`
	Reload       bool   `json:"reload"` // reload once after the load (the last repeat only): a reload's peak
	ReadThreads  int    `json:"read_threads"`
	Dir          string `json:"dir"`
	DDL          string `json:"ddl"`
	Prepare      string `json:"prepare,omitempty"` // writes the source file with every attribute (attributes.go)
	ValueColumn  string `json:"value_column"`      // the first attribute's column: value, or the name given
	// A String or tuple key (key.go): the read's table's key columns, each
	// from the lab's key, the lab's key from them, and dictGet's key.
	KeyColumns string `json:"key_columns,omitempty"`
	KeySelect  string `json:"key_select,omitempty"`
	KeyCheck   string `json:"key_check,omitempty"`
	KeyArgs    string `json:"key_args,omitempty"`
}

// chReadThreads is max_threads for the read with every thread.
func chReadThreads() int { return max(runtime.NumCPU(), 1) }

// Measure loads and reads r's ClickHouse dictionary over its source in a fresh
// packlab-ch process.
func (Driver) Measure(ctx context.Context, r *experiments.DriverRun, progress func(worker.Progress)) (result.Result, error) {
	st := Status()
	if !st.Available {
		return result.Result{}, fmt.Errorf("unavailable: %s", st.Problem)
	}
	if r.Config.MissRate != 0 {
		return result.Result{}, fault.Errorf("ClickHouse's dictionaries are read with loaded keys only: {miss_rate} 0")
	}
	d, _ := dict.FindClickHouseDictionary(r.Layout)
	removeStaleFolders(os.TempDir())
	dir, err := os.MkdirTemp("", folderPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return result.Result{}, fmt.Errorf("making ClickHouse's folder: %s", source.PathErrorReason(err))
	}
	defer os.RemoveAll(dir) // the worker removes it too; after a crash this does
	job, ddl, clause := chJobFor(r, d, dir)
	name := "ClickHouse's worker (" + st.Path + ")"
	// The worker runs in dir/files: embedded ClickHouse resolves a FILE
	// source's path against its working folder, and refuses one outside it.
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o700); err != nil {
		return result.Result{}, fmt.Errorf("making ClickHouse's folder: %s", source.PathErrorReason(err))
	}
	if fileAttributes(r) {
		if err := r.WriteFileAttributes(ctx, d.KeyType(r.Key).Size, filepath.Join(files, chAttributesFile), progress); err != nil {
			return result.Result{}, err
		}
	}
	cmd := exec.CommandContext(ctx, st.Path)
	cmd.Dir = files
	res, err := worker.Run(ctx, cmd, job, r.Feed, progress, name, "rebuild it with: "+BuildCommand)
	if err != nil {
		return result.Result{}, err
	}
	rows, sum := r.Sent()
	if res.Rows != rows {
		return result.Result{}, fmt.Errorf("ClickHouse's worker wrote %d rows, the lab sent %d", res.Rows, rows)
	}
	ch := res.ClickHouse
	if ch == nil {
		return result.Result{}, fmt.Errorf("%s gave a result without ClickHouse's figures; rebuild it with: %s", name, BuildCommand)
	}
	if res.Duplicates == 0 && !ch.KeyCut && res.Checksum != sum {
		return result.Result{}, fmt.Errorf("ClickHouse's dictionary has checksum %s, the %d distinct rows the lab sent %s", res.Checksum, rows, sum)
	}
	fillClickHouseResult(&res, r, d, clause, ddl)
	return res, nil
}

// fileAttributes reports whether r's attributes after the first come from
// its file's columns.
func fileAttributes(r *experiments.DriverRun) bool { return len(r.Source.Columns) > 0 }

// chJobFor is packlab-ch's job line for dictionary d over p's rows in dir,
// the CREATE DICTIONARY it runs and its LAYOUT clause.
func chJobFor(r *experiments.DriverRun, d dict.ClickHouseDictionary, dir string) (job []byte, ddl, clause string) {
	c := r.Config
	total := int64(-1)
	if r.Source.IsSynthetic() {
		total = c.Rows
	}
	clause = d.Clause(c.Shards, c.MaxLoadFactor)
	if span, ok := flatKeySpan(r.Source, c.Rows); d.Flat() && ok {
		clause = dict.FlatClause(span)
	}
	dictKey := d.KeyType(r.Key)
	var derived *keySQL
	if d.ComplexKey && r.DictKey.Derived() {
		q := deriveKey(r.DictKey)
		derived = &q
	}
	source, prepare := chSourceFile, ""
	if len(r.Attributes) > 1 || derived != nil {
		source = chAttributesFile // written by ClickHouse from the lab's rows, or by the lab from a file
		if !fileAttributes(r) {
			prepare = attributesSQL(chAttributesFile, chSourceFile, dictKey, derived, r.AttributeNames, r.Attributes)
		}
	}
	keyNames, keyTypes := []string{"key"}, []string{dictKey.Name}
	if derived != nil {
		keyNames, keyTypes = derived.names, derived.types
	}
	ddl = dict.KeyDictionaryDDL(chDictName, keyNames, keyTypes, dict.AttributeColumns(r.AttributeNames, r.Attributes),
		fmt.Sprintf("SOURCE(FILE(path '%s' format 'RowBinary'))", source), clause)
	j := chJob{
		Protocol: chProtocol, Layout: d.Name,
		KeyBytes: r.Key.Size, ValueBytes: r.Value.Size,
		DictKeyBytes: dictKey.Size, DictKeyType: dictKey.Name, ValueType: r.Value.Name, ComplexKey: d.ComplexKey,
		TotalRows: total, NoRead: c.NoRead, Reload: r.LastRepeat, ReadThreads: chReadThreads(), Dir: dir, DDL: ddl, Prepare: prepare, ValueColumn: r.AttributeNames[0],
	}
	if derived != nil {
		j.KeyColumns, j.KeySelect, j.KeyCheck, j.KeyArgs = derived.columns(), strings.Join(derived.exprs, ", "), derived.check, derived.args
	}
	job, _ = json.Marshal(j)
	return job, ddl, clause
}

// fillClickHouseResult fills in what the lab knows of a ClickHouse run
// beside what the worker measured: the engine's part (FillResult), the
// setup, the run's shape, and packlab's model of the dictionary.
func fillClickHouseResult(res *result.Result, r *experiments.DriverRun, d dict.ClickHouseDictionary, clause, ddl string) {
	r.FillResult(res)
	if len(r.Attributes) > 1 {
		res.Attributes = config.AttributesText(r.Config.Attributes, r.Attributes)
		res.AttributeColumns = r.Source.ColumnLabels()
	}
	res.Shards = r.Config.Shards
	if d.TakesMaxLoadFactor() {
		res.MaxLoadFactor = cmp.Or(r.Config.MaxLoadFactor, core.DefaultMaxLoadFactor)
	}
	res.ClickHouseLayout = clause
	res.ClickHouse.DDL = ddl
	fillClickHouseModel(res, d, r.Attributes, r.Options())
	if len(r.Attributes) == 1 {
		lo, hi := r.DictKey.SerializedBytes()
		if len(r.DictKey.Parts) == 0 {
			lo, hi = r.Key.Size, r.Key.Size
		}
		fillClickHouseBreakdown(res, d, float64(lo+hi)/2, r.Value)
	} else {
		fillAttributesBreakdown(res, d, r.AttributeNames, r.Attributes)
	}
}

// fillClickHouseModel puts packlab's computed bytes for d's dictionary of
// res's rows beside ClickHouse's: bytes_allocated where ClickHouse counts
// the whole dictionary, its memory tracker's gain where it does not
// (HASHED_ARRAY's key index, #118641).
func fillClickHouseModel(res *result.Result, d dict.ClickHouseDictionary, attrs []dict.Attribute, opt core.Options) {
	ch := res.ClickHouse
	value := attrs[0].Type
	model := dict.AttributesBytes(d, res.KeyType, attrs, res.ElementCount, res.Rows, opt, res.Shards)
	if span, ok := flatSpanOf(res); d.Flat() && ok {
		model = dict.FlatBytes(attrs, span, res.ElementCount)
		ch.ModelReloadPeakBytes = dict.FlatMemory(attrs, span, res.ElementCount).ReloadPeakBytes
	}
	if !d.ComplexKey && !d.Flat() {
		model -= dict.SparseUncounted(d, attrs, res.ElementCount, opt, res.Shards)
	}
	ch.ModelBytes = model
	measured := res.BytesAllocated
	ch.ComparedWith = "bytes_allocated"
	if d.Model == core.LayoutHashedArray {
		measured = ch.TrackedBytes
		ch.ComparedWith = "tracked_bytes"
		ch.Note = fmt.Sprintf("ClickHouse %s's bytes_allocated (%s) leaves out its key-to-row index (fixed upstream in ClickHouse PR #118641): compared with what its memory tracker gained over the load (%s) instead",
			ch.Version, text.Bytes(res.BytesAllocated), text.Bytes(ch.TrackedBytes))
	}
	if !d.ComplexKey && !d.Flat() { // the reload's model: the plan's (plan.go's candidates)
		o := opt
		if !d.TakesMaxLoadFactor() {
			o.MaxLoadFactor = 0
		}
		m := dict.ClickHouseTableMemory(d.Table(value), value, res.ElementCount, o, res.Shards)
		if len(attrs) > 1 {
			m = dict.ClickHouseAttributesMemory(d.Model, attrs, res.ElementCount, o, res.Shards)
		}
		if m != nil {
			ch.ModelReloadPeakBytes = m.ReloadPeakBytes
		}
	}
	if slices.ContainsFunc(attrs, func(a dict.Attribute) bool { return d.Table(a.Type) == core.LayoutSparse }) {
		ch.Note = fmt.Sprintf("ClickHouse's bytes_allocated for sparse_hash_map is its estimate of the pairs alone (ClickHouse PR #22867), and packlab's figure is the same estimate: the process held %s after a purge", text.Bytes(ch.RSSPurgedBytes))
	}
	if model > 0 {
		ch.DifferencePercent = math.Round(float64(measured-model)/float64(model)*1e4) / 100
	}
}

// clickHouseBaselineBytes is packlab-ch's RSS with ClickHouse started,
// before the dictionary loads, and what its read's Memory table and
// queries add (measured here, 6 Dec 2026: 203-213 MB before the load, a
// peak of 230-245 MB over loads of 1e5 rows whose tables hold 8-17 MB; chDB
// 26.7, most of it the library's mapped code): the guard adds it to a run.
const clickHouseBaselineBytes = 224 << 20

// Estimate is the guard's prediction of a ClickHouse run: the
// dictionary's first-load peak by ClickHouse's growth (dict.ClickHouseTableMemory:
// jemalloc keeps the freed tables through the load), the worker's
// ClickHouse, and the read's column of keys. It is a model of another
// program, so it is marked estimated.
func (Driver) Estimate(r *experiments.DriverRun, rows int64) experiments.Estimate {
	d, _ := dict.FindClickHouseDictionary(r.Layout)
	c := r.Config
	distinct := r.ExpectedDistinct(rows)
	opt := r.Options()
	if !d.TakesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	final := dict.AttributesBytes(d, r.KeyName(), r.Attributes, distinct, rows, opt, c.Shards)
	// The run reloads once: the serving dictionary beside a new one at its
	// first-load peak; with several attributes, each attribute's table's
	// (HASHED_ARRAY's index once).
	peak := core.SaturatingMul(final, 3)
	if span, ok := flatKeySpan(r.Source, rows); d.Flat() && ok {
		m := dict.FlatMemory(r.Attributes, span, distinct)
		final, peak = m.SteadyBytes, m.ReloadPeakBytes
	} else if m := dict.ClickHouseAttributesMemory(d.Model, r.Attributes, distinct, opt, c.Shards); m != nil && !d.ComplexKey {
		peak = max(m.ReloadPeakBytes, final)
	}
	// RSS holds what was written of the String arenas: a chunk's unwritten
	// tail is never touched (bytes_allocated counts whole chunks), and a
	// reload holds two arenas.
	if unwritten := dict.StringArenaBytes(r.Attributes, distinct, c.Shards) - dict.StringBytes(r.Attributes, distinct); unwritten > 0 {
		final = max(final-unwritten, 0)
		peak = max(peak-2*unwritten, final)
	}
	e := experiments.Estimate{
		Layout: d.Name, Rows: rows, Distinct: distinct,
		FinalBytes:      final,
		TablePeakBytes:  peak,
		AllocatorFactor: 1,
		// The lab's side: its frames, and a file's cells in the blocks it
		// feeds and writes ClickHouse's source from (as a row layout's load holds them).
		LoaderBytes: core.SaturatingAdd(core.SaturatingAdd(clickHouseBaselineBytes, int64(worker.FrameRows*(r.Key.Size+r.Value.Size))),
			dict.FeedCellsHeapBytes(r.Attributes, worker.FrameRows, rows)),
		ReloadPeakBytes: dict.ReloadPeak(final, peak),
		Estimated:       true,
	}
	if !c.NoRead {
		// The read's keys: a Memory table in the worker, and this process's
		// list of a file's keys.
		e.ReadBytes = core.SaturatingMul(max(rows, distinct), int64(d.KeyType(r.Key).Size))
		if lo, hi := r.DictKey.SerializedBytes(); r.DictKey.Derived() {
			e.ReadBytes = core.SaturatingMul(max(rows, distinct), int64(hi+lo)/2) // its columns, a String's offset beside its bytes
		}
		if !r.Source.IsSynthetic() {
			e.ReadBytes = core.SaturatingAdd(e.ReadBytes, core.SaturatingMul(max(rows, distinct), int64(r.Key.Size)))
		}
	}
	e.PeakBytes = max(core.SaturatingAdd(e.TablePeakBytes, e.LoaderBytes),
		core.SaturatingAdd(core.SaturatingAdd(final, clickHouseBaselineBytes), e.ReadBytes))
	return e
}

// Notes says, for each run of ClickHouse's own dictionaries, what
// ClickHouse reported beside packlab's figure, and the memory around it, in
// one line each (and its note, where ClickHouse's figure cannot be taken as
// it is); then once how these runs are made.
func (Driver) Notes(results []result.Result) []string {
	var notes []string
	labels := result.TableSettings(results)
	for i, r := range results {
		ch := r.ClickHouse
		if ch == nil {
			continue
		}
		measured := r.BytesAllocated
		if ch.ComparedWith == "tracked_bytes" {
			measured = ch.TrackedBytes
		}
		line := fmt.Sprintf("%s: ClickHouse %s, %s: %s %s, packlab computes %s (%+.2f %%); RSS %s right after the load, %s once jemalloc gave its free pages back (ClickHouse's own %s before the load taken off)",
			labels[i], ch.Version, r.ClickHouseLayout, ch.ComparedWith, text.Thousands(measured), text.Thousands(ch.ModelBytes), ch.DifferencePercent,
			text.Bytes(r.RSSBytes), text.Bytes(ch.RSSPurgedBytes), text.Bytes(ch.BaselineRSSBytes))
		if ch.ReloadPeakRSSBytes > 0 {
			line += "; a reload peaked at " + text.Bytes(ch.ReloadPeakRSSBytes)
			if m := ch.ModelReloadPeakBytes; m > 0 {
				line += fmt.Sprintf(" (the plan's model %s, %+.1f %%)", text.Bytes(m), float64(ch.ReloadPeakRSSBytes-m)/float64(m)*100)
			}
		}
		if ch.ReadAllThreadsRowsPerSecond > 0 {
			line += fmt.Sprintf("; read %.1f M rows/s with max_threads %d", ch.ReadAllThreadsRowsPerSecond/1e6, ch.ReadThreads)
		}
		notes = append(notes, line)
		if ch.Note != "" {
			notes = append(notes, r.Layout+": "+ch.Note)
		}
		if r.Attributes != "" {
			from := "the others ClickHouse derives from the key as it writes the source file"
			if len(r.AttributeColumns) > 0 {
				from = "the others read from the file's columns " + strings.Join(r.AttributeColumns, ", ") + ", their Strings' lengths and NULLs the file's"
			}
			notes = append(notes, r.Layout+": attributes "+r.Attributes+" ("+attributesStructure(r.Layout)+"); the first is the row's value, "+from)
		}
		if ch.KeyCut {
			notes = append(notes, r.Layout+": a simple key is UInt64 in ClickHouse: these "+r.KeyType+" keys were cut to their low 64 bits (the COMPLEX_KEY_ layouts keep them whole)")
		}
	}
	if len(notes) > 0 {
		notes = append(notes, "the ch_ layouts are ClickHouse itself (chDB), loading the lab's rows from a file (SOURCE(FILE)) and read with dictGet on one thread (max_threads 1); "+
			"its RSS right after a load holds the buffers its growth freed until jemalloc gives them back")
	}
	return notes
}

// fillClickHouseBreakdown splits ClickHouse's bytes_allocated into the
// lab's parts where the dictionary's cells are known: HASHED (padded cells
// of the key as ClickHouse keeps it and the value), SPARSE_HASHED as
// PackedHashMap (packed cells) and COMPLEX_KEY_HASHED (a reference, the
// value and the saved hash in each cell, the keys in an arena). Payload is
// the user's pairs (a key's widening to UInt64 is padding), metadata the
// table's header and, for a complex key, the references and hashes; the
// arena's unused tail and the empty cells are empty bytes. HASHED_ARRAY and
// sparse_hash_map stay unsplit: ClickHouse's figure does not count the whole
// of them.
// fillAttributesBreakdown splits a simple-key HASHED or SPARSE_HASHED
// dictionary of several fixed-size attributes into its parts: a table per
// attribute, each of bucket_count cells of the key and that attribute, so
// the payload is the key once and every attribute, the key's other copies
// are key_copy_bytes, and each table's padding and empty cells are summed.
// HASHED_ARRAY's (its index is not in bytes_allocated), a String's (its
// arena) and a sparse_hash_map's (an estimate) are left unsplit.
func fillAttributesBreakdown(res *result.Result, d dict.ClickHouseDictionary, names []string, attrs []dict.Attribute) {
	n, cells := res.ElementCount, res.BucketCount
	if n <= 0 || cells < n || d.ComplexKey || d.Model == core.LayoutHashedArray {
		return
	}
	u64 := core.MustType("UInt64")
	var cellBytes, sizes int64
	each := make([]result.AttributeCell, len(attrs))
	for i, a := range attrs {
		t := d.Table(a.Type)
		if a.IsString() || a.Nullable || (t != core.LayoutHashed && t != core.LayoutPacked) {
			return
		}
		c := int64(core.PaddedCellBytes(u64, a.Type))
		if t == core.LayoutPacked {
			c = int64(core.PairBytes(u64, a.Type))
		}
		cellBytes += c
		sizes += int64(a.Size)
		each[i] = result.AttributeCell{Name: names[i], Type: a.Name, CellBytes: c, PaddingBytes: c - int64(u64.Size+a.Size)}
	}
	header := res.BytesAllocated - cells*cellBytes
	if header < 0 || header >= 4096*int64(len(attrs)) {
		return // not tables of bucket_count cells each: leave the figure whole
	}
	k := int64(u64.Size)
	res.PayloadBytes = n * (k + sizes)
	res.KeyCopyBytes = n * k * int64(len(attrs)-1)
	res.PaddingBytes = n*cellBytes - res.PayloadBytes - res.KeyCopyBytes
	res.EmptyBytes = (cells - n) * cellBytes
	res.MetadataBytes = header
	res.AttributeCells = each
}

func fillClickHouseBreakdown(res *result.Result, d dict.ClickHouseDictionary, keyBytes float64, value core.Type) {
	n := res.ElementCount
	if n <= 0 || res.BytesAllocated <= 0 {
		return
	}
	payload := n*int64(value.Size) + int64(float64(n)*keyBytes)
	switch t := d.Table(value); {
	case !d.ComplexKey && (t == core.LayoutHashed || t == core.LayoutPacked):
		u64 := core.MustType("UInt64")
		cell := int64(core.PaddedCellBytes(u64, value))
		if t == core.LayoutPacked {
			cell = int64(core.PairBytes(u64, value))
		}
		cells := res.BytesAllocated / cell // the header, a few cells' worth, counted as cells
		if b := res.BucketCount; b >= n && b*cell <= res.BytesAllocated && res.BytesAllocated-b*cell < 4096 {
			cells = b // n / system.dictionaries.load_factor
		}
		if cells < n {
			return
		}
		res.PayloadBytes = payload
		res.PaddingBytes = n*cell - payload
		res.EmptyBytes = (cells - n) * cell
		res.MetadataBytes = res.BytesAllocated - cells*cell
		res.SlotBytes = cell
	case d.ComplexKey && t == core.LayoutHashed:
		pair := (16 + int64(value.Size) + 7) &^ 7
		cell := pair + 8
		arena := alloc.ArenaBytes(n, keyBytes) // one shard's; several shards: each its own
		if res.Shards > 1 {
			per := (n + int64(res.Shards) - 1) / int64(res.Shards)
			arena = alloc.ArenaBytes(per, keyBytes) * int64(res.Shards)
		}
		keys := int64(float64(n) * keyBytes) // the keys as the arena holds them (a String's size too)
		cells := (res.BytesAllocated - arena) / cell
		if cells < n || arena < keys {
			return
		}
		res.PayloadBytes = payload
		res.MetadataBytes = n*24 + (res.BytesAllocated - arena - cells*cell) // reference and hash, the header
		res.PaddingBytes = n * (pair - 16 - int64(value.Size))
		res.EmptyBytes = (cells-n)*cell + (arena - keys)
		res.SlotBytes = cell
	}
}
