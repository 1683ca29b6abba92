package dict

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict/alloc"
)

// ClickHouseTable is packlab's table of the shape ClickHouse keeps a value
// (an attribute) of type t in for layout l: SPARSE_HASHED's PackedHashMap
// holds values of at most 8 bytes but UUIDs, sparse_hash_map the others
// (ClickHouse 23.5+, #49380).
func ClickHouseTable(l core.Layout, t core.Type) core.Layout {
	if l == core.LayoutPacked && !(t.Size <= 8 && t.Kind != core.KindUUID) {
		return core.LayoutSparse
	}
	return l
}

// AttributesPrediction is core's prediction for a dictionary of the
// attributes attrs in layout l as ClickHouse keeps it: HASHED and
// SPARSE_HASHED a table per attribute (and shard), each growing as one
// attribute's would, their bytes summed; HASHED_ARRAY one index and an
// array per attribute; and the String values' arenas (StringArenaBytes).
// BucketCount stays one attribute's table's, so that the load factor is a
// table's.
func AttributesPrediction(l core.Layout, key core.Type, attrs []Attribute, n int64, opt core.Options, shards int) (core.Prediction, error) {
	return attributesPrediction(core.Predict, l, key, attrs, n, opt, shards)
}

// attributesPrediction is AttributesPrediction by predict: core.Predict's
// hash-dealt shards, or core.PredictEven's for the reload model
// (PredictEven).
func attributesPrediction(predict predictor,
	l core.Layout, key core.Type, attrs []Attribute, n int64, opt core.Options, shards int) (core.Prediction, error) {
	// Each attribute's table, and what stands beside them: HASHED_ARRAY's
	// is_index_null of each, the String values' arenas and the sets of
	// null keys. The first attribute's table is the others' (the lab's
	// first is never Nullable; a server's may be: an only attribute
	// Nullable(String) a third NULL, 200,000 rows, SPARSE_HASHED,
	// bytes_allocated 7.0 MiB, modelled 8.7 with its NULL rows in the
	// table and 7.0 without).
	tables := make([]core.Prediction, len(attrs))
	for i, t := range attrs {
		q, err := predict(ClickHouseTable(l, t.Type), key, t.Type, attributeRows(l, t, n), attributeOptions(l, t, opt), shards)
		if err != nil && i == 0 {
			return q, err
		} else if err != nil {
			return core.Prediction{}, err
		}
		tables[i] = q
	}
	indexNulls := make([]int64, len(attrs))
	for i, t := range attrs {
		indexNulls[i] = indexNullBytes(l, t, n)
	}
	// The arenas only grow, by chunks: they are in the peak once; so,
	// nearly, do the sets of null keys, a tenth of the tables.
	arenas, nullSets := StringArenaBytes(attrs, n, shards), int64(0)
	if l != core.LayoutHashedArray {
		nullSets = NullSetBytes(attrs, n, shards, 8)
	}
	pr := tables[0]
	if b := indexNulls[0]; b > 0 {
		pr.ValueBytes = core.SaturatingAdd(pr.ValueBytes, b)
		pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, b)
		pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, b)
	}
	for i, q := range tables[1:] {
		add := q.FinalBytes
		if l == core.LayoutHashedArray {
			q.ValueBytes = core.SaturatingAdd(q.ValueBytes, indexNulls[i+1])
			add = q.ValueBytes
			pr.ValueBytes = core.SaturatingAdd(pr.ValueBytes, q.ValueBytes)
		}
		pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, add)
		pr.GrowthBytes = core.SaturatingAdd(pr.GrowthBytes, q.GrowthBytes) // every table grows at about the same row
		pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, core.SaturatingAdd(add, core.SaturatingMul(q.GrowthBytes, int64(shards))))
		pr.Estimated = pr.Estimated || q.Estimated
		pr.Saturated = pr.Saturated || q.Saturated
	}
	extra := core.SaturatingAdd(arenas, nullSets)
	pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, extra)
	pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, extra)
	return pr, nil
}

// attributeRows is the rows attribute a's table holds in layout l: its
// values (a Nullable's NULLs go to a set of keys, NullSetBytes), or, in
// HASHED_ARRAY, every row (an array has a slot for each).
func attributeRows(l core.Layout, a Attribute, n int64) int64 {
	if l == core.LayoutHashedArray {
		return n
	}
	return a.NonNull(n)
}

// attributeOptions is opt for attribute a's table in layout l: a
// reservation (one shard's, SourceReserve) counts a Nullable's non-NULL
// rows, which its table holds. ClickHouse reserves block.rows() +
// container.size() before each block: 150,000 rows a quarter NULL in
// blocks of 65,409 reserve 117,296 at the most, 2^18 cells at MAX_LOAD_FACTOR
// 0.5, as their 112,500 values take, where 150,000 would take 2^19
// (HASHED() of one Nullable(String) held 12,579,048 bytes on a 26.7
// server; 12,579,056 here, 18,870,512 reserved for every row).
func attributeOptions(l core.Layout, a Attribute, opt core.Options) core.Options {
	if a.Nullable && l != core.LayoutHashedArray && opt.Reserve > 0 {
		opt.Reserve = a.NonNull(opt.Reserve)
	}
	return opt
}

