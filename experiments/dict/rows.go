package dict

import (
	"cmp"
	"slices"
	"strings"

	"github.com/packlab/packlab/core"
)

// RowSuffix names a row layout after its table: packed_row, compact_row.
const RowSuffix = "_row"

// MaxRowBytes is the widest row a cell takes: a U128's. A wider row
// lives in a row array beside the table, the cell holding its number
// (RowCell).
const MaxRowBytes = 16

// RowTables are the tables a row layout may be.
var RowTables = []core.Layout{core.LayoutPacked, core.LayoutCompact}

// FlatSetup is FLAT's name among a plan's setups: ClickHouse's alone,
// packlab keeps no such table.
const FlatSetup = "flat"

// SetupOrder is the order of the layouts of a plan's setups, in which the
// plan breaks its ties and a report draws them: core.Layouts(), the row
// layouts, FLAT.
func SetupOrder() []string {
	var out []string
	for _, l := range core.Layouts() {
		out = append(out, string(l))
	}
	return append(append(out, RowLayoutNames()...), FlatSetup)
}

// SetupIndex is a layout's place in SetupOrder.
func SetupIndex(name string) int {
	order := SetupOrder()
	if i := slices.Index(order, name); i >= 0 {
		return i
	}
	return len(order)
}

// RowLayoutNames is what --layout takes for a row layout.
func RowLayoutNames() []string {
	names := make([]string, len(RowTables))
	for i, l := range RowTables {
		names[i] = string(l) + RowSuffix
	}
	return names
}

// ParseRowLayout finds the table of a row layout's name.
func ParseRowLayout(name string) (core.Layout, bool) {
	return findNamed(RowTables, name, func(l core.Layout) string { return string(l) + RowSuffix })
}

// RowType is the value type of a row of attrs: their bytes summed,
// aligned to nothing, named as ClickHouse names a row of types.
func RowType(attrs []Attribute) core.Type {
	names := make([]string, len(attrs))
	size := 0
	nullable := false
	for i, a := range attrs {
		names[i], size = a.Name, size+RowAttrBytes(a)
		if a.Nullable {
			names[i], nullable = "Nullable("+a.Name+")", true
		}
	}
	if nullable { // a byte of null flags, a bit a Nullable attribute
		size++
	}
	return core.RowType("Tuple("+strings.Join(names, ", ")+")", size)
}

// RowStringBytes is a String's part of a row: its reference into the arena.
const RowStringBytes = 8

// RowArenaChunk is the chunk the arena and the row array grow by once
// their first chunks (core.ArenaFirstChunk, doubling) are full: 4 MiB,
// the smallest slab core gives huge pages (1e7 random reads of 28-byte
// rows of a 280 MB array: 42 ns a read in chunks of 4 MiB as in chunks of
// 64 MiB, 62 in chunks of 1 MiB, whose pages are 4 KiB).
const RowArenaChunk = 4 << 20

// RowAttrBytes is what attribute a takes in a row.
func RowAttrBytes(a Attribute) int {
	if a.IsString() {
		return RowStringBytes
	}
	return a.Size
}

// RowArenaBytes is what a row layout's arena holds for the String
// attributes of n rows: their mean lengths over the rows not NULL, in
// whole chunks (core.ArenaSize).
func RowArenaBytes(attrs []Attribute, n int64) int64 {
	var sum float64
	for _, a := range attrs {
		sum += a.MeanLen() * float64(a.NonNull(n)) // a NULL takes none
	}
	total := int64(sum + 0.5)
	if total == 0 {
		return 0
	}
	return core.ArenaSize(RowArenaChunk, 1, total)
}

// RowCell is what a row layout's cell holds beside the key for rows of
// attrs, at most rows of them: the row itself (RowType) when it is at most
// MaxRowBytes, else the row's number in the row array beside the table
// (RowArrayBytes), 4 bytes below 2^32 rows and 8 from there, named as the
// row.
func RowCell(attrs []Attribute, rows int64) core.Type { return rowCell(RowType(attrs), rows) }

// rowCell is RowCell of a row of type row.
func rowCell(row core.Type, rows int64) core.Type {
	if row.Size <= MaxRowBytes {
		return row
	}
	if rows < 1<<32 {
		return core.RowType(row.Name, 4)
	}
	return core.RowType(row.Name, 8)
}

// RowArrayBytes is what the row array of n rows of width bytes holds:
// whole chunks of whole rows (core.ArenaSize).
func RowArrayBytes(width int, n int64) int64 {
	return core.ArenaSize(RowArenaChunk, width, n)
}

