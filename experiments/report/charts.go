package report

// Charts: one function per chart, each turning results into an ECharts
// option built with go-echarts. The option JSON is the product: the desktop
// window, the browser build and the HTML report all hand it, unchanged, to
// the same ECharts release (EChartsVersion), so they draw the same picture.
//
// Options hold no JavaScript functions (go-echarts' FuncStr), only plain JSON:
// labels use ECharts' string templates such as "{value} MiB", so a face can
// pass the option to setOption as it is.

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// EChartsVersion is the ECharts release every face renders chart options
// with: the file embedded below, and the version frontend/package.json pins.
// go-echarts v2.6.7 targets it.
const EChartsVersion = "5.4.3"

//go:embed assets/echarts.min.js
var echartsJS string

// EChartsJS returns the vendored echarts.min.js (ECharts EChartsVersion), for
// a face that serves or inlines it instead of loading it from a network.
func EChartsJS() string { return echartsJS }

// Chart is one chart, ready for any face: its kind, its title and the
// ECharts option object that draws it.
type Chart struct {
	Kind   string          `json:"kind"`   // one of ChartKinds, e.g. "memory-breakdown"
	Title  string          `json:"title"`  // also the option's title text
	Option json.RawMessage `json:"option"` // the ECharts option object, rendered identically by every face
}

// ErrNoData is wrapped by a chart builder's error when the results hold
// nothing that chart can show (no results, no timeline, no workers...). A
// report leaves such a chart out; any other error is a real failure.
var ErrNoData = errors.New("nothing to chart")

type chartKind struct {
	kind  string
	build func([]result.Result) (Chart, error)
}

// chartKinds lists every chart in the order a report shows them.
var chartKinds = []chartKind{
	{"memory-breakdown", MemoryBreakdownChart},
	{"padding-waste", PaddingWasteChart},
	{"memory-vs-rows", MemoryVsRowsChart},
	{"memory-timeline", MemoryTimelineChart},
	{"per-thread-speed", PerThreadSpeedChart},
	{"throughput", ThroughputChart},
}

// ChartKinds returns the name of every chart BuildChart knows, in the order
// a report shows them.
func ChartKinds() []string {
	kinds := make([]string, len(chartKinds))
	for i, k := range chartKinds {
		kinds[i] = k.kind
	}
	return kinds
}

// BuildChart builds the chart of the given kind from results. An unknown
// kind is an error that lists the allowed ones; a kind with nothing to show
// returns an error wrapping ErrNoData.
func BuildChart(kind string, results []result.Result) (Chart, error) {
	k := strings.ToLower(strings.TrimSpace(kind))
	for _, c := range chartKinds {
		if c.kind == k {
			return c.build(results)
		}
	}
	return Chart{}, fmt.Errorf("unknown chart kind %q (allowed: %s)", kind, strings.Join(ChartKinds(), ", "))
}

func noData(kind, why string) error { return &NoDataError{Kind: kind, Why: why} }

// NoDataError is a chart with nothing to draw: which chart and why. It is
// ErrNoData (errors.Is); its text is "KIND chart: WHY: nothing to chart".
type NoDataError struct{ Kind, Why string }

func (e *NoDataError) Error() string {
	return fmt.Sprintf("%s chart: %s: %v", e.Kind, e.Why, ErrNoData)
}

func (e *NoDataError) Unwrap() error { return ErrNoData }

// ---- the six charts ----

// MemoryBreakdownChart is a stacked bar per run: where each entry's bytes go.
// bytes_allocated splits into payload, padding, empty cells, metadata and,
// for ClickHouse's tables per attribute, the key's copies;
// measured overhead = max(0, rss_bytes - bytes_allocated) sits on top, so a
// bar's height is the larger of the computed and the measured figure. Bars
// are in bytes per entry (bytes / element_count), so runs of different
// sizes and types compare directly.
func MemoryBreakdownChart(results []result.Result) (Chart, error) {
	const kind, title = "memory-breakdown", "Where the bytes go"
	if len(results) == 0 {
		return Chart{}, noData(kind, "no results")
	}
	labels := result.RunLabels(results, result.LabelAll, 0)
	var (
		cats                                   []string
		payload, padding, empty, meta, overhed []opts.BarData
		copies                                 []opts.BarData
		skipped, estimated, unmatched          []string
		refs                                   []runKind
	)
	for i, r := range results {
		if r.ElementCount <= 0 {
			skipped = append(skipped, labels[i])
			continue
		}
		n := float64(r.ElementCount)
		perEntry := func(b int64) opts.BarData { return opts.BarData{Value: num(float64(b)/n, 3)} }
		cats = append(cats, labels[i])
		refs = append(refs, kindOf(r))
		payload = append(payload, perEntry(r.PayloadBytes))
		padding = append(padding, perEntry(r.PaddingBytes))
		empty = append(empty, perEntry(r.EmptyBytes))
		meta = append(meta, perEntry(r.MetadataBytes))
		copies = append(copies, perEntry(r.KeyCopyBytes))
		overhed = append(overhed, perEntry(max(0, r.RSSBytes-r.BytesAllocated)))
		if r.Estimated {
			estimated = append(estimated, labels[i])
		}
		if r.PayloadBytes+r.PaddingBytes+r.EmptyBytes+r.MetadataBytes+r.KeyCopyBytes != r.BytesAllocated {
			unmatched = append(unmatched, labels[i])
		}
	}
	if len(cats) == 0 {
		return Chart{}, noData(kind, "no result has element_count > 0")
	}
	notes := breakdownNotes(estimated, unmatched, skipped, refs)

	bar := categoryBar(kind, title, notes, cats, opts.YAxis{Type: "value", Name: "bytes per entry", AxisLabel: &opts.AxisLabel{Formatter: "{value} B"}})
	stack := charts.WithBarChartOpts(opts.BarChart{Stack: "bytes"})
	for _, s := range []struct {
		name  string
		color string
		data  []opts.BarData
	}{
		{"payload", "#5470c6", payload},
		{"padding", "#ee6666", padding},
		{"empty cells", "#fac858", empty},
		{"metadata", "#91cc75", meta},
		{"key copies", "#3ba272", copies},
		{"measured overhead", "#9a60b4", overhed},
	} {
		if s.name == "key copies" && !slices.ContainsFunc(copies, func(d opts.BarData) bool { return d.Value != 0.0 }) {
			continue // no run holds its key twice
		}
		bar.AddSeries(s.name, s.data, stack, charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}), hatch(refs))
	}
	units := make([]string, len(bar.MultiSeries))
	for i := range units {
		units[i] = "B per entry"
	}
	bar.SetGlobalOptions(unitTooltip(units...))
	return finish(kind, title, bar, optionVisitor{styleKey: refs})
}