// indexNullBytes is HASHED_ARRAY's is_index_null of a Nullable attribute:
// a bit a row (ClickHouse's bytes_allocated counts a byte); 0 elsewhere.
func indexNullBytes(l core.Layout, a Attribute, n int64) int64 {
	if l != core.LayoutHashedArray || !a.Nullable {
		return 0
	}
	return (n + 63) / 64 * 8
}

// NullSetBytes is what HASHED and SPARSE_HASHED keep of a Nullable
// attribute's null rows: a HashSet of their keys per shard
// (is_nullable_sets, HashedDictionary.h), cells of cell bytes (8 for a
// UInt64 key, 16 for a complex key's StringRef) from 256, growing
// x4 below 2^23 cells and x2 above when more than half full (ClickHouse's
// default HashTableGrower); each attribute's NullRows(n), spread over the
// shards.
func NullSetBytes(attrs []Attribute, n int64, shards int, cell int64) int64 {
	s := int64(max(shards, 1))
	var b int64
	for _, a := range attrs {
		if !a.Nullable {
			continue
		}
		per := (a.NullRows(n) + s - 1) / s
		cells := int64(256)
		for degree := 8; per > cells/2; cells = int64(1) << degree {
			if degree >= 23 {
				degree++
			} else {
				degree += 2
			}
		}
		b = core.SaturatingAdd(b, core.SaturatingMul(cells*cell, s))
	}
	return b
}

// StringArenaBytes is what ClickHouse's arenas allocate for the String
// values of n rows: one arena per shard, shared by every String attribute
// (HashedDictionary's and HashedArrayDictionary's string_arenas), each
// value copied in without a terminator (copyStringInArena), the values'
// lengths at their mean (ranges of a few dozen bytes over a million rows
// sum to within 0.1 % of it).
func StringArenaBytes(attrs []Attribute, n int64, shards int) int64 {
	var count, total float64 // the values a row holds, and their bytes
	for _, a := range attrs {
		if a.IsString() {
			f := float64(a.NonNull(n)) / float64(max(n, 1)) // a NULL is not in the arena
			count += f
			total += f * a.MeanLen()
		}
	}
	if count == 0 || n == 0 {
		return 0
	}
	// A shard's rows spread about the mean (core.ShardSteps), and an arena
	// near a chunk's end takes the next, twice as large, in some shards
	// and not in others: 200,000 rows of a 2-byte and a 3 to 32-byte String
	// in 64 shards, 61 KB a shard against 60 KB of chunks, held 1.9 MB more
	// than arenas of the mean's.
	var b float64
	arena := func(rows int64) int64 { return alloc.ArenaBytes(int64(float64(rows)*count), total/count) }
	core.ShardSteps(n, shards, arena, func(rows int64, w float64) { b += w * float64(arena(rows)) })
	return core.SaturatingMul(int64(math.Round(b)), int64(max(shards, 1)))
}

// StringBytes is the bytes of the String values of n rows of attrs, at
// their mean lengths: what an arena holding them has written.
func StringBytes(attrs []Attribute, n int64) int64 {
	var total float64
	for _, a := range attrs {
		if a.IsString() {
			total += float64(a.NonNull(n)) * a.MeanLen()
		}
	}
	return int64(total)
}

// ClickHouseAttributesMemory is ClickHouseTableMemory for a dictionary of
// several attributes: each attribute's table's (a Nullable's of its
// non-NULL rows, as AttributesPrediction's), summed (HASHED_ARRAY's
// index once, with the first attribute's array), and the String
// values' arenas, once in a load and twice in a reload.
func ClickHouseAttributesMemory(l core.Layout, attrs []Attribute, n int64, opt core.Options, shards int) *ClickHouseMemory {
	m := ClickHouseTableMemory(ClickHouseTable(l, attrs[0].Type), attrs[0].Type, attributeRows(l, attrs[0], n), attributeOptions(l, attrs[0], opt), shards)
	for _, t := range attrs[1:] {
		q := ClickHouseTableMemory(ClickHouseTable(l, t.Type), t.Type, attributeRows(l, t, n), attributeOptions(l, t, opt), shards)
		if m == nil || q == nil {
			return nil
		}
		if l == core.LayoutHashedArray { // one key index for every attribute: the attribute's array alone
			q.SteadyBytes, q.FirstLoadPeakBytes = q.values, core.SaturatingAdd(q.values, q.valuesHeld)
		}
		m.SteadyBytes = core.SaturatingAdd(m.SteadyBytes, q.SteadyBytes)
		m.FirstLoadPeakBytes = core.SaturatingAdd(m.FirstLoadPeakBytes, q.FirstLoadPeakBytes)
		m.Measured = m.Measured && q.Measured
	}
	if arena := StringArenaBytes(attrs, n, shards) + NullSetBytes(attrs, n, shards, 8); m != nil && arena > 0 {
		m.SteadyBytes = core.SaturatingAdd(m.SteadyBytes, arena)
		m.FirstLoadPeakBytes = core.SaturatingAdd(m.FirstLoadPeakBytes, arena)
		m.Measured = false
	}
	if m != nil {
		m.ReloadPeakBytes = ReloadPeak(m.SteadyBytes, m.FirstLoadPeakBytes)
	}
	return m
}

