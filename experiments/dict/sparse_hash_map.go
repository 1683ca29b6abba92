package dict

import (
	"math"
	"math/bits"

	"github.com/packlab/packlab/core"
)

// What ClickHouse's sparse_hash_map holds (COMPLEX_KEY_SPARSE_HASHED, and
// SPARSE_HASHED of a value PackedHashMap does not pack): google's sparsetable
// with ClickHouse's libc_allocator_with_realloc, so in jemalloc.
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

// sparseHashMapGroup is google sparsetable's group: 48 buckets.
const sparseHashMapGroup = 48

// sparseHashMapBytes is what one sparse_hash_map of n keys in buckets cells
// (packlab's sparse geometry, core.Prediction.BucketCount) holds in
// jemalloc, cells of cell bytes (std::pair<const K, V>, padded): each
// group's vector at its expected size class, a group's cells binomial with
// each bucket occupied at the table's fill.
func sparseHashMapBytes(n, buckets, cell int64) int64 {
	if n <= 0 || buckets <= 0 {
		return 0
	}
	groups := (buckets + sparseHashMapGroup - 1) / sparseHashMapGroup
	p := min(float64(n)/float64(buckets), 1)
	// E[sizeClass(k*cell)] for k ~ Binomial(48, p), in logs so that no
	// term underflows at a fill near 0 or 1.
	lg, _ := math.Lgamma(sparseHashMapGroup + 1)
	var vector float64
	for k := 1; k <= sparseHashMapGroup; k++ {
		a, _ := math.Lgamma(float64(k) + 1)
		b, _ := math.Lgamma(float64(sparseHashMapGroup-k) + 1)
		w := lg - a - b + float64(k)*math.Log(p)
		if p < 1 {
			w += float64(sparseHashMapGroup-k) * math.Log1p(-p)
		} else if k < sparseHashMapGroup {
			continue
		}
		vector += math.Exp(w) * float64(jemallocSizeClass(int64(k)*cell))
	}
	return core.SaturatingAdd(core.SaturatingMul(groups, 16), int64(math.Round(vector*float64(groups))))
}

// jemallocSizeClass is the size class jemalloc (ClickHouse's allocator)
// serves a request of x bytes from: 8, then 16-byte steps to 128, then four
// classes between powers of two (160, 192, 224, 256, 320, ...).
func jemallocSizeClass(x int64) int64 {
	switch {
	case x <= 8:
		return 8
	case x <= 128:
		return (x + 15) &^ 15
	}
	lg := 63 - bits.LeadingZeros64(uint64(x-1)) // 2^lg < x <= 2^(lg+1)
	step := int64(1) << (lg - 2)
	return (x + step - 1) / step * step
}

// sparseHashMapTable is sparseHashMapBytes of one table of distinct keys
// of key and value types in shards (dealt out by hash: shardSpread), each
// shard in packlab's sparse geometry.
func sparseHashMapTable(key, value core.Type, distinct int64, opt core.Options, shards int) (int64, error) {
	one := opt
	one.Reserve = int64(core.ShardReserve(opt.Reserve, shards))
	cell := int64(core.PaddedCellBytes(key, value))
	var b float64
	var err error
	shardSpread(distinct, shards, func(n int64, w float64) {
		pr, e := core.Predict(core.LayoutSparse, key, value, n, one, 1)
		if e != nil {
			err = e
		}
		b += w * float64(sparseHashMapBytes(n, pr.BucketCount, cell))
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
		rows, u64 := a.NonNull(distinct), core.MustType("UInt64")
		pr, err := core.Predict(core.LayoutSparse, u64, a.Type, rows, attributeOptions(core.LayoutSparse, a, opt), shards)
		held, err2 := sparseHashMapTable(u64, a.Type, rows, attributeOptions(core.LayoutSparse, a, opt), shards)
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
	held, err := sparseHashMapTables(core.MustType("UInt128"), attrs, distinct, opt, shards)
	if err != nil {
		return 0
	}
	for _, a := range attrs {
		held -= a.NonNull(distinct) * ((16 + int64(a.Size) + 7) &^ 7)
	}
	return held
}