// breakdownNotes are the memory chart's notes: what a bar is, and which
// runs' figures are estimated, do not add up, are another program's or
// were left out.
func breakdownNotes(estimated, unmatched, skipped []string, refs []runKind) []string {
	notes := []string{"bytes per entry; overhead = RSS − bytes_allocated where RSS is larger"}
	if len(estimated) > 0 {
		notes = append(notes, "estimated bytes_allocated: "+strings.Join(estimated, ", "))
	}
	if len(unmatched) > 0 {
		notes = append(notes, "parts do not add up to bytes_allocated: "+strings.Join(unmatched, ", "))
	}
	notes = otherProgramNotes(notes, refs, "", "")
	if len(skipped) > 0 {
		notes = append(notes, "left out (element_count 0): "+strings.Join(skipped, ", "))
	}
	return notes
}

// otherProgramNotes adds to notes, when refs holds a C++ map's run or
// ClickHouse's, whose figures those are, each with what the chart adds
// about them. Which bars are whose is the legend's style key
// (optionVisitor.VisitSeriesOpt), not said again here.
func otherProgramNotes(notes []string, refs []runKind, refExtra, chExtra string) []string {
	if slices.Contains(refs, kindReference) {
		notes = append(notes, referenceNote+refExtra)
	}
	if slices.Contains(refs, kindClickHouse) {
		notes = append(notes, clickHouseNote+chExtra)
	}
	return notes
}

// PaddingWasteChart is a heatmap over every key type x value type: the share
// of a padded cell (struct{K;V}) that is padding, from core.PaddedCellBytes
// and core.PairBytes. With results it adds, beside the map, each run's
// measured padding share: padding_bytes / (payload_bytes + padding_bytes).
// It has data even with no results.
func PaddingWasteChart(results []result.Result) (Chart, error) {
	const kind, title = "padding-waste", "Padding waste of a struct{K;V} cell"
	names := core.TypeNames()
	cells, maxShare := paddingGrid()
	runs, measured, skipped, refs, most := measuredPadding(results)
	maxShare = max(maxShare, most)

	notes := []string{"% of sizeof(struct{K;V}) spent on alignment; packed cells spend none"}
	if len(runs) > 0 {
		notes = append(notes, "right: measured padding_bytes / (payload_bytes + padding_bytes)")
	}
	if slices.ContainsFunc(results, func(r result.Result) bool { return len(r.AttributeCells) > 1 }) {
		notes = append(notes, "a dictionary of several attributes: a bar for each attribute's table, its cell the key (UInt64) and that attribute")
	}
	notes = otherProgramNotes(notes, refs, "", "")
	if len(skipped) > 0 {
		notes = append(notes, "left out (no payload measured): "+strings.Join(skipped, ", "))
	}
	heatGrid := opts.Grid{Left: "3%", Right: "4%", Top: gridTop(notes), Bottom: "70", ContainLabel: opts.Bool(true)}
	if len(runs) > 0 {
		heatGrid.Right = "45%"
	}

	hm := charts.NewHeatMap()
	hm.SetGlobalOptions(baseOptions(kind, title, notes)...)
	hm.GridList = nil // one or two grids, set here
	hm.SetGlobalOptions(
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithGridOpts(heatGrid),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: "value type", NameLocation: "middle", NameGap: 70, Data: names,
			SplitArea: &opts.SplitArea{Show: opts.Bool(true)}, AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 45}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "category", Name: "key type", NameLocation: "start", Data: names, Inverse: opts.Bool(true),
			SplitArea: &opts.SplitArea{Show: opts.Bool(true)}, AxisLabel: &opts.AxisLabel{Interval: "0"}}),
		charts.WithVisualMapOpts(opts.VisualMap{Type: "continuous", Calculable: opts.Bool(true), Min: 0,
			Max: float32(math.Ceil(maxShare/10) * 10), Orient: "horizontal", Left: "center", Bottom: "0",
			Text:    []string{"% padding", "0"},
			InRange: &opts.VisualMapInRange{Color: []string{"#f7fbff", "#fdd49e", "#fc8d59", "#b30000"}}}),
	)
	hm.AddSeries("computed padding share (%)", cells,
		charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), FontSize: 9}))
	if len(runs) > 0 {
		// The measured bars take the right part, their run names broken
		// onto lines of at most runLabelWidth px: unbroken, the names took
		// the part's width at 1280 px, its bars a sliver, their figures and
		// the axis' name cut at the chart's edge.
		hm.SetGlobalOptions(charts.WithGridOpts(opts.Grid{Left: "57%", Right: "50", Top: gridTop(notes), Bottom: "70", ContainLabel: opts.Bool(true)}))
		// Three ticks (0, 50, 100 %): five ran together in the third of the
		// chart this grid has ("0 %20 %40 %60 %80 %").
		hm.ExtendXAxis(opts.XAxis{Type: "value", GridIndex: 1, Min: 0, Max: 100, Name: "measured padding", SplitNumber: 2,
			NameLocation: "middle", NameGap: 30, AxisLabel: &opts.AxisLabel{Formatter: "{value} %", Interval: "0"}})
		hm.ExtendYAxis(opts.YAxis{Type: "category", GridIndex: 1, Data: runs, Inverse: opts.Bool(true), AxisLabel: &opts.AxisLabel{Interval: "0"}})
		m := charts.NewBar()
		m.AddSeries("measured padding share (%)", measured,
			charts.WithBarChartOpts(opts.BarChart{XAxisIndex: 1, YAxisIndex: 1}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: "#ee6666"}),
			charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "right", Formatter: "{c} %"}), hatch(refs),
			charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: "{a}<br/>{b}: {c} %"}))
		hm.Overlap(m)
	}
	v := optionVisitor{visualMapSeries: []int{0}, styleKey: refs}
	if len(runs) > 0 {
		v.edit = breakAxisLabels("yAxis", 1, runLabelWidth)
	}
	return finish(kind, title, hm, v)
}

// paddingGrid is every key and value type pair's padding share of a
// struct{K;V} cell, in %, and the largest.
func paddingGrid() (cells []opts.HeatMapData, maxShare float64) {
	types := core.Types()
	for ki, k := range types {
		for vi, v := range types {
			padded := core.PaddedCellBytes(k, v)
			share := 100 * float64(padded-core.PairBytes(k, v)) / float64(padded)
			maxShare = max(maxShare, share)
			cells = append(cells, opts.HeatMapData{Value: []any{vi, ki, num(share, 1)}})
		}
	}
	return cells, maxShare
}

