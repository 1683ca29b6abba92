// Package reload is a ClickHouse dictionary's reload as the server's memory
// tracker sees it (TrackedReload, LoadGrowths): what inspect and verify
// hold a reload's peak to.
package reload

import (
	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
)

// A reload's peak as the server's memory tracker sees it: the serving
// dictionary (real_bytes) beside the new one at the most it holds while it
// loads, and the source's read (the server's sourceReadBytes). MemoryTracking, which
// max_server_memory_usage checks and inspect reads, counts allocations:
// ClickHouse 26.7's memory worker corrects it to jemalloc's resident
// memory only once, at start (memory_worker_correct_memory_tracker is 0
// by default: MemoryTracker::updateAllocated in MemoryWorker.cpp), so a
// buffer the load's growth frees leaves it at once, whatever jemalloc
// keeps of it. A growth by realloc counts the new buffer before it frees
// the old one (Allocator::realloc: CurrentMemoryTracker::alloc(new_size),
// ::realloc, free(old_size)), so for that moment both are in it; an
// Arena only adds chunks (the last one counted whole, however little of it
// is written). The new load's peak is therefore its final tables, or, if
// more, its tables at the row of a growth with the old buffer beside them
// (LoadGrowths): the tables at that row (ClickHouse's own growth replayed
// by packlab's model at that many rows) plus the old buffer.
//
// Measured on the test server (ClickHouse 26.7, random keys, a String of
// 4 to 32 bytes; MemoryTracking sampled by three connections, ~150 a
// second, the highest of three reloads, MB above the base before the first
// load; docs/clickhouse-server.md has every row): at 1e6 rows HASHED_ARRAY
// with a String 171.9 in every reload (its tables 83.9 twice and 4.1 of
// the read: no growth exceeds its final tables, its arena's last 16 MiB
// chunk coming last; the model 173.2), HASHED with a String 180.6 when a
// sample caught its table's last growth (83.9 serving, 25.2 + 50.3 of its
// old and new table, 16.8 of arena, the read; the model 181.6), HASHED
// with a UInt16 87.4 (the model 87.7) or 77.2 when none did; at 1e7 rows
// HASHED_ARRAY with a String 2,286.2 to 2,292.7 (the model 2,287.1), HASHED with a
// String 2,554.6 (2,555.6), with a UInt16 1,344.5 (1,346.0), HASHED_ARRAY
// with a UInt16 1,394.8 (1,396.3), HASHED_ARRAY(SHARDS 4) with a String
// 3,486.2 to 3,551.5 (3,495.1), HASHED(SHARDS 4) with a UInt16 1,232.2 to
// 1,359.5 (1,346.0).

// Growth is a moment of a load when a growth holds an old buffer beside
// the new one: the tracker then holds the tables as they are after base
// rows (realAt(base)) and extra more.
type Growth struct{ Base, Extra int64 }

// TrackedReload is the reload's tracked peak less the read: the serving
// tables (real) and the new load's peak, its final tables or, where more,
// what it holds at a growth.
func TrackedReload(real int64, growths []Growth, realAt func(int64) int64) int64 {
	peak := real
	for _, g := range growths {
		peak = max(peak, core.SaturatingAdd(realAt(g.Base), g.Extra))
	}
	return core.SaturatingAdd(real, peak)
}

