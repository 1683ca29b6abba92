package experiments

// FLAT: ClickHouse's layout for dense keys, the one its documentation
// calls the fastest. No hash table: one array per attribute, indexed by
// the key itself (FlatDictionary.cpp).
//
//	--attributes UInt16,Float64, keys 0 .. N-1:
//
//	value  [v0|v1|v2|...|vN-1| capacity to a power of two ]   PaddedPODArray<UInt16>
//	a2     [w0 |w1 |w2 |...  | ...                        ]   PaddedPODArray<Float64>
//	loaded_keys: N bits (std::vector<bool>), not in bytes_allocated
//
// Each array starts at INITIAL_ARRAY_SIZE elements (1024) and is resized
// to key + 1 when a key lands past it (resize_fill: PODArray rounds the
// allocation, the elements and its 127 bytes of padding, up to a power of
// two), so its size is the largest key's, not the row count's; a key at or
// above MAX_ARRAY_SIZE (500,000 by default) fails the load. bytes_allocated
// is each array's allocation and 160 bytes of bookkeeping an attribute
// (measured through chDB 26.7: 262,304 bytes for keys 0 .. 99,999 with a
// UInt16). The lab runs FLAT on generated keys whose largest it knows:
// sequential (0 .. rows-1) and range:M (below M).

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/packlab/packlab/core"
)

// FLAT's array sizes: ClickHouse's defaults, and the padding a
// PaddedPODArray allocates beside its elements (pad_left 64, pad_right 63).
const (
	flatInitialArraySize = 1024
	flatMaxArraySize     = 500_000
	flatArrayPadding     = 127
	flatAttributeBytes   = 160 // sizeof(Attribute) and the array's header, measured
)

// flat reports whether d is ClickHouse's FLAT.
func (d ClickHouseDictionary) flat() bool { return d.Layout == "FLAT" }

// flatKeySpan is the largest key + 1 a generated source gives (its array's
// size), or false for keys FLAT cannot index (random, zipf, a file's).
func flatKeySpan(spec core.SourceSpec, rows int64) (int64, bool) {
	switch spec.Kind {
	case core.SourceSequential:
		return max(rows, 1), true
	case core.SourceRange:
		return max(int64(spec.Param), 1), true // range:M keys are below M
	}
	return 0, false
}

// checkFlat refuses what FLAT cannot load: keys it cannot index, SHARDS,
// and a key that is not an integer of at most 8 bytes.
func (c Config) checkFlat(name string) error {
	spec, err := c.SourceSpec()
	if err != nil {
		return nil // reported as the source's error
	}
	if _, ok := flatKeySpan(spec, c.Rows); !ok {
		return fieldErr("--keys", spec.String(), name+" indexes an array by the key, so it needs keys whose largest is known and small",
			"sequential or range:M with "+name)
	}
	if c.Shards > 1 {
		return fieldErr("--shards", strconv.Itoa(c.Shards), name+" takes no SHARDS", "1 with "+name)
	}
	if k, err := core.ParseType(c.Key); err == nil && (k.Size > 8 || k.Kind == core.KindFloat || k.Kind == core.KindUUID) {
		return fieldErr("--key", c.Key, name+" indexes its arrays by an integer key", "an integer type of at most 8 bytes, e.g. UInt64")
	}
	return nil
}

// flatClause is FLAT's LAYOUT clause for keys below span: MAX_ARRAY_SIZE
// only where the default is too small.
func flatClause(span int64) string {
	if span > flatMaxArraySize {
		return fmt.Sprintf("LAYOUT(FLAT(MAX_ARRAY_SIZE %d))", span)
	}
	return "LAYOUT(FLAT())"
}

// flatArrayBytes is a PaddedPODArray of n elements of size bytes: the
// elements and the padding, rounded up to a power of two.
func flatArrayBytes(n int64, size int) int64 {
	need := core.SaturatingAdd(core.SaturatingMul(max(n, flatInitialArraySize), int64(size)), flatArrayPadding)
	if need > 1<<62 {
		return need
	}
	return int64(1) << bits.Len64(uint64(need-1))
}

