package source

// cellChunks holds a block's attribute cells (Spec.Columns) for Cell, in
// chunks kept from block to block: a block's cells are written over the last
// one's, so a pass over a file allocates its largest block's cells once.
//
//	chunks:  [64 KiB: cell cell cell ..][128 KiB ..][.. 1 MiB ..][1 MiB ..] ...
//	refs:    {chunk, start, end} a cell, in the block's order (row, column)
//
// One buffer grown by appends, as it was, left the garbage of its growth
// (about four times the block: 84 MB allocated for 16 MB blocks of 2-6 KB
// Strings), and the process's peak hung on when the collector ran:
// TestPredictedPeakLongStrings spread 0.94x-1.10x of its prediction over 12
// runs beside two busy loops. A cell never straddles two chunks: one longer
// than a chunk gets a chunk of its own size.
type cellChunks struct {
	chunks [][]byte
	cur    int // the chunk being filled
	refs   []cellRef
}

type cellRef struct {
	chunk      int32
	start, end int32 // a cell is at most maxLineBytes
}

const (
	cellChunkFirst = 64 << 10
	cellChunkMost  = 1 << 20
)

// cellMark is where the cells stood, to undo a row's (a bad cell).
type cellMark struct{ cur, used, refs int }

// reset empties the chunks for the next block, keeping their memory.
func (c *cellChunks) reset() {
	c.cur, c.refs = 0, c.refs[:0]
	if len(c.chunks) > 0 {
		c.chunks[0] = c.chunks[0][:0]
	}
}

func (c *cellChunks) mark() cellMark {
	m := cellMark{cur: c.cur, refs: len(c.refs)}
	if c.cur < len(c.chunks) {
		m.used = len(c.chunks[c.cur])
	}
	return m
}

func (c *cellChunks) undo(m cellMark) {
	c.cur, c.refs = m.cur, c.refs[:m.refs]
	if c.cur < len(c.chunks) {
		c.chunks[c.cur] = c.chunks[c.cur][:m.used]
	}
}

// add appends a copy of text as the next cell.
func (c *cellChunks) add(text []byte) {
	n := len(text)
	if c.cur >= len(c.chunks) || len(c.chunks[c.cur])+n > cap(c.chunks[c.cur]) {
		c.next(n)
	}
	ch := c.chunks[c.cur]
	start := len(ch)
	c.chunks[c.cur] = append(ch, text...)
	c.refs = append(c.refs, cellRef{chunk: int32(c.cur), start: int32(start), end: int32(start + n)})
}

// next moves to a chunk with room for n bytes: the next one kept if it
// is big enough, else a new one (the first chunks small, for a small file).
func (c *cellChunks) next(n int) {
	if c.cur < len(c.chunks) && len(c.chunks[c.cur]) > 0 {
		c.cur++
	}
	if c.cur < len(c.chunks) && cap(c.chunks[c.cur]) >= n {
		c.chunks[c.cur] = c.chunks[c.cur][:0]
		return
	}
	size := max(min(cellChunkFirst<<min(c.cur, 8), cellChunkMost), n)
	if c.cur < len(c.chunks) {
		c.chunks[c.cur] = make([]byte, 0, size) // too small for this cell: replaced
		return
	}
	c.chunks = append(c.chunks, make([]byte, 0, size))
}

// cell is the i-th cell of the block.
func (c *cellChunks) cell(i int) []byte {
	r := c.refs[i]
	return c.chunks[r.chunk][r.start:r.end:r.end]
}
