package core

import (
	"bytes"
	"errors"
	"testing"
)

// TestArena: pieces follow one another and keep their bytes as chunks are
// added, a piece that does not fit what is left of a chunk starts the
// next, a piece larger than a chunk takes whole chunks and the next
// pieces fill its last, the arena holds whole chunks, counted in SlabBytes
// until Close, and a refused chunk changes nothing.
func TestArena(t *testing.T) {
	before := SlabBytes()
	const step = 1 << 20
	a := NewArena(step)
	var offs []int64
	end, total := int64(0), int64(0)
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
		if end%step+int64(n) > step {
			want = (end/step + 1) * step
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
	if want := (end + step - 1) / step * step; a.Size() != want || SlabBytes()-before != want || a.Len() != total {
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