// measuredPadding is each result's measured padding share, in %, by its
// label, and the largest; skipped are the results with no payload
// measured.
func measuredPadding(results []result.Result) (runs []string, measured []opts.BarData, skipped []string, refs []runKind, maxShare float64) {
	labels := result.RunLabels(results, result.LabelAll, result.LabelTypes)
	add := func(label string, r result.Result, padding, cell int64) {
		share := 100 * float64(padding) / float64(cell)
		maxShare = max(maxShare, share)
		runs = append(runs, label)
		refs = append(refs, kindOf(r))
		measured = append(measured, opts.BarData{Value: num(share, 1)})
	}
	for i, r := range results {
		cell := r.PayloadBytes + r.PaddingBytes
		switch {
		case len(r.AttributeCells) > 1: // a table per attribute: a bar each
			for _, c := range r.AttributeCells {
				add(labels[i]+" · "+c.Name+" "+c.Type, r, c.PaddingBytes, c.CellBytes)
			}
		case cell > 0:
			add(labels[i], r, r.PaddingBytes, cell)
		default:
			skipped = append(skipped, labels[i])
		}
	}
	return runs, measured, skipped, refs, maxShare
}

// MemoryVsRowsChart draws, for each layout (and each setting other than rows
// that differs between the results), bytes_allocated (solid) and RSS
// (dashed) against rows on a log axis, so each layout's growth steps show,
// and for each pair of key and value types the information limit (dotted,
// grey): the fewest bytes any structure could hold those pairs in.
func MemoryVsRowsChart(results []result.Result) (Chart, error) {
	const kind, title = "memory-vs-rows", "Memory against rows"
	if len(results) == 0 {
		return Chart{}, noData(kind, "no results")
	}
	g := gatherRows(results)
	if len(g.order) == 0 || g.maxBytes == 0 {
		return Chart{}, noData(kind, "no result has rows and bytes")
	}
	u := bytesUnit(g.maxBytes)
	yType := "value"
	if g.maxBytes/g.minBytes > 100 {
		yType = "log"
	}
	notes := []string{"solid: bytes_allocated (computed); dashed: RSS (measured)"}
	if len(g.limits) > 0 {
		notes[0] += "; dotted: the information limit"
	}
	if len(g.skipped) > 0 {
		notes = append(notes, "left out (rows 0): "+strings.Join(g.skipped, ", "))
	}
	var kinds []runKind
	for _, label := range g.order {
		kinds = append(kinds, g.kinds[label])
	}
	notes = append(notes, lineNotes(kinds)...)
	// One row count is a column of points: the axis is the decade either
	// side of it (not 100 to 1e8), and the notes say what draws lines.
	x := opts.XAxis{Type: "log", Name: "rows", NameLocation: "middle", NameGap: 30}
	if rows := g.rowCounts(); len(rows) == 1 {
		x.Min, x.Max = float64(rows[0])/10, float64(rows[0])*10
		notes = append(notes, "every result has "+text.Thousands(rows[0])+" rows: results of several row counts draw a line each")
	}
	line := charts.NewLine()
	line.SetGlobalOptions(baseOptions(kind, title, notes)...)
	line.SetGlobalOptions(
		pointTooltip("rows", u.name),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(opts.YAxis{Type: yType, Name: u.name, AxisLabel: &opts.AxisLabel{Formatter: types.FuncStr("{value} " + u.name)}}),
	)
	g.addSeries(line, u)
	return finish(kind, title, line, optionVisitor{})
}

// rowsGroups is the memory-against-rows chart's data: each label's points
// in the order the labels first came, and the information limit of each
// key/value pair of types at each row count.
type rowsGroups struct {
	order, skipped     []string
	points             map[string][]rowsPoint
	kinds              map[string]runKind
	limits             map[string]map[int64]int64 // types -> rows -> limit
	limitOrder         []string
	maxBytes, minBytes float64
}

type rowsPoint struct{ rows, alloc, rss int64 }

// rowCounts are the distinct row counts of g's points, in order.
func (g rowsGroups) rowCounts() []int64 {
	var rows []int64
	for _, pts := range g.points {
		for _, p := range pts {
			rows = append(rows, p.rows)
		}
	}
	slices.Sort(rows)
	return slices.Compact(rows)
}

// gatherRows groups results by their label without the rows.
func gatherRows(results []result.Result) rowsGroups {
	g := rowsGroups{points: map[string][]rowsPoint{}, kinds: map[string]runKind{}, limits: map[string]map[int64]int64{}, minBytes: math.Inf(1)}
	labels := result.SettingsLabels(results, result.LabelAll.Without(result.LabelRows), 0)
	for i, r := range results {
		if r.Rows <= 0 {
			g.skipped = append(g.skipped, labels[i])
			continue
		}
		if _, ok := g.points[labels[i]]; !ok {
			g.order = append(g.order, labels[i])
		}
		g.points[labels[i]] = append(g.points[labels[i]], rowsPoint{r.Rows, r.BytesAllocated, r.RSSBytes})
		g.kinds[labels[i]] = kindOf(r)
		if lim := result.InformationLimitOf(r); lim > 0 {
			types := text.OrDash(r.KeyType) + "/" + text.OrDash(r.ValueType)
			if g.limits[types] == nil {
				g.limits[types] = map[int64]int64{}
				g.limitOrder = append(g.limitOrder, types)
			}
			g.limits[types][r.Rows] = lim
		}
		for _, b := range []int64{r.BytesAllocated, r.RSSBytes} {
			if b > 0 {
				g.maxBytes = max(g.maxBytes, float64(b))
				g.minBytes = min(g.minBytes, float64(b))
			}
		}
	}
	return g
}

// addSeries draws each label's bytes_allocated (solid) and RSS (dashed)
// against rows, and the information limits (dotted).
func (g rowsGroups) addSeries(line *charts.Line, u unit) {
	colors := newSeriesColors()
	for _, label := range g.order {
		pts := g.points[label]
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].rows < pts[b].rows })
		var alloc, rss []opts.LineData
		for _, p := range pts {
			if p.alloc > 0 {
				alloc = append(alloc, opts.LineData{Value: []any{p.rows, num(float64(p.alloc)/u.div, 4)}})
			}
			if p.rss > 0 {
				rss = append(rss, opts.LineData{Value: []any{p.rows, num(float64(p.rss)/u.div, 4)}})
			}
		}
		color := colors.next(g.kinds[label])
		if len(alloc) > 0 {
			line.AddSeries(label+" bytes_allocated", alloc, lineStyle(color, "solid", 0))
		}
		if len(rss) > 0 {
			line.AddSeries(label+" RSS", rss, lineStyle(color, "dashed", 0))
		}
	}
	for _, types := range g.limitOrder {
		var pts []opts.LineData
		for _, rows := range slices.Sorted(maps.Keys(g.limits[types])) {
			pts = append(pts, opts.LineData{Value: []any{rows, num(float64(g.limits[types][rows])/u.div, 4)}})
		}
		name := "information limit"
		if len(g.limitOrder) > 1 {
			name += " " + types
		}
		line.AddSeries(name, pts, lineStyle("#888888", "dotted", 0))
	}
}

