package core

import (
	"bytes"
	"errors"
	"testing"
)

// TestArena: pieces follow one another and keep their bytes as chunks are
// added (64, 128, 256 and 512 KiB, then 1 MiB each), a piece that does not
// fit what is left of a chunk starts the next, a piece larger than a chunk
// takes whole chunks and the next pieces fill its last, the arena holds
// whole chunks (ArenaSize), counted in SlabBytes until Close, and a
// refused chunk changes nothing.
func TestArena(t *testing.T) {
	before := SlabBytes()
	const step = 1 << 20
	a := NewArena(step)
	var offs []int64
	end, total := int64(0), int64(0)
	chunks := []int64{0} // where each chunk starts, and where the last ends
	for c := int64(ArenaFirstChunk); c < step; c *= 2 {
		chunks = append(chunks, chunks[len(chunks)-1]+c)
	}
	for len(chunks) < 100 {
		chunks = append(chunks, chunks[len(chunks)-1]+step)
	}
	cur := 0                      // the chunk end is in
	pieceLen := func(i int) int { // 3000 pieces of 1..1000 bytes, and four of 2.5 chunks
		if i%700 == 699 {
			return 5 * step / 2
		}
		return 1 + i%1000
	}
	for i := range 3000 {
		n := pieceLen(i)
		total += int64(n)
		off, err := a.Alloc(n)
		if err != nil {
			t.Fatal(err)
		}
		want := end
		if end+int64(n) > chunks[cur+1] {
			cur++
			want = chunks[cur]
			for want+int64(n) > chunks[cur+1] {
				cur++
			}
		}
		if off != want {
			t.Fatalf("piece %d of %d bytes at %d, want %d", i, n, off, want)
		}
		end = off + int64(n)
		copy(a.At(off, n), bytes.Repeat([]byte{byte(i)}, n))
		offs = append(offs, off)
	}
	for i, off := range offs {
		n := pieceLen(i)
		if got := a.At(off, n); !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, n)) {
			t.Fatalf("piece %d changed after growths", i)
		}
	}
	if want := chunks[cur+1]; a.Size() != want || SlabBytes()-before != want || a.Len() != total {
		t.Errorf("size %d, SlabBytes +%d, len %d: want %d, whole chunks up to %d, and every piece's bytes", a.Size(), SlabBytes()-before, a.Len(), want, end)
	}
	slabAllocHook = func(uintptr) error { return errors.New("refused") }
	size, n := a.Size(), a.Len()
	_, err := a.Alloc(step)
	slabAllocHook = nil
	var se *SlabError
	if !errors.As(err, &se) || a.Size() != size || a.Len() != n {
		t.Errorf("refused growth: %v, size %d, len %d: want a *SlabError, %d and %d unchanged", err, a.Size(), a.Len(), size, n)
	}
	a.Close()
	if SlabBytes() != before {
		t.Errorf("after Close SlabBytes is %d, want %d", SlabBytes(), before)
	}
}

// TestArenaSize: ArenaSize is the Size of an arena that handed out n
// pieces of one width, on the geometric chunks and past them.
func TestArenaSize(t *testing.T) {
	for _, width := range []int{1, 28, 1000} {
		a := NewArena(1 << 20)
		for n := int64(0); n <= 3<<20/int64(width); n++ {
			if n%997 == 0 || n == ArenaFirstChunk/int64(width) || n == ArenaFirstChunk/int64(width)+1 {
				if got, want := ArenaSize(1<<20, width, n), a.Size(); got != want {
					t.Fatalf("width %d, %d pieces: ArenaSize %d, the arena holds %d", width, n, got, want)
				}
			}
			if _, err := a.Alloc(width); err != nil {
				t.Fatal(err)
			}
		}
		a.Close()
	}
}
