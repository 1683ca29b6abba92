package chdriver

// FLAT: ClickHouse's layout for dense keys, the one its documentation
// calls the fastest. No hash table: one array per attribute, indexed by
// the key itself (FlatDictionary.cpp).
//
//	--attributes UInt16,Float64, keys 0 .. N-1:
//
//	value  [v0|v1|v2|...|vN-1| capacity to a power of two ]   PaddedPODArray<UInt16>
//	a2     [w0 |w1 |w2 |...  | ...                        ]   PaddedPODArray<Float64>
//	loaded_keys: N bits (std::vector<bool>), not in bytes_allocated
//	a Nullable's NULL keys: a HashSet<UInt64>, as HASHED's
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
	"strconv"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

// flatKeySpan is the largest key + 1 a generated source gives (its array's
// size), or false for keys FLAT cannot index (random, zipf, a file's).
func flatKeySpan(spec source.Spec, rows int64) (int64, bool) {
	switch spec.Kind {
	case source.Sequential:
		return max(rows, 1), true
	case source.Range:
		return max(int64(spec.Param), 1), true // range:M keys are below M
	}
	return 0, false
}

// checkFlat refuses what FLAT cannot load: keys it cannot index, SHARDS,
// and a key that is not an integer of at most 8 bytes.
func checkFlat(c config.Config, name string) error {
	spec, err := c.SourceSpec()
	if err != nil {
		return nil // reported as the source's error
	}
	if _, ok := flatKeySpan(spec, c.Rows); !ok {
		return fault.New("keys", spec.String(), name+" indexes an array by the key, so it needs keys whose largest is known and small",
			"sequential or range:M with "+name)
	}
	if c.Shards > 1 {
		return fault.New("shards", strconv.Itoa(c.Shards), name+" takes no SHARDS", "1 with "+name)
	}
	if k, err := core.ParseType(c.Key); err == nil && (k.Size > 8 || k.Kind == core.KindFloat || k.Kind == core.KindUUID) {
		return fault.New("key", c.Key, name+" indexes its arrays by an integer key", "an integer type of at most 8 bytes, e.g. UInt64")
	}
	return nil
}

// flatSpanOf is the key span of a FLAT run's result, from its source.
func flatSpanOf(res *result.Result) (int64, bool) {
	spec, err := source.Parse(res.Source)
	if err != nil {
		return 0, false
	}
	return flatKeySpan(spec, res.Rows)
}
