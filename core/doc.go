// Package core is packlab's library: memory-dense hash tables of fixed-size
// keys and values, faithful to the tables ClickHouse dictionaries and Go
// programs actually run, each reporting exactly where its bytes go.
//
// # Words
//
//   - cell (slot, bucket): one key/value place in a table.
//   - stride: bytes from one cell to the next.
//   - payload: sizeof(K)+sizeof(V) per stored element, the physical lower
//     bound. A <UInt64,UInt16> pair is 10 bytes.
//   - padding: bytes a cell spends on alignment. struct{uint64; uint16} is 16
//     bytes: 6 of them (37.5 %) are padding.
//   - empty bytes: cells (or vector capacity) allocated but unoccupied.
//   - metadata: headers, control bytes, bitmaps, row indexes, pointers.
//   - bytes_allocated: payload + padding + empty + metadata, computed from the
//     structure's own geometry. ClickHouse's system.dictionaries reports a
//     figure of that name; packlab's is exact, not an estimate.
//   - load factor: elements / cells. max load factor (mlf): the fill at which
//     a table grows, in [0.5, 0.99] as ClickHouse's MAX_LOAD_FACTOR.
//   - shard: an independent table; a key's shard comes from a hash
//     independent of the in-table hash (see ShardOf).
//
// # Types
//
// Keys and values carry ClickHouse's type names (UInt8 ... Int128, Float32,
// Float64, UUID, Date, DateTime; see ParseType). A table stores their bits in
// one of the Bits types (uint8, uint16, uint32, uint64, [2]uint64), so equality
// is bitwise: NaN finds NaN, and -0.0 is a different key from 0.0. Each
// layout is generic over K and V; the lab instantiates one table per pair of
// sizes, not per pair of types.
//
// # Layouts
//
// One file per layout, with its memory picture at the top. What ClickHouse
// calls each (and since which release), the lab's other layouts and a line
// on each are the lab's table of layouts, experiments/dict's Layouts; in
// short:
//
//	hashed.go        Hashed       ClickHouse's HashMap: padded cells, linear probing
//	packed.go        Packed       ClickHouse's PackedHashMap: the same, cells unpadded
//	sparse.go        Sparse       google sparse_hash_map: 48-bucket groups + bitmaps
//	hashed_array.go  HashedArray  ClickHouse's HASHED_ARRAY: key -> row index + value array
//	gomap.go         GoMap        Go's map[K]V (swiss table), the everyday baseline
//	compact.go       Compact      packlab's: quotiented slots of a few bytes, sorted Robin
//	                              Hood probing, near the information limit
//	iceberg.go       Iceberg      packlab's: quotiented slots packed bit to bit into three-line
//	                              buckets, a front yard and a two-choice back yard
//
// For 1,000,000 distinct <UInt64,UInt16> pairs at mlf 0.5, hashed and packed
// both have 2^21 = 2,097,152 cells: 33,554,432 bytes of 16-byte cells against
// 20,971,520 bytes of 10-byte cells, plus a header of a few dozen bytes.
//
// Growth is ClickHouse's (grower.go): 256 cells to start, grow when
// elements > cells*mlf, x4 below 2^19 cells and x2 above. compact has its
// own (x2 below 2^16 home slots, x5/4 above, default mlf 0.9), which keeps
// it between 0.72 and 0.9 full: for 1e8 <UInt64,UInt16> pairs 10.3 bytes a
// pair, where the information limit (InformationLimitBits) is 6.9.
//
// A table that knows its size takes Options.Reserve, as boost's reserve(n)
// or make(map, n): each layout starts at the size its rule gives for that
// many keys (ClickHouse's set(n) for hashed and packed; exactly n/mlf home
// slots for compact, 8.89 bytes a pair at mlf 0.9) and grows only past it;
// Predict takes it too.
//
// A row of several attributes takes Options.ValueBytes: packed and compact
// keep only the row's bytes of a wider V, the key once and the attributes
// beside it (UInt16, UInt32 and Float64 in a U128: a packed cell of 8 + 14
// bytes, no padding); RowType is such a row's type for Predict and the
// synthetic sources of core/source. The lab's packed_row and compact_row are these tables.
//
// # Memory: slabs the tables own
//
// Every table but gomap keeps its cells in slabs (slab.go): blocks of zeroed
// memory outside the Go heap on Linux and macOS (anonymous mmap), which the
// table releases the moment it no longer needs them, so that its resident
// memory is what Stats computes, at every moment, in any program, with no
// garbage collection involved. hashed, packed and hashed_array grow as
// ClickHouse's HashTable does: the slab is enlarged like a realloc (mremap on
// Linux, which moves pages rather than bytes, so the peak of a growth is the
// new slab alone), then the elements are re-placed in place. Where slabs
// cannot be remapped (macOS, js/wasm) a growth copies, and for a moment the
// old and the new slab are both alive; core.Predict knows which
// (SlabsGrowInPlace). compact moves its pairs into a new slab in one pass
// in slot order and hands the old slab back behind the pass (Linux), so it
// too holds little more than the new slab at the peak. sparse's vectors move page by page through a pool the
// old and the new table share, so it holds about one copy at any moment.
// Slabs of 4 MiB and more ask for transparent huge pages.
//
// Close releases a table's slabs at once; a table dropped without Close is
// released by a runtime cleanup after the collector finds it unreachable
// (the collector runs at least every two minutes). A slab the OS refuses is
// a *SlabError, panicked by the insert that needed it before it changes
// anything, and returned by Load and New.
//
// # Batches
//
// GetMany (every layout) and InsertMany (hashed, packed, sparse, compact)
// work on a batch of keys, as ClickHouse's dictGet works on a column: while
// they probe one small batch, the home cells of the next are prefetched
// (prefetch.go), so the CPU overlaps the cache misses of independent keys.
// The lab's read phase and the loader's workers use them.
//
// Every table has CheckInvariants, which recounts occupancy, re-finds every
// key and checks that the memory breakdown adds up; the tests call it after
// every operation sequence.
package core
