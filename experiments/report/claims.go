package report

// The seed's claims, measured here: `packlab sweep seed-claims` runs what
// each claim is about, and the report puts the measurement next to the
// claim (SeedClaims, SeedClaimsChart, LoadScalingChart).
//
//	claim (ClickHouse PR #40003 and the HashedDictionaryCollectionType.h
//	comment)
//	  shard selection by a mask instead of modulo   "not even 10 %"
//	  blocks of max_block_size x shards              "not even 10 %"
//	  16 threads                                     "2x faster, not perfect"
//	  1e9 <UInt64,UInt16>: HASHED 35 GiB, PackedHashMap 20 GiB allocated /
//	  22 GiB RSS, sparse_hash_map 26 GiB (17.5-17.7 GiB with a packed pair)

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/sweep"
	"github.com/packlab/packlab/experiments/text"
)

// seedMemory is the seed's memory table at 1e9 <UInt64,UInt16>, in GiB:
// its RSS and, where it gave one, the other figure it quoted.
var seedMemory = map[core.Layout]struct {
	rss, other       float64
	otherIs, otherAs string // what the other figure is; how a verdict names it
}{
	core.LayoutHashed: {35, 0, "", ""},
	core.LayoutPacked: {22, 20, "allocated", "allocated figure"},
	core.LayoutSparse: {26, 17.5, "with a packed pair and a patched allocator", "packed-pair figure"},
}

// Claim is one of the seed's claims beside what was measured here.
type Claim struct {
	Claim    string  `json:"claim"`    // what is claimed about
	Seed     string  `json:"seed"`     // what the seed says
	Measured string  `json:"measured"` // what this machine measured, with the figures
	Agrees   string  `json:"agrees"`   // "yes", "no", or why it cannot be told here
	SeedGain float64 `json:"-"`        // for the chart: the claim as a gain in %
	Gain     float64 `json:"-"`        // the measured gain in %
}

// loaderMatch reports whether two results differ at most in the loader
// knobs: same layout, types, rows, max load factor and source.
func loaderMatch(a, b result.Result) bool {
	return a.Layout == b.Layout && a.KeyType == b.KeyType && a.ValueType == b.ValueType && a.Rows == b.Rows &&
		a.MaxLoadFactor == b.MaxLoadFactor && a.Source == b.Source
}

// SeedClaims puts each of the seed's claims that results of `packlab sweep
// seed-claims` hold runs for next to what they measured; nil when results
// hold none (other runs are not taken for claims: a run that happens to
// match one was not made to test it).
func SeedClaims(results []result.Result) []Claim {
	results = seedClaimsRuns(results)
	out := loaderClaims(results)
	if c, ok := scalingClaim(results); ok {
		out = append(out, c)
	}
	return append(out, memoryClaims(results)...)
}

// gain is how much faster fast is than slow, in %.
func gain(fast, slow float64) float64 { return 100 * (fast/slow - 1) }

// loadRate is a run's load speed, the short way.
func loadRate(r result.Result) string {
	return text.RowsRate(r.LoadRowsPerSecond) + " rows/s"
}

