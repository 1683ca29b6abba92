package core

import (
	"math/bits"
	"runtime"
)

// Arena is memory beside a table for what its cells refer to (a row's
// Strings, rows too wide for a cell): chunks that are slabs outside the Go
// heap as a table's are (huge pages where the OS has them), filled in
// order and never moved, so that a piece's offset stays valid for the
// arena's life. Chunks double from ArenaFirstChunk up to the arena's chunk
// size and keep that size from then on, as ClickHouse's own Arena grows
// (4 KiB doubling to 128 MiB there), so that a few thousand rows hold a
// few hundred KiB rather than a whole chunk:
//
//	offset 0   64K        192K                 geometric part    then chunk after chunk
//	+-----+--+-+----------+-+-----------------+--- ... ---+---------------+----
//	|piece|pc| | piece    | | piece           |           | piece | piece |     a piece never
//	+-----+--+-+----------+-+-----------------+--- ... ---+---------------+---- straddles two slabs
//	 chunk 0     chunk 1      chunk 2 (256K)                chunk g (chunk)
//
// A piece larger than the next chunk (a String of several MiB in a file's
// row) gets one slab of as many of the next chunks as it needs, counted as
// those chunks; what the last of them leaves is filled by the next pieces,
// so offsets keep naming their chunk.
//
// Reads over hundreds of MB on the Go heap's 4 KiB pages wait on page
// walks, and a slab grown in place by small steps (mremap) loses its huge
// pages each time the kernel moves it (1e7 random reads of 28-byte pieces
// of a 280 MB arena: 57.8 ns a read grown by 1 MiB steps, 22.4 in 64 MiB
// chunks); chunks of a few MiB keep most of their pages huge, so a row's
// second lookup (its row, its String) misses the TLB about as seldom as
// the table's first. The small first chunks hold at most 4 MiB in all.
type Arena struct {
	arenaGeo
	chunks  [][]byte // chunk j's bytes: its slab from j's start on (a large piece's slab spans several)
	last    int64    // bytes used in the last chunk
	len     int64    // bytes handed out, in all
	owner   *slabOwner
	cleanup runtime.Cleanup
}

// ArenaFirstChunk is an arena's first chunk, unless its chunk size is
// smaller: 64 KiB.
const ArenaFirstChunk = 64 << 10

// arenaGeo is where an arena's chunks start and how large they are.
type arenaGeo struct {
	first, chunk int64 // chunk 0's bytes; from chunk geo on, chunk bytes each
	geo          int   // the chunks smaller than chunk: first, 2 x first, ...
	geoEnd       int64 // their bytes
}

func newArenaGeo(chunk int) arenaGeo {
	g := arenaGeo{chunk: int64(max(chunk, 1))}
	g.first = min(ArenaFirstChunk, g.chunk)
	for s := g.first; s < g.chunk; s *= 2 {
		g.geoEnd += s
		g.geo++
	}
	return g
}

// ChunkBytes is chunk j's size.
func (g arenaGeo) ChunkBytes(j int) int64 {
	if j < g.geo {
		return g.first << j
	}
	return g.chunk
}

// chunkStart is chunk j's first offset.
func (g arenaGeo) chunkStart(j int) int64 {
	if j < g.geo {
		return g.first * (1<<j - 1)
	}
	return g.geoEnd + int64(j-g.geo)*g.chunk
}

// chunkOf is the chunk that offset off is in.
func (g arenaGeo) chunkOf(off int64) int {
	if off >= g.geoEnd {
		return g.geo + int((off-g.geoEnd)/g.chunk)
	}
	return bits.Len64(uint64(off/g.first+1)) - 1 // chunk j spans first x [2^j - 1, 2^(j+1) - 1)
}

// ArenaSize is the bytes of an arena of chunk (NewArena) once it has
// handed out n pieces of width bytes each (at most its first chunk): its
// chunks, chunk j holding ChunkBytes(j) / width of them. For pieces of
// many lengths, n bytes of width 1 is the size less the ends of chunks
// that a piece did not fit.
func ArenaSize(chunk, width int, n int64) int64 {
	g, w := newArenaGeo(chunk), int64(max(width, 1))
	j := 0
	for ; n > 0 && j < g.geo; j++ {
		n -= g.ChunkBytes(j) / w
	}
	if n <= 0 {
		return g.chunkStart(j)
	}
	per := max(g.chunk/w, 1)
	return SaturatingAdd(g.geoEnd, SaturatingMul(n/per+min(n%per, 1), g.chunk))
}

// arenaName names an arena in a *SlabError.
const arenaName Layout = "arena"

// NewArena returns an empty arena whose chunks grow to chunk bytes (at
// least 1).
func NewArena(chunk int) *Arena {
	a := &Arena{arenaGeo: newArenaGeo(chunk)}
	a.owner, a.cleanup = own(a, arenaName)
	return a
}

// Alloc hands out the next n bytes, zeroed, and returns their offset: in
// the last chunk, or at the start of a new slab when they do not fit what
// is left of it (the next chunk, or as many of the next as n needs). It
// returns the *SlabError of a slab the OS refuses, the arena unchanged.
func (a *Arena) Alloc(n int) (int64, error) {
	size := int64(n)
	if j := len(a.chunks); j > 0 && a.last+size <= a.ChunkBytes(j-1) {
		off := a.chunkStart(j-1) + a.last
		a.last += size
		a.len += size
		return off, nil
	}
	j, k, bytes := len(a.chunks), 0, int64(0)
	for k == 0 || bytes < size {
		bytes += a.ChunkBytes(j + k)
		k++
	}
	c, err := newSlab(arenaName, uintptr(bytes))
	if err != nil {
		return 0, err
	}
	a.owner.add(c)
	for t := range k {
		a.chunks = append(a.chunks, c[a.chunkStart(j+t)-a.chunkStart(j):])
	}
	a.last = size - (bytes - a.ChunkBytes(j+k-1)) // the piece's bytes in its last chunk
	a.len += size
	return a.chunkStart(j), nil
}

// At is the n bytes at offset off.
func (a *Arena) At(off int64, n int) []byte {
	j := a.chunkOf(off)
	i := off - a.chunkStart(j)
	return a.chunks[j][i : i+int64(n) : i+int64(n)]
}

// Len is the bytes handed out; Size what the arena holds, its chunks.
func (a *Arena) Len() int64  { return a.len }
func (a *Arena) Size() int64 { return a.chunkStart(len(a.chunks)) }

// Close releases the chunks at once; the arena must not be used
// afterwards. An arena that becomes unreachable is released all the same.
func (a *Arena) Close() {
	a.owner.close(&a.cleanup)
	a.chunks, a.last, a.len = nil, 0, 0
}
