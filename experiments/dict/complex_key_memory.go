package dict

import (
	"github.com/packlab/packlab/core"
)

// ClickHouseComplexKeyMemory is ClickHouseAttributesMemory for the
// COMPLEX_KEY_ dictionary of packlab's table l (COMPLEX_KEY_HASHED for
// hashed, COMPLEX_KEY_SPARSE_HASHED for sparse, COMPLEX_KEY_HASHED_ARRAY
// for hashed_array), holding n keys k with the attributes attrs: what
// ClickHouse builds for a key it cannot widen to UInt64 (a UUID, a 128-bit
// integer, a Float64 with fractions, a String). Its steady bytes are
// AttributesBytes's, which the lab's ch_complex_key_ runs match to 0.01 %
// (0.4 % for HASHED_ARRAY's tracker), or for a String key of a table's
// mean length ComplexKeyPartsBytes's, as packlab inspect models a user's
// dictionary; nil where no COMPLEX_KEY_ layout builds l.
//
// Its peaks are modelled, not fitted: the tables grow as the simple key's
// (ClickHouseAttributesMemory), so the buffers their growth freed and
// jemalloc still holds are the simple key's share of its tables, scaled to
// the complex key's tables; the arenas of keys and Strings only grow, by
// chunks, and are in the first load's peak once.
func ClickHouseComplexKeyMemory(l core.Layout, k PlanKey, attrs []Attribute, n int64, opt core.Options, shards int) *ClickHouseMemory {
	d, ok := ComplexKeyDictionaryFor(l)
	if !ok {
		return nil
	}
	l = d.Model // packed's is sparse_hash_map too
	key, ok := k.arenaCopy()
	if !ok {
		return nil
	}
	if !d.TakesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	var steady int64
	if k.IsString() {
		steady = ComplexKeyPartsBytes(d, key.MeanLen(), attrs, n, 0, opt, shards)
	} else {
		steady = AttributesBytes(d, k.Type, attrs, n, 0, opt, shards)
	}
	simple := ClickHouseAttributesMemory(l, attrs, n, opt, shards)
	if steady <= 0 || simple == nil {
		return nil
	}
	copies := 1 // HASHED_ARRAY's index holds the key once; the others, each attribute's table
	if d.Model != core.LayoutHashedArray {
		copies = len(attrs)
	}
	arena := StringArenaBytes(attrs, n, shards)
	keys := make([]Attribute, copies, copies+len(attrs))
	for i := range keys {
		keys[i] = key
	}
	withKeys := StringArenaBytes(append(keys, attrs...), n, shards)
	if d.Model == core.LayoutSparse {
		// bytes_allocated is sparse_hash_map's estimate of its pairs alone
		// (ClickHouse #22867); what it holds is its groups' vectors in
		// jemalloc, as inspect counts it too.
		steady += ComplexKeySparseRealGap(attrs, n, opt, shards)
	}
	simpleTables := simple.SteadyBytes - arena
	tables := steady - withKeys
	held := simple.FirstLoadPeakBytes - simple.SteadyBytes
	if simpleTables > 0 && tables > 0 {
		held = ScaleBytes(held, float64(tables)/float64(simpleTables))
	}
	m := &ClickHouseMemory{SteadyBytes: steady, FirstLoadPeakBytes: core.SaturatingAdd(steady, held)}
	m.ReloadPeakBytes = ReloadPeak(m.SteadyBytes, m.FirstLoadPeakBytes)
	m.Model = d.Layout + ": its key serialized in an arena, a reference to it in each cell; the tables' growth the simple key's, scaled to these cells " +
		"(at 1e6 UUID keys the first load's peak within 5 % of ClickHouse 26.7's RSS for HASHED and HASHED_ARRAY, the reload's 9-12 % under)"
	if k.IsString() {
		m.Model += "; a String key at its mean length, as packlab inspect models a user's (200,000 host names on a 26.7 server: 0.08 % from bytes_allocated)"
	}
	if d.Model == core.LayoutSparse {
		m.Model += "; sparse_hash_map's groups' vectors in jemalloc's size classes"
	}
	return m
}

// ComplexKeyDictionaryFor is the COMPLEX_KEY_ dictionary that builds a
// table of packlab's layout l's shape over a complex key: for packed and
// sparse COMPLEX_KEY_SPARSE_HASHED, which is sparse_hash_map (packlab's
// sparse), as ClickHouse's PackedHashMap holds a UInt64 key only.
func ComplexKeyDictionaryFor(l core.Layout) (ClickHouseDictionary, bool) {
	if l == core.LayoutPacked {
		l = core.LayoutSparse
	}
	for _, d := range clickHouseDictionaries {
		if d.ComplexKey && d.Model == l {
			return d, true
		}
	}
	return ClickHouseDictionary{}, false
}

// PlanKey is the key of a dictionary a plan weighs: its type as the plan
// takes it (UInt64, UUID, String, String(8..32)), and a String key's mean
// length in bytes where a table gave it (else its lengths' midpoint).
type PlanKey struct {
	Type    string
	MeanLen float64
}

// arenaCopy is one copy of k in ClickHouse's arena (Key.arenaCopy): a
// String key's its size and its bytes, of its mean length where one is
// given; false when k is not a key.
func (k PlanKey) arenaCopy() (Attribute, bool) {
	lo, hi, ok := ParseStringLengths(k.Type)
	if !ok {
		return keyCopyOf(k.Type)
	}
	a := Attribute{Type: StringRef, MinLen: StringKeyOverhead + lo, MaxLen: StringKeyOverhead + hi}
	if k.MeanLen > 0 {
		a.File = &FileColumn{MeanLen: StringKeyOverhead + k.MeanLen}
	}
	return a, true
}

// IsString reports whether k is a String key.
func (k PlanKey) IsString() bool {
	_, _, ok := ParseStringLengths(k.Type)
	return ok
}

// WideKey reports whether a key of type t is one a simple-key ClickHouse
// dictionary cannot hold: wider than its UInt64 key (UUID, UInt128,
// Int128), so only a COMPLEX_KEY_ layout keeps it whole.
func WideKey(t core.Type) bool { return t.Size > 8 }
