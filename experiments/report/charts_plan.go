package report

// The planner's chart: memory against rows from 10^3 to 10^10 for every
// layout at its best setup, predicted by core.Predict, with the runs
// measured here as points and the budget as a line.

import (
	"math"
	"slices"
	"sort"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// PlanChartKind is the kind of PlanChart's chart.
const PlanChartKind = "plan-memory"

// planChartRows is the x range the chart always shows.
const planChartMinRows, planChartMaxRows = 1e3, 1e10

// PlanChart draws, for every layout, the steady memory of its best setup in
// plan (its max load factor and shard count) against rows on log axes:
// predicted (solid), with every growth step drawn as a vertical jump, so
// the power-of-two sawtooth shows; the recommended setup's peak (dashed);
// the RSS of runs measured here with the same types and load factor
// (points); the budget (a red line) and the rows asked (a marker).
func PlanChart(plan planner.Plan, history []result.Result) (Chart, error) {
	const kind, title = PlanChartKind, "Memory against rows"
	best := plan.Best()
	if best == nil {
		return Chart{}, noData(kind, "an empty plan")
	}
	hi := max(planChartMaxRows, float64(plan.Request.Rows))
	setups := planSetups(plan)
	var curves []planCurve
	maxBytes := float64(plan.BudgetBytes)
	for i, c := range setups {
		color := palette[i%len(palette)]
		line, peak, reload := planCurves(plan, c, hi)
		for k := range line {
			maxBytes = max(maxBytes, peak[k][1])
			if c.Rank == best.Rank {
				maxBytes = max(maxBytes, reload[k][1])
			}
		}
		curves = append(curves, planCurve{planner.SetupName(c) + " steady", color, "solid", line})
		if c.Rank == best.Rank {
			curves = append(curves, planCurve{planner.SetupName(c) + " peak", color, "dashed", peak},
				planCurve{planner.SetupName(c) + " reload", color, "dotted", reload})
		}
	}
	u := bytesUnit(maxBytes)

	steps := "each step is a growth (cells x2, or x4 below 2^19)"
	if plan.Request.Preallocate {
		steps = "each table reserved for its rows (no growth: a step is the next power of two)"
	}
	growth := "the growth of a native run"
	if plan.Request.Runtime == planner.RuntimeBrowser {
		growth = "the growth of this browser's wasm memory"
	}
	notes := []string{"computed by core.Predict (" + growth + "); " + steps +
		"; dashed: the answer's first load peak, dotted: its reload peak (the serving table beside a new one loading)",
		"points: RSS measured here (same types and load factor); red: the budget; ◆: the rows asked"}
	line := charts.NewLine()
	line.SetGlobalOptions(baseOptions(kind, title, notes)...)
	line.SetGlobalOptions(
		pointTooltip("rows", u.name),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: "rows", NameLocation: "middle", NameGap: 30, Min: planChartMinRows, Max: hi}),
		charts.WithYAxisOpts(opts.YAxis{Type: "log", Name: u.name, AxisLabel: &opts.AxisLabel{Formatter: types.FuncStr("{value} " + u.name)}}),
	)
	point := func(x, y float64) opts.LineData { return opts.LineData{Value: []any{x, num(y/u.div, 6)}} }
	for _, c := range curves {
		data := make([]opts.LineData, len(c.pts))
		for i, p := range c.pts {
			data[i] = point(p[0], p[1])
		}
		line.AddSeries(c.name, data, charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			charts.WithItemStyleOpts(opts.ItemStyle{Color: c.color}),
			charts.WithLineStyleOpts(opts.LineStyle{Color: c.color, Type: c.dash, Width: 2}))
	}
	line.AddSeries("budget "+text.Bytes(plan.BudgetBytes),
		[]opts.LineData{point(planChartMinRows, float64(plan.BudgetBytes)), point(hi, float64(plan.BudgetBytes))},
		charts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d62728"}),
		charts.WithLineStyleOpts(opts.LineStyle{Color: "#d62728", Type: "dashed", Width: 2}))
	line.Overlap(planMeasured(plan, setups, history, u))
	return finish(kind, title, line, optionVisitor{})
}

// planCurve is one line of the plan's chart: bytes against rows.
type planCurve struct {
	name, color, dash string
	pts               [][2]float64 // rows, bytes
}

// planSetups is each layout's best Go setup of the plan (its first
// candidate by rank), in the order of core.Layouts().
func planSetups(plan planner.Plan) []planner.Candidate {
	var setups []planner.Candidate
	seen := map[string]bool{}
	for _, c := range plan.Candidates {
		if c.Engine == planner.EngineClickHouse {
			continue // the curves are core.Predict's: Go's tables
		}
		if !seen[c.Layout] {
			seen[c.Layout] = true
			setups = append(setups, c)
		}
	}
	sort.SliceStable(setups, func(i, j int) bool {
		return dict.SetupIndex(setups[i].Layout) < dict.SetupIndex(setups[j].Layout)
	})
	return setups
}

