//go:build !js

package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// VerifyAsk is a plan's ClickHouse answer to build and measure: in the
// lab's own ClickHouse (chDB) when Server is nil, else on that server, and
// with Cluster on every replica of it.
type VerifyAsk struct {
	Plan    planner.Plan
	Server  *server.Settings
	Cluster string
	// Hooks follow the chDB run (its progress, and the store that keeps
	// it; its job, when nil, is named VerifyJobName, from Hooks.Face); a
	// server's verification keeps nothing.
	Hooks Hooks
	// Starting, if set, is told what is about to be built, before it is.
	Starting func(Verifying)
}

// Verifying is what a verification builds: the dictionary's LAYOUT clause
// at Rows rows (the plan's, or MaxVerifyRows if fewer), ClickHouse's
// layout as the lab names it (ch_sparse_hashed).
type Verifying struct {
	Clause string
	Rows   int64
	Layout string
}

// Verified is a verification's figures beside the plan's model, in lines,
// and what they came from.
type Verified struct {
	Verifying
	Lines         []string               // verifyLines or each Verification's Lines
	Result        *result.Result         // the chDB run
	Verifications []*server.Verification // one a node, on a server
}

// VerifyJobName is the name a chDB verification's job is kept under.
func VerifyJobName(v Verifying) string {
	return "plan verification " + v.Layout + " " + text.Rows(v.Rows)
}

// ErrServerOnly is a plan whose dictionary only a server builds: its first
// attribute a String or a Nullable, where the lab's own ClickHouse (chDB)
// loads the lab's fixed-size value first.
var ErrServerOnly = errors.New("the lab's own ClickHouse loads a fixed-size value first, so this dictionary is built on a server only")

// ErrNothingToVerify is a plan with no setup ClickHouse builds.
var ErrNothingToVerify = errors.New("no setup of this plan is one ClickHouse builds")

// VerifyPlan builds the plan's best ClickHouse dictionary, every attribute
// of it, where ask says, and says what it holds beside the plan's model.
func VerifyPlan(ctx context.Context, ask VerifyAsk) (Verified, error) {
	cfg, c, ok := verifyConfig(ask.Plan)
	if !ok {
		return Verified{}, fmt.Errorf("%w (%s/%s)", ErrNothingToVerify, ask.Plan.Request.Key, ask.Plan.Request.Value)
	}
	d, ok := dict.FindClickHouseDictionary(cfg.Layouts[0])
	if !ok {
		return Verified{}, fmt.Errorf("%s is not a ClickHouse layout", cfg.Layouts[0])
	}
	rows := cfg.Rows
	if ask.Server != nil && ask.Plan.Request.From != nil {
		rows = ask.Plan.Request.Rows // the user's table, whole
	}
	if d.Flat() && (ask.Server == nil || ask.Plan.Request.From == nil) {
		return Verified{}, fmt.Errorf("%w (FLAT is built over a table of a server's ids only)", ErrNothingToVerify)
	}
	list := cfg.Attributes // a value alone is the one attribute
	if len(list) == 0 {
		list = []string{cfg.Value}
	}
	attrs, err := config.ParseDictionaryAttributes(list)
	if err != nil {
		return Verified{}, err
	}
	if ask.Server == nil && !attrs[0].Fixed() {
		// The lab's runs send and check a fixed-size value first.
		return Verified{}, fmt.Errorf("%w: its first attribute is a %s", ErrServerOnly, attrs[0].ColumnType())
	}
	v := Verified{Verifying: Verifying{Clause: c.ClickHouseLayout, Rows: rows, Layout: cfg.Layouts[0]}}
	if ask.Starting != nil {
		ask.Starting(v.Verifying)
	}
	if ask.Server == nil {
		h := ask.Hooks
		if h.Job == nil {
			j := result.NewJob(VerifyJobName(v.Verifying), h.Face, time.Now())
			h.Job = &j
		}
		m, err := Run(ctx, cfg, h)
		if err != nil {
			return v, err
		}
		v.Result = &m.Results[0]
		v.Lines = verifyLines(c, m.Results[0])
		return v, nil
	}
	req := server.VerifyRequest{Layout: d.Layout, Shards: cfg.Shards, MaxLoadFactor: cfg.MaxLoadFactor, Attributes: attrs, Rows: cfg.Rows}
	if d.ComplexKey {
		req.KeyType = c.KeyType // a String key's lengths are its table's (KeyMeanLen)
	}
	if f := ask.Plan.Request.From; f != nil {
		// The plan's own dictionary over the user's table: every row of it
		// (the plan's rows before its growth), each attribute as its
		// column holds it.
		names, _ := config.AttributeNames(ask.Plan.Request.Attributes)
		f.Hold(attrs)
		req.Rows, req.KeyMeanLen = rows, f.KeyMeanLen
		req.From = &server.VerifyFrom{Database: f.Database, Table: f.Table, KeyColumn: f.KeyColumn, Columns: names, MaxKey: ask.Plan.Request.MaxKey}
	}
	if ask.Cluster != "" {
		v.Verifications, err = server.VerifyCluster(ctx, *ask.Server, ask.Cluster, req)
	} else {
		var one *server.Verification
		if one, err = server.Verify(ctx, *ask.Server, req); one != nil {
			v.Verifications = append(v.Verifications, one)
		}
	}
	if err != nil {
		return v, err
	}
	for _, one := range v.Verifications {
		v.Lines = append(v.Lines, one.Lines()...)
	}
	return v, nil
}