// MemoryTimelineChart draws, for each run that sampled a timeline, RSS
// (solid, left axis) and rows loaded (dashed, right axis) against seconds
// since the load began: the growth sawtooth and rehash peaks.
func MemoryTimelineChart(results []result.Result) (Chart, error) {
	const kind, title = "memory-timeline", "Memory during the load"
	labels := result.RunLabels(results, result.LabelAll, 0)
	var maxRSS, maxRows float64
	var with []int
	for i, r := range results {
		if len(r.Timeline) == 0 {
			continue
		}
		with = append(with, i)
		for _, p := range r.Timeline {
			maxRSS = max(maxRSS, float64(p.RSSBytes))
			maxRows = max(maxRows, float64(p.Rows))
		}
	}
	if len(with) == 0 {
		return Chart{}, noData(kind, "no result has a timeline")
	}
	bu, ru := bytesUnit(maxRSS), rowsUnit(maxRows)
	notes := []string{"solid: RSS (left axis); dashed: rows loaded (right axis)"}
	if len(with) < len(results) {
		notes = append(notes, fmt.Sprintf("%d of %d runs have no timeline", len(results)-len(with), len(results)))
	}
	var kinds []runKind
	for _, i := range with {
		kinds = append(kinds, kindOf(results[i]))
	}
	notes = append(notes, lineNotes(kinds)...)
	perRun := timelinePoints(len(with))
	for _, i := range with {
		if n := len(results[i].Timeline); n > perRun {
			notes = append(notes, fmt.Sprintf("each run's timeline drawn at %d points at most (of up to %d sampled; its peak kept), so that %d runs stay one page", perRun, n, len(with)))
			break
		}
	}
	colors := newSeriesColors()
	line := charts.NewLine()
	line.SetGlobalOptions(baseOptions(kind, title, notes)...)
	line.SetGlobalOptions(
		// A point's tooltip says its figures with their units: each series
		// its own (RSS in bytes, rows in rows), so the trigger is the item.
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: "seconds since the load began", NameLocation: "middle", NameGap: 30,
			AxisLabel: &opts.AxisLabel{Formatter: "{value} s"}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: "RSS (" + bu.name + ")", AxisLabel: &opts.AxisLabel{Formatter: types.FuncStr("{value} " + bu.name)}}),
	)
	line.ExtendYAxis(opts.YAxis{Type: "value", Name: ru.name + " loaded", Position: "right",
		SplitLine: &opts.SplitLine{Show: opts.Bool(false)}})
	for _, i := range with {
		var rss, rows []opts.LineData
		for _, p := range thinTimeline(results[i].Timeline, perRun) {
			rss = append(rss, opts.LineData{Value: []any{num(p.Seconds, 3), num(float64(p.RSSBytes)/bu.div, 3)}})
			rows = append(rows, opts.LineData{Value: []any{num(p.Seconds, 3), num(float64(p.Rows)/ru.div, 3)}})
		}
		color := colors.next(kindOf(results[i]))
		line.AddSeries(labels[i]+" RSS", rss, lineStyle(color, "solid", 0), seriesUnits("s", "RSS "+bu.name))
		line.AddSeries(labels[i]+" rows", rows, lineStyle(color, "dashed", 1), seriesUnits("s", ru.name))
	}
	return finish(kind, title, line, optionVisitor{})
}

// timelineBudget is the most points the timeline chart draws over all its
// runs, each run at least timelineMinPoints and at most timelineMaxPoints:
// 2,070 runs of 2,000 samples each made a 195 MB report that took 3.3 GB
// to write; thinned, a page of a few MB.
const (
	timelineBudget    = 40_000
	timelineMinPoints = 40
	timelineMaxPoints = 1_000
)

// timelinePoints is how many points each of runs timelines is drawn at.
func timelinePoints(runs int) int {
	return min(max(timelineBudget/max(runs, 1), timelineMinPoints), timelineMaxPoints)
}

// thinTimeline is at most n of ts's points, evenly spaced from the first to
// the last, and the point of the highest RSS (the peak a reader looks for).
func thinTimeline(ts []result.TimelinePoint, n int) []result.TimelinePoint {
	if len(ts) <= n || n < 2 {
		return ts
	}
	peak := 0
	for i, p := range ts {
		if p.RSSBytes > ts[peak].RSSBytes {
			peak = i
		}
	}
	out := make([]result.TimelinePoint, 0, n+1)
	last := -1
	for k := range n - 1 {
		i := k * (len(ts) - 1) / (n - 1)
		if last < peak && peak < i {
			out = append(out, ts[peak])
		}
		out, last = append(out, ts[i]), i
	}
	if last < peak && peak < len(ts)-1 {
		out = append(out, ts[peak])
	}
	return append(out, ts[len(ts)-1])
}