// loaderClaims are the two claims of a few per cent on the loader: shard
// selection by a mask, and blocks of max_block_size x shards.
func loaderClaims(results []result.Result) []Claim {
	var out []Claim
	selects := func(sel core.ShardSelect) func(result.Result) bool {
		return func(r result.Result) bool { return result.ShardSelectOf(r) == string(sel) }
	}
	blocks := func(perShard bool) func(result.Result) bool {
		return func(r result.Result) bool {
			want := core.DefaultBlockRows
			if perShard {
				want *= r.Shards
			}
			return result.BlockRowsOf(r) == want && r.Shards > 1
		}
	}
	sameBlocks := func(a, b result.Result) bool {
		return a.Shards == b.Shards && result.BlockRowsOf(a) == result.BlockRowsOf(b)
	}
	sameSelect := func(a, b result.Result) bool {
		return a.Shards == b.Shards && result.ShardSelectOf(a) == result.ShardSelectOf(b)
	}
	if mod, mask, ok := pairBy(results, selects(core.ShardSelectModulo), selects(core.ShardSelectMask), sameBlocks); ok {
		g := gain(mask.LoadRowsPerSecond, mod.LoadRowsPerSecond)
		out = append(out, Claim{
			Claim:    "shard selection by a mask instead of modulo",
			Seed:     "not even 10 % faster (ClickHouse PR #40003, v3)",
			Measured: fmt.Sprintf("%+.1f %%: %s against %s (%s, %s rows, %d shards, %s%s)", g, loadRate(mask), loadRate(mod), mask.Layout, text.Rows(mask.Rows), mask.Shards, text.Count(result.ThreadsOf(mask), "thread", "threads"), mediansOf(mask)),
			Agrees:   yesNo(g < 10),
			SeedGain: 10, Gain: g,
		})
	}
	if small, big, ok := pairBy(results, blocks(false), blocks(true), sameSelect); ok {
		g := gain(big.LoadRowsPerSecond, small.LoadRowsPerSecond)
		out = append(out, Claim{
			Claim: "blocks of max_block_size x shards into the shard queues",
			Seed:  "not even 10 % faster (ClickHouse PR #40003, v4)",
			Measured: fmt.Sprintf("%+.1f %%: %s with blocks of %s rows against %s with %s (%s, %s rows, %d shards%s)", g, loadRate(big), text.Thousands(int64(big.BlockRows)),
				loadRate(small), text.Thousands(int64(result.BlockRowsOf(small))), big.Layout, text.Rows(big.Rows), big.Shards, mediansOf(big)),
			Agrees:   yesNo(g < 10),
			SeedGain: 10, Gain: g,
		})
	}
	return out
}

// scalingClaim is the claim on threads: 16 of them about 2x faster.
func scalingClaim(results []result.Result) (Claim, bool) {
	s := scalingSeries(results)
	if s == nil {
		return Claim{}, false
	}
	one := s.rates[1][1]
	bestT, bestS, best := 1, 1, one
	for t, byShards := range s.rates {
		for sh, r := range byShards {
			if r > best {
				bestT, bestS, best = t, sh, r
			}
		}
	}
	g := gain(best, one)
	agrees := fmt.Sprintf("cannot tell: this machine has %d threads, the claim is at 16", s.cores)
	if s.cores >= 16 {
		agrees = yesNo(g >= 50 && g <= 150)
	}
	return Claim{
		Claim: "load speed with more threads (one per shard)",
		Seed:  "with 16 threads about 2x faster, not perfect (ClickHouse PR #40003)",
		Measured: fmt.Sprintf("%.2fx: %s rows/s with %s on %s against %s with 1 shard on 1 thread (%s, %s rows%s)",
			best/one, text.RowsRate(best), text.Count(bestS, "shard", "shards"), text.Count(bestT, "thread", "threads"), text.RowsRate(one), s.layout, text.Rows(s.rows), s.medians),
		Agrees:   agrees,
		SeedGain: 100, Gain: g,
	}, true
}

// memoryClaims are the seed's memory table at 1e9, each structure
// measured here projected there by the planner.
func memoryClaims(results []result.Result) []Claim {
	var out []Claim
	for _, m := range seedMemoryProjection(results) {
		seed := seedMemory[m.layout]
		say := fmt.Sprintf("%.1f GiB RSS", seed.rss)
		if seed.other > 0 {
			say += fmt.Sprintf(" (%.1f GiB %s)", seed.other, seed.otherIs)
		}
		near := func(v float64) bool { return v > 0 && math.Abs(m.gib/v-1) <= 0.10 }
		agrees := "no"
		switch {
		case near(seed.rss):
			agrees = "yes, within 10 % of the RSS"
		case near(seed.other):
			agrees = "yes, within 10 % of the " + seed.otherAs
		}
		out = append(out, Claim{
			Claim: fmt.Sprintf("memory of %s at 1e9 <UInt64,UInt16> (%s)", m.layout, dict.Structure(m.layout)),
			Seed:  say,
			Measured: fmt.Sprintf("%.1f GiB projected by the planner from %s rows measured here (RSS %s, %.2f bytes/pair; overhead x%s)",
				m.gib, text.Rows(m.from.Rows), text.Bytes2(m.from.RSSBytes), float64(m.from.RSSBytes)/float64(max(m.from.ElementCount, 1)), text.Float(text.Round(m.overhead, 3))),
			Agrees: agrees,
		})
	}
	return out
}

