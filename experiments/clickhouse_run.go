package experiments

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
)

// A ClickHouse dictionary's run, the lab's side (the worker's is
// reference/chdb/worker.cpp):
//
//	parent (this process)                   child: packlab-ch (ClickHouse inside)
//	  make the run's folder; start child
//	  the job line: dir, ddl, types  ------> chdb_connect(--path=dir/db --user_files_path=dir/files)
//	  [u32 n][n keys][n values] ...  ------> written to dir/files/rows.bin (RowBinary)
//	  [u32 0]                        ------> CREATE DICTIONARY; SYSTEM RELOAD DICTIONARY (timed);
//	                                         system.dictionaries; JEMALLOC PURGE; count + checksum
//	  [u64 hits][u64 0][u32 n][keys] ------> a Memory table of the keys in the lab's order;
//	                                         sum(dictGet) with max_threads 1, then every thread
//	  relay progress, keep the result <----- {"progress":...} ... {"result":...}
//
// The frames are reference_run.go's (feed), so ClickHouse loads exactly the
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
	Reload       bool   `json:"reload"` // reload once after the load: a reload's peak
	ReadThreads  int    `json:"read_threads"`
	Dir          string `json:"dir"`
	DDL          string `json:"ddl"`
	Prepare      string `json:"prepare,omitempty"` // writes the source file with every attribute (attributes.go)
	ValueColumn  string `json:"value_column"`      // the first attribute's column: value, or the name given
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

// chReadThreads is max_threads for the read with every thread.
func chReadThreads() int { return max(runtime.NumCPU(), 1) }

// runClickHouse measures ClickHouse dictionary d over p's source in a
// fresh packlab-ch process.
func runClickHouse(ctx context.Context, p parsedConfig, d dict.ClickHouseDictionary, progress func(Progress)) (Result, error) {
	st := ClickHouseStatusNow()
	if !st.Available {
		return Result{}, fmt.Errorf("unavailable: %s", st.Problem)
	}
	if p.MissRate != 0 {
		return Result{}, fmt.Errorf("ClickHouse's dictionaries are read with loaded keys only: --miss-rate 0")
	}
	dir, err := os.MkdirTemp("", "packlab-ch-")
	if err != nil {
		return Result{}, fmt.Errorf("making ClickHouse's folder: %s", source.PathErrorReason(err))
	}
	defer os.RemoveAll(dir) // the worker removes it too; after a crash this does
	job, ddl, clause := chJobFor(p, d, dir)
	started := time.Now()
	var fr feedReport
	feed := func(ctx context.Context, w io.Writer) error {
		return opsFor(p.key, p.value).feed(ctx, p, w, &fr)
	}
	name := "ClickHouse's worker (" + st.Path + ")"
	// The worker runs in dir/files: embedded ClickHouse resolves a FILE
	// source's path against its working folder, and refuses one outside it.
	files := filepath.Join(dir, "files")
	if err := os.Mkdir(files, 0o700); err != nil {
		return Result{}, fmt.Errorf("making ClickHouse's folder: %s", source.PathErrorReason(err))
	}
	if p.fileAttributes() {
		fst, err := opsFor(p.key, p.value).writeFileAttributes(ctx, p, d.KeyType(p.key).Size, filepath.Join(files, chAttributesFile), progress)
		if err != nil {
			return Result{}, err
		}
		p.attrs = withFileColumns(p.attrs, fst)
	}
	cmd := exec.CommandContext(ctx, st.Path)
	cmd.Dir = files
	res, err := runChild(ctx, cmd, job, feed, progress, name, "rebuild it with: "+ClickHouseBuildCommand)
	if err != nil {
		return Result{}, err
	}
	if res.Rows != fr.rows {
		return Result{}, fmt.Errorf("ClickHouse's worker wrote %d rows, the lab sent %d", res.Rows, fr.rows)
	}
	ch := res.ClickHouse
	if ch == nil {
		return Result{}, fmt.Errorf("%s gave a result without ClickHouse's figures; rebuild it with: %s", name, ClickHouseBuildCommand)
	}
	if res.Duplicates == 0 && !ch.KeyCut && res.Checksum != checksumText(fr.sum) {
		return Result{}, fmt.Errorf("ClickHouse's dictionary has checksum %s, the %d distinct rows the lab sent %s", res.Checksum, fr.rows, checksumText(fr.sum))
	}
	res.StartedAt = startedAt(started)
	fillClickHouseResult(&res, p, d, fr, clause, ddl)
	return res, nil
}