// ReloadPeak is a reload's peak: the serving tables (bytes_allocated x the
// allocator's factor; the loader's blocks of their load are garbage the new
// load reuses) and the new table at its first-load peak.
func ReloadPeak(servingTables, firstLoadPeak int64) int64 {
	return core.SaturatingAdd(servingTables, firstLoadPeak)
}

// ClickHouseMemory is the memory of the ClickHouse dictionary that builds a
// planned table, by ClickHouse's own growth (ClickHouseTableMemory), above the
// server's base.
type ClickHouseMemory struct {
	SteadyBytes        int64  `json:"steady_bytes"`          // bytes_allocated after the load, once jemalloc has returned the freed buffers
	FirstLoadPeakBytes int64  `json:"first_load_peak_bytes"` // the final tables and the buffers their growth freed
	ReloadPeakBytes    int64  `json:"reload_peak_bytes"`     // the serving dictionary + a new one at its first-load peak
	CheckedBytes       int64  `json:"checked_bytes"`         // what the plan checks against its budget: the reload's peak, or the first load's
	Fits               bool   `json:"fits"`
	Measured           bool   `json:"measured"` // the model was checked against ClickHouse for this layout (clickHouseReloads)
	Model              string `json:"model"`    // how the figures were made
	// values is the part of SteadyBytes HASHED_ARRAY's value arrays hold
	// (core.Prediction.ValueBytes), valuesHeld what their growth freed
	// and jemalloc still holds at the first load's peak; 0 elsewhere.
	values, valuesHeld int64
}

// clickHouseReload is one load and reload of a ClickHouse dictionary
// measured through the lab's ch_ layouts (ClickHouse 26.7.2, chDB 26.7.3):
// random <UInt64,UInt16> keys, RSS above the worker's base, peaks from a
// VmHWM reset (/proc/self/clear_refs), steady after SYSTEM JEMALLOC PURGE;
// MiB.
type clickHouseReload struct {
	Layout                    core.Layout
	Rows                      int64
	Shards                    int
	Steady, FirstLoad, Reload float64
}

// clickHouseReloads are the loads the reload model is fitted to, measured
// on the 2-core lab machine on 6 Dec 2026 while four other sessions ran on
// it (loads of 1e7 rows took 7-30 s, of 1e8 190-300 s). Earlier, on a
// quiet machine (loads of 2 s), 1e7 rows peaked higher: HASHED 514, 1,024,
// 1,473 and SPARSE_HASHED 321, 639, 921 (every freed buffer still held).
var clickHouseReloads = []clickHouseReload{
	{core.LayoutHashed, 1e6, 1, 34.2, 63.9, 98.6},
	{core.LayoutHashed, 1e6, 4, 69.3, 93.3, 162.7},
	{core.LayoutPacked, 1e6, 1, 22.0, 40.8, 77.3},
	{core.LayoutPacked, 1e6, 4, 44.5, 61.6, 108.0},
	{core.LayoutHashedArray, 1e6, 1, 35.6, 65.9, 111.0},
	{core.LayoutHashedArray, 1e6, 4, 70.5, 95.8, 164.2},
	{core.LayoutHashed, 1e7, 1, 514.1, 732.5, 1286.7},
	{core.LayoutHashed, 1e7, 4, 517.5, 571.3, 1283.8},
	{core.LayoutPacked, 1e7, 1, 322.0, 493.7, 727.2},
	{core.LayoutPacked, 1e7, 4, 325.5, 391.0, 794.4},
	{core.LayoutHashedArray, 1e7, 1, 533.0, 787.7, 1324.3},
	{core.LayoutHashedArray, 1e7, 4, 1047.0, 1068.1, 2121.3},
	{core.LayoutPacked, 1e8, 1, 2562.0, 2971.1, 5382.8},
	{core.LayoutPacked, 1e8, 4, 2571.2, 3154.1, 5645.9},
	{core.LayoutHashed, 1e8, 1, 4098.2, 4301.6, 8377.5},
	{core.LayoutHashed, 1e8, 4, 4137.2, 4563.5, 8827.6},
	{core.LayoutHashedArray, 1e8, 1, 4288.8, 4500.6, 8730.3},
}