// seedClaimsRuns are the results measured by seed-claims sweeps.
func seedClaimsRuns(results []result.Result) []result.Result {
	prefix := config.SweepJobName("seed-claims", config.Config{})
	var out []result.Result
	for _, r := range results {
		if r.Job != nil && (r.Job.Name == prefix || strings.HasPrefix(r.Job.Name, prefix+" ")) {
			out = append(out, r)
		}
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// mediansOf says how a result's times were taken.
func mediansOf(r result.Result) string {
	if r.Repeats > 1 {
		return fmt.Sprintf("; medians of %d loads", r.Repeats)
	}
	return ""
}

// pairBy finds the newest result b (isB, the claim's change) and the result
// a (isA, without it) measured nearest to it in time that differs from it
// only in the loader's knobs and matches it by same: the sweep runs the two
// back to back.
func pairBy(results []result.Result, isA, isB func(result.Result) bool, same func(a, b result.Result) bool) (result.Result, result.Result, bool) {
	var bestA, bestB result.Result
	found := false
	for _, b := range results {
		if b.LoadRowsPerSecond <= 0 || !isB(b) || (found && b.ID <= bestB.ID) {
			continue
		}
		var pick *result.Result
		for i := range results {
			a := &results[i]
			if a.ID != b.ID && a.LoadRowsPerSecond > 0 && isA(*a) && loaderMatch(*a, b) && same(*a, b) && result.ThreadsOf(*a) == result.ThreadsOf(b) &&
				(pick == nil || result.IDDistance(a.ID, b.ID) < result.IDDistance(pick.ID, b.ID)) {
				pick = a
			}
		}
		if pick != nil {
			bestA, bestB, found = *pick, b, true
		}
	}
	return bestA, bestB, found
}

// scaling is load speed by threads and shards, from one layout and size.
type scaling struct {
	layout  string
	rows    int64
	cores   int
	medians string
	rates   map[int]map[int]float64 // threads -> shards -> rows/s
}

// scalingSeries gathers the default-loader runs of the one layout and size
// that has the most (threads, shards) points, including 1 shard on 1
// thread; nil when there is no such series.
func scalingSeries(results []result.Result) *scaling {
	type key struct {
		layout string
		rows   int64
	}
	series := map[key]*scaling{}
	for _, r := range results {
		if r.LoadRowsPerSecond <= 0 || r.Threads <= 0 || result.ShardSelectOf(r) == string(core.ShardSelectModulo) || result.BlockRowsOf(r) != core.DefaultBlockRows {
			continue
		}
		k := key{r.Layout, r.Rows}
		s := series[k]
		if s == nil {
			s = &scaling{layout: r.Layout, rows: r.Rows, cores: r.Host.CPUs, medians: mediansOf(r), rates: map[int]map[int]float64{}}
			series[k] = s
		}
		if s.rates[r.Threads] == nil {
			s.rates[r.Threads] = map[int]float64{}
		}
		s.rates[r.Threads][r.Shards] = r.LoadRowsPerSecond // the last one measured
	}
	var best *scaling
	points := func(s *scaling) int {
		n := 0
		for _, m := range s.rates {
			n += len(m)
		}
		return n
	}
	for _, s := range series {
		if s.rates[1][1] > 0 && len(s.rates) > 0 && points(s) >= 3 && (best == nil || points(s) > points(best)) {
			best = s
		}
	}
	return best
}

// memoryProjection is one structure's measured run and the planner's
// figure for it at 1e9.
type memoryProjection struct {
	layout   core.Layout
	from     result.Result
	gib      float64
	overhead float64
}

// seedMemoryProjection projects each of the seed's structures measured in
// results (one shard, max load factor 0.5, <UInt64,UInt16>, isolated) to
// 1e9 rows with the planner, from the overhead that run measured.
func seedMemoryProjection(results []result.Result) []memoryProjection {
	var out []memoryProjection
	for _, l := range sweep.SeedClaimsMemory {
		var from *result.Result
		for i := range results {
			r := &results[i]
			if r.Layout == string(l) && r.KeyType == "UInt64" && r.ValueType == "UInt16" && r.Shards == 1 && r.MaxLoadFactor == 0.5 &&
				r.Isolated && r.RSSBytes > 0 && (from == nil || r.Rows > from.Rows || (r.Rows == from.Rows && r.ID > from.ID)) {
				from = r
			}
		}
		if from == nil {
			continue
		}
		plan, err := planner.MakePlan(planner.PlanRequest{Rows: 1e9, MemoryBytes: 1 << 50}, []result.Result{*from}, planner.PlanMachine{AvailableBytes: 1 << 50, Cores: 1})
		if err != nil {
			continue
		}
		for _, c := range plan.Candidates {
			if c.Layout == string(l) && c.Shards == 1 && c.MaxLoadFactor == 0.5 {
				out = append(out, memoryProjection{layout: l, from: *from, gib: float64(c.SteadyBytes) / (1 << 30), overhead: c.Overhead})
			}
		}
	}
	return out
}

// SeedClaimsChart draws the claims: on the left the speed claims as gains
// in % (the seed's bound or figure beside the measured one), on the right
// the memory at 1e9, the seed's beside the planner's projection of what was
// measured here.
func SeedClaimsChart(results []result.Result) (Chart, error) {
	const kind, title = "seed-claims", "The seed's claims, measured here"
	claims := SeedClaims(results)
	var speedCats []string
	var seedGain, gain []opts.BarData
	for _, c := range claims {
		if c.SeedGain == 0 {
			continue
		}
		speedCats = append(speedCats, strings.SplitN(c.Claim, " (", 2)[0])
		seedGain = append(seedGain, opts.BarData{Value: num(c.SeedGain, 1)})
		gain = append(gain, opts.BarData{Value: num(c.Gain, 1)})
	}
	mem := seedMemoryProjection(seedClaimsRuns(results))
	if len(speedCats) == 0 && len(mem) == 0 {
		return Chart{}, noData(kind, "no seed-claims runs (packlab sweep seed-claims)")
	}
	notes := []string{"left: load-speed gain in % (seed: the 10 % it says was not reached, and the 2x of 16 threads)",
		"right: GiB at 1e9 <UInt64,UInt16>: ClickHouse's figures, and the planner's projection of the runs measured here"}
	bar := charts.NewBar()
	bar.SetGlobalOptions(baseOptions(kind, title, notes)...)
	bar.GridList = nil
	bar.SetGlobalOptions(
		columnTooltip,
		charts.WithGridOpts(opts.Grid{Left: "3%", Right: "54%", Top: gridTop(notes), Bottom: "70", ContainLabel: opts.Bool(true)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 15}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "gain %", AxisLabel: &opts.AxisLabel{Formatter: "{value} %"}}),
	)
	bar.SetXAxis(speedCats)
	label := charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "top", Formatter: "{c}"})
	bar.AddSeries("seed", seedGain, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#c8c8c8"}))
	bar.AddSeries("measured here", gain, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#5470c6"}))

	var memCats []string
	var rss, other, proj []opts.BarData
	for _, m := range mem {
		s := seedMemory[m.layout]
		memCats = append(memCats, string(m.layout))
		rss = append(rss, opts.BarData{Value: num(s.rss, 1)})
		if s.other > 0 {
			other = append(other, opts.BarData{Value: num(s.other, 1)})
		} else {
			other = append(other, opts.BarData{Value: "-"})
		}
		proj = append(proj, opts.BarData{Value: num(m.gib, 1)})
	}
	bar.SetGlobalOptions(charts.WithGridOpts(opts.Grid{Left: "54%", Right: "4%", Top: gridTop(notes), Bottom: "70", ContainLabel: opts.Bool(true)}))
	bar.ExtendXAxis(opts.XAxis{Type: "category", GridIndex: 1, Data: memCats, AxisLabel: &opts.AxisLabel{Interval: "0"}})
	bar.ExtendYAxis(opts.YAxis{Type: "value", GridIndex: 1, Name: "GiB at 1e9", AxisLabel: &opts.AxisLabel{Formatter: "{value} GiB"}})
	right := charts.NewBar()
	on := charts.WithBarChartOpts(opts.BarChart{XAxisIndex: 1, YAxisIndex: 1})
	right.AddSeries("ClickHouse RSS (seed)", rss, on, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#fac858"}))
	right.AddSeries("ClickHouse other figure (seed)", other, on, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#fc8452"}))
	right.AddSeries("packlab, projected from here", proj, on, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#3ba272"}))
	bar.Overlap(right)
	return finish(kind, title, bar, optionVisitor{})
}

// LoadScalingChart draws load speed against the shard count, one line per
// thread count: the seed's "16 threads about 2x" as far as this machine
// goes.
func LoadScalingChart(results []result.Result) (Chart, error) {
	const kind, title = "load-scaling", "Load speed against shards and threads"
	s := scalingSeries(seedClaimsRuns(results))
	if s == nil {
		return Chart{}, noData(kind, "no runs of one layout and size at several shard counts and 1 thread")
	}
	var threads []int
	shardSet := map[int]bool{}
	for t, m := range s.rates {
		threads = append(threads, t)
		for sh := range m {
			shardSet[sh] = true
		}
	}
	slices.Sort(threads)
	var shards []int
	for sh := range shardSet {
		shards = append(shards, sh)
	}
	slices.Sort(shards)
	cats := make([]string, len(shards))
	for i, sh := range shards {
		cats[i] = strconv.Itoa(sh)
	}
	notes := []string{fmt.Sprintf("%s, %s random rows; one worker per shard; threads: GOMAXPROCS of the measuring process%s",
		s.layout, text.Rows(s.rows), s.medians)}
	line := charts.NewLine()
	line.SetGlobalOptions(baseOptions(kind, title, notes)...)
	line.SetGlobalOptions(
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: "shards", NameLocation: "middle", NameGap: 30, Data: cats}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "million rows/s"}),
	)
	for i, t := range threads {
		data := make([]opts.LineData, len(shards))
		for j, sh := range shards {
			if r, ok := s.rates[t][sh]; ok {
				data[j] = opts.LineData{Value: num(r/1e6, 2)}
			} else {
				data[j] = opts.LineData{Value: "-"}
			}
		}
		name := fmt.Sprintf("%d threads", t)
		if t == 1 {
			name = "1 thread"
		}
		line.AddSeries(name, data, lineStyle(palette[i%len(palette)], "solid", 0))
	}
	return finish(kind, title, line, optionVisitor{})
}

// claimsTable is the claims as a table: header and rows.
func claimsTable(claims []Claim) (header []string, rows [][]string) {
	header = []string{"claim", "the seed says", "measured here", "agrees"}
	for _, c := range claims {
		rows = append(rows, []string{c.Claim, c.Seed, c.Measured, c.Agrees})
	}
	return header, rows
}

// WriteClaims writes the seed's claims that results hold runs for, as a
// grid under a heading: format "markdown" or "table" (the json and csv
// formats of a sweep stay one array or one table); nothing when results
// hold none.
func WriteClaims(w io.Writer, results []result.Result, format string) error {
	claims := SeedClaims(results)
	if len(claims) == 0 {
		return nil
	}
	header, rows := claimsTable(claims)
	md := strings.EqualFold(strings.TrimSpace(format), "markdown")
	var b strings.Builder
	if md {
		b.WriteString("\n### The seed's claims, measured here\n\n")
	} else {
		b.WriteString("\nThe seed's claims, measured here:\n")
	}
	text.Grid(&b, header, make([]bool, len(header)), rows, md)
	_, err := io.WriteString(w, b.String())
	return err
}
