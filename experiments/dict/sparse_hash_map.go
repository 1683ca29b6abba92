package dict

import (
	"math"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict/alloc"
)

// What ClickHouse's sparse_hash_map holds (COMPLEX_KEY_SPARSE_HASHED, and
// SPARSE_HASHED of a value PackedHashMap does not pack): google's sparsetable
// with ClickHouse's libc_allocator_with_realloc, so in jemalloc
// (alloc.SparseHashMapBytes).
//
//	groups:  ceil(buckets/48) * 16 bytes, one vector          (as packlab's sparse)
//	group:   its k cells in one malloc'd block, reallocated to k+1 cells on
//	         each insert: k*cell bytes rounded up to jemalloc's size class
//	         (16-byte steps to 128, then four classes a doubling)
//
// packlab's sparse table keeps the same groups and cells, its vectors packed
// densely in pages it owns (core/sparse_alloc.go), without the size classes,
// which the plan counted before: 2.8-6.4 % under a 26.7 server, and smaller
// at MAX_LOAD_FACTOR 0.96 where ClickHouse holds more (fuller groups, larger
// classes). This model, against what a load grew the server's tracked
// memory by after SYSTEM JEMALLOC PURGE (sparseHashMapLoads): within 1 %.

// sparseHashMapTable is alloc.SparseHashMapBytes of one table of distinct keys
// of key and value types in shards (dealt out by hash: core.EachShard), each
// shard in packlab's sparse geometry.
func sparseHashMapTable(key, value core.Type, distinct int64, opt core.Options, shards int) (int64, error) {
	cell := int64(core.PaddedCellBytes(key, value))
	var b float64
	err := core.EachShard(core.LayoutSparse, key, value, distinct, opt, shards, func(p core.Prediction, n int64, w float64) {
		b += w * float64(alloc.SparseHashMapBytes(n, p.BucketCount, cell))
	})
	return core.SaturatingMul(int64(math.Round(b)), int64(max(shards, 1))), err
}

// sparseHashMapTables is sparseHashMapTable of a dictionary's tables, one
// an attribute (its non-NULL rows), keyed by key's cells: the tables alone,
// without the arenas and the sets of NULL keys.
func sparseHashMapTables(key core.Type, attrs []Attribute, n int64, opt core.Options, shards int) (int64, error) {
	var b int64
	for _, a := range attrs {
		rows := attributeRows(core.LayoutSparse, a, n)
		t, err := sparseHashMapTable(key, a.Type, rows, attributeOptions(core.LayoutSparse, a, opt), shards)
		if err != nil {
			return 0, err
		}
		b = core.SaturatingAdd(b, t)
	}
	return b, nil
}

// SparseRealGap is what the sparse_hash_map tables of a simple-key
// dictionary d hold beyond packlab's sparse tables of the same pairs (the
// figure Predict counts them at): their groups' vectors in jemalloc's size
// classes (sparseHashMapTable) over packlab's dense pages.
func SparseRealGap(d ClickHouseDictionary, attrs []Attribute, distinct int64, opt core.Options, shards int) int64 {
	var gap int64
	for _, a := range d.sparseAttributes(attrs) {
		rows, u64, o := a.NonNull(distinct), core.MustType("UInt64"), attributeOptions(core.LayoutSparse, a, opt)
		pr, err := core.Predict(core.LayoutSparse, u64, a.Type, rows, o, shards) // as Predict counts it
		held, err2 := sparseHashMapTable(u64, a.Type, rows, o, shards)
		if err != nil || err2 != nil {
			return 0
		}
		gap += held - pr.FinalBytes
	}
	return gap
}

// sparseAttributes are the attributes of attrs that d keeps in a
// sparse_hash_map (ClickHouseTable).
func (d ClickHouseDictionary) sparseAttributes(attrs []Attribute) []Attribute {
	var out []Attribute
	for _, a := range attrs {
		if d.Table(a.Type) == core.LayoutSparse {
			out = append(out, a)
		}
	}
	return out
}

// ComplexKeySparseRealGap is SparseRealGap for COMPLEX_KEY_SPARSE_HASHED,
// whose model (ComplexKeyPartsBytes, as bytes_allocated) counts each table
// as its pairs alone: a 16-byte StringRef and the value, padded.
func ComplexKeySparseRealGap(attrs []Attribute, distinct int64, opt core.Options, shards int) int64 {
	ref := core.MustType("UInt128") // a 16-byte StringRef, 8-byte aligned as a UInt128
	held, err := sparseHashMapTables(ref, attrs, distinct, opt, shards)
	if err != nil {
		return 0
	}
	for _, a := range attrs {
		held -= a.NonNull(distinct) * int64(core.PaddedCellBytes(ref, a.Type))
	}
	return held
}
