package core

import "runtime"

// Arena is memory beside a table for what its cells refer to (a row's
// Strings, rows too wide for a cell): chunks of one size, slabs outside
// the Go heap as a table's are (huge pages where the OS has them), filled
// in order and never moved, so that a piece's offset stays valid for the
// arena's life.
//
//	offset 0              chunk           2 x chunk
//	+-------+------+------+---+-----------+----------------+
//	| piece | piece| piece|   | piece     | ...            |   a piece never straddles two chunks
//	+-------+------+------+---+-----------+----------------+
//	 chunk 0 (a slab)         chunk 1 (a slab)
//
// A piece larger than a chunk (a String of several MiB in a file's row)
// gets a slab of as many whole chunks as it needs, counted as that many
// chunks; what its last chunk leaves is filled by the next pieces, so an
// offset still names its chunk by off / chunk.
//
// Reads over hundreds of MB on the Go heap's 4 KiB pages wait on page
// walks, and a slab grown in place by small steps (mremap) loses its huge
// pages each time the kernel moves it (1e7 random reads of 28-byte pieces
// of a 280 MB arena: 57.8 ns a read grown by 1 MiB steps, 22.4 in 64 MiB
// chunks); chunks of a few MiB keep most of their pages huge, so a row's
// second lookup (its row, its String) misses the TLB about as seldom as
// the table's first.
type Arena struct {
	chunks  [][]byte // chunk i's bytes: its slab from i's start on (a large piece's slab spans several)
	chunk   int64
	last    int64 // bytes used in the last chunk
	len     int64 // bytes handed out, in all
	owner   *slabOwner
	cleanup runtime.Cleanup
}

// arenaName names an arena in a *SlabError.
const arenaName Layout = "arena"

// NewArena returns an empty arena of chunks of chunk bytes (at least 1).
func NewArena(chunk int) *Arena {
	a := &Arena{chunk: int64(max(chunk, 1))}
	a.owner, a.cleanup = own(a, arenaName)
	return a
}

// Alloc hands out the next n bytes, zeroed, and returns their offset: in
// the last chunk, or at the start of a new slab when they do not fit what
// is left of it (one chunk, or as many as n needs). It returns the
// *SlabError of a slab the OS refuses, the arena unchanged.
func (a *Arena) Alloc(n int) (int64, error) {
	if len(a.chunks) == 0 || a.last+int64(n) > a.chunk {
		k := max((int64(n)+a.chunk-1)/a.chunk, 1)
		c, err := newSlab(arenaName, uintptr(k*a.chunk))
		if err != nil {
			return 0, err
		}
		a.owner.add(c)
		for j := range k {
			a.chunks = append(a.chunks, c[j*a.chunk:])
		}
		a.last = -(k - 1) * a.chunk // the piece's bytes past its first chunk are in the last's
	}
	off := int64(len(a.chunks)-1)*a.chunk + a.last
	a.last += int64(n)
	a.len += int64(n)
	return off, nil
}

// At is the n bytes at offset off.
func (a *Arena) At(off int64, n int) []byte {
	c, i := a.chunks[off/a.chunk], off%a.chunk
	return c[i : i+int64(n) : i+int64(n)]
}

// Len is the bytes handed out; Size what the arena holds, its chunks.
func (a *Arena) Len() int64  { return a.len }
func (a *Arena) Size() int64 { return int64(len(a.chunks)) * a.chunk }

// Close releases the chunks at once; the arena must not be used
// afterwards. An arena that becomes unreachable is released all the same.
func (a *Arena) Close() {
	a.cleanup.Stop()
	a.owner.free()
	a.chunks, a.last, a.len = nil, 0, 0
}
