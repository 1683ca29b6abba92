package planner

// The plan's two answers: what runs in ClickHouse and what runs in Go.
//
// A table ClickHouse builds (HASHED, SPARSE_HASHED, HASHED_ARRAY, FLAT) is
// weighed twice, as the two programs would hold it: a Go setup, packlab's
// core table with core.Predict's figures (slabs grown in place, compact's
// growth pass releasing behind it), and a ClickHouse setup, ClickHouse's
// dictionary with its own growth's figures (every freed buffer still held
// by jemalloc through the load: dict.ClickHouseTableMemory), named by its
// LAYOUT clause. Each row of the ranked list is one of them and shows the
// memory of what would really run; the ClickHouse answer is the best
// ClickHouse setup, the Go answer the best Go one.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner/speed"
	"github.com/packlab/packlab/experiments/text"
)

// What runs a setup (Candidate.Engine).
const (
	EngineGo         = "go"
	EngineClickHouse = "clickhouse"
)

// engineOf is c's engine; a candidate made without one (a test's) is Go's.
func engineOf(c Candidate) string {
	if c.Engine == "" {
		return EngineGo
	}
	return c.Engine
}

// chSpeedLayout is the ch_ layout that measures ClickHouse's dictionary of
// packlab's layout l: SPARSE_HASHED for packed and sparse; the
// COMPLEX_KEY_ one for a complex key.
func chSpeedLayout(l string, complex bool) string {
	d, _ := dict.ClickHouseDictionaryFor(core.Layout(l))
	if complex {
		d, _ = dict.ComplexKeyDictionaryFor(core.Layout(l))
	}
	return d.Name
}

// withEngines splits cs into Go and ClickHouse setups. Each table of
// packlab's is a Go setup (with several attributes only the row layouts
// are: core keeps no table per attribute); each that the release builds as
// it is, a ClickHouse setup too, once per LAYOUT clause, with ClickHouse's
// figures and the speeds of ClickHouse's own loads (chm) where measured.
func withEngines(p ParsedRequest, cs []Candidate, chm map[string]Measure, sc speed.Scaling, threads int) []Candidate {
	out := make([]Candidate, 0, 2*len(cs))
	seen := map[string]bool{}
	addCH := func(c Candidate) {
		if c.ClickHouseLayout == "" || c.ClickHouse == nil || seen[c.ClickHouseLayout] || !builtAsIs(p, c) {
			return
		}
		seen[c.ClickHouseLayout] = true
		out = append(out, clickHouseSetup(p, c, chm[chSpeedLayout(c.Layout, c.ComplexKey)], sc, threads))
	}
	for _, c := range cs {
		switch {
		case c.Layout == FlatLayout:
			c.Engine = EngineClickHouse
			out = append(out, c)
		case p.stringKey || p.rowValued() && !strings.HasSuffix(c.Layout, dict.RowSuffix):
			addCH(c) // ClickHouse's table per attribute, or a String key: no Go table is one
		default:
			g := c
			g.Engine = EngineGo
			g.ClickHouseLayout, g.ClickHouse = "", nil
			if !c.PacklabOnly {
				g.ClickHouseNote = ""
			}
			out = append(out, g)
			addCH(c)
		}
	}
	return out
}

// builtAsIs reports whether ClickHouse's dictionary of c's LAYOUT clause
// keeps c's table: since 23.5 SPARSE_HASHED keeps a value it packs in
// PackedHashMap (packed), so a sparse setup's clause builds packed's table
// (over a simple key only).
func builtAsIs(p ParsedRequest, c Candidate) bool {
	if core.Layout(c.Layout) != core.LayoutSparse || c.ComplexKey { // COMPLEX_KEY_SPARSE_HASHED is sparse_hash_map

		return true
	}
	return !(dict.ClickHouseTable(core.LayoutPacked, p.value) == core.LayoutPacked && p.chVersion.AtLeast(dict.ReleasePackedHashMap))
}

