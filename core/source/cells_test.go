package source

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCellChunks: cells of every size, over several blocks, come back
// as written, and a row's cells undone leave the others whole.
func TestCellChunks(t *testing.T) {
	var c cellChunks
	r := rand.New(rand.NewPCG(1, 2))
	for block := range 6 {
		c.reset()
		var want [][]byte
		for range 200 {
			n := r.IntN(3 * cellChunkFirst)
			if r.IntN(4) > 0 {
				n = r.IntN(3000)
			}
			cell := bytes.Repeat([]byte{byte('a' + len(want)%26)}, n)
			m := c.mark()
			c.add(cell)
			if r.IntN(10) == 0 {
				c.undo(m)
				continue
			}
			want = append(want, cell)
		}
		for i, w := range want {
			if got := c.cell(i); !bytes.Equal(got, w) {
				t.Fatalf("block %d: cell %d: %d bytes, want %d", block, i, len(got), len(w))
			}
		}
	}
	if !slices.ContainsFunc(c.chunks, func(b []byte) bool { return cap(b) > cellChunkFirst }) {
		t.Errorf("no chunk grew past the first's size")
	}
}
