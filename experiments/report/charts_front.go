package report

// The plan's front: every setup with measured speeds as two points, its
// load time and its read time, against the memory the budget is checked
// against; the setups of the front (planner.Plan.Front) drawn in colour and
// joined, least memory first, the rest faded; the budget as a line.

import (
	"math"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/text"
)

// PlanFrontChartKind is the kind of PlanFrontChart's chart.
const PlanFrontChartKind = "plan-front"

// PlanFrontChart draws the plan's setups' load and read times against
// their memory, the front in colour; ErrNoData when no setup has both
// speeds measured.
func PlanFrontChart(plan planner.Plan) (Chart, error) {
	const kind, title = PlanFrontChartKind, "Memory against speed"
	front := plan.Front()
	if len(front) == 0 {
		return Chart{}, noData(kind, "no setup has both speeds measured")
	}
	onFront := map[int]bool{}
	for _, c := range front {
		onFront[c.Rank] = true
	}
	maxBytes, lo, hi := float64(plan.BudgetBytes), math.Inf(1), 0.0
	var timed []planner.Candidate
	for _, c := range plan.Candidates {
		if c.LoadSeconds != nil && c.ReadSeconds != nil && *c.LoadSeconds > 0 && *c.ReadSeconds > 0 {
			timed = append(timed, c)
			maxBytes = max(maxBytes, float64(c.CheckedBytes))
			lo, hi = min(lo, *c.ReadSeconds, *c.LoadSeconds), max(hi, *c.ReadSeconds, *c.LoadSeconds)
		}
	}
	u := bytesUnit(maxBytes)
	peak := "reload peak"
	if plan.Request.FirstLoadOnly {
		peak = "first load peak"
	}
	notes := []string{"each setup with measured speeds twice: ● its read (every key once, one thread), ▲ its load; x: its " + peak + ", what the budget is checked against",
		"in colour and joined: the front, setups no other beats on memory, load and read at once; grey: the others; red: the budget"}
	sc := charts.NewScatter()
	sc.SetGlobalOptions(baseOptions(kind, title, notes)...)
	sc.SetGlobalOptions(
		charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item", Formatter: types.FuncStr("{b}<br/>{c} (" + u.name + ", s)")}),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: peak + " (" + u.name + ")", NameLocation: "middle", NameGap: 30,
			AxisLabel: &opts.AxisLabel{Formatter: types.FuncStr("{value} " + u.name)}}),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: "seconds",
			AxisLabel: &opts.AxisLabel{Formatter: types.FuncStr("{value} s")}}),
	)
	point := func(c planner.Candidate, s float64, symbol string, size int) opts.ScatterData {
		return opts.ScatterData{Name: planner.SetupName(c) + " (" + engineName(c) + ")", Value: []any{num(float64(c.CheckedBytes)/u.div, 4), num(s, 4)}, Symbol: symbol, SymbolSize: size}
	}
	var rest []opts.ScatterData
	for _, c := range timed {
		if !onFront[c.Rank] {
			rest = append(rest, point(c, *c.ReadSeconds, "circle", 6), point(c, *c.LoadSeconds, "triangle", 6))
		}
	}
	if len(rest) > 0 {
		sc.AddSeries("other setups", rest, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#c8c8c8"}))
	}
	line := charts.NewLine()
	for _, s := range []struct {
		name, symbol, color string
		secs                func(planner.Candidate) float64
	}{
		{"front: read", "circle", palette[0], func(c planner.Candidate) float64 { return *c.ReadSeconds }},
		{"front: load", "triangle", palette[6], func(c planner.Candidate) float64 { return *c.LoadSeconds }},
	} {
		data := make([]opts.LineData, len(front))
		for i, c := range front {
			p := point(c, s.secs(c), s.symbol, 11)
			data[i] = opts.LineData{Name: p.Name, Value: p.Value, Symbol: s.symbol, SymbolSize: 11}
		}
		line.AddSeries(s.name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: s.color, Width: 2}))
	}
	budget := num(float64(plan.BudgetBytes)/u.div, 4)
	line.AddSeries("budget "+text.Bytes(plan.BudgetBytes),
		[]opts.LineData{{Value: []any{budget, num(lo/1.5, 3)}}, {Value: []any{budget, num(hi*1.5, 1)}}},
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d62728"}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: "#d62728", Type: "dashed", Width: 2}))
	sc.Overlap(line)
	return finish(kind, title, sc, optionVisitor{})
}

// engineName is where setup c runs, in two words.
func engineName(c planner.Candidate) string {
	if c.Engine == planner.EngineClickHouse {
		return "ClickHouse"
	}
	return "Go"
}