// flatBytes is FLAT's bytes_allocated for keys below span, n of them
// loaded: an array per attribute (a String's holds its 16-byte reference,
// its values in one arena), and each attribute's bookkeeping.
func flatBytes(attrs []attribute, span, n int64) int64 {
	var b int64
	for _, a := range attrs {
		b = core.SaturatingAdd(b, flatArrayBytes(span, a.Size)+flatAttributeBytes)
	}
	return core.SaturatingAdd(b, stringArenaBytes(attrs, n, 1))
}

// flatMemory is FLAT's memory for the guard: its arrays grow by doubling
// (the last growth holds the old half beside the new array), and a reload
// holds the serving dictionary beside a new one at that peak; the loaded
// keys' bits (span/8 bytes) are beside them, outside bytes_allocated.
func flatMemory(attrs []attribute, span, n int64) *ClickHouseMemory {
	steady := core.SaturatingAdd(flatBytes(attrs, span, n), span/8)
	peak := core.SaturatingAdd(steady, steady/2)
	return &ClickHouseMemory{SteadyBytes: steady, FirstLoadPeakBytes: peak, ReloadPeakBytes: core.SaturatingAdd(steady, peak),
		Model: "FLAT: an array per attribute of the largest key's size, doubled as keys land past it"}
}

// flatSpanOf is the key span of a FLAT run's result, from its source.
func flatSpanOf(res *Result) (int64, bool) {
	spec, err := core.ParseSourceSpec(res.Source)
	if err != nil {
		return 0, false
	}
	return flatKeySpan(spec, res.Rows)
}

// flatLayout is FLAT's name among the plan's setups: ClickHouse's alone,
// packlab keeps no such table.
const flatLayout = "flat"

// checkMaxKey refuses a --max-key FLAT cannot use: negative, below the
// rows it must hold (keys from 0), or for keys that are not integers.
func (r PlanRequest) checkMaxKey(key core.Type) error {
	mk := strconv.FormatInt(r.MaxKey, 10)
	switch {
	case r.MaxKey == 0:
		return nil
	case r.MaxKey < 0 || r.MaxKey >= core.MaxSourceRows:
		return fieldErr("--max-key", mk, "out of range", "1 to 2^62")
	case r.MaxKey < r.Rows-1:
		return fieldErr("--max-key", mk, fmt.Sprintf("below the rows: %s distinct keys from 0 reach at least %d", FormatRows(r.Rows), r.Rows-1),
			"the largest key, at least --rows - 1")
	case key.Size > 8 || key.Kind == core.KindFloat || key.Kind == core.KindUUID:
		return fieldErr("--max-key", mk, "FLAT indexes its arrays by an integer key, not "+key.Name, "--max-key with an integer key of at most 8 bytes")
	}
	return nil
}

// flatCandidate is FLAT as the plan weighs it for keys 0 .. MaxKey: its
// arrays, one shard, no load factor; no speeds (FLAT is not measured by
// the plan's calibration).
func flatCandidate(p parsedPlan) (Candidate, bool) {
	if p.MaxKey <= 0 {
		return Candidate{}, false
	}
	span := p.MaxKey + 1
	m := flatMemory(p.attrs, span, p.distinct)
	bytes := flatBytes(p.attrs, span, p.distinct)
	c := Candidate{
		Layout: flatLayout, KeyType: p.key.Name, ValueType: p.value.Name, Attributes: attributesList(p.attrs),
		columns: attributeColumns(p.attrNames, p.attrs),
		Rows:    p.Rows, Distinct: p.distinct, Shards: 1,
		BucketCount:    (flatArrayBytes(span, p.attrs[0].Size) - flatArrayPadding) / int64(p.attrs[0].Size),
		BytesAllocated: bytes, Overhead: 1, PeakOverhead: 1,
		SteadyBytes: m.SteadyBytes, PeakBytes: m.FirstLoadPeakBytes, ReloadPeakBytes: m.ReloadPeakBytes,
		BytesPerPair:     float64(m.SteadyBytes) / float64(max(p.distinct, 1)),
		ClickHouseLayout: flatClause(span),
		ClickHouseNote:   fmt.Sprintf("ClickHouse's FLAT: an array per attribute of %s elements, indexed by the key (keys above %d fail the load)", GroupThousands(span), p.MaxKey),
		ClickHouse:       m,
		runtime:          p.Runtime,
	}
	c.LoadFactor = float64(p.distinct) / float64(max(c.BucketCount, 1))
	return c, true
}