// clickHouseRetained is the share of the final tables that a ClickHouse
// load of n keys still holds beside them at its peak: buffers its growth
// freed that jemalloc has not yet returned, and the last one alive while
// its rows are copied out. A short load keeps them all (the quiet
// machine's 1e7: 1.0); a long one returns the early ones as it goes and
// grows the largest in place, so the share falls with the rows: fitted to
// clickHouseReloads, 0.45 at 1e7 rows, 0.15 at 1e8, from 0.75 at 1e6 to at
// least 0.15. A sharded HASHED_ARRAY held nothing above its tables (1e7:
// a first-load peak 1.02x steady).
func clickHouseRetained(l core.Layout, n int64, shards int) float64 {
	if l == core.LayoutHashedArray && shards > 1 {
		return 0
	}
	f := 0.45 - 0.30*math.Log10(float64(max(n, 1))/1e7)
	return min(max(f, 0.15), 0.75)
}

// ClickHouseTableMemory works out the memory of ClickHouse's dictionary for
// layout l with values of type value, distinct keys in shards shards, at
// opt: ClickHouse keeps a numeric key as UInt64, so the table is
// core.Predict's for a UInt64 key. HASHED and SPARSE_HASHED (PackedHashMap)
// grow their hash table by reallocating it (x4 below 2^19 cells, then x2),
// and HASHED_ARRAY its key index (reserved for the rows read so far, x2;
// sharded, x4 below 2^23 cells: clickHouseIndex) and its value array (x2); what jemalloc still holds of the freed buffers
// at the load's peak is clickHouseRetained's share of the final tables
// (never more than every buffer the growth freed), so the first load's
// peak is the final tables and that share, and a reload's the serving
// dictionary beside it. sparse_hash_map (SPARSE_HASHED for values it does
// not pack) moves its groups one by one: packlab's sparse peak, not
// checked against ClickHouse. Shards load in parallel, each the same.
func ClickHouseTableMemory(l core.Layout, value core.Type, distinct int64, opt core.Options, shards int) *ClickHouseMemory {
	key := core.MustType("UInt64")
	pr, err := core.Predict(l, key, value, distinct, opt, shards)
	if err != nil {
		return nil
	}
	if l == core.LayoutHashedArray {
		pr = clickHouseIndex(pr, distinct, opt, shards)
	}
	m := &ClickHouseMemory{SteadyBytes: pr.FinalBytes}
	s := int64(shards)
	cells := pr.BucketCount / s // per shard, a power of two
	perShard := pr.FinalBytes / s
	var freed, valuesFreed int64 // per shard: every buffer the growth replaced, and of them the value array's
	retained := clickHouseRetained(l, distinct, shards)
	fit := fmt.Sprintf("(at %s rows %.0f %% of the final tables; fitted to ClickHouse 26.7's loads and reloads at 1e6, 1e7 and 1e8 rows, within 8 %% of its reloads at 1e7 and 1e8: docs/clickhouse.md)", rowsWords(distinct), 100*retained)
	switch l {
	case core.LayoutHashed, core.LayoutPacked:
		cell := int64(core.PaddedCellBytes(key, value))
		if l == core.LayoutPacked {
			cell = int64(core.PairBytes(key, value))
		}
		freed = core.SaturatingMul(smallerTables(cells, clickHouseDictionaryFastDegree), cell)
		m.Measured = true
		m.Model = "ClickHouse's growth: the hash table reallocated x4 below 2^19 cells, then x2, the freed buffers jemalloc still holds at the peak " + fit
	case core.LayoutHashedArray:
		const indexCell = 16 // struct{UInt64 key; UInt64 row}
		index := core.SaturatingMul(cells, indexCell)
		values := max(perShard-index, 0) // the value array, a power of two of rows, and the header
		growth, fast := "reserved for the rows read so far before each block (x2)", clickHouseInitialDegree
		if shards > 1 {
			growth, fast = "reallocated x4 below 2^23 cells, then x2", clickHouseHashMapFastDegree
		}
		valuesFreed = max(values-4096, 0)
		freed = core.SaturatingAdd(core.SaturatingMul(smallerTables(cells, fast), indexCell), valuesFreed)
		m.Measured = true
		m.Model = "ClickHouse's growth: the key index " + growth + ", the value array x2, the freed buffers jemalloc still holds at the peak " + fit
	default: // sparse_hash_map
		if b, err := sparseHashMapTable(key, value, distinct, opt, shards); err == nil {
			m.SteadyBytes = b
		}
		freed = pr.GrowthBytes
		retained = -1
		m.Model = "sparse_hash_map: its groups' vectors in jemalloc's size classes; packlab's " + string(l) + " growth (groups moved one by one); ClickHouse's reload of this layout was not measured"
	}
	held := core.SaturatingMul(freed, s)
	if retained >= 0 {
		held = min(held, ScaleBytes(pr.FinalBytes, retained))
	}
	if l == core.LayoutHashedArray && freed > 0 { // the value arrays' part of it
		m.values = pr.ValueBytes
		m.valuesHeld = ScaleBytes(core.SaturatingMul(valuesFreed, s), float64(held)/float64(core.SaturatingMul(freed, s)))
	}
	m.FirstLoadPeakBytes = core.SaturatingAdd(m.SteadyBytes, held)
	m.ReloadPeakBytes = ReloadPeak(m.SteadyBytes, m.FirstLoadPeakBytes)
	return m
}