// chJobFor is packlab-ch's job line for dictionary d over p's rows in dir,
// the CREATE DICTIONARY it runs and its LAYOUT clause.
func chJobFor(p parsedConfig, d dict.ClickHouseDictionary, dir string) (job []byte, ddl, clause string) {
	total := int64(-1)
	if p.spec.IsSynthetic() {
		total = p.Rows
	}
	clause = d.Clause(p.Shards, p.MaxLoadFactor)
	if span, ok := flatKeySpan(p.spec, p.Rows); d.Flat() && ok {
		clause = dict.FlatClause(span)
	}
	dictKey := d.KeyType(p.key)
	source, prepare := chSourceFile, ""
	if len(p.attrs) > 1 {
		source = chAttributesFile // written by ClickHouse from the lab's rows, or by the lab from a file
		if !p.fileAttributes() {
			prepare = attributesSQL(chAttributesFile, chSourceFile, dictKey, p.attrNames, p.attrs)
		}
	}
	ddl = dict.DictionaryDDL(chDictName, dictKey.Name, dict.AttributeColumns(p.attrNames, p.attrs),
		fmt.Sprintf("SOURCE(FILE(path '%s' format 'RowBinary'))", source), clause)
	job, _ = json.Marshal(chJob{
		Protocol: chProtocol, Layout: d.Name,
		KeyBytes: p.key.Size, ValueBytes: p.value.Size,
		DictKeyBytes: dictKey.Size, DictKeyType: dictKey.Name, ValueType: p.value.Name, ComplexKey: d.ComplexKey,
		TotalRows: total, NoRead: p.NoRead, Reload: true, ReadThreads: chReadThreads(), Dir: dir, DDL: ddl, Prepare: prepare, ValueColumn: p.attrNames[0],
	})
	return job, ddl, clause
}

// fillClickHouseResult fills in what the lab knows of a ClickHouse run
// beside what the worker measured: the setup, the source, the run's
// shape, and packlab's model of the dictionary.
func fillClickHouseResult(res *Result, p parsedConfig, d dict.ClickHouseDictionary, fr feedReport, clause, ddl string) {
	res.Layout = d.Name
	res.KeyType, res.ValueType = p.key.Name, p.value.Name
	if len(p.attrs) > 1 {
		res.Attributes = AttributesText(p.Attributes, p.attrs)
		res.AttributeColumns = p.spec.Columns
	}
	res.Shards = p.Shards
	if d.TakesMaxLoadFactor() {
		res.MaxLoadFactor = cmp.Or(p.MaxLoadFactor, core.DefaultMaxLoadFactor)
	}
	res.Source = p.spec.String()
	res.Seed = p.Seed
	res.SkippedRows = fr.skipped
	res.ClickHouseLayout = clause
	res.Producer = Producer{ReadSeconds: fr.readSeconds, WaitSeconds: fr.waitSeconds}
	res.Repeats = 1
	res.Threads = 1
	res.BlockRows = refsFrameRows
	res.Isolated = true
	res.Runtime = RuntimeName()
	res.Host = hostInfo()
	res.ClickHouse.DDL = ddl
	fillClickHouseModel(res, d, p.attrs, p.options())
	if len(p.attrs) == 1 {
		fillClickHouseBreakdown(res, d, p.key, p.value)
	} else {
		fillAttributesBreakdown(res, d, p.attrNames, p.attrs)
	}
}

// fillClickHouseModel puts packlab's computed bytes for d's dictionary of
// res's rows beside ClickHouse's: bytes_allocated where ClickHouse counts
// the whole dictionary, its memory tracker's gain where it does not
// (HASHED_ARRAY's key index, #118641).
func fillClickHouseModel(res *Result, d dict.ClickHouseDictionary, attrs []dict.Attribute, opt core.Options) {
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
			ch.Version, FormatBytes(res.BytesAllocated), FormatBytes(ch.TrackedBytes))
	}
	if !d.ComplexKey && !d.Flat() && len(attrs) == 1 { // the reload's model is one attribute's, so far
		o := opt
		if !d.TakesMaxLoadFactor() {
			o.MaxLoadFactor = 0
		}
		if m := dict.ClickHouseTableMemory(d.Table(value), value, res.ElementCount, o, res.Shards); m != nil {
			ch.ModelReloadPeakBytes = m.ReloadPeakBytes
		}
	}
	if slices.ContainsFunc(attrs, func(a dict.Attribute) bool { return d.Table(a.Type) == core.LayoutSparse }) {
		ch.Note = fmt.Sprintf("ClickHouse's bytes_allocated for sparse_hash_map is its estimate of the pairs alone (ClickHouse PR #22867), and packlab's figure is the same estimate: the process held %s after a purge", FormatBytes(ch.RSSPurgedBytes))
	}
	if model > 0 {
		ch.DifferencePercent = math.Round(float64(measured-model)/float64(model)*1e4) / 100
	}
}

// clickHouseBaselineBytes is packlab-ch's RSS with ClickHouse started,
// before the dictionary loads (measured here: 210-260 MB for chDB 26.7,
// most of it the library's mapped code): the guard adds it to a run.
const clickHouseBaselineBytes = 300 << 20

