package core

// Block is a batch of rows: Keys[i] goes with Values[i]. Sources fill blocks
// and the loader splits them by shard; a block's slices are reused, so a
// consumer must not keep them past the next fill.
type Block[K, V Bits] struct {
	Keys   []K
	Values []V
}

// Len is the number of rows in the block.
func (b *Block[K, V]) Len() int { return len(b.Keys) }

// Reset empties the block, keeping its capacity.
func (b *Block[K, V]) Reset() { b.Keys, b.Values = b.Keys[:0], b.Values[:0] }

// Append adds one row.
func (b *Block[K, V]) Append(k K, v V) {
	b.Keys = append(b.Keys, k)
	b.Values = append(b.Values, v)
}

// Source streams rows in blocks with constant memory. It is used by one
// goroutine at a time.
type Source[K, V Bits] interface {
	// Next resets b and fills it with up to max rows. At the end of the rows
	// it returns io.EOF with b empty; any other error stops the load and
	// names where it happened (for a file: path, line, column and value).
	Next(b *Block[K, V], max int) error
	// Rows is how many rows the source will produce in all, or -1 when it
	// cannot know before reading them (a file).
	Rows() int64
	// Skipped is how many bad rows were skipped so far (only when the user
	// asked to skip bad rows; otherwise a bad row is an error).
	Skipped() int64
	// Close releases files; it is safe to call more than once.
	Close() error
}

// IndexedSource is a source whose i-th row can be computed directly (every
// synthetic source): the read phase uses it to look keys up in a random
// order without holding them all in memory.
type IndexedSource[K, V Bits] interface {
	Source[K, V]
	// Row returns the i-th row, 0 <= i < Rows(); Next yields rows 0, 1, 2, ...
	Row(i int64) (K, V)
}

// CellSource is a file source that reads more columns with each row
// (core/source's Spec.Columns). After a Next, Cell(i, j) is the text of the j-th
// of those columns in the block's i-th row, decoded as the key's is (TSV
// escapes, CSV quotes); it is valid until the next Next.
type CellSource interface {
	Cell(row, column int) []byte
}