// rowsWords writes a row count as 1e7, 2.5e8.
func rowsWords(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10)
	}
	m, e, _ := strings.Cut(strconv.FormatFloat(float64(n), 'e', 2, 64), "e")
	m = strings.TrimSuffix(strings.TrimRight(m, "0"), ".")
	x, _ := strconv.Atoi(e)
	return m + "e" + strconv.Itoa(x)
}

// ClickHouse's hash table growers, as core's grower replays them
// (core/grower.go): from 2^8 cells, x4 while the degree is below these,
// then x2.
const (
	clickHouseInitialDegree        = 8
	clickHouseDictionaryFastDegree = 19 // HashTableGrowerWithPrecalculationAndMaxLoadFactor (HASHED, SPARSE_HASHED)
	clickHouseHashMapFastDegree    = 23 // HashTableGrowerWithPrecalculation (HASHED_ARRAY's key index)
)

// clickHouseIndex is pr, core's prediction for packlab's hashed_array of
// distinct keys in shards tables, with the key index ClickHouse's
// HASHED_ARRAY builds. With one shard ClickHouse reserves the index for the
// rows read so far before each block (clickHouseReserves), which ends at
// the cells packlab's index, doubling, ends at: pr as it is. Sharded, it
// does not reserve, and its HashMap grows x4 below 2^23 cells
// (core.HashMapCells): at 1e6 keys in 4 shards 2^20 cells a shard where
// packlab's has 2^19.
func clickHouseIndex(pr core.Prediction, distinct int64, opt core.Options, shards int) core.Prediction {
	if shards <= 1 {
		return pr
	}
	const indexCell = 16 // struct{UInt64 key; UInt64 row}; a complex key's caller counts its own
	s := int64(shards)
	hm, _ := core.HashMapCells((distinct+s-1)/s, int64(core.ShardReserve(opt.Reserve, shards)))
	ours := pr.BucketCount / s
	if hm <= ours {
		return pr
	}
	more := core.SaturatingMul(core.SaturatingMul(hm-ours, indexCell), s)
	pr.BucketCount = core.SaturatingMul(hm, s)
	pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, more)
	pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, more)
	return pr
}

// smallerTables is the cells of every table a hash table of final cells
// had before it: the growth from 2^8 cells, x4 below fastDegree, then x2.
func smallerTables(final int64, fastDegree int) int64 {
	var sum int64
	for d := clickHouseInitialDegree; d < 62 && int64(1)<<d < final; {
		sum += int64(1) << d
		if d < fastDegree {
			d += 2
		} else {
			d++
		}
	}
	return sum
}

// ScaleBytes is n*f for f >= 1, saturating at math.MaxInt64 like
// core.Predict's figures (a float64 beyond the int64 range does not convert
// to a meaningful int64).
func ScaleBytes(n int64, f float64) int64 {
	x := float64(n) * f
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(x)
}

// AllocatorFactor is what the Go allocator adds on top of the bytes a layout
// computes for itself, as measured: peak_rss_bytes / core.Predict's peak
// over 1e6, 3e6 and 1e7 random <UInt64,UInt16> keys, mlf 0.5 and 0.9,
// isolated. gomap: 1.14 to 1.38 (tables of 1024 slots fall in an 18 KiB size
// class, and split tables leave holes the runtime cannot return). The guard
// takes the largest ratio seen, so for gomap its figure is a cautious bound,
// not a prediction. Every other layout keeps its memory in slabs it owns
// (sparse's vectors too, in pages of its own slabs since issue 9: RSS / its
// computed bytes 0.99-1.01 at 1e7, where the Go heap held 2.25-2.99x) and
// needs no factor.
func AllocatorFactor(l core.Layout) float64 {
	if l == core.LayoutGoMap {
		return 1.4
	}
	return 1
}

// LoaderBytes is loaderBytes for a load of rows <key,value> rows into
// shards shards, blockRows at a time (0: the default), from a file or not.
func LoaderBytes(key, value core.Type, shards, blockRows int, rows int64, file bool) int64 {
	row := int64(key.Size + value.Size)
	block := int64(cmp.Or(blockRows, core.DefaultBlockRows))
	n := int64(shards)
	sub := (block + n - 1) / n
	if n == 1 {
		sub = block
	}
	perShard := int64(core.DefaultBacklog+2) * sub
	if rows >= 0 {
		perShard = min(perShard, (rows+n-1)/n+sub)
	}
	b := n * perShard * row
	if n > 1 {
		b += min(block, max(rows, 0)) * row
	}
	if file {
		b += 1 << 20
	}
	return b
}

