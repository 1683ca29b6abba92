package refdriver

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/worker"
)

// A reference map's run, the lab's side (the worker's is reference/measure.h;
// the frames are the engine's, experiments.DriverRun.Feed):
//
//	parent (this process)                     worker: packlab-refs
//	  start worker, write the job line ------> {"config":...,"layout":"boost_flat","key_bytes":8,...}
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

// referenceJob is packlab-refs's job line: the Go worker's (the config and
// the layout), and what the C++ side cannot work out from a Config (sizes,
// not type names).
type referenceJob struct {
	Config     config.Config `json:"config"`
	Layout     string        `json:"layout"`
	Protocol   int           `json:"protocol"`
	KeyBytes   int           `json:"key_bytes"`
	ValueBytes int           `json:"value_bytes"`
	TotalRows  int64         `json:"total_rows"` // -1 when the source cannot know
	Seed       uint64        `json:"seed"`
	NoRead     bool          `json:"no_read"`
	// Reserve: reserve(total_rows) before the load (Config.Preallocate).
	Reserve bool `json:"reserve"`
}

// Measure loads and reads r's reference map over its source in a fresh packlab-refs
// process.
func (Driver) Measure(ctx context.Context, r *experiments.DriverRun, progress func(worker.Progress)) (result.Result, error) {
	st := Status()
	if !st.Available {
		return result.Result{}, fmt.Errorf("unavailable: %s", st.Problem)
	}
	cfg := r.Config
	cfg.Layouts = []string{r.Layout}
	total := int64(-1)
	if r.Source.IsSynthetic() {
		total = cfg.Rows
	}
	job, _ := json.Marshal(referenceJob{
		Config: cfg, Layout: r.Layout,
		Protocol: refsProtocol, KeyBytes: r.Key.Size, ValueBytes: r.Value.Size,
		TotalRows: total, Seed: cfg.Seed, NoRead: cfg.NoRead, Reserve: cfg.Preallocate && total > 0,
	})
	res, err := worker.Run(ctx, exec.CommandContext(ctx, st.Path), job, r.Feed, progress, "the C++ reference worker ("+st.Path+")", "rebuild it with: "+BuildCommand)
	if err != nil {
		return result.Result{}, err
	}
	switch rows, sum := r.Sent(); {
	case res.Rows != rows:
		return result.Result{}, fmt.Errorf("the C++ reference worker loaded %d rows, the lab sent %d", res.Rows, rows)
	case res.Duplicates == 0 && res.Checksum != sum:
		return result.Result{}, fmt.Errorf("the C++ reference worker's table has checksum %s, the %d distinct rows the lab sent %s", res.Checksum, rows, sum)
	}
	r.FillResult(&res)
	res.Shards = 1
	res.ClickHouseLayout = ""
	res.Preallocate = cfg.Preallocate
	if lib := st.Libraries[r.Layout]; lib != "" {
		res.Reference = lib
	}
	return res, nil
}
