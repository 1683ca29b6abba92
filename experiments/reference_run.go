package experiments

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"slices"
	"time"
	"unsafe"

	"github.com/packlab/packlab/core"
)

// A reference map's run, the lab's side (the worker's is reference/measure.h):
//
//	parent (this process)                     child: packlab-refs
//	  start child, write the job line ------> {"config":...,"layout":"boost_flat","key_bytes":8,...}
//	  open the run's source; for each block:
//	    [u32 n][n keys][n values]   -------> insert each row (first one wins)
//	  [u32 0]                       -------> end of the load: RSS, geometry, verify
//	  the read order, core.ReadOrder:
//	    [u64 hits][u64 misses]      -------> chunks of 4096: hits from the stream,
//	    [u32 n][n keys] ... [u32 0] -------> absent keys drawn there, lookups timed
//	  relay progress, keep the result <----- {"progress":...} ... {"result":...}
//
// The keys cross a pipe, so the worker holds none of them: its RSS is the
// map's. The parent proves the table holds what it sent: the row count, and,
// when no key repeats, the checksum of the pairs against its own sum over
// every row it sent; with repeats, the checksum equals a core layout's
// (Result.Checksum) on the same source.

// refsFrameRows is reference/worker.h's kFrameRows: the most rows (or
// keys) in one frame, core's block.
const refsFrameRows = core.DefaultBlockRows

// referenceJob is packlab-refs's job line: the Go worker's, and what the C++
// side cannot work out from a Config (sizes, not type names).
type referenceJob struct {
	workerJob
	Protocol   int    `json:"protocol"`
	KeyBytes   int    `json:"key_bytes"`
	ValueBytes int    `json:"value_bytes"`
	TotalRows  int64  `json:"total_rows"` // -1 when the source cannot know
	Seed       uint64 `json:"seed"`
	NoRead     bool   `json:"no_read"`
	// Reserve: reserve(total_rows) before the load (Config.Preallocate).
	Reserve bool `json:"reserve"`
}

// feedReport is what the lab's side of a reference run did.
type feedReport struct {
	rows, skipped int64
	sum           uint64  // core.PairChecksum over every row sent
	readSeconds   float64 // generating or reading the source
	waitSeconds   float64 // blocked on the pipe during the load (the worker busy)
}

// runReference measures reference map r over p's source in a fresh
// packlab-refs process.
func runReference(ctx context.Context, p parsedConfig, r Reference, progress func(Progress)) (Result, error) {
	st := ReferenceStatus()
	if !st.Available {
		return Result{}, fmt.Errorf("unavailable: %s", st.Problem)
	}
	cfg := p.Config
	cfg.Layouts = []string{r.Name}
	total := int64(-1)
	if p.spec.IsSynthetic() {
		total = p.Rows
	}
	job, _ := json.Marshal(referenceJob{
		workerJob: workerJob{Config: cfg, Layout: r.Name},
		Protocol:  refsProtocol, KeyBytes: p.key.Size, ValueBytes: p.value.Size,
		TotalRows: total, Seed: p.Seed, NoRead: p.NoRead, Reserve: p.Preallocate && total > 0,
	})
	started := time.Now()
	var fr feedReport
	feed := func(ctx context.Context, w io.Writer) error {
		return opsFor(p.key, p.value).feed(ctx, p, w, &fr)
	}
	res, err := runChild(ctx, exec.CommandContext(ctx, st.Path), job, feed, progress, "the C++ reference worker ("+st.Path+")", "rebuild it with: "+RefsBuildCommand)
	if err != nil {
		return Result{}, err
	}
	switch {
	case res.Rows != fr.rows:
		return Result{}, fmt.Errorf("the C++ reference worker loaded %d rows, the lab sent %d", res.Rows, fr.rows)
	case res.Duplicates == 0 && res.Checksum != checksumText(fr.sum):
		return Result{}, fmt.Errorf("the C++ reference worker's table has checksum %s, the %d distinct rows the lab sent %s", res.Checksum, fr.rows, checksumText(fr.sum))
	}
	res.StartedAt = startedAt(started)
	res.Layout = r.Name
	res.KeyType, res.ValueType = p.key.Name, p.value.Name
	res.Shards = 1
	res.Source = p.spec.String()
	res.Seed = p.Seed
	res.SkippedRows = fr.skipped
	res.ClickHouseLayout = ""
	res.Producer = Producer{ReadSeconds: fr.readSeconds, WaitSeconds: fr.waitSeconds}
	res.Repeats = 1
	res.Preallocate = p.Preallocate
	res.Threads = 1 // one thread loads and reads; the lab's streaming runs in this process
	res.BlockRows = refsFrameRows
	res.Isolated = true
	res.Runtime = RuntimeName()
	res.Host = hostInfo()
	if lib := st.Libraries[r.Name]; lib != "" {
		res.Reference = lib
	}
	return res, nil
}

