//go:build unix

package experiments

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

// keysTSV is n rows of distinct keys and small values.
func keysTSV(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\t%d\n", i, i%60000)
	}
	return b.String()
}

// fifoWithData makes a FIFO and a writer that writes data into it once
// (opening it as soon as a reader does) and then closes it.
func fifoWithData(t *testing.T, data string) string {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "keys.tsv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.WriteString(data)
		w.Close()
	}()
	return fifo
}

// runWithin is Run, failing the test if it has not returned within limit
// (a FIFO read twice hangs: the pre-scan takes the data, the load waits).
func runWithin(t *testing.T, limit time.Duration, cfg config.Config) ([]result.Result, error) {
	t.Helper()
	type out struct {
		res []result.Result
		err error
	}
	done := make(chan out, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		res, err := Run(ctx, cfg, RunOptions{})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(limit):
		cancel()
		t.Fatalf("Run(%+v) did not return within %v", cfg, limit)
	}
	return nil, nil
}

// TestStreamReadOnce: a FIFO as the source is read exactly once, by the
// load, isolated (the parent opens it and hands it to the worker) and
// in-process; its rows are unknown to the guard, which says so.
func TestStreamReadOnce(t *testing.T) {
	const n = 5000
	for _, inProcess := range []bool{false, true} {
		fifo := fifoWithData(t, keysTSV(n))
		res, err := runWithin(t, 60*time.Second, config.Config{Layouts: []string{"packed"}, Source: fifo, InProcess: inProcess})
		if err != nil {
			t.Fatalf("in-process %v: %v", inProcess, err)
		}
		if r := res[0]; r.ElementCount != n || r.Rows != n || r.Source != fifo || r.PredictedPeak != 0 {
			t.Errorf("in-process %v: element_count %d rows %d source %q predicted %d; want %d, %d, %q, 0 (not predicted)",
				inProcess, r.ElementCount, r.Rows, r.Source, r.PredictedPeak, n, n, fifo)
		}
	}
	// The guard's view: rows unknown, nothing predicted, and nothing read
	// to find out (the FIFO has no writer: a read would block).
	fifo := filepath.Join(t.TempDir(), "idle.tsv")
	syscall.Mkfifo(fifo, 0o600)
	var mc MemoryCheck
	var err error
	done := make(chan struct{})
	go func() {
		mc, err = Check(context.Background(), config.Config{Layouts: []string{"hashed"}, Source: fifo})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Check of a FIFO with no writer blocked")
	}
	if err != nil || !mc.RowsUnknown || !mc.Fits || mc.Estimates[0].Rows != -1 {
		t.Errorf("Check of a FIFO: %+v, %v; want rows unknown, fits", mc, err)
	}
}

// TestStreamLoadedTwiceRefused: a job that would load a stream more than
// once is refused before it reads anything.
func TestStreamLoadedTwiceRefused(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "keys.tsv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, cfg := range []config.Config{
		{Layouts: []string{"packed", "hashed"}, Source: fifo},
		{Layouts: []string{"packed"}, Source: fifo, Repeats: 3},
	} {
		_, err := runWithin(t, 10*time.Second, cfg)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != "source" || !strings.Contains(err.Error(), "is a pipe, which can be read only once, but this job loads it") {
			t.Errorf("Run(%+v) = %v, want a source refusal", cfg, err)
		}
	}
}

// TestCancelledPrescanSaysCancelled: a pre-scan stopped by Ctrl-C says
// "cancelled", not that the file "has no rows" (issue 14, item 6).
func TestCancelledPrescanSaysCancelled(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(bytes.Repeat([]byte("\n"), 8<<20))
	zw.Close()
	path := filepath.Join(t.TempDir(), "blank.tsv.gz")
	os.WriteFile(path, buf.Bytes(), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Check(ctx, config.Config{Layouts: []string{"packed"}, Source: path})
	if !errors.Is(err, fault.ErrCancelled) || strings.Contains(err.Error(), "has no rows") {
		t.Errorf("cancelled pre-scan: %v, want cancelled and no word of rows", err)
	}
}

// TestFileChangedDuringTheJob: a file that grows between two layouts' runs
// stops the job, saying so, where the second layout loaded more rows than
// the first, silently (issue 48).
func TestFileChangedDuringTheJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.tsv")
	if err := os.WriteFile(path, []byte(keysTSV(1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	grow := func(result.Result) error {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString("5000\t1\n5001\t2\n")
		return err
	}
	res, err := Run(context.Background(), config.Config{Layouts: []string{"packed", "hashed"}, Source: path, InProcess: true}, RunOptions{OnResult: grow})
	if len(res) != 1 || err == nil || !strings.Contains(err.Error(), "changed while this job read it") || !strings.Contains(err.Error(), "1,000 rows") {
		t.Errorf("a file grown between runs: %d results, %v; want packed's and the job stopped saying so", len(res), err)
	}
}

// TestStreamBadRowNamesTheSource: a bad row of a stream, found by the load
// (its rows are not checked first), is the source field's error at its
// line, as a counted file's is, in a worker or in this process; it was
// the load's text, which named no field ("hashed: load: reading source
// block 0 (rows 0 and on): PATH:2: ...").
func TestStreamBadRowNamesTheSource(t *testing.T) {
	for _, inProcess := range []bool{false, true} {
		fifo := fifoWithData(t, "1\t2\nabc\t3\n")
		_, err := runWithin(t, 60*time.Second, config.Config{Layouts: []string{"hashed"}, Source: fifo, InProcess: inProcess})
		var fe *fault.FieldError
		var ie *fault.InputError
		if !errors.As(err, &fe) || fe.Field != "source" || fe.Value != fifo+":2" || !errors.As(err, &ie) || !strings.Contains(err.Error(), `"abc" is not a valid UInt64`) {
			t.Errorf("in-process %v: %v; want bad input, the source field's at %s:2, saying why", inProcess, err, fifo)
		}
	}
}