// A plan, checked by ClickHouse: the dictionary the plan prints for the
// best setup ClickHouse can build, built by ClickHouse itself at a size the
// machine holds (VerifyPlan with no server), its figures beside the plan's
// model of the same dictionary at the same size.

// MaxVerifyRows is the most rows a verification loads: 1e7 rows of a
// <UInt64,UInt16> HASHED are about 1 GiB at ClickHouse's first-load peak,
// which any machine that runs the lab holds, and take seconds.
const MaxVerifyRows = 10_000_000

// verifyConfig is the run that checks plan's ClickHouse setup, and the
// candidate it checks; ok is false when no ClickHouse dictionary builds any
// setup of the plan.
func verifyConfig(plan planner.Plan) (cfg config.Config, c planner.Candidate, ok bool) {
	best := plan.BestClickHouse() // the ClickHouse answer
	if best == nil || best.ClickHouseLayout == "" {
		return config.Config{}, planner.Candidate{}, false
	}
	d, ok := dict.ClickHouseDictionaryFor(core.Layout(best.Layout))
	if best.ComplexKey {
		d, ok = dict.ComplexKeyDictionaryFor(core.Layout(best.Layout))
	}
	if best.Layout == planner.FlatLayout && plan.Request.From != nil {
		// FLAT over the user's table, whose ids are known: built on the
		// server only (VerifyPlan).
		d, ok = dict.FindClickHouseDictionary("ch_flat")
	}
	if !ok {
		return config.Config{}, planner.Candidate{}, false
	}
	// The plan's attributes, all of them: a verification of the value
	// alone built a dictionary of one UInt16 for a plan of
	// UInt16,Nullable(String) (13.11 bytes a row against the plan's 62).
	key := best.KeyType
	if key == "String" {
		key = plan.Request.Key // with its lengths, as the lab's run takes them
	}
	return config.Config{Layouts: []string{d.Name}, Key: key, Value: best.ValueType, Attributes: plan.Request.Attributes,
		Rows: min(best.Rows, MaxVerifyRows), Shards: best.Shards, MaxLoadFactor: best.MaxLoadFactor, NoRead: false}, *best, true
}

// verifyModelRows is the least rows the reload's model was fitted at
// (docs/clickhouse.md, "A reload, measured": 1e6, 1e7, 1e8): at 2e5 rows of
// SPARSE_HASHED the measured reload was 18.0 MiB against the model's 5.8.
const verifyModelRows = 1_000_000

// verifyLines says what ClickHouse built against what the plan computes for
// the same dictionary at the same rows: bytes, bytes a row, the difference;
// the memory around the load; the speeds beside the plan's for packlab's
// table.
func verifyLines(c planner.Candidate, r result.Result) []string {
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