// RowPrediction is core's prediction for a row layout's table of attrs
// (RowCell as its value, its cells keeping only its bytes), the row array
// of a row wider than a cell's value, and the arena of its Strings; the
// array and the arena only grow: they are in the final bytes and the peak.
func RowPrediction(l core.Layout, key core.Type, attrs []Attribute, n int64, opt core.Options, shards int) (core.Prediction, error) {
	row := RowType(attrs)
	cell := rowCell(row, n)
	arena, array := RowArenaBytes(attrs, n), int64(0)
	if cell.Size != row.Size {
		array = RowArrayBytes(row.Size, n)
	}
	opt.ValueBytes = cell.Size
	pr, err := core.Predict(l, key, cell, n, opt, shards)
	if err != nil {
		return pr, err
	}
	beside := core.SaturatingAdd(arena, array)
	pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, beside)
	pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, beside)
	return pr, nil
}

// CellBlockBytes bounds the attribute cells a pass over a file holds at
// once (a block's), the pre-read's and a row layout's load alike: 65,536
// rows of 2-6 KB Strings held 970 MB in the pre-read and 1,395 MiB in a
// packed_row worker whose table and arena held 396 MiB (the cells' slice
// growing by appends, and the Go heap's pacing at twice what is live).
const CellBlockBytes = 16 << 20

// FirstCellBlockRows is a pass's first block when the file has attribute
// cells, whose size is not known yet.
const FirstCellBlockRows = 1024

// CellBlockRows is the next block's rows after one of n rows whose cells
// took cellBytes: as many as CellBlockBytes holds, at least 64 and at most
// most (the block asked for); rows again when the block told nothing.
func CellBlockRows(rows, n int, cellBytes int64, most int) int {
	if n <= 0 || cellBytes <= 0 {
		return rows
	}
	perRow := max(cellBytes/int64(n), 1)
	return int(min(max(CellBlockBytes/perRow, 64), int64(most)))
}

// RowCellsHeapBytes is what a row layout's load holds in the Go heap for a
// file's attribute cells (FileColumn): one block of them, at most
// CellBlockBytes, in the source's chunks, which it keeps from block to
// block (core/source's cellChunks) and lets go at the end of the pass.
// The last block's are still resident when the read starts (the collector
// has not run yet), so the read counts them too. Measured (2-6 KB Strings,
// 2e4 rows, packed_row and compact_row, 12 runs each beside two busy
// loops): 0.99x-1.01x of the predicted peak, where five blocks had been
// counted for a buffer grown by appends, whose garbage made the peak hang
// on the collector's pacing (0.94x-1.10x).
// Nothing for generated attributes.
func RowCellsHeapBytes(attrs []Attribute, blockRows int, rows int64) int64 {
	perRow := 0.0
	for _, a := range attrs {
		if a.File == nil {
			continue
		}
		perRow += cellTextBytes
		if a.IsString() {
			perRow += a.File.MeanLen * (1 - a.File.NullShare)
		}
	}
	if perRow == 0 {
		return 0
	}
	block := min(int64(cmp.Or(blockRows, core.DefaultBlockRows)), max(rows, 0))
	return min(int64(perRow*float64(block)), CellBlockBytes)
}

// FeedCellsHeapBytes is what the lab holds of a file's attribute cells as
// it feeds a ClickHouse worker and writes its source: five blocks
// (RowCellsHeapBytes), as measured when the source's cells grew by
// appends (docs/reliability.md's table). Since the source keeps its
// chunks, packlab's own peak in a ch_hashed run over 2e4 rows of 2-6 KB
// Strings is 78 MiB above its start (was 128), against the 80 these five
// blocks count; over 1e5 rows 88 (was 93): the figure stands.
func FeedCellsHeapBytes(attrs []Attribute, blockRows int, rows int64) int64 {
	return 5 * RowCellsHeapBytes(attrs, blockRows, rows)
}

// cellTextBytes is a cell's text and separator as a file holds a number:
// a few bytes, counted as 8.
const cellTextBytes = 8

// RowRunBytes is what a row layout's run holds in the Go heap besides its
// table and the loader's blocks: a file's cells in the loader's block
// (RowCellsHeapBytes), which the load holds, and, when it reads, those
// cells again beside the read's copy of the rows it finds
// (RowReadCopyBytes), the last block's not yet collected.
func RowRunBytes(attrs []Attribute, blockRows int, rows int64, read bool) (load, reading int64) {
	cells := RowCellsHeapBytes(attrs, blockRows, rows)
	if !read {
		return cells, 0
	}
	copies := RowReadCopyBytes(attrs)
	return cells, core.SaturatingAdd(cells, copies)
}

// RowReadCopyBytes is what a row layout's read holds as it copies the rows
// it finds out (rowstore.CopyRows): a chunk of core.Read's 4,096 keys'
// Strings, in a buffer sized to them with an eighth to spare.
func RowReadCopyBytes(attrs []Attribute) int64 {
	perRow := 0.0
	for _, a := range attrs {
		perRow += a.MeanLen()
	}
	return int64(9.0 / 8 * 4096 * perRow)
}