// PerThreadSpeedChart is a bar per loader goroutine: busy and waiting
// seconds stacked (left axis) and, beside it, the worker's rows per second
// (right axis). Each run's producer comes first: busy = reading + splitting
// the source, waiting = blocked on full shard queues.
func PerThreadSpeedChart(results []result.Result) (Chart, error) {
	const kind, title = "per-thread-speed", "Load speed per thread"
	labels := result.RunLabels(results, result.LabelAll, 0)
	var with []int
	var maxRate float64
	for i, r := range results {
		if len(r.Workers) > 0 {
			with = append(with, i)
			for _, w := range r.Workers {
				maxRate = max(maxRate, w.RowsPerSecond)
			}
		}
	}
	if len(with) == 0 {
		return Chart{}, noData(kind, "no result has workers")
	}
	ru := rowsUnit(maxRate)
	var cats []string
	var busy, wait, rate []opts.BarData
	var refs []runKind
	for _, i := range with {
		r := results[i]
		prefix := ""
		if len(with) > 1 {
			prefix = labels[i] + " · "
		}
		cats = append(cats, prefix+"producer")
		busy = append(busy, opts.BarData{Value: num(r.Producer.ReadSeconds+r.Producer.SplitSeconds, 3)})
		wait = append(wait, opts.BarData{Value: num(r.Producer.WaitSeconds, 3)})
		rate = append(rate, opts.BarData{Value: "-"})
		refs = append(refs, kindOf(r))
		for _, w := range r.Workers {
			refs = append(refs, kindOf(r))
			cats = append(cats, prefix+"shard "+strconv.Itoa(w.Shard))
			busy = append(busy, opts.BarData{Value: num(w.BusySeconds, 3)})
			wait = append(wait, opts.BarData{Value: num(w.WaitSeconds, 3)})
			rate = append(rate, opts.BarData{Value: num(w.RowsPerSecond/ru.div, 3)})
		}
	}
	notes := []string{"producer: busy = reading + splitting; waiting = blocked on full queues"}
	if len(with) < len(results) {
		notes = append(notes, fmt.Sprintf("%d of %d runs have no workers", len(results)-len(with), len(results)))
	}
	notes = otherProgramNotes(notes, refs, "; its producer is the lab streaming rows over a pipe, waiting = the pipe full", "; ClickHouse loads on its own threads: its bar is the whole load")
	bar := categoryBar(kind, title, notes, cats, opts.YAxis{Type: "value", Name: "seconds", AxisLabel: &opts.AxisLabel{Formatter: "{value} s"}})
	bar.ExtendYAxis(opts.YAxis{Type: "value", Name: ru.name + "/s", Position: "right",
		SplitLine: &opts.SplitLine{Show: opts.Bool(false)}})
	bar.AddSeries("busy", busy, charts.WithBarChartOpts(opts.BarChart{Stack: "time"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#5470c6"}), hatch(refs))
	bar.AddSeries("waiting", wait, charts.WithBarChartOpts(opts.BarChart{Stack: "time"}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#c8c8c8"}), hatch(refs))
	bar.AddSeries(ru.name+"/s", rate, charts.WithBarChartOpts(opts.BarChart{YAxisIndex: 1}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#3ba272"}), hatch(refs))
	bar.SetGlobalOptions(unitTooltip("s", "s", ru.name+"/s"))
	return finish(kind, title, bar, optionVisitor{styleKey: refs})
}

// ThroughputChart is a bar per run: load and read speed in million rows per
// second. A run whose read phase was off shows no read bar.
func ThroughputChart(results []result.Result) (Chart, error) {
	const kind, title = "throughput", "Load and read throughput"
	if len(results) == 0 {
		return Chart{}, noData(kind, "no results")
	}
	labels := result.RunLabels(results, result.LabelAll, 0)
	var load, read []opts.BarData
	var refs []runKind
	measured, spread := false, false
	for _, r := range results {
		refs = append(refs, kindOf(r))
		sp := r.SpreadOrZero()
		lookups := r.ReadRowsPerSecond * r.ReadSeconds
		load = append(load, rateBar(r.LoadRowsPerSecond, perSecond(float64(r.Rows), sp.LoadSecondsMax), perSecond(float64(r.Rows), sp.LoadSecondsMin)))
		read = append(read, rateBar(r.ReadRowsPerSecond, perSecond(lookups, sp.ReadSecondsMax), perSecond(lookups, sp.ReadSecondsMin)))
		measured = measured || r.LoadRowsPerSecond > 0 || r.ReadRowsPerSecond > 0
		spread = spread || r.Spread != nil
	}
	if !measured {
		return Chart{}, noData(kind, "no result has load or read rows per second")
	}
	notes := []string{"million rows per second; higher is better"}
	if spread {
		notes = append(notes, "runs repeated: the median, and in brackets the slowest to the fastest")
	}
	notes = otherProgramNotes(notes, refs, "; its load includes receiving the rows over a pipe", "; its load is SYSTEM RELOAD DICTIONARY from a file of the rows")
	bar := categoryBar(kind, title, notes, labels, opts.YAxis{Type: "value", Name: "million rows/s"})
	label := charts.WithLabelOpts(opts.Label{Show: opts.Bool(true), Position: "top"})
	bar.AddSeries("load", load, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#5470c6"}), hatch(refs))
	bar.AddSeries("read", read, label, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#91cc75"}), hatch(refs))
	bar.SetGlobalOptions(unitTooltip("million rows/s", "million rows/s"))
	return finish(kind, title, bar, optionVisitor{styleKey: refs})
}

// rateBar is a bar of rows/s in million rows/s; where lo and hi are above 0
// (repeated runs) its label says the range too: "12.3 (11.8–12.9)".
func rateBar(rowsPerSecond, lo, hi float64) opts.BarData {
	d := opts.BarData{Value: rate(rowsPerSecond)}
	if rowsPerSecond > 0 && lo > 0 && hi > 0 {
		d.Label = &opts.Label{Show: opts.Bool(true), Position: "top",
			Formatter: measured(rowsPerSecond/1e6, 2) + " (" + measured(lo/1e6, 2) + "–" + measured(hi/1e6, 2) + ")"}
	}
	return d
}

// rate is rows/s in million rows/s for a bar, or "-" (no bar) when not measured.
func rate(rowsPerSecond float64) any {
	if !(rowsPerSecond > 0) {
		return "-"
	}
	return num(rowsPerSecond/1e6, 2)
}

// ---- shared pieces ----

// palette is ECharts' default series palette, used where two series of one
// run must share a colour.
var palette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// Reference maps (C++, package experiments/refdriver) are drawn apart from packlab's
// layouts in every chart: their names end in "(C++)", their bars are
// hatched, and their lines take colours from a brown family that packlab's
// palette does not use.
const (
	referenceNote     = "C++ reference maps, measured the same way"
	referenceLineNote = "brown lines: C++ reference maps"
)

// referencePalette is the reference maps' colour family.
var referencePalette = []string{"#8c510a", "#bf812d", "#543005", "#a6761d", "#dfc27d", "#6b4226"}

// ClickHouse's own dictionaries (experiments/chdriver) are drawn apart too: their
// names start with ch_, their bars are dotted, and their lines take
// colours from a yellow and orange family.
const (
	clickHouseNote     = "ClickHouse itself (chDB), measured the same way"
	clickHouseLineNote = "yellow and orange lines: ClickHouse itself (chDB)"
)

// clickHousePalette is ClickHouse's colour family.
var clickHousePalette = []string{"#d4a600", "#e67300", "#b35900", "#f2c84b", "#8a6d00", "#ff9f40"}

// runKind says whose structure a run measured: packlab's, a C++ reference
// map, or ClickHouse's own dictionary.
type runKind int

const (
	kindOwn runKind = iota
	kindReference
	kindClickHouse
)

func kindOf(r result.Result) runKind {
	switch {
	case r.IsClickHouse():
		return kindClickHouse
	case r.IsReference():
		return kindReference
	}
	return kindOwn
}

// lineNotes says which colour family is whose, for the kinds drawn.
func lineNotes(kinds []runKind) []string {
	var notes []string
	if slices.Contains(kinds, kindReference) {
		notes = append(notes, referenceLineNote)
	}
	if slices.Contains(kinds, kindClickHouse) {
		notes = append(notes, clickHouseLineNote)
	}
	return notes
}

// seriesColors hands out one colour per line: packlab's layouts from
// palette, reference maps from referencePalette, ClickHouse's from
// clickHousePalette, each in turn.
type seriesColors struct{ own, ref, ch int }

func newSeriesColors() *seriesColors { return &seriesColors{} }

func (c *seriesColors) next(kind runKind) string {
	switch kind {
	case kindReference:
		c.ref++
		return referencePalette[(c.ref-1)%len(referencePalette)]
	case kindClickHouse:
		c.ch++
		return clickHousePalette[(c.ch-1)%len(clickHousePalette)]
	}
	c.own++
	return palette[(c.own-1)%len(palette)]
}

// hatchedBar is a bar data item with ECharts' decal: diagonal stripes over
// the series colour (go-echarts' ItemStyle has no decal).
type hatchedBar struct {
	Value     any         `json:"value"`
	Label     *opts.Label `json:"label,omitempty"`
	ItemStyle hatchedItem `json:"itemStyle"`
}

type hatchedItem struct {
	BorderColor string       `json:"borderColor"`
	BorderWidth float64      `json:"borderWidth"`
	Decal       hatchPattern `json:"decal"`
}

type hatchPattern struct {
	Symbol     string    `json:"symbol"`
	Color      string    `json:"color"`
	DashArrayX []float64 `json:"dashArrayX"`
	DashArrayY []float64 `json:"dashArrayY"`
	Rotation   float64   `json:"rotation"`
}

var clickHouseDots = hatchedItem{BorderColor: "#b35900", BorderWidth: 1,
	Decal: hatchPattern{Symbol: "circle", Color: "rgba(0, 0, 0, 0.35)", DashArrayX: []float64{3, 3}, DashArrayY: []float64{3, 3}}}

var referenceHatch = hatchedItem{BorderColor: "#543005", BorderWidth: 1,
	Decal: hatchPattern{Symbol: "rect", Color: "rgba(0, 0, 0, 0.35)", DashArrayX: []float64{1, 0}, DashArrayY: []float64{2, 4}, Rotation: -math.Pi / 4}}

// hatch is a series option that hatches the bars of reference runs and
// dots ClickHouse's: refs[i] says whose bar i is.
func hatch(refs []runKind) charts.SeriesOpts {
	return func(s *charts.SingleSeries) {
		data, ok := s.Data.([]opts.BarData)
		if !ok || !slices.ContainsFunc(refs, func(k runKind) bool { return k != kindOwn }) {
			return
		}
		items := make([]any, len(data))
		for i, d := range data {
			items[i] = d
			if i < len(refs) && refs[i] == kindReference {
				items[i] = hatchedBar{Value: d.Value, Label: d.Label, ItemStyle: referenceHatch}
			}
			if i < len(refs) && refs[i] == kindClickHouse {
				items[i] = hatchedBar{Value: d.Value, Label: d.Label, ItemStyle: clickHouseDots}
			}
		}
		s.Data = items
	}
}

// chartElementID is the deterministic id of a chart's element and instance
// (go-echarts would pick a random one).
func chartElementID(kind string) string {
	var b strings.Builder
	b.WriteString("packlab-")
	for _, r := range kind {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// baseOptions are the settings every chart shares: a fixed id, a white
// background (for PNG export), no animation, the notes wrapped under the
// title and a legend at the bottom. No toolbox: the faces' own buttons
// export a chart (ECharts' save icon wrote a file with no dialog and was
// drawn into every export). The grid leaves 60 px at the right for the
// last x label, which hangs past the axis' end by half its width.
func baseOptions(kind, title string, notes []string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithInitializationOpts(opts.Initialization{ChartID: chartElementID(kind), BackgroundColor: "#ffffff", PageTitle: title}),
		charts.WithAnimation(false),
		charts.WithTitleOpts(opts.Title{Title: title, Subtitle: strings.Join(wrapNotes(notes), "\n"), Left: "center"}),
		charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Bottom: "0"}),
		charts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(false)}),
		charts.WithGridOpts(opts.Grid{Left: "3%", Right: "60", Top: gridTop(notes), Bottom: "50", ContainLabel: opts.Bool(true)}),
	}
}

// noteWidth is the most characters a line of a chart's notes holds: at
// ECharts' 12 px sans-serif (about 6.5 px a character) 100 are 650 px, which
// a chart beside the lab's sidebar at 1280 px (about 850 px) holds.
const noteWidth = 100

// wrapNotes breaks each note into lines of at most noteWidth characters,
// at spaces (ECharts draws a subtitle's lines as given, cut at the chart's
// edges).
func wrapNotes(notes []string) []string {
	var lines []string
	for _, n := range notes {
		line := ""
		for _, w := range strings.Fields(n) {
			if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > noteWidth {
				lines = append(lines, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += w
		}
		lines = append(lines, line)
	}
	return lines
}

// categoryBar is a bar chart of named bars on one value axis, with the
// settings every chart shares and a tooltip for the whole column.
func categoryBar(kind, title string, notes, cats []string, y opts.YAxis) *charts.Bar {
	bar := charts.NewBar()
	bar.SetGlobalOptions(baseOptions(kind, title, notes)...)
	bar.SetGlobalOptions(columnTooltip, categoryAxis(cats), charts.WithYAxisOpts(y))
	bar.SetXAxis(cats)
	return bar
}

// unitTooltip is columnTooltip with each series' value and its unit:
// units[i] is the i-th series' ("B", "s", "million rows/s").
func unitTooltip(units ...string) charts.GlobalOpts {
	f := "{b}"
	for i, u := range units {
		f += fmt.Sprintf("<br/>{a%d}: {c%d} %s", i, i, u)
	}
	return charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis", AxisPointer: &opts.AxisPointer{Type: "shadow"}, Formatter: types.FuncStr(f)})
}

// pointTooltip names a line's point by its series and both its figures
// with their units.
func pointTooltip(x, y string) charts.GlobalOpts {
	return charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item", Formatter: types.FuncStr("{a}<br/>{c} (" + x + ", " + y + ")")})
}

// seriesUnits is a series' own tooltip: its name and the point's two
// figures with their units, as pointTooltip words them (a chart whose
// series differ in unit; the chart's trigger must be the item).
func seriesUnits(x, y string) charts.SeriesOpts {
	return charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: types.FuncStr("{a}<br/>{c} (" + x + ", " + y + ")")})
}

// columnTooltip shows every series of the column under the pointer.
var columnTooltip = charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis", AxisPointer: &opts.AxisPointer{Type: "shadow"}})

// gridTop leaves room above a grid for the title, its notes and an axis name.
func gridTop(notes []string) string { return strconv.Itoa(72 + 16*len(wrapNotes(notes))) }

// categoryAxis is an x axis of named bars that shows every name, slanted
// when the names would not fit side by side.
func categoryAxis(names []string) charts.GlobalOpts {
	ax := opts.XAxis{Type: "category", AxisLabel: &opts.AxisLabel{Interval: "0"}}
	chars := 0
	for _, n := range names {
		chars += utf8.RuneCountInString(n) + 2
	}
	left := 0
	if chars > 110 || len(names) > 12 {
		ax.AxisLabel.Rotate = labelRotate
		left = firstLabelOverhang(names[0])
	}
	return func(bc *charts.BaseConfiguration) {
		charts.WithXAxisOpts(ax)(bc)
		for i := range bc.GridList {
			if left > 0 {
				bc.GridList[i].Left = strconv.Itoa(left)
			}
		}
	}
}

// labelRotate is the angle category labels turn by when they do not fit
// side by side.
const labelRotate = 30

// firstLabelOverhang is the room, in pixels, a grid's left edge leaves for
// the first category label when labels are turned. A turned label hangs
// from its tick down to the left, and ECharts' containLabel reserves only
// its height under a horizontal axis, so a long first label was cut off at
// the chart's left edge. The room is the label's turned width, at 6.5 px a
// character (ECharts' 12 px sans-serif measures about 6.1): more than it
// needs by the half band before the first tick.
func firstLabelOverhang(name string) int {
	width := 6.5 * float64(utf8.RuneCountInString(name))
	return int(math.Ceil(width * math.Cos(labelRotate*math.Pi/180)))
}

func lineStyle(color, dash string, yAxis int) charts.SeriesOpts {
	return func(s *charts.SingleSeries) {
		charts.WithLineChartOpts(opts.LineChart{YAxisIndex: yAxis, ShowSymbol: opts.Bool(true), Symbol: "circle", SymbolSize: 5})(s)
		charts.WithItemStyleOpts(opts.ItemStyle{Color: color})(s)
		charts.WithLineStyleOpts(opts.LineStyle{Color: color, Type: dash, Width: 2})(s)
	}
}

// optionChart is what finish needs of a go-echarts chart.
type optionChart interface {
	Validate()
	Accept(charts.ConfigurationVisitor)
	JSON() map[string]interface{}
}

// optionVisitor is go-echarts' hook for option fields its structs lack. It
// gives the title's notes a line height (without one ECharts draws the
// lines of a subtitle on top of each other) and, when visualMapSeries is
// set, limits the visual map to those series.
type optionVisitor struct {
	charts.BaseConfigurationVisitor
	visualMapSeries []int
	// styleKey is whose bars a bar chart draws: where another program's
	// are among them, the legend says which style is whose.
	styleKey []runKind
	// edit, when set, changes the option last, for what go-echarts'
	// structs cannot say (an axis label's width and overflow).
	edit func(option map[string]any)
}

// Visit hands the whole option to edit, if any.
func (v optionVisitor) Visit(option map[string]interface{}) {
	if v.edit != nil {
		v.edit(option)
	}
}

// runLabelWidth is the most pixels a run's name takes beside a bar before
// it breaks onto another line.
const runLabelWidth = 150

// breakAxisLabels makes the labels of the index-th axis of key ("xAxis",
// "yAxis") break onto lines of at most width px (ECharts' axisLabel width
// and overflow "break", which go-echarts' AxisLabel lacks).
func breakAxisLabels(key string, index, width int) func(map[string]any) {
	return func(option map[string]any) {
		b, err := json.Marshal(option[key])
		if err != nil {
			return
		}
		var axes []map[string]any
		if json.Unmarshal(b, &axes) != nil || index >= len(axes) {
			return
		}
		label, _ := axes[index]["axisLabel"].(map[string]any)
		if label == nil {
			label = map[string]any{}
		}
		label["width"], label["overflow"] = width, "break"
		axes[index]["axisLabel"] = label
		option[key] = axes
	}
}

// VisitSeriesOpt adds, where the bars are not all packlab's, the style
// key to the legend: plain = packlab, hatched = a C++ map, dotted =
// ClickHouse. Its entries are the slices of a pie that is not drawn (no
// radius): ECharts lists a pie's slices in the legend with their style,
// hatching and dots included, and a pie takes no room from the bars.
func (v optionVisitor) VisitSeriesOpt(series charts.MultiSeries) interface{} {
	if !slices.ContainsFunc(v.styleKey, func(k runKind) bool { return k != kindOwn }) {
		return series
	}
	type slice struct {
		Name      string `json:"name"`
		Value     int    `json:"value"`
		ItemStyle any    `json:"itemStyle"`
	}
	key := []slice{{"plain: packlab", 1, map[string]string{"color": "#9aa5b4"}}}
	if slices.Contains(v.styleKey, kindReference) {
		key = append(key, slice{"hatched: C++ map", 1, struct {
			Color string `json:"color"`
			hatchedItem
		}{"#bf812d", referenceHatch}})
	}
	if slices.Contains(v.styleKey, kindClickHouse) {
		key = append(key, slice{"dotted: ClickHouse", 1, struct {
			Color string `json:"color"`
			hatchedItem
		}{"#e67300", clickHouseDots}})
	}
	out := make([]any, 0, len(series)+1)
	for _, s := range series {
		out = append(out, s)
	}
	return append(out, map[string]any{
		"type": "pie", "name": "style", "radius": []int{0, 0}, "center": []int{-100, -100},
		"silent": true, "legendHoverLink": false, "label": map[string]bool{"show": false}, "tooltip": map[string]bool{"show": false},
		"data": key,
	})
}

func (optionVisitor) VisitTitleOpt(t opts.Title) interface{} {
	return struct {
		opts.Title
		SubtextStyle map[string]int `json:"subtextStyle"`
	}{t, map[string]int{"fontSize": 12, "lineHeight": 16}}
}

func (v optionVisitor) VisitVisualMaps(vms []opts.VisualMap) interface{} {
	if v.visualMapSeries == nil {
		return vms
	}
	out := make([]interface{}, len(vms))
	for i, vm := range vms {
		out[i] = struct {
			opts.VisualMap
			SeriesIndex []int `json:"seriesIndex"`
		}{vm, v.visualMapSeries}
	}
	return out
}

// finish turns a go-echarts chart into a Chart: the option is go-echarts'
// own JSON() of the chart, marshalled (map keys sorted, so output is
// reproducible; <, > and & escaped, so it is safe inside a <script>).
func finish(kind, title string, c optionChart, v optionVisitor) (Chart, error) {
	c.Validate()
	c.Accept(v)
	b, err := json.Marshal(c.JSON())
	if err != nil {
		return Chart{}, fmt.Errorf("%s chart: encoding the option: %w", kind, err)
	}
	if bytes.Contains(b, []byte("__f__")) {
		return Chart{}, fmt.Errorf("%s chart: the option holds a JavaScript function, which not every face can render", kind)
	}
	return Chart{Kind: kind, Title: title, Option: b}, nil
}

// num rounds v to dec decimals for an option; NaN and ±Inf become "-",
// ECharts' mark for a missing value (JSON has no NaN).
func num(v float64, dec int) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	p := math.Pow(10, float64(dec))
	r := math.Round(v*p) / p
	if r == 0 {
		return 0.0 // no "-0"
	}
	return r
}

type unit struct {
	name string
	div  float64
}

// bytesUnit picks the binary unit in which max reads as at least 1.
func bytesUnit(max float64) unit {
	switch {
	case max >= 1<<30:
		return unit{"GiB", 1 << 30}
	case max >= 1<<20:
		return unit{"MiB", 1 << 20}
	case max >= 1<<10:
		return unit{"KiB", 1 << 10}
	}
	return unit{"B", 1}
}

// rowsUnit picks the decimal unit in which max rows read as at least 1.
func rowsUnit(max float64) unit {
	switch {
	case max >= 1e9:
		return unit{"billion rows", 1e9}
	case max >= 1e6:
		return unit{"million rows", 1e6}
	case max >= 1e3:
		return unit{"thousand rows", 1e3}
	}
	return unit{"rows", 1}
}

// ---- HTML ----

// HTML returns a standalone page that draws the chart with the embedded
// ECharts: it loads nothing from a network.
func (c Chart) HTML() ([]byte, error) {
	var buf bytes.Buffer
	if err := writePage(&buf, pageData{Title: c.Title}, []Chart{c}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pageChart is one chart as the page template draws it.
type pageChart struct {
	ID     string
	Title  string
	Option template.JS // JSON with <, > and & escaped
}

// pageTable is the results table of a report.
type pageTable struct {
	Header  []string
	Numeric []bool
	Rows    [][]string
}

// pageData is what the page template draws; Report and its parts are set
// for a report, left empty for a single chart's page.
type pageData struct {
	Title   string
	Version string
	ECharts template.JS
	Report  bool
	Summary []string   // report: one line each, above the table
	Table   *pageTable // report: the results table
	Claims  *pageTable // report: the seed's claims beside what was measured, when the results hold them
	Omitted []string   // report: charts left out, with why
	Charts  []pageChart
	// Inspections are the report's saved inspections of a user's
	// ClickHouse, a section each after the results' charts.
	Inspections []pageInspection
}

// writePage writes one HTML page with ECharts inlined once in its head and
// every chart drawn from its option as is.
func writePage(w io.Writer, d pageData, cs []Chart) error {
	d.Version, d.ECharts = EChartsVersion, template.JS(echartsJS)
	for i, c := range cs {
		id := chartElementID(c.Kind)
		if len(cs) > 1 {
			id = fmt.Sprintf("%s-%d", id, i+1)
		}
		pc, err := toPageChart(c, id)
		if err != nil {
			return err
		}
		d.Charts = append(d.Charts, pc)
	}
	return pageTemplate.Execute(w, d)
}

// toPageChart is c as the page draws it, in the element id.
func toPageChart(c Chart, id string) (pageChart, error) {
	if !json.Valid(c.Option) {
		return pageChart{}, fmt.Errorf("chart %q: option is not valid JSON", c.Kind)
	}
	var safe bytes.Buffer
	json.HTMLEscape(&safe, c.Option) // no "</script>" can end the script early
	return pageChart{ID: id, Title: c.Title, Option: template.JS(safe.String())}, nil
}

// breakable is s, escaped, with a line-break opportunity after each "("
// (<wbr>: it adds no character, so a copied LAYOUT(...) stays as it is),
// so that a cell of LAYOUT(COMPLEX_KEY_SPARSE_HASHED(SHARDS 2)) need not
// widen its column to the whole clause: an inspection's table of 12
// columns ran off a 1280 px page.
func breakable(s string) template.HTML {
	return template.HTML(strings.ReplaceAll(template.HTMLEscapeString(s), "(", "(<wbr>"))
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"breakable": breakable}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="packlab, ECharts {{.Version}}">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px auto; max-width: 1200px; padding: 0 16px; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.9em; margin: 12px 0; }
th, td { border: 1px solid #ccc; padding: 4px 8px; white-space: nowrap; }
th { background: #f4f4f4; text-align: left; white-space: normal; vertical-align: bottom; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.claims td { white-space: normal; vertical-align: top; }
.chart { width: 100%; height: 560px; margin: 16px 0 32px; }
.note { color: #555; font-size: 0.9em; line-height: 1.5; }
.chart-error { height: auto; color: #b00; }
h3 { font-size: 1em; margin: 1.2em 0 0.2em; }
.finding { color: #8a4b00; margin: 4px 0; }
pre.ddl { background: #f6f6f6; border: 1px solid #ddd; padding: 8px; white-space: pre-wrap; word-break: break-all; font-size: 0.85em; }
table.inspection { font-size: 0.82em; }
table.inspection td { white-space: normal; }
.wide { overflow-x: auto; }
table.inspection td.num { white-space: nowrap; }
</style>
<script id="echarts" data-library="Apache ECharts {{.Version}}" data-note="inlined so this page works with no network">
{{.ECharts}}
</script>
</head>
<body>
{{- if .Report}}
<h1>{{.Title}}</h1>
<p class="note">{{range $i, $l := .Summary}}{{if $i}}<br>{{end}}{{$l}}{{end}}</p>
{{- with .Table}}
<h2>Results</h2>
<table>
<thead><tr>{{range $i, $h := .Header}}<th{{if index $.Table.Numeric $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td{{if index $.Table.Numeric $i}} class="num"{{end}}>{{$c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- with .Claims}}
<h2>The seed's claims, measured here</h2>
<table class="claims">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table>
{{- end}}
{{- if .Charts}}
<h2>Charts</h2>
{{- end}}
{{- end}}
{{- range .Charts}}{{template "chart" .}}{{end}}
{{- range .Inspections}}
<h2>{{.Heading}}</h2>
<p class="note">{{range $i, $l := .Lines}}{{if $i}}<br>{{end}}{{$l}}{{end}}</p>
{{- with .Table}}
{{- $t := .}}
<div class="wide"><table class="inspection">
<thead><tr>{{range $i, $h := .Header}}<th{{if index $t.Numeric $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range $i, $c := .}}<td{{if index $t.Numeric $i}} class="num"{{end}}>{{breakable $c}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- end}}
{{- range .Findings}}
<p class="finding">{{.}}</p>
{{- end}}
{{- with .Chart}}{{template "chart" .}}{{end}}
{{- with .Omitted}}
<p class="note">No chart: {{.}}.</p>
{{- end}}
{{- range .Dicts}}
<h3>{{.Title}}</h3>
<p class="note">{{range $i, $l := .Lines}}{{if $i}}<br>{{end}}{{$l}}{{end}}</p>
{{- with .DDL}}
<pre class="ddl">{{.}}</pre>
{{- end}}
{{- end}}
{{- end}}
{{- if .Report}}
{{- if .Omitted}}
<p class="note">Not shown, for want of data: {{range $i, $o := .Omitted}}{{if $i}}; {{end}}{{$o}}{{end}}.</p>
{{- end}}
<p class="note">Made by packlab. Apache ECharts {{.Version}} is inlined: this file needs no network.</p>
{{- end}}
</body>
</html>
{{- define "chart"}}
<div class="chart" id="{{.ID}}" role="img" aria-label="{{.Title}}"></div>
<script>
(function () {
  var el = document.getElementById("{{.ID}}");
  try {
    var chart = echarts.init(el, null, { renderer: "canvas" });
    chart.setOption({{.Option}});
    window.addEventListener("resize", function () { chart.resize(); });
  } catch (e) {
    el.className += " chart-error";
    el.textContent = "This chart could not be drawn: " + e;
  }
})();
</script>
{{- end}}
`))