// clickHouseSetup is the ClickHouse setup of c's dictionary: its memory by
// ClickHouse's own growth, its speeds from ClickHouse's loads (m).
func clickHouseSetup(p ParsedRequest, c Candidate, m Measure, sc speed.Scaling, threads int) Candidate {
	ch := *c.ClickHouse
	x := c
	x.Engine = EngineClickHouse
	x.ClickHouse = &ch
	x.PacklabOnly = false
	x.Overhead, x.PeakOverhead = 1, 1
	x.LoaderBytes, x.GrowthBytes = 0, 0
	x.SteadyBytes = ch.SteadyBytes
	x.BytesAllocated = ch.SteadyBytes // ClickHouse's own bytes_allocated, not the Go stand-in's
	x.PeakBytes = max(ch.FirstLoadPeakBytes, ch.SteadyBytes)
	x.ReloadPeakBytes = max(ch.ReloadPeakBytes, x.PeakBytes)
	x.BytesPerPair = float64(x.SteadyBytes) / float64(max(c.Distinct, 1))
	x.LoadSeconds, x.LoadRowsPerSecond, x.LoadRange, x.loadAtLeast = nil, nil, nil, nil
	x.ReadSeconds, x.ReadRowsPerSecond, x.ReadRange = nil, nil, nil
	x.GoCode = ""
	if m.LoadRowsPerSecond > 0 && !p.rowValued() {
		rate := sc.LoadRate(m.LoadRowsPerSecond, c.Shards, threads)
		x.LoadRowsPerSecond, x.LoadSeconds = ptr(rate), ptr(float64(c.Distinct)/rate)
		x.loadAtLeast = ptr(sc.LoadRateAt(m.LoadRowsPerSecond, sc.LeastEfficiency(), c.Shards, threads))
		if m.LoadRange != nil {
			r := sc.LoadRange(*m.LoadRange, c.Shards, threads)
			x.LoadRange = &r
		}
	}
	if m.ReadRowsPerSecond > 0 && !p.rowValued() {
		scale := 1 / speed.ShardReadCost(core.Layout(c.Layout), c.Shards) // the Go layout's: ClickHouse's SHARDS 4 read 1.24-1.36x slower
		cell := float64(c.BytesAllocated) / float64(max(c.BucketCount, 1))
		if m.LoadFactor > 0 && c.LoadFactor > 0 {
			scale *= speed.ProbeLines(m.LoadFactor, cell) / speed.ProbeLines(c.LoadFactor, cell)
		}
		rate := m.ReadRowsPerSecond * scale
		x.ReadRowsPerSecond, x.ReadSeconds = ptr(rate), ptr(float64(c.Distinct)/rate)
		if m.ReadRange != nil {
			x.ReadRange = &[2]float64{m.ReadRange[0] * scale, m.ReadRange[1] * scale}
		}
	}
	return x
}

// markAnswers marks the ClickHouse answer and the Go answer: the first
// setup of each engine by rank.
func markAnswers(plan *Plan) {
	for _, engine := range []string{EngineClickHouse, EngineGo} {
		for i := range plan.Candidates {
			c := &plan.Candidates[i]
			if engineOf(*c) == engine {
				c.Answer = engine
				c.BestClickHouse = engine == EngineClickHouse
				break
			}
		}
	}
}

// holdsUpTo is the most rows (as asked, before the growth) c's setup holds
// in budget: the same layout, shards and load factor, its checked peak
// within the budget; past it the answer changes. 0 when it holds none or
// cannot be worked out (FLAT's arrays follow the largest key, not the rows).
func holdsUpTo(p ParsedRequest, c Candidate, budget int64) int64 {
	if c.Layout == FlatLayout || c.Saturated {
		return 0
	}
	fits := func(n int64) bool {
		checked, ok := checkedAt(p, c, n)
		return ok && checked <= budget
	}
	// Up to 1024 times the keys: a String arena's model walks its chunks,
	// which at 2^62 rows would take hours.
	lo, hi := int64(0), min(int64(source.MaxRows), core.SaturatingMul(max(c.Distinct, 1), 1024)) // fits(lo) (or lo = 0); !fits(hi)
	if fits(hi) {
		return 0 // holds a thousand times as many: nothing to say
	}
	if fits(c.Distinct) {
		lo = c.Distinct
	}
	for hi-lo > max(lo/10000, 1) { // to 0.01 %
		m := lo + (hi-lo)/2
		if fits(m) {
			lo = m
		} else {
			hi = m
		}
	}
	return int64(math.Floor(float64(lo) / (1 + p.Growth()/100)))
}