// LoadGrowths are the last growths of the buffers that grow by realloc in
// a load of n rows into cd's tables with attrs in shards shards: a hash
// table per attribute for HASHED and SPARSE_HASHED's PackedHashMap, the
// key index and an array per attribute for HASHED_ARRAY (sparse_hash_map,
// for the values SPARSE_HASHED does not pack, moves its groups one by one:
// nothing large is held twice). cells is the tables' cells over all shards
// (an attribute's table, or HASHED_ARRAY's index).
//
// One shard reserves its tables before each block for the rows read so far
// and the block's, so that its last reservation doubles the one before and
// comes before the block's rows are in: the arrays and the arena are then
// as they are after the rows before that block, every table reserved again
// in turn (the last one's old buffer still held). At 1e7 rows of
// HASHED_ARRAY with a String that is 1,207 MB of the new load (its index's
// new 537 MB beside its old 268, the array still at 2^23 rows, 134 MB, the
// arena 268), under which MemoryTracking's 1,215 lies, where the tables at
// the block's end would be 1,342.
//
// Sharded tables are not reserved and grow by their grower (x4 below
// 2^19 cells, HASHED_ARRAY's index below 2^23, then x2) at the row that
// fills them; shards load in parallel, each the same share of the rows, so
// their last growths fall at the same row and are taken at once: the
// tracker holds every shard's old buffer for that moment if their reallocs
// meet (the samples caught about two shards' of HASHED(SHARDS 4) and all
// four of HASHED_ARRAY(SHARDS 4): docs/clickhouse-server.md).
func LoadGrowths(cd dict.ClickHouseDictionary, attrs []dict.Attribute, n, cells int64, mlf float64, shards int) []Growth {
	s := int64(max(shards, 1))
	perShard := cells / s
	u64 := core.MustType("UInt64")
	var out []Growth
	var reserved *Growth // one shard's tables, reserved again together
	var reservedOld int64
	table := func(cell int64, fast int, load float64) {
		prev := previousCells(perShard, fast, s == 1)
		if prev == 0 || cell == 0 {
			return
		}
		capRows := int64(float64(prev) * load)
		if s > 1 {
			out = append(out, Growth{Base: min((capRows+1)*s, n), Extra: prev * cell * s})
			return
		}
		if capRows < dict.SourceBlockRows && n <= dict.SourceBlockRows {
			return // one reservation, for every row
		}
		if reserved == nil {
			reserved = &Growth{Base: min(capRows/dict.SourceBlockRows*dict.SourceBlockRows, n)}
		}
		reserved.Extra += perShard*cell - prev*cell // reserved anew
		reservedOld = max(reservedOld, prev*cell)   // the last one's old buffer
	}
	switch cd.Model {
	case core.LayoutHashed, core.LayoutPacked:
		load := dict.EffectiveMLF(core.LayoutHashed, mlf)
		for _, a := range attrs {
			var cell int64
			switch {
			case cd.ComplexKey && cd.Model == core.LayoutHashed:
				cell = (16+int64(a.Size)+7)&^7 + 8 // {StringRef, value} and the saved hash
			case cd.ComplexKey:
				cell = 0 // COMPLEX_KEY_SPARSE_HASHED: sparse_hash_map
			case dict.ClickHouseTable(cd.Model, a.Type) == core.LayoutSparse:
				cell = 0
			case cd.Model == core.LayoutPacked:
				cell = int64(core.PairBytes(u64, a.Type))
			default:
				cell = int64(core.PaddedCellBytes(u64, a.Type))
			}
			table(cell, 19, load)
		}
	case core.LayoutHashedArray:
		cell := int64(16) // {UInt64 key, UInt64 row}
		if cd.ComplexKey {
			cell = dict.ComplexKeyIndexCellBytes
		}
		table(cell, 23, core.DefaultMaxLoadFactor)
		rows := (n + s - 1) / s
		for _, a := range attrs { // PODArray: from 4 KiB, x2 as rows are added
			e := int64(a.Size)
			c := max(4096/e, 1)
			for c < rows {
				c *= 2
			}
			if c*e <= 4096 {
				continue
			}
			out = append(out, Growth{Base: min((c/2+1)*s, n), Extra: c / 2 * e * s})
		}
	}
	if reserved != nil {
		reserved.Extra += reservedOld
		out = append(out, *reserved)
	}
	return out
}

// previousCells is the cells a table of final cells had before its last
// growth: half of them when reserved block by block (one shard), else by
// ClickHouse's grower from 2^8 cells, x4 below 2^fast, then x2; 0 when it
// never grew.
func previousCells(final int64, fast int, reserved bool) int64 {
	if final <= 256 {
		return 0
	}
	if reserved {
		return final / 2
	}
	var prev int64
	for d := 8; d < 62 && int64(1)<<d < final; {
		prev = int64(1) << d
		if d < fast {
			d += 2
		} else {
			d++
		}
	}
	return prev
}
