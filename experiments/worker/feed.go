package worker

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
)

// The feed: a driver's worker (DriverRun.Feed) gets the rows of the run's
// own key source and the read phase's keys in the lab's order, in frames
// on its stdin, so it loads exactly what packlab's layouts load:
//
//	parent (this process)                     worker: a driver's program
//	  start worker, write the job line ------> {...}
//	  open the run's source; for each block:
//	    [u32 n][n keys][n values]   -------> insert each row (first one wins)
//	  [u32 0]                       -------> end of the load: RSS, geometry, verify
//	  the read order, core.ReadOrder:
//	    [u64 hits][u64 misses]      -------> chunks of 4096: hits from the stream,
//	    [u32 n][n keys] ... [u32 0] -------> absent keys drawn there, lookups timed
//	  relay progress, keep the result <----- {"progress":...} ... {"result":...}
//
// The keys cross a pipe, so the worker holds none of them. The parent sums
// every pair it sends (core.PairChecksum), for the driver to check the
// table against.

// FrameRows is the most rows (or keys) in one frame of a feed: core's
// block, the workers' kFrameRows.
const FrameRows = core.DefaultBlockRows

// Sent is what the lab's side of a driver's run did: what Feed sent.
type Sent struct {
	Rows, Skipped int64
	Sum           uint64  // core.PairChecksum over every row sent
	ReadSeconds   float64 // generating or reading the source
	WaitSeconds   float64 // blocked on the pipe during the load (the worker busy)
}

// Checksum writes a checksum as Result.Checksum holds it.
func Checksum(sum uint64) string { return fmt.Sprintf("%016x", sum) }

// Feed streams run r's rows to a driver's worker on w in frames ([u32
// n][n keys][n values], then [u32 0]), then, unless the config says
// no_read, the read phase: [u64 rows][u64 misses] and the keys in
// core.Read's order, in frames, ending with [u32 0] (see the picture
// above). It is Run's feed; sent says what it sent.
func Feed(ctx context.Context, r config.Run, w io.Writer, sent *Sent) error {
	return opsFor(r.Key, r.Value).feed(ctx, r, w, sent)
}

// typedOps is the feed's typed code of one (key size, value size) pair,
// dispatched by size as the engine's measure is (opsFor). The two tables
// of 25 instantiations are alike but cannot be one: Go has no generic
// methods, so each package instantiates its own typed type (the engine's
// measure and count were split from the worker's feed on purpose).
type typedOps interface {
	feed(ctx context.Context, r config.Run, w io.Writer, sent *Sent) error
	writeFileAttributes(ctx context.Context, r config.Run, dictKeyBytes int, path string, progress func(Progress)) (config.FileStats, error)
}

type typed[K, V core.Bits] struct{}

// opsFor is the typed code of key's and value's sizes (config.SizeClass).
func opsFor(key, value core.Type) typedOps {
	return typedTable[config.SizeClass(key)][config.SizeClass(value)]
}

var typedTable = [5][5]typedOps{typedRow[uint8](), typedRow[uint16](), typedRow[uint32](), typedRow[uint64](), typedRow[core.U128]()}

func typedRow[K core.Bits]() [5]typedOps {
	return [5]typedOps{typed[K, uint8]{}, typed[K, uint16]{}, typed[K, uint32]{}, typed[K, uint64]{}, typed[K, core.U128]{}}
}

func (typed[K, V]) feed(ctx context.Context, r config.Run, pipe io.Writer, fr *Sent) error {
	src, err := config.Open[K, V](ctx, r)
	if err != nil {
		return &feedSourceError{err}
	}
	defer src.Close()
	// A source that cannot compute its rows (a file, which may be a stream
	// read only once) gives its keys for the read order as it is loaded.
	_, indexed := src.(core.IndexedSource[K, V])
	collect := !r.Config.NoRead && (!indexed || src.Rows() < 0)
	tw := &timedWriter{w: pipe, waited: &fr.WaitSeconds}
	fw := &frameWriter{w: bufio.NewWriterSize(tw, 256<<10)}
	seen, err := feedLoad(ctx, src, fw, fr, collect, len(r.Spec.Columns))
	if err != nil {
		return err
	}
	if err := fw.w.Flush(); err != nil || r.Config.NoRead { // the load is complete: let the worker finish it
		return err
	}
	tw.waited = new(float64) // the producer's waits are the load's; the read phase's are not
	return feedRead(ctx, r.Config, src, seen, fw)
}

// frameWriter writes the worker protocol's frames: a 4-byte row count, then
// the rows' bytes.
type frameWriter struct {
	w    *bufio.Writer
	head [8]byte
}

