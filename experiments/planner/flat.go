package planner

import (
	"fmt"
	"strconv"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/text"
)

// FlatLayout is FLAT's name among the plan's setups (dict.FlatSetup).
const FlatLayout = dict.FlatSetup

// checkMaxKey refuses a --max-key FLAT cannot use: negative, below the
// rows it must hold (keys from 0), or for keys that are not integers.
func (r PlanRequest) checkMaxKey(key core.Type) error {
	mk := strconv.FormatInt(r.MaxKey, 10)
	switch {
	case r.MaxKey == 0:
		return nil
	case r.MaxKey < 0 || r.MaxKey > source.MaxRows: // 2^62 as --max-key reads it, and --rows
		return fault.New("max_key", mk, "out of range", "1 to 2^62")
	case r.MaxKey < r.Rows-1:
		return fault.New("max_key", mk, fmt.Sprintf("below the rows: %s distinct keys from 0 reach at least %d", text.Rows(r.Rows), r.Rows-1),
			"the largest key, at least {rows} - 1")
	case key.Size > 8 || key.Kind == core.KindFloat || key.Kind == core.KindUUID:
		return fault.New("max_key", mk, "FLAT indexes its arrays by an integer key, not "+key.Name, "{max_key} with an integer key of at most 8 bytes")
	case key.Size < 8 && uint64(r.MaxKey) >= source.RangeLimit(key): // --key UInt8 --max-key 300
		return fault.New("max_key", mk, "larger than the key type "+key.Name+" holds", fmt.Sprintf("at most %d with {key} %s", source.RangeLimit(key)-1, key.Name))
	}
	return nil
}

// flatCandidate is FLAT as the plan weighs it for keys 0 .. MaxKey, or up
// to the keys after the growth where they reach past it: its
// arrays, one shard, no load factor; no speeds (FLAT is not measured by
// the plan's calibration).
func flatCandidate(p ParsedRequest) (Candidate, bool) {
	if p.MaxKey <= 0 || p.ComplexKey { // FLAT's key is a UInt64 index
		return Candidate{}, false
	}
	// Keys from 0: the distinct keys after the growth need at least as
	// many elements, whatever today's largest key (2M ids with 10 %
	// growth were given 2M elements, a load factor of 1.05, and keys past
	// the array failing the load).
	span := max(p.MaxKey+1, p.distinct)
	m := dict.FlatMemory(p.attrs, span, p.distinct)
	bytes := dict.FlatBytes(p.attrs, span, p.distinct)
	c := Candidate{
		Layout: FlatLayout, KeyType: p.key.Name, ValueType: p.value.Name, Attributes: dict.AttributesList(p.attrs),
		columns: dict.AttributeColumns(p.attrNames, p.attrs),
		Rows:    p.Rows, Distinct: p.distinct, Shards: 1,
		BucketCount:    dict.FlatCells(span, p.attrs[0].Size),
		BytesAllocated: bytes, Overhead: 1, PeakOverhead: 1,
		SteadyBytes: m.SteadyBytes, PeakBytes: m.FirstLoadPeakBytes, ReloadPeakBytes: m.ReloadPeakBytes,
		BytesPerPair:     float64(m.SteadyBytes) / float64(max(p.distinct, 1)),
		ClickHouseLayout: dict.FlatClause(span),
		ClickHouseNote:   fmt.Sprintf("ClickHouse's FLAT: an array per attribute of %s elements, indexed by the key (keys above %d fail the load)", text.Thousands(span), span-1),
		ClickHouse:       m,
		runtime:          p.Runtime,
	}
	c.LoadFactor = float64(p.distinct) / float64(max(c.BucketCount, 1))
	return c, true
}