// estimateClickHouse is the guard's prediction of a ClickHouse run: the
// dictionary's first-load peak by ClickHouse's growth (dict.ClickHouseTableMemory:
// jemalloc keeps the freed tables through the load), the worker's
// ClickHouse, and the read's column of keys. It is a model of another
// program, so it is marked estimated.
func estimateClickHouse(p parsedConfig, d dict.ClickHouseDictionary, rows int64) Estimate {
	distinct, _ := expectedDistinct(p.spec, p.key, rows)
	opt := p.options()
	if !d.TakesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	final := dict.AttributesBytes(d, p.key.Name, p.attrs, distinct, rows, opt, p.Shards)
	// The run reloads once: the serving dictionary beside a new one at its
	// first-load peak; with several attributes, each attribute's table's
	// (HASHED_ARRAY's index counted once for each: the guard errs high).
	peak := core.SaturatingMul(final, 3)
	if span, ok := flatKeySpan(p.spec, rows); d.Flat() && ok {
		m := dict.FlatMemory(p.attrs, span, distinct)
		final, peak = m.SteadyBytes, m.ReloadPeakBytes
	} else if m := dict.ClickHouseAttributesMemory(d.Model, p.attrs, distinct, opt, p.Shards); m != nil && !d.ComplexKey {
		peak = max(m.ReloadPeakBytes, final)
	}
	e := Estimate{
		Layout: d.Name, Rows: rows, Distinct: distinct,
		FinalBytes:      final,
		TablePeakBytes:  peak,
		AllocatorFactor: 1,
		LoaderBytes:     core.SaturatingAdd(clickHouseBaselineBytes, int64(refsFrameRows*(p.key.Size+p.value.Size))),
		ReloadPeakBytes: dict.ReloadPeak(final, peak),
		Estimated:       true,
	}
	if !p.NoRead {
		// The read's keys: a Memory table in the worker, and this process's
		// list of a file's keys.
		e.ReadBytes = core.SaturatingMul(max(rows, distinct), int64(d.KeyType(p.key).Size))
		if !p.spec.IsSynthetic() {
			e.ReadBytes = core.SaturatingAdd(e.ReadBytes, core.SaturatingMul(max(rows, distinct), int64(p.key.Size)))
		}
	}
	e.PeakBytes = max(core.SaturatingAdd(e.TablePeakBytes, e.LoaderBytes),
		core.SaturatingAdd(core.SaturatingAdd(final, clickHouseBaselineBytes), e.ReadBytes))
	return e
}

// ClickHouseNotes says, for each run of ClickHouse's own dictionaries, what
// ClickHouse reported beside packlab's figure, and the memory around it, in
// one line each (and its note, where ClickHouse's figure cannot be taken as
// it is); then once how these runs are made.
func ClickHouseNotes(results []Result) []string {
	var notes []string
	labels := TableSettings(results)
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
			labels[i], ch.Version, r.ClickHouseLayout, ch.ComparedWith, GroupThousands(measured), GroupThousands(ch.ModelBytes), ch.DifferencePercent,
			FormatBytes(r.RSSBytes), FormatBytes(ch.RSSPurgedBytes), FormatBytes(ch.BaselineRSSBytes))
		if ch.ReloadPeakRSSBytes > 0 {
			line += "; a reload peaked at " + FormatBytes(ch.ReloadPeakRSSBytes)
			if m := ch.ModelReloadPeakBytes; m > 0 {
				line += fmt.Sprintf(" (the plan's model %s, %+.1f %%)", FormatBytes(m), float64(ch.ReloadPeakRSSBytes-m)/float64(m)*100)
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
func fillAttributesBreakdown(res *Result, d dict.ClickHouseDictionary, names []string, attrs []dict.Attribute) {
	n, cells := res.ElementCount, res.BucketCount
	if n <= 0 || cells < n || d.ComplexKey || d.Model == core.LayoutHashedArray {
		return
	}
	u64 := core.MustType("UInt64")
	var cellBytes, sizes int64
	each := make([]AttributeCell, len(attrs))
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
		each[i] = AttributeCell{Name: names[i], Type: a.Name, CellBytes: c, PaddingBytes: c - int64(u64.Size+a.Size)}
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

func fillClickHouseBreakdown(res *Result, d dict.ClickHouseDictionary, key, value core.Type) {
	n := res.ElementCount
	if n <= 0 || res.BytesAllocated <= 0 {
		return
	}
	payload := n * int64(key.Size+value.Size)
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
		arena := dict.ArenaBytes(n, float64(key.Size)) // one shard's; several shards: each its own
		if res.Shards > 1 {
			per := (n + int64(res.Shards) - 1) / int64(res.Shards)
			arena = dict.ArenaBytes(per, float64(key.Size)) * int64(res.Shards)
		}
		cells := (res.BytesAllocated - arena) / cell
		if cells < n || arena < n*int64(key.Size) {
			return
		}
		res.PayloadBytes = payload
		res.MetadataBytes = n*24 + (res.BytesAllocated - arena - cells*cell) // reference and hash, the header
		res.PaddingBytes = n * (pair - 16 - int64(value.Size))
		res.EmptyBytes = (cells-n)*cell + (arena - n*int64(key.Size))
		res.SlotBytes = cell
	}
}