// SparseUncounted is what ClickHouse's bytes_allocated leaves out of
// the sparse_hash_map tables of a simple-key dictionary d: it counts a
// table as its pairs alone, size() * sizeof(pair) (ClickHouse PR #22867),
// where packlab's prediction is the table's memory, its groups' bitmaps
// and slack included.
func SparseUncounted(d ClickHouseDictionary, attrs []Attribute, distinct int64, opt core.Options, shards int) int64 {
	var gap int64
	u64 := core.MustType("UInt64")
	for _, a := range d.sparseAttributes(attrs) {
		pairs := a.NonNull(distinct)                                                                                        // a NULL is in the set of null keys, not the table
		pr, err := core.Predict(core.LayoutSparse, u64, a.Type, pairs, attributeOptions(core.LayoutSparse, a, opt), shards) // as Predict counts it
		if err != nil {
			return 0
		}
		gap += pr.FinalBytes - core.SaturatingMul(pairs, int64(core.PaddedCellBytes(u64, a.Type)))
	}
	return gap
}

// table is packlab's table of the shape ClickHouse builds for d with
// values of value (ClickHouseTable).
func (d ClickHouseDictionary) Table(value core.Type) core.Layout {
	return ClickHouseTable(d.Model, value)
}

// clickHouseReserves: with one shard, ClickHouse reserves its table block
// by block as it loads. Its FILE source reads blocks of 8,192 rows
// (FileDictionarySource.cpp: static max_block_size = 8192), and before each
// block HASHED and SPARSE_HASHED reserve every attribute's table for the
// block's rows plus the keys it already holds (HashedDictionary.h,
// loadData and resize: reserve(block.rows() + container.size()), skipped
// when sharded), HashTableGrowerWithPrecalculationAndMaxLoadFactor::set
// sizing it: 2^(floor(log2(n-1))+1) cells, doubled while their max load
// factor holds fewer than n. With distinct keys the last block's
// reservation is every row (<UInt64,UInt16> HASHED: 2^16 cells at 30,000
// rows, 2^17 at 50,000, 2^19 at 140,000, where its grower alone gives 2^20);
// with repeated keys it is a block beside the keys seen so far: 256 UInt8
// or Int8 keys hold 2^14 cells at 5,000 to 10,000 rows (set(8,192)) and 2^15
// from 20,000 rows on (set(8,192 + 256)), whatever the rows.
// HASHED_ARRAY reserves its key index for the rows read so far
// (HashedArrayDictionary.cpp: resize(total_rows)), so for every row.
// Its RSS right after the load is about twice the table all the same
// (freed buffers jemalloc still holds). Sharded tables follow the grower
// to the byte (SHARDS 4 at 1e6).
//
// FileReserve is what ClickHouse's table of d ends reserved for when one
// shard loads rows rows holding distinct keys from the FILE source.
// Repeated keys are taken as drawn uniformly from a domain D (distinct =
// D(1 - e^(-rows/D))), so that d(n) keys are held after n rows.
func FileReserve(d ClickHouseDictionary, distinct, rows int64) int64 {
	return SourceReserve(d, distinct, rows, fileSourceBlockRows)
}

// SourceReserve is FileReserve for a source that gives blocks of block
// rows (a CLICKHOUSE source: max_block_size, 65,409 by default). Measured
// on a 26.7 server, 200,000 rows holding 50,000 keys in one HASHED table
// of a UInt64 key and a UInt16: bytes_allocated 4,194,536, 2^18 cells,
// where 50,000 rows hold 2^17, whether a key's 4 rows stand side by side
// or at random. The keys are taken as drawn at random, which is the most a
// table is reserved for: where a key's rows stand side by side (a table
// sorted by its key) fewer keys are held before the last blocks, and at a
// power of two's edge the table has half the cells (3 rows a key side by
// side, MAX_LOAD_FACTOR 0.9: 2^17 cells where this says 2^18).
func SourceReserve(d ClickHouseDictionary, distinct, rows, block int64) int64 {
	if d.Model == core.LayoutHashedArray || distinct >= rows || rows <= block {
		return rows
	}
	seen := distinctAfter(distinct, rows)
	last := rows % block
	if last == 0 {
		last = block
	}
	// The largest reservation: the last full block's, or the last's.
	full := rows - last
	r := last + seen(full)
	if full >= block {
		r = max(r, block+seen(full-block))
	}
	return min(r, rows)
}

// SourceBlockRows is the rows of a block the dictionary's source gives
// (max_block_size, 65,409 by default); a one-shard table reserves for the
// rows read so far and the block's before each block.
const SourceBlockRows = 65_409

// fileSourceBlockRows is the rows of a block ClickHouse's FILE dictionary
// source reads (FileDictionarySource.cpp's max_block_size).
const fileSourceBlockRows = 8192

