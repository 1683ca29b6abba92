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
	// is the plan's model of it (clickHouseMemory), 0 where it has none.
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
func runClickHouse(ctx context.Context, p parsedConfig, d ClickHouseDictionary, progress func(Progress)) (Result, error) {
	st := ClickHouseStatusNow()
	if !st.Available {
		return Result{}, fmt.Errorf("unavailable: %s", st.Problem)
	}
	if p.MissRate != 0 {
		return Result{}, fmt.Errorf("ClickHouse's dictionaries are read with loaded keys only: --miss-rate 0")
	}
	dir, err := os.MkdirTemp("", "packlab-ch-")
	if err != nil {
		return Result{}, fmt.Errorf("making ClickHouse's folder: %s", core.PathErrorReason(err))
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
		return Result{}, fmt.Errorf("making ClickHouse's folder: %s", core.PathErrorReason(err))
	}
	if p.fileAttributes() {
		fst, err := opsFor(p.key, p.value).writeFileAttributes(ctx, p, d.dictKeyType(p.key).Size, filepath.Join(files, chAttributesFile), progress)
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
func chJobFor(p parsedConfig, d ClickHouseDictionary, dir string) (job []byte, ddl, clause string) {
	total := int64(-1)
	if p.spec.IsSynthetic() {
		total = p.Rows
	}
	clause = d.Clause(p.Shards, p.MaxLoadFactor)
	if span, ok := flatKeySpan(p.spec, p.Rows); d.flat() && ok {
		clause = FlatClause(span)
	}
	dictKey := d.dictKeyType(p.key)
	source, prepare := chSourceFile, ""
	if len(p.attrs) > 1 {
		source = chAttributesFile // written by ClickHouse from the lab's rows, or by the lab from a file
		if !p.fileAttributes() {
			prepare = attributesSQL(chAttributesFile, chSourceFile, dictKey, p.attrNames, p.attrs)
		}
	}
	ddl = DictionaryDDL(chDictName, dictKey.Name, AttributeColumns(p.attrNames, p.attrs),
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
func fillClickHouseResult(res *Result, p parsedConfig, d ClickHouseDictionary, fr feedReport, clause, ddl string) {
	res.Layout = d.Name
	res.KeyType, res.ValueType = p.key.Name, p.value.Name
	if len(p.attrs) > 1 {
		res.Attributes = AttributesText(p.Attributes, p.attrs)
		res.AttributeColumns = p.spec.Columns
	}
	res.Shards = p.Shards
	if d.takesMaxLoadFactor() {
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
func fillClickHouseModel(res *Result, d ClickHouseDictionary, attrs []Attribute, opt core.Options) {
	ch := res.ClickHouse
	value := attrs[0].Type
	model := clickHouseAttributesBytes(d, res.KeyType, attrs, res.ElementCount, res.Rows, opt, res.Shards)
	if span, ok := flatSpanOf(res); d.flat() && ok {
		model = FlatBytes(attrs, span, res.ElementCount)
		ch.ModelReloadPeakBytes = FlatMemory(attrs, span, res.ElementCount).ReloadPeakBytes
	}
	if !d.ComplexKey && !d.flat() {
		model -= sparseUncounted(d, attrs, res.ElementCount, opt, res.Shards)
	}
	ch.ModelBytes = model
	measured := res.BytesAllocated
	ch.ComparedWith = "bytes_allocated"
	if d.model == core.LayoutHashedArray {
		measured = ch.TrackedBytes
		ch.ComparedWith = "tracked_bytes"
		ch.Note = fmt.Sprintf("ClickHouse %s's bytes_allocated (%s) leaves out its key-to-row index (fixed upstream in ClickHouse PR #118641): compared with what its memory tracker gained over the load (%s) instead",
			ch.Version, FormatBytes(res.BytesAllocated), FormatBytes(ch.TrackedBytes))
	}
	if !d.ComplexKey && !d.flat() && len(attrs) == 1 { // the reload's model is one attribute's, so far
		o := opt
		if !d.takesMaxLoadFactor() {
			o.MaxLoadFactor = 0
		}
		if m := clickHouseMemory(d.table(value), value, res.ElementCount, o, res.Shards); m != nil {
			ch.ModelReloadPeakBytes = m.ReloadPeakBytes
		}
	}
	if slices.ContainsFunc(attrs, func(a Attribute) bool { return d.table(a.Type) == core.LayoutSparse }) {
		ch.Note = fmt.Sprintf("ClickHouse's bytes_allocated for sparse_hash_map is its estimate of the pairs alone (ClickHouse PR #22867), and packlab's figure is the same estimate: the process held %s after a purge", FormatBytes(ch.RSSPurgedBytes))
	}
	if model > 0 {
		ch.DifferencePercent = math.Round(float64(measured-model)/float64(model)*1e4) / 100
	}
}

// sparseUncounted is what ClickHouse's bytes_allocated leaves out of
// the sparse_hash_map tables of a simple-key dictionary d: it counts a
// table as its pairs alone, size() * sizeof(pair) (ClickHouse PR #22867),
// where packlab's prediction is the table's memory, its groups' bitmaps
// and slack included.
func sparseUncounted(d ClickHouseDictionary, attrs []Attribute, distinct int64, opt core.Options, shards int) int64 {
	var gap int64
	u64 := core.MustType("UInt64")
	for _, a := range attrs {
		if d.table(a.Type) != core.LayoutSparse {
			continue
		}
		pairs := a.nonNull(distinct) // a NULL is in the set of null keys, not the table
		pr, err := core.Predict(core.LayoutSparse, u64, a.Type, pairs, opt, shards)
		if err != nil {
			return 0
		}
		gap += pr.FinalBytes - core.SaturatingMul(pairs, int64(core.PaddedCellBytes(u64, a.Type)))
	}
	return gap
}

// table is packlab's table of the shape ClickHouse builds for d with
// values of value (ClickHouseTable).
func (d ClickHouseDictionary) table(value core.Type) core.Layout {
	return ClickHouseTable(d.model, value)
}

// clickHouseReserves: with one shard and a FILE source, ClickHouse 26.7's
// table ends at the smallest power of two of cells that holds the rows
// under the max load factor, as a table reserved for them would: measured
// here through the lab, <UInt64,UInt16> HASHED holds 2^16 cells at 30,000
// rows, 2^17 at 50,000, 2^18 at 100,000, 2^19 at 140,000, where its grower
// alone (x4 below 2^19 cells) gives 2^18 at 50,000 and 2^20 at 140,000;
// HASHED_ARRAY's key index the same. Its RSS right after the load is about
// twice the table all the same (freed buffers jemalloc still holds), so it
// is not a table reserved up front; how it gets there was not traced in
// ClickHouse's source. Sharded tables follow the grower to the byte
// (SHARDS 4 at 1e6).
//
// clickHouseModelBytes is packlab's figure for ClickHouse dictionary d
// holding distinct keys of keyType with values of value: for a simple key,
// core's table of the same shape with a UInt64 key (what ClickHouse keeps);
// for a complex key, ClickHouse's cells of a reference into the key arena
// and the saved hash, plus the arena (complexKeyBytes).
func clickHouseModelBytes(d ClickHouseDictionary, keyType string, value core.Type, distinct, rows int64, opt core.Options, shards int) int64 {
	if !d.ComplexKey {
		pr, err := clickHousePredict(d, fixed(value), distinct, rows, opt, shards)
		if err != nil {
			return 0
		}
		return pr.FinalBytes
	}
	if !d.takesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	if shards <= 1 && rows > 0 {
		opt.Reserve = rows // see clickHouseReserves
	}
	key, err := core.ParseType(keyType)
	if err != nil {
		return 0
	}
	return complexKeyBytes(d, key, value, distinct, opt, shards)
}

// clickHousePredict is core's prediction for the tables of a simple-key
// dictionary d with the attributes attrs (AttributesPrediction), with
// ClickHouse's load factor and reservation (clickHouseReserves).
func clickHousePredict(d ClickHouseDictionary, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) (core.Prediction, error) {
	if !d.takesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	if shards <= 1 && rows > 0 {
		opt.Reserve = rows // see clickHouseReserves
	}
	return AttributesPrediction(d.model, core.MustType("UInt64"), attrs, distinct, opt, shards)
}

// clickHouseAttributesBytes is clickHouseModelBytes for a dictionary of
// the attributes attrs (attributes.go; complexKeyAttributesBytes for a
// complex key).
func clickHouseAttributesBytes(d ClickHouseDictionary, keyType string, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) int64 {
	if len(attrs) == 1 {
		return clickHouseModelBytes(d, keyType, attrs[0].Type, distinct, rows, opt, shards)
	}
	if d.ComplexKey {
		key, err := core.ParseType(keyType)
		if err != nil {
			return 0
		}
		if shards <= 1 && rows > 0 {
			opt.Reserve = rows // see clickHouseReserves
		}
		return complexKeyAttributesBytes(d, key, attrs, distinct, opt, shards)
	}
	pr, err := clickHousePredict(d, attrs, distinct, rows, opt, shards)
	if err != nil {
		return 0
	}
	return pr.FinalBytes
}

// complexKeyBytes models a COMPLEX_KEY_ dictionary (HashedDictionary.h,
// HashedArrayDictionary.h): the key of each row serialized into an Arena
// (Arena.h: chunks from 4 KiB, doubling up to 128 MiB, then growing by 128
// MiB), one arena per shard; the table's cell holds a StringRef (16 bytes)
// to it. HASHED's cell is HashMapCellWithSavedHash: the pair {StringRef,
// value} and the 8-byte hash, in a table of HASHED's size for the same
// rows; SPARSE_HASHED keeps the pairs in sparse_hash_map, whose
// bytes_allocated ClickHouse estimates as the pairs alone; HASHED_ARRAY's
// index maps the reference to an 8-byte row number (with the saved hash)
// beside packlab's array of values.
func complexKeyBytes(d ClickHouseDictionary, key, value core.Type, distinct int64, opt core.Options, shards int) int64 {
	u64 := core.MustType("UInt64")
	s := int64(max(shards, 1))
	perShard := (distinct + s - 1) / s
	arena := core.SaturatingMul(arenaBytes(perShard, float64(key.Size)), s)
	// ClickHouse's UInt128 and wider are arrays of 8-byte words: alignment 8.
	pair := 16 + int64(value.Size)
	pair = (pair + 7) &^ 7
	switch d.model {
	case core.LayoutHashed:
		pr, err := core.Predict(core.LayoutHashed, u64, value, distinct, opt, shards)
		if err != nil {
			return 0
		}
		return core.SaturatingAdd(core.SaturatingMul(pr.BucketCount, pair+8), arena)
	case core.LayoutSparse:
		return core.SaturatingAdd(core.SaturatingMul(distinct, pair), arena)
	case core.LayoutHashedArray:
		pr, err := core.Predict(core.LayoutHashedArray, u64, value, distinct, opt, shards)
		if err != nil {
			return 0
		}
		index := core.SaturatingMul(pr.BucketCount, 16)        // packlab's index: {UInt64 key, UInt64 row}
		complexIndex := core.SaturatingMul(pr.BucketCount, 32) // {StringRef, UInt64 row} and the hash
		return core.SaturatingAdd(pr.FinalBytes-index+complexIndex, arena)
	}
	return 0
}

// complexKeyAttributesBytes models a COMPLEX_KEY_ dictionary of several
// attributes. COMPLEX_KEY_HASHED and COMPLEX_KEY_SPARSE_HASHED keep a
// table per attribute as for one (complexKeyBytes: a cell of the StringRef
// to the key and the value, 8-byte aligned, HASHED's with the saved hash),
// a Nullable attribute's NULL rows in a set of 16-byte StringRef cells
// instead, and one arena per shard that holds the key once for each
// attribute (each table, or set, copies its keys in) beside the String
// values. COMPLEX_KEY_HASHED_ARRAY keeps the simple key's arrays and one
// index of {StringRef, UInt64 row} cells with the saved hash, its key in
// the arena once. Measured through ClickHouse 26.7 at 1e6 UInt64 keys of
// (UInt16, UInt32, Float64): HASHED 234,877,624 bytes, three tables of
// 2^21 32-byte cells and an arena of 24 MB of keys in 33,550,336 bytes;
// SPARSE_HASHED 105,550,936; HASHED_ARRAY's tracker 90,215,512 against
// 90,173,616 here.
func complexKeyAttributesBytes(d ClickHouseDictionary, key core.Type, attrs []Attribute, distinct int64, opt core.Options, shards int) int64 {
	u64 := core.MustType("UInt64")
	keyCopy := Attribute{Type: stringRef, MinLen: key.Size, MaxLen: key.Size} // a piece of the arena, as a String is
	if d.model == core.LayoutHashedArray {
		pr, err := AttributesPrediction(core.LayoutHashedArray, u64, attrs, distinct, opt, shards)
		if err != nil {
			return 0
		}
		arrays := pr.FinalBytes - StringArenaBytes(attrs, distinct, shards) - core.SaturatingMul(pr.BucketCount, 16) // less the simple key's {UInt64 key, UInt64 row} index
		index := core.SaturatingMul(pr.BucketCount, 32)
		return core.SaturatingAdd(core.SaturatingAdd(arrays, index), StringArenaBytes(append([]Attribute{keyCopy}, attrs...), distinct, shards))
	}
	var tables int64
	for _, a := range attrs {
		pair := (16 + int64(a.Size) + 7) &^ 7
		rows := a.nonNull(distinct)
		switch d.model {
		case core.LayoutHashed:
			pr, err := core.Predict(core.LayoutHashed, u64, attrs[0].Type, rows, opt, shards)
			if err != nil {
				return 0
			}
			tables = core.SaturatingAdd(tables, core.SaturatingMul(pr.BucketCount, pair+8))
		case core.LayoutSparse:
			tables = core.SaturatingAdd(tables, core.SaturatingMul(rows, pair))
		default:
			return 0
		}
	}
	keys := make([]Attribute, len(attrs)) // the key's copies
	for i := range keys {
		keys[i] = keyCopy
	}
	arena := StringArenaBytes(append(keys, attrs...), distinct, shards)
	return core.SaturatingAdd(core.SaturatingAdd(tables, arena), nullSetBytes(attrs, distinct, shards, 16))
}

// arenaBytes is what ClickHouse's Arena (Arena.h) allocates to hold count
// pieces of piece bytes, one after another: chunks of 4 KiB, each twice
// the last up to 128 MiB, then 128 MiB each; a chunk keeps its last 63
// bytes as padding (pad_right), and a piece that does not fit in what is
// left of a chunk starts the next one.
func arenaBytes(count int64, piece float64) int64 {
	const initial, threshold, padRight = 4096, 128 << 20, 63
	var sum int64
	left := float64(count)
	for size := int64(initial); left > 0; {
		sum = core.SaturatingAdd(sum, size)
		left -= math.Floor(float64(size-padRight) / max(piece, 1))
		if size < threshold {
			size *= 2
		}
	}
	return sum
}

// clickHouseBaselineBytes is packlab-ch's RSS with ClickHouse started,
// before the dictionary loads (measured here: 210-260 MB for chDB 26.7,
// most of it the library's mapped code): the guard adds it to a run.
const clickHouseBaselineBytes = 300 << 20

// estimateClickHouse is the guard's prediction of a ClickHouse run: the
// dictionary's first-load peak by ClickHouse's growth (clickHouseMemory:
// jemalloc keeps the freed tables through the load), the worker's
// ClickHouse, and the read's column of keys. It is a model of another
// program, so it is marked estimated.
func estimateClickHouse(p parsedConfig, d ClickHouseDictionary, rows int64) Estimate {
	distinct, _ := expectedDistinct(p.spec, p.key, rows)
	opt := p.options()
	if !d.takesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	final := clickHouseAttributesBytes(d, p.key.Name, p.attrs, distinct, rows, opt, p.Shards)
	// The run reloads once: the serving dictionary beside a new one at its
	// first-load peak; with several attributes, each attribute's table's
	// (HASHED_ARRAY's index counted once for each: the guard errs high).
	peak := core.SaturatingMul(final, 3)
	if span, ok := flatKeySpan(p.spec, rows); d.flat() && ok {
		m := FlatMemory(p.attrs, span, distinct)
		final, peak = m.SteadyBytes, m.ReloadPeakBytes
	} else if m := ClickHouseAttributesMemory(d.model, p.attrs, distinct, opt, p.Shards); m != nil && !d.ComplexKey {
		peak = max(m.ReloadPeakBytes, final)
	}
	e := Estimate{
		Layout: d.Name, Rows: rows, Distinct: distinct,
		FinalBytes:      final,
		TablePeakBytes:  peak,
		AllocatorFactor: 1,
		LoaderBytes:     core.SaturatingAdd(clickHouseBaselineBytes, int64(refsFrameRows*(p.key.Size+p.value.Size))),
		ReloadPeakBytes: ReloadPeak(final, peak),
		Estimated:       true,
	}
	if !p.NoRead {
		// The read's keys: a Memory table in the worker, and this process's
		// list of a file's keys.
		e.ReadBytes = core.SaturatingMul(max(rows, distinct), int64(d.dictKeyType(p.key).Size))
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
func fillAttributesBreakdown(res *Result, d ClickHouseDictionary, names []string, attrs []Attribute) {
	n, cells := res.ElementCount, res.BucketCount
	if n <= 0 || cells < n || d.ComplexKey || d.model == core.LayoutHashedArray {
		return
	}
	u64 := core.MustType("UInt64")
	var cellBytes, sizes int64
	each := make([]AttributeCell, len(attrs))
	for i, a := range attrs {
		t := d.table(a.Type)
		if a.isString() || a.Nullable || (t != core.LayoutHashed && t != core.LayoutPacked) {
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

func fillClickHouseBreakdown(res *Result, d ClickHouseDictionary, key, value core.Type) {
	n := res.ElementCount
	if n <= 0 || res.BytesAllocated <= 0 {
		return
	}
	payload := n * int64(key.Size+value.Size)
	switch t := d.table(value); {
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
		arena := arenaBytes(n, float64(key.Size)) // one shard's; several shards: each its own
		if res.Shards > 1 {
			per := (n + int64(res.Shards) - 1) / int64(res.Shards)
			arena = arenaBytes(per, float64(key.Size)) * int64(res.Shards)
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
