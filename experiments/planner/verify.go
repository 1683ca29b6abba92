package planner

import (
	"fmt"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// A plan, checked by ClickHouse: the dictionary the plan prints for the
// best setup ClickHouse can build, built by ClickHouse itself at a size the
// machine holds (packlab plan --verify), its figures beside the plan's
// model of the same dictionary at the same size.

// MaxVerifyRows is the most rows a verification loads: 1e7 rows of a
// <UInt64,UInt16> HASHED are about 1 GiB at ClickHouse's first-load peak,
// which any machine that runs the lab holds, and take seconds.
const MaxVerifyRows = 10_000_000

// VerifyConfig is the run that checks plan's ClickHouse setup, and the
// candidate it checks; ok is false when no ClickHouse dictionary builds any
// setup of the plan.
func VerifyConfig(plan Plan) (cfg config.Config, c Candidate, ok bool) {
	best := plan.BestClickHouse() // the ClickHouse answer
	if best == nil || best.ClickHouseLayout == "" {
		return config.Config{}, Candidate{}, false
	}
	d, ok := dict.ClickHouseDictionaryFor(core.Layout(best.Layout))
	if !ok {
		return config.Config{}, Candidate{}, false
	}
	// The plan's attributes, all of them: a verification of the value
	// alone built a dictionary of one UInt16 for a plan of
	// UInt16,Nullable(String) (13.11 bytes a row against the plan's 62).
	return config.Config{Layouts: []string{d.Name}, Key: best.KeyType, Value: best.ValueType, Attributes: plan.Request.Attributes,
		Rows: min(best.Rows, MaxVerifyRows), Shards: best.Shards, MaxLoadFactor: best.MaxLoadFactor, NoRead: false}, *best, true
}

// verifyModelRows is the least rows the reload's model was fitted at
// (docs/clickhouse.md, "A reload, measured": 1e6, 1e7, 1e8): at 2e5 rows of
// SPARSE_HASHED the measured reload was 18.0 MiB against the model's 5.8.
const verifyModelRows = 1_000_000

// VerifyLines says what ClickHouse built against what the plan computes for
// the same dictionary at the same rows: bytes, bytes a row, the difference;
// the memory around the load; the speeds beside the plan's for packlab's
// table.
func VerifyLines(c Candidate, r result.Result) []string {
	ch := r.ClickHouse
	if ch == nil {
		return []string{"the verification gave no ClickHouse figures"}
	}
	n := float64(max(r.ElementCount, 1))
	measured := r.BytesAllocated
	if ch.ComparedWith == "tracked_bytes" {
		measured = ch.TrackedBytes
	}
	lines := []string{
		fmt.Sprintf("verified in ClickHouse %s: %s at %s rows (the plan is for %s)", ch.Version, r.ClickHouseLayout, text.Rows(r.Rows), text.Rows(c.Rows)),
		fmt.Sprintf("memory: %s %s (%.2f bytes a row), the plan's model of the same dictionary %s (%.2f), %+.2f %%; RSS right after the load %s, %s after a purge, peak %s",
			ch.ComparedWith, text.Thousands(measured), float64(measured)/n, text.Thousands(ch.ModelBytes), float64(ch.ModelBytes)/n, ch.DifferencePercent,
			text.Bytes(r.RSSBytes), text.Bytes(ch.RSSPurgedBytes), text.Bytes(r.PeakRSSBytes)),
	}
	speed := fmt.Sprintf("speed: ClickHouse loaded %.2f M rows/s and read %.1f M rows/s on one thread (%.1f with max_threads %d)",
		r.LoadRowsPerSecond/1e6, r.ReadRowsPerSecond/1e6, ch.ReadAllThreadsRowsPerSecond/1e6, ch.ReadThreads)
	if c.LoadRowsPerSecond != nil && c.ReadRowsPerSecond != nil {
		speed += fmt.Sprintf("; the plan's %s: %.2f M rows/s load, %.1f M rows/s read", c.Layout, *c.LoadRowsPerSecond/1e6, *c.ReadRowsPerSecond/1e6)
	}
	lines = append(lines, speed)
	if ch.ReloadPeakRSSBytes > 0 {
		reload := fmt.Sprintf("reload: ClickHouse peaked at %s during a reload (the serving dictionary beside the new one loading)", text.Bytes(ch.ReloadPeakRSSBytes))
		if m := ch.ModelReloadPeakBytes; m > 0 {
			reload += fmt.Sprintf(", the plan's model of the same reload %s (%+.1f %%); the first load peaked at %s", text.Bytes(m),
				100*(float64(ch.ReloadPeakRSSBytes)/float64(m)-1), text.Bytes(r.PeakRSSBytes))
		}
		lines = append(lines, reload)
		if r.Rows < verifyModelRows && ch.ModelReloadPeakBytes > 0 {
			lines = append(lines, fmt.Sprintf("at %s rows ClickHouse's own memory (its allocator's arenas and caches, the source's read buffers) weighs as much as the dictionary, or more: the reload's model is fitted to loads of %s rows and more (off by up to 40 %% at 1e6, docs/plan.md), so a small plan's reload says little of it",
				text.Rows(r.Rows), text.Rows(verifyModelRows)))
		}
	}
	if ch.Note != "" {
		lines = append(lines, ch.Note)
	}
	return lines
}