// planCurves is setup c's steady bytes, first-load peak and reload peak
// from planChartMinRows to hi rows, at every step of its sawtooth.
func planCurves(plan planner.Plan, c planner.Candidate, hi float64) (line, peak, reload [][2]float64) {
	key, _ := core.ParseType(plan.Request.Key)
	value, _ := core.ParseType(plan.Request.Value)
	mlf := 0.0
	if c.FollowsMLF {
		mlf = c.MaxLoadFactor
	}
	// A preallocated plan's tables are reserved for each row count.
	options := func(n int64) core.Options { return config.TableOptions(mlf, plan.Request.Preallocate, n) }
	buckets := func(n int64) int64 {
		if plan.Request.Preallocate && (c.Layout == string(core.LayoutCompact) || c.Layout == string(core.LayoutIceberg)) {
			// Sized exactly for n: no steps to find (every row count
			// is one), its slot width's jumps drawn as slopes.
			return 0
		}
		// The steps of shards fed alike: Predict's cells of sharded
		// tables are an expectation over how the hash deals the keys,
		// a ramp a few standard deviations wide about each step, which
		// changes at every count there (bisecting it hung the Plan tab
		// for minutes: a chart of 2 shards to 1e10 rows).
		pr, _ := core.PredictEven(core.Layout(c.Layout), key, value, n, options(n), c.Shards)
		return pr.BucketCount
	}
	for _, n := range sawtoothRows(planChartMinRows, hi, buckets) {
		pr, err := core.Predict(core.Layout(c.Layout), key, value, n, options(n), c.Shards)
		if err != nil {
			continue
		}
		growth := dict.TargetGrowth(plan.Request.Runtime == planner.RuntimeBrowser, core.Layout(c.Layout), pr)
		tables := core.SaturatingAdd(pr.FinalBytes, core.SaturatingMul(int64(c.GrowingAtOnce), growth))
		final, held := dict.ScaleBytes(pr.FinalBytes, c.Overhead), dict.ScaleBytes(tables, c.Overhead)
		line = append(line, [2]float64{float64(n), float64(final)})
		peak = append(peak, [2]float64{float64(n), float64(held)})
		reload = append(reload, [2]float64{float64(n), float64(dict.ReloadPeak(final, held))})
	}
	return line, peak, reload
}

// planMeasured is the chart's points: the RSS of saved runs of each setup's
// layout at the plan's types, load factor, runtime and reservation, and the
// answer at the rows asked.
func planMeasured(plan planner.Plan, setups []planner.Candidate, history []result.Result, u unit) *charts.Scatter {
	sc := charts.NewScatter()
	for i, c := range setups {
		var pts []opts.ScatterData
		for _, r := range history {
			if r.Layout == c.Layout && r.KeyType == c.KeyType && r.ValueType == c.ValueType && r.RSSBytes > 0 && r.Rows > 0 &&
				r.MaxLoadFactor == c.MaxLoadFactor && r.Runtime == plan.Request.Runtime && r.Preallocate == plan.Request.Preallocate {
				pts = append(pts, opts.ScatterData{Value: []any{r.Rows, num(float64(r.RSSBytes)/u.div, 6)}})
			}
		}
		if len(pts) > 0 {
			sc.AddSeries(c.Layout+" measured RSS", pts, charts.WithItemStyleOpts(opts.ItemStyle{Color: palette[i%len(palette)]}))
		}
	}
	best := plan.Best()
	sc.AddSeries("asked: "+text.Rows(plan.Request.Rows)+" rows, "+planner.SetupName(*best),
		[]opts.ScatterData{{Value: []any{plan.Request.Rows, num(float64(best.SteadyBytes)/u.div, 6)}, Symbol: "diamond", SymbolSize: 14}},
		charts.WithItemStyleOpts(opts.ItemStyle{Color: "#222222"}))
	return sc
}

// sawtoothSteps is how many growth steps sawtoothRows finds between two
// of its 24 counts a decade (x1.1: a table's growth steps are x1.125 at
// the finest, iceberg's).
const sawtoothSteps = 4

// sawtoothRows are row counts from lo to hi for a line of a table's
// memory: 24 per decade, plus, wherever cells(n) changes between two of
// them, the last count before the change and the first after it (found by
// bisection), so each growth draws as a vertical step; at most
// sawtoothSteps steps between two of them (a cells that changes more
// often is no sawtooth, and each step costs a bisection).
func sawtoothRows(lo, hi float64, cells func(int64) int64) []int64 {
	var base []int64
	for x := lo; x < hi*1.0001; x *= math.Pow(10, 1.0/24) {
		base = append(base, int64(math.Round(x)))
	}
	if last := int64(hi); base[len(base)-1] != last {
		base = append(base, last)
	}
	out := []int64{base[0]}
	for i := 1; i < len(base); i++ {
		a, b := base[i-1], base[i]
		ca, cb := cells(a), cells(b)
		for steps := 0; ca != cb && a+1 < b && steps < sawtoothSteps; steps++ {
			// find the first n in (a, b] with cells(n) != ca
			l, h := a, b
			for l+1 < h {
				m := l + (h-l)/2
				if cells(m) == ca {
					l = m
				} else {
					h = m
				}
			}
			out = append(out, l, h)
			a, ca = h, cells(h)
		}
		out = append(out, b)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