// checksumText writes a checksum as Result.Checksum holds it.
func checksumText(sum uint64) string { return fmt.Sprintf("%016x", sum) }

// feed streams p's rows to a reference worker, then the read phase's keys in
// core.Read's order (see the picture above).
func (typed[K, V]) feed(ctx context.Context, p parsedConfig, pipe io.Writer, fr *feedReport) error {
	src, err := openSourceOf[K, V](ctx, p)
	if err != nil {
		return &sourceError{err}
	}
	defer src.Close()
	// A source that cannot compute its rows (a file, which may be a stream
	// read only once) gives its keys for the read order as it is loaded.
	_, indexed := src.(core.IndexedSource[K, V])
	collect := !p.NoRead && (!indexed || src.Rows() < 0)
	tw := &timedWriter{w: pipe, waited: &fr.waitSeconds}
	fw := &frameWriter{w: bufio.NewWriterSize(tw, 256<<10)}
	seen, err := feedLoad(ctx, src, fw, fr, collect)
	if err != nil {
		return err
	}
	if err := fw.w.Flush(); err != nil || p.NoRead { // the load is complete: let the worker finish it
		return err
	}
	tw.waited = new(float64) // the producer's waits are the load's; the read phase's are not
	return feedRead(ctx, p, src, seen, fw)
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
// too, for the read order of a source that cannot give it.
func feedLoad[K, V core.Bits](ctx context.Context, src core.Source[K, V], fw *frameWriter, fr *feedReport, collect bool) ([]K, error) {
	var seen []K
	var b core.Block[K, V]
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t := time.Now()
		err := src.Next(&b, refsFrameRows)
		fr.readSeconds += time.Since(t).Seconds()
		if n := b.Len(); n > 0 {
			for i, k := range b.Keys {
				fr.sum += core.PairChecksum(k, b.Values[i])
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
			fr.rows += int64(n)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &sourceError{err}
		}
	}
	fr.skipped = src.Skipped()
	return seen, fw.frame(0)
}

// feedRead streams the read phase: the counts of rows and misses, then the
// keys in core.Read's order (seen's, shuffled, for a source that cannot
// give it) as frames, and the empty frame that ends them.
func feedRead[K, V core.Bits](ctx context.Context, p parsedConfig, src core.Source[K, V], seen []K, fw *frameWriter) error {
	rows, at, ok := core.ReadOrder(src, p.Seed)
	if !ok {
		keys := distinct(seen)
		core.ShuffleKeys(keys, p.Seed)
		rows, at = int64(len(keys)), func(i int64) K { return keys[i] }
	}
	misses := int64(math.Round(p.MissRate * float64(rows)))
	if err := fw.u64(uint64(rows)); err != nil {
		return err
	}
	if err := fw.u64(uint64(misses)); err != nil {
		return err
	}
	keys := make([]K, refsFrameRows)
	for i := int64(0); i < rows; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(refsFrameRows), rows-i))
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