// distinctAfter is the distinct keys held after n of rows rows that hold
// distinct keys in all, the keys drawn uniformly from a domain the two fix.
func distinctAfter(distinct, rows int64) func(n int64) int64 {
	f := func(d float64) float64 { return d * -math.Expm1(-float64(rows)/d) }
	lo, hi := float64(distinct), float64(distinct)
	for f(hi) < float64(distinct) && hi < 1e30 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if f(mid) < float64(distinct) {
			lo = mid
		} else {
			hi = mid
		}
	}
	domain := hi
	return func(n int64) int64 {
		return min(int64(math.Round(domain*-math.Expm1(-float64(n)/domain))), distinct, n)
	}
}

// ModelBytes is packlab's figure for ClickHouse dictionary d
// holding distinct keys of keyType with values of value: for a simple key,
// core's table of the same shape with a UInt64 key (what ClickHouse keeps);
// for a complex key, ClickHouse's cells of a reference into the key arena
// and the saved hash, plus the arena (complexKeyBytes).
func ModelBytes(d ClickHouseDictionary, keyType string, value core.Type, distinct, rows int64, opt core.Options, shards int) int64 {
	if !d.ComplexKey {
		pr, err := Predict(d, Fixed(value), distinct, rows, opt, shards)
		if err != nil {
			return 0
		}
		return pr.FinalBytes
	}
	if !d.TakesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	if shards <= 1 && rows > 0 {
		opt.Reserve = FileReserve(d, distinct, rows) // see clickHouseReserves
	}
	key, ok := keyCopyOf(keyType)
	if !ok {
		return 0
	}
	return complexKeyBytes(d, key, value, distinct, opt, shards)
}

// keyCopyOf is one copy of a complex key of keyType in ClickHouse's arena
// (Key.arenaCopy), or false when keyType is not a key.
func keyCopyOf(keyType string) (Attribute, bool) {
	k, problem, ok := ParseKey(keyType)
	if !ok || problem != "" {
		return Attribute{}, false
	}
	return k.arenaCopy(), true
}

// Predict is core's prediction for the tables of a simple-key
// dictionary d with the attributes attrs (AttributesPrediction), with
// ClickHouse's load factor and reservation (clickHouseReserves), its
// shards' keys dealt out by hash (core.Predict).
func Predict(d ClickHouseDictionary, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) (core.Prediction, error) {
	return predictDictionary(core.Predict, d, attrs, distinct, rows, opt, shards)
}

// PredictEven is Predict with every shard the mean's: the tables at a
// moment of a load where the shards, fed alike, grow together (the reload
// model, reload.LoadGrowths).
func PredictEven(d ClickHouseDictionary, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) (core.Prediction, error) {
	return predictDictionary(core.PredictEven, d, attrs, distinct, rows, opt, shards)
}

func predictDictionary(predict predictor,
	d ClickHouseDictionary, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) (core.Prediction, error) {
	if !d.TakesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	if shards <= 1 && rows > 0 {
		opt.Reserve = FileReserve(d, distinct, rows) // see clickHouseReserves
	}
	pr, err := attributesPrediction(predict, d.Model, core.MustType("UInt64"), attrs, distinct, opt, shards)
	if err == nil && d.Model == core.LayoutHashedArray {
		pr = clickHouseIndex(pr, distinct, opt, shards)
	}
	if err == nil {
		b := hashedBookkeeping(d, len(attrs), shards)
		pr.FinalBytes, pr.PeakBytes = core.SaturatingAdd(pr.FinalBytes, b), core.SaturatingAdd(pr.PeakBytes, b)
	}
	return pr, err
}

// hashedBookkeeping is what a simple-key HASHED or SPARSE_HASHED
// dictionary's bytes_allocated counts beside its tables' buffers
// (HashedDictionary::calculateBytesAllocated: sizeof(Attribute) and
// sizeof(is_nullable_sets) an attribute, sizeof(container) an attribute
// and a shard). Measured through chDB 26.7, ClickHouse's figure less the
// tables' for fixed-size attributes, 1e4 to 1e7 rows, one to three
// attributes, SHARDS 1 and 4: HASHED 104 bytes an attribute and 16 a
// shard (120, 168, 360, 504), SPARSE_HASHED 104 an attribute whatever the
// shards (its PackedHashMap's buffer figure already holds the rest).
func hashedBookkeeping(d ClickHouseDictionary, attrs, shards int) int64 {
	if d.ComplexKey {
		return 0
	}
	switch d.Model {
	case core.LayoutHashed:
		return int64(attrs) * (104 + 16*int64(max(shards, 1)))
	case core.LayoutPacked, core.LayoutSparse:
		return int64(attrs) * 104
	}
	return 0
}