func (f *frameWriter) frame(n int) error {
	binary.NativeEndian.PutUint32(f.head[:4], uint32(n))
	_, err := f.w.Write(f.head[:4])
	return err
}

func (f *frameWriter) u64(v uint64) error {
	binary.NativeEndian.PutUint64(f.head[:], v)
	_, err := f.w.Write(f.head[:])
	return err
}

// feedLoad streams src's rows as load frames, then the empty frame that
// ends the load, summing them into fr; with collect it returns the keys
// too, for the read order of a source that cannot give it. A source
// with columns attribute columns (the worker gets them from ClickHouse's
// source file, not the frames) is read in blocks of at most
// dict.CellBlockBytes of them: 65,536 rows of 2-6 KB Strings held 1 GB here.
func feedLoad[K, V core.Bits](ctx context.Context, src core.Source[K, V], fw *frameWriter, fr *Sent, collect bool, columns int) ([]K, error) {
	var seen []K
	var b core.Block[K, V]
	cells, _ := src.(core.CellSource)
	if columns == 0 {
		cells = nil
	}
	blockRows := config.FirstBlockRows(cells)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := time.Now()
		err := src.Next(&b, min(blockRows, FrameRows))
		fr.ReadSeconds += time.Since(t).Seconds()
		if cells != nil && b.Len() > 0 {
			var bytes int64
			for i := range b.Len() {
				for j := range columns {
					bytes += int64(len(cells.Cell(i, j)))
				}
			}
			blockRows = dict.CellBlockRows(blockRows, b.Len(), bytes, FrameRows)
		}
		if n := b.Len(); n > 0 {
			for i, k := range b.Keys {
				fr.Sum += core.PairChecksum(k, b.Values[i])
			}
			if collect {
				seen = append(seen, b.Keys...)
			}
			if werr := fw.frame(n); werr != nil {
				return nil, werr
			}
			if _, werr := fw.w.Write(bytesOf(b.Keys)); werr != nil {
				return nil, werr
			}
			if _, werr := fw.w.Write(bytesOf(b.Values)); werr != nil {
				return nil, werr
			}
			fr.Rows += int64(n)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &feedSourceError{err}
		}
	}
	fr.Skipped = src.Skipped()
	return seen, fw.frame(0)
}

// feedRead streams the read phase: the counts of rows and misses, then the
// keys in core.Read's order (seen's, shuffled, for a source that cannot
// give it) as frames, and the empty frame that ends them.
func feedRead[K, V core.Bits](ctx context.Context, c config.Config, src core.Source[K, V], seen []K, fw *frameWriter) error {
	rows, at, ok := core.ReadOrder(src, c.Seed)
	if !ok {
		keys := distinct(seen)
		core.ShuffleKeys(keys, c.Seed)
		rows, at = int64(len(keys)), func(i int64) K { return keys[i] }
	}
	misses := int64(math.Round(c.MissRate * float64(rows)))
	if err := fw.u64(uint64(rows)); err != nil {
		return err
	}
	if err := fw.u64(uint64(misses)); err != nil {
		return err
	}
	keys := make([]K, FrameRows)
	for i := int64(0); i < rows; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(FrameRows), rows-i))
		for j := range n {
			keys[j] = at(i + int64(j))
		}
		if err := fw.frame(n); err != nil {
			return err
		}
		if _, err := fw.w.Write(bytesOf(keys[:n])); err != nil {
			return err
		}
		i += int64(n)
	}
	if err := fw.frame(0); err != nil {
		return err
	}
	return fw.w.Flush()
}

// distinct sorts keys and drops repeats: the list core.Read shuffles for a
// source that is not indexed. It is this process's memory, not the worker's.
func distinct[K core.Bits](keys []K) []K {
	slices.SortFunc(keys, func(a, b K) int {
		alo, ahi := core.ToUint64(a)
		blo, bhi := core.ToUint64(b)
		return cmp.Or(cmp.Compare(ahi, bhi), cmp.Compare(alo, blo))
	})
	return slices.Compact(keys)
}

// bytesOf is a slice's memory as bytes, in this machine's order: the worker
// reads it on the same machine.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var t T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(t)))
}

// timedWriter adds the time its writes block to *waited.
type timedWriter struct {
	w      io.Writer
	waited *float64
}

func (t *timedWriter) Write(p []byte) (int, error) {
	start := time.Now()
	n, err := t.w.Write(p)
	*t.waited += time.Since(start).Seconds()
	return n, err
}
