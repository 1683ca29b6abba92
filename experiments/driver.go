package experiments

import (
	"context"
	"io"
	"runtime/debug"
	"slices"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/worker"
)

// Drivers: the layouts packlab runs in a worker program it does not build
// (the C++ reference maps, package experiments/refdriver; ClickHouse's own
// dictionaries, experiments/chdriver). The engine knows them only through
// this seam: whoever builds a lab registers each driver once (package app
// does), and a config's layouts' names, the guard, the run and the notes
// under a table of results then ask it. The driver starts its worker with
// RunWorker and streams it the run's rows with DriverRun.Feed.

// A Driver runs some layouts in a worker program of its own.
type Driver interface {
	// config.Driver: the names of its layouts (Layout, LayoutNames) and
	// its checks of a config (Validate).
	config.Driver
	// Estimate is the guard's prediction of r's run over rows rows.
	Estimate(r *DriverRun, rows int64) Estimate
	// Measure loads and reads r's layout once in a fresh worker process; the
	// engine's part of the result is DriverRun.FillResult's.
	Measure(ctx context.Context, r *DriverRun, progress func(worker.Progress)) (result.Result, error)
	// Notes are the lines the driver's runs add under a table of results
	// (ResultNotes), none when results holds none of them.
	Notes(results []result.Result) []string
}

var drivers []Driver

// RegisterDriver adds d to the drivers a config's layouts are looked up
// in (config.RegisterDriver), after packlab's own and those registered
// before; d again does nothing (a Driver is comparable: its type a struct
// of plain fields). Call it while the program starts, before any config is
// checked.
func RegisterDriver(d Driver) {
	if !slices.Contains(drivers, d) {
		drivers = append(drivers, d)
	}
	config.RegisterDriver(d)
}

// driverOf is the Driver of layout l, nil for one of packlab's: config
// resolved it among the drivers RegisterDriver gave it, each a Driver.
func driverOf(l config.Layout) Driver {
	d, _ := l.Driver.(Driver)
	return d
}

// DriverRun is one run of a driver's layout as the engine parsed and
// checked it.
type DriverRun struct {
	Config config.Config // the job's settings, defaults in (Layouts: every layout of the job)
	Layout string        // the driver's layout, by its name
	Key    core.Type     // the lab's keys' type
	// DictKey is the dictionary's key: Key, or a String or tuple key
	// derived from it (dict.Key.Derived).
	DictKey dict.Key
	Value   core.Type // the value's: the first attribute's
	// Attributes are the dictionary's attributes, the first the value (one
	// when --attributes is not given), with a file's String lengths and
	// NULLs once its columns are counted; AttributeNames their columns.
	Attributes     []dict.Attribute
	AttributeNames []string
	Source         source.Spec // the key source
	// LastRepeat: this is the layout's last repeat, whose memory figures
	// the combined result keeps (result.Combine); what only feeds those
	// (ClickHouse's reload) is measured on it alone.
	LastRepeat bool

	run       config.Run
	fed       worker.Sent
	startedAt time.Time
}

// newDriverRun is run r, of a driver's layout, as its driver gets it.
func newDriverRun(r config.Run) *DriverRun {
	return &DriverRun{Config: r.Config, Layout: r.Layout.Name, Key: r.Key, DictKey: r.DictKey, Value: r.Value,
		Attributes: r.Attrs, AttributeNames: r.AttrNames, Source: r.Spec, run: r}
}

// KeyName is the dictionary's key as results name it: the key's type, or
// a String or tuple key (String(16), Tuple(String, UInt64)).
func (r *DriverRun) KeyName() string {
	if len(r.DictKey.Parts) == 0 {
		return r.Key.Name
	}
	return r.DictKey.String()
}

// Options are the tables' options the run's settings give.
func (r *DriverRun) Options() core.Options { return r.run.Options }

// ExpectedDistinct is how many distinct keys the source gives in rows
// rows (an upper bound where it cannot know: a file, zipf).
func (r *DriverRun) ExpectedDistinct(rows int64) int64 {
	n, _ := source.ExpectedDistinct(r.Source, r.Key, rows)
	return n
}

// Feed streams the source's rows to a worker in frames, then, unless the
// config says no_read, the read phase's keys (worker.Feed has the frames).
// It is RunWorker's feed; Sent says what it sent.
func (r *DriverRun) Feed(ctx context.Context, w io.Writer) error {
	return worker.Feed(ctx, r.run, w, &r.fed)
}

// Sent is what Feed sent: the rows, and the checksum of their pairs as
// Result.Checksum writes one.
func (r *DriverRun) Sent() (rows int64, checksum string) {
	return r.fed.Rows, worker.Checksum(r.fed.Sum)
}

// WriteFileAttributes writes path, ClickHouse's source of a file's
// attributes in RowBinary (the key as the dictionary keeps it: its low
// dictKeyBytes bytes; the value; each attribute's cell in its type), and
// takes the file's String lengths and NULLs into r.Attributes.
func (r *DriverRun) WriteFileAttributes(ctx context.Context, dictKeyBytes int, path string, progress func(worker.Progress)) error {
	st, err := worker.WriteFileAttributes(ctx, r.run, dictKeyBytes, path, progress)
	if err != nil {
		return err
	}
	r.run.Attrs = config.WithFileColumns(r.run.Attrs, st)
	r.Attributes = r.run.Attrs
	debug.FreeOSMemory() // the pass's blocks of cells, before the feed's pass holds its own
	return nil
}

// FillResult fills in what the engine knows of every driver's run beside
// what its worker measured: when it started, the layout, the types and
// the source, what Feed read and waited, one repeat on one thread in a
// process of its own, the runtime and the host.
func (r *DriverRun) FillResult(res *result.Result) {
	res.StartedAt = startedAt(r.startedAt)
	res.Layout = r.Layout
	res.KeyType, res.ValueType = r.KeyName(), r.Value.Name
	res.Source = r.Source.String()
	res.Seed = r.Config.Seed
	res.SkippedRows = r.fed.Skipped
	res.Producer = result.Producer{ReadSeconds: r.fed.ReadSeconds, WaitSeconds: r.fed.WaitSeconds}
	res.Repeats = 1
	res.Threads = 1 // one thread loads and reads; the lab's streaming runs in this process
	res.BlockRows = worker.FrameRows
	res.Isolated = true
	res.Runtime = RuntimeName()
	res.Host = hostInfo()
}

// ResultNotes are the lines for under a table of results, in this order:
// each registered driver's Notes (ClickHouse's runs have some, the C++
// maps' none), then result's LimitNotes, ProcessNotes, KernelNotes and
// PreallocateNotes; none where the results call for none.
func ResultNotes(results []result.Result) []string {
	var notes []string
	for _, d := range drivers {
		notes = append(notes, d.Notes(results)...)
	}
	for _, more := range []func([]result.Result) []string{result.LimitNotes, result.ProcessNotes, result.KernelNotes, result.PreallocateNotes} {
		notes = append(notes, more(results)...)
	}
	return notes
}

// startedAt formats a run's start time for Result.StartedAt.
func startedAt(t time.Time) string { return t.UTC().Format(time.RFC3339) }