// AttributesBytes is ModelBytes for a dictionary of
// the attributes attrs (complexKeyAttributesBytes for a
// complex key).
func AttributesBytes(d ClickHouseDictionary, keyType string, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) int64 {
	if len(attrs) == 1 {
		return ModelBytes(d, keyType, attrs[0].Type, distinct, rows, opt, shards)
	}
	if d.ComplexKey {
		key, ok := keyCopyOf(keyType)
		if !ok {
			return 0
		}
		if shards <= 1 && rows > 0 {
			opt.Reserve = FileReserve(d, distinct, rows) // see clickHouseReserves
		}
		return complexKeyAttributesBytes(d, key, attrs, distinct, opt, shards)
	}
	pr, err := Predict(d, attrs, distinct, rows, opt, shards)
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
func complexKeyBytes(d ClickHouseDictionary, key Attribute, value core.Type, distinct int64, opt core.Options, shards int) int64 {
	u64 := core.MustType("UInt64")
	arena := StringArenaBytes([]Attribute{key}, distinct, shards)
	// ClickHouse's UInt128 and wider are arrays of 8-byte words: alignment 8.
	pair := 16 + int64(value.Size)
	pair = (pair + 7) &^ 7
	switch d.Model {
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
		pr = clickHouseIndex(pr, distinct, opt, shards)
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
func complexKeyAttributesBytes(d ClickHouseDictionary, keyCopy Attribute, attrs []Attribute, distinct int64, opt core.Options, shards int) int64 {
	u64 := core.MustType("UInt64")
	if d.Model == core.LayoutHashedArray {
		pr, err := attributesPrediction(core.Predict, core.LayoutHashedArray, u64, attrs, distinct, opt, shards)
		if err != nil {
			return 0
		}
		pr = clickHouseIndex(pr, distinct, opt, shards)
		arrays := pr.FinalBytes - StringArenaBytes(attrs, distinct, shards) - core.SaturatingMul(pr.BucketCount, 16) // less the simple key's {UInt64 key, UInt64 row} index
		index := core.SaturatingMul(pr.BucketCount, 32)
		return core.SaturatingAdd(core.SaturatingAdd(arrays, index), StringArenaBytes(append([]Attribute{keyCopy}, attrs...), distinct, shards))
	}
	var tables int64
	for _, a := range attrs {
		pair := (16 + int64(a.Size) + 7) &^ 7
		rows := a.NonNull(distinct)
		switch d.Model {
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
	return core.SaturatingAdd(core.SaturatingAdd(tables, arena), NullSetBytes(attrs, distinct, shards, 16))
}

// EffectiveMLF is the max load factor a layout actually uses: the given one
// (or ClickHouse's default 0.5) for hashed, packed and sparse; the given one
// or its own default 0.9 for compact; 0.5 for hashed_array, whose key index
// is a plain HashMap; 0.875 for gomap (Go's swiss tables grow at 7/8 full).
func EffectiveMLF(l core.Layout, mlf float64) float64 {
	switch l {
	case core.LayoutHashedArray:
		return core.DefaultMaxLoadFactor
	case core.LayoutGoMap:
		return 7.0 / 8
	}
	if mlf == 0 && l == core.LayoutCompact {
		return core.DefaultCompactMaxLoadFactor
	}
	if mlf == 0 && l == core.LayoutIceberg {
		return core.DefaultIcebergMaxLoadFactor
	}
	if mlf == 0 {
		return core.DefaultMaxLoadFactor
	}
	return mlf
}

// TargetGrowth is what one shard of layout l holds above its final size
// at its last growth (pr.GrowthBytes on the platform making the plan) where
// a planned table runs: natively, or in a browser's wasm memory (browser);
// the planner and the plan's chart ask it. Natively that is Linux's,
// whatever platform makes the plan (the browser, a Mac), so that every face
// gives a native plan the same figures: hashed, packed and hashed_array
// grow their slab in place (mremap), nothing held; compact hands its old
// slab back behind its growth pass, at most two release steps of 2 MiB left
// (core/compact.go); sparse and gomap as everywhere.
// TestTargetGrowthIsLinuxs holds these to core.Predict's on Linux. In the
// browser's wasm memory, which only grows, a slab layout's growth takes
// fresh address space for the new slab while the old one and every earlier
// one (together at most the old one's size again) stay behind: twice pr's
// old slab (app/browser's inAddressSpace, measured in Chromium).
func TargetGrowth(browser bool, l core.Layout, pr core.Prediction) int64 {
	slab := l == core.LayoutHashed || l == core.LayoutPacked || l == core.LayoutHashedArray || l == core.LayoutCompact || l == core.LayoutIceberg
	switch {
	case browser && slab:
		return core.SaturatingMul(pr.GrowthBytes, 2)
	case browser:
		return pr.GrowthBytes
	case l == core.LayoutCompact:
		return min(pr.GrowthBytes, linuxCompactGrowthBytes)
	case l == core.LayoutIceberg:
		return pr.GrowthBytes // core.Predict's: the old back yard and two release steps
	case slab:
		return 0
	}
	return pr.GrowthBytes
}

// linuxCompactGrowthBytes is what a compact shard holds of its old slab at
// the end of its growth pass on Linux: two release steps (core/compact.go's
// compactReleaseEvery, 2 MiB).
const linuxCompactGrowthBytes = 2 * 2 << 20
