package experiments

// Before the runs: a config's source counted (a file read through once:
// its rows, its first malformed row, what its attribute columns hold), and
// the guard's verdict on the config: every layout's run predicted
// (guard.go, or its driver's Estimate) and the largest held against the
// memory available now.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/machine"
	"github.com/packlab/packlab/experiments/worker"
	"github.com/pbnjay/memory"
)

// Check validates cfg and predicts its memory without measuring anything:
// what the guard would decide, for a face to show before a run.
func Check(ctx context.Context, cfg config.Config) (MemoryCheck, error) {
	runs, err := config.Resolve(cfg)
	if err != nil {
		return MemoryCheck{}, err
	}
	st, err := sourceRows(ctx, runs[0], nil)
	if err != nil {
		return MemoryCheck{}, err
	}
	return checkMemory(withFile(runs, st), st.Rows)
}

// withFile is runs with what their file's attribute columns hold (st).
func withFile(runs []config.Run, st config.FileStats) []config.Run {
	for i := range runs {
		runs[i] = runs[i].WithFile(st)
	}
	return runs
}

// checkMemory predicts the runs of a config, one a layout, and compares the
// largest with the memory available now. rows is what the source gives
// (scanned for a file; -1 for a stream, which leaves the guard nothing to
// predict).
func checkMemory(runs []config.Run, rows int64) (MemoryCheck, error) {
	c := MemoryCheck{TotalBytes: int64(memory.TotalMemory())}
	c.AvailableBytes, c.AvailableFrom = machine.AvailableMemory()
	if c.AvailableBytes < 0 {
		c.AvailableBytes, c.AvailableFrom = int64(memory.FreeMemory()), "free memory"
		if c.AvailableBytes == 0 && c.TotalBytes == 0 {
			c.AvailableBytes = -1 // the platform cannot tell (the browser)
		}
	}
	if !runs[0].Config.InProcess {
		if rss, _ := machine.StatusMemory(); rss > 0 {
			c.RuntimeBytes = rss
		}
	}
	if rows < 0 {
		c.RowsUnknown, c.Fits = true, true
		for _, r := range runs {
			c.Estimates = append(c.Estimates, Estimate{Layout: r.Layout.String(), Rows: -1, Distinct: -1, Estimated: true})
		}
		return c, nil
	}
	for _, r := range runs {
		var e Estimate
		var err error
		if d := driverOf(r.Layout); d != nil {
			e = d.Estimate(newDriverRun(r), rows)
		} else if e, err = estimate(r, rows); err != nil {
			return c, err
		}
		c.Estimates = append(c.Estimates, e)
		if need := core.SaturatingAdd(e.PeakBytes, c.RuntimeBytes); need > c.NeedBytes || c.Largest == "" {
			c.NeedBytes, c.Largest = need, e.Layout
		}
	}
	c.Fits = c.AvailableBytes < 0 || c.NeedBytes <= c.AvailableBytes
	return c, nil
}

// sourceRows is the rows r's source (as its config gives it) gives (and a file's attribute columns'
// bytes): Rows for a generator; for a file, counted by reading it through, which also finds a malformed row (file,
// line, column) or a missing column before any work; -1 (unknown) for a
// stream, which is read only once, by the load. progress, if set, hears the
// count (PhaseCount) about every 200 ms: a 1e9-row gzip file takes a
// minute.
func sourceRows(ctx context.Context, r config.Run, progress func(worker.Progress)) (config.FileStats, error) {
	spec, value := r.Source, r.Attrs[0].Type // the value as given, not a row's cell
	if spec.IsSynthetic() {
		return config.FileStats{Rows: r.Config.Rows}, nil
	}
	if _, stream := source.IsStream(spec.Path); stream {
		return config.FileStats{Rows: -1}, nil
	}
	st, err := opsFor(r.Key, value).scan(ctx, spec, r.Key, value, progress)
	if err != nil {
		if ctx.Err() != nil {
			return st, fmt.Errorf("%w: %w", fault.ErrCancelled, err)
		}
		return st, &fault.InputError{Err: sourceFault(spec.Path, err)}
	}
	if st.Rows == 0 {
		return st, fault.New("source", spec.Path, "has no rows", "a file with at least one row")
	}
	if len(spec.Columns) > 0 {
		// The pass's blocks of cells back to the system: the lab held
		// them through the run (74 MB after 100K rows of 2-6 KB Strings,
		// 16 MB without), and the guard takes this process's RSS as a
		// fresh worker's runtime.
		debug.FreeOSMemory()
	}
	return st, nil
}

// sourceFault is the field error of an error reading the source file at
// path: core's FileError names the place ("source FILE:LINE: column N:
// ..."), or the file ("source FILE: is empty"); the path once is enough.
func sourceFault(path string, err error) error {
	var fe *source.FileError
	if errors.As(err, &fe) {
		if fe.Line > 0 {
			return fault.Wrap("source", fmt.Sprintf("%s:%d", fe.Path, fe.Line), "", fe.Err, "")
		}
		return fault.Wrap("source", fe.Path, "", fe.Err, "")
	}
	return fault.Wrap("source", path, "", err, "")
}