// checkedAt is c's setup's checked peak at n keys.
func checkedAt(p ParsedRequest, c Candidate, n int64) (int64, bool) {
	q := p
	q.distinct, q.Rows = n, n
	mlf := 0.0
	if c.FollowsMLF {
		mlf = c.MaxLoadFactor
	}
	var x Candidate
	if base, ok := strings.CutSuffix(c.Layout, dict.RowSuffix); ok {
		pr, err := dict.RowPrediction(core.Layout(base), p.key, p.attrs, n, q.options(mlf), c.Shards)
		if err != nil {
			return 0, false
		}
		rq := q
		rq.value = dict.RowType(p.attrs)
		x = candidate(rq, core.Layout(base), mlf, c.Shards, pr, Measure{}, speed.Scaling{}, 1)
	} else {
		pr, err := dict.AttributesPrediction(core.Layout(c.Layout), p.key, p.attrs, n, q.attributeOptions(mlf, c.Shards), c.Shards)
		if err != nil {
			return 0, false
		}
		x = candidate(q, core.Layout(c.Layout), mlf, c.Shards, pr, Measure{}, speed.Scaling{}, 1)
	}
	if engineOf(c) == EngineClickHouse {
		if x.ClickHouse == nil {
			return 0, false
		}
		x = clickHouseSetup(q, x, Measure{}, speed.Scaling{}, 1)
	}
	if p.FirstLoadOnly {
		return x.PeakBytes, true
	}
	return x.ReloadPeakBytes, true
}

// engineWords names what runs a setup in a sentence: "in ClickHouse", "in Go".
func engineWords(engine string) string {
	if engine == EngineClickHouse {
		return "in ClickHouse"
	}
	return "in Go"
}

// AnswerTitle heads an answer: "In ClickHouse 26.7", "In Go (packlab's core)".
func AnswerTitle(plan Plan, c Candidate) string {
	if engineOf(c) == EngineClickHouse {
		return "In ClickHouse " + plan.Request.ClickHouseVersion
	}
	return "In Go (packlab's core)"
}

// fitWords says whether c fits the budget and by how much: "fits in 24.0
// GiB with 8.5 GiB to spare", "does not fit in 24.0 GiB: 5.2 GiB over".
func fitWords(plan Plan, c Candidate) string {
	if c.CheckedBytes == math.MaxInt64 {
		return fmt.Sprintf("does not fit in %s: it needs over 8 EiB", text.Bytes(plan.BudgetBytes))
	}
	if c.Fits {
		return fmt.Sprintf("fits in %s with %s to spare", text.Bytes(plan.BudgetBytes), text.Bytes(plan.BudgetBytes-c.CheckedBytes))
	}
	return fmt.Sprintf("does not fit in %s: %s over", text.Bytes(plan.BudgetBytes), text.Bytes(c.CheckedBytes-plan.BudgetBytes))
}

// answerLine is an answer in one line: where it runs, the setup, its
// memory, whether it fits and by how much.
func answerLine(plan Plan, c Candidate) string {
	how := ""
	if engineOf(c) == EngineClickHouse {
		how = " by ClickHouse's own growth"
	}
	return fmt.Sprintf("%s: %s: steady %s, first load peak %s, reload peak %s%s, %s %s; %s at a %s",
		AnswerTitle(plan, c), SetupName(c), text.Bytes(c.SteadyBytes), text.Bytes(c.PeakBytes), text.Bytes(c.ReloadPeakBytes), how,
		perPair(c), perKeyWords(plan), fitWords(plan, c), plan.Checked)
}

// perPair is c's bytes a pair: at least the figure, where the bytes stand
// at 8 EiB (4e18 rows said "2.10 bytes/pair", 8 EiB over its rows).
func perPair(c Candidate) string {
	if c.Saturated {
		return "over " + strconv.FormatFloat(c.BytesPerPair, 'f', 2, 64)
	}
	return strconv.FormatFloat(c.BytesPerPair, 'f', 2, 64)
}

// perKeyWords names bytes per key: "bytes/pair", or "bytes/row" for a
// dictionary of several attributes (the key and every attribute).
func perKeyWords(plan Plan) string {
	if len(plan.Request.Attributes) > 1 {
		return "bytes/row"
	}
	return "bytes/pair"
}

// holdsWords says up to how many rows an answer's setup holds in the
// budget, and what the plan was for: "" when not known.
func holdsWords(plan Plan, c Candidate) string {
	if c.HoldsUpTo <= 0 {
		return ""
	}
	g := plan.Request.Growth()
	s := fmt.Sprintf("this setup holds up to %s rows in %s", text.Rows(threeDigits(c.HoldsUpTo)), text.Bytes(plan.BudgetBytes))
	if g > 0 {
		s += fmt.Sprintf(" with %s %% growth (%s keys)", text.Float(g), text.Rows(threeDigits(plannedRows(c.HoldsUpTo, g))))
	}
	if c.HoldsUpTo < c.Rows {
		return s + ": fewer than asked"
	}
	return s + "; past that the answer changes"
}

// threeDigits rounds n down to three significant digits: 1258330995 is
// 1250000000 (1.25B).
func threeDigits(n int64) int64 {
	if n < 1000 {
		return n
	}
	f := int64(math.Pow(10, math.Floor(math.Log10(float64(n)))-2))
	return n / f * f
}
