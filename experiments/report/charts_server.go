package report

// The "Your ClickHouse" chart: per dictionary of an inspected server, what
// ClickHouse reports (bytes_allocated), what it really holds by packlab's
// model, a reload's peak, and the server's memory limit.

import (
	"math"
	"slices"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/packlab/packlab/experiments/text"
)

// ServerChartKind is the kind of ServerChart's chart.
const ServerChartKind = "server-dictionaries"

// ServerBar is one dictionary of an inspection, as ServerChart draws it.
// A figure of 0 is not known (a layout packlab does not model) and is not
// drawn.
type ServerBar struct {
	Name       string // node and database.name, as the tab names it
	Reported   int64  // ClickHouse's bytes_allocated
	Real       int64  // packlab's real memory
	ReloadPeak int64  // a reload's peak: the serving dictionary beside the loading one
	Limit      int64  // the server's memory limit
	Advised    int64  // the advice built on the server: its copy's bytes_allocated (0: not built)
}

// ServerChart is one grouped bar chart of every dictionary of an
// inspection: reported, real and reload peak as bars, the server's limit
// as a red diamond per dictionary, on a log axis (a limit of gigabytes beside
// dictionaries of kilobytes).
func ServerChart(bars []ServerBar) (Chart, error) {
	const kind, title = ServerChartKind, "Your dictionaries' memory"
	if len(bars) == 0 {
		return Chart{}, noData(kind, "no dictionary")
	}
	var cats []string
	minBytes := math.Inf(1)
	for _, b := range bars {
		cats = append(cats, b.Name)
		for _, v := range []int64{b.Reported, b.Real, b.ReloadPeak, b.Limit, b.Advised} {
			if v > 0 {
				minBytes = min(minBytes, float64(v))
			}
		}
	}
	// ECharts draws a bar on a log axis from 1: in the unit of the smallest
	// figure every bar is at least 1 and grows up from the axis' foot.
	if math.IsInf(minBytes, 1) {
		minBytes = 1
	}
	u := bytesUnit(minBytes)
	notes := []string{"reported: ClickHouse's bytes_allocated; real: packlab's model of what the dictionary holds; " +
		"reload peak: the serving dictionary beside the one loading; ◆ red: the server's memory limit (log axis)"}
	built := slices.ContainsFunc(bars, func(b ServerBar) bool { return b.Advised > 0 })
	if built {
		notes[0] += "; advice built: its copy's bytes_allocated, measured on the server"
	}
	bar := categoryBar(kind, title, notes, cats, opts.YAxis{Type: "log", Name: u.name, Min: 1,
		AxisLabel: &opts.AxisLabel{Formatter: types.FuncStr("{value} " + u.name)}})
	bar.SetGlobalOptions(charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}))
	series := func(name, color string, of func(ServerBar) int64) {
		data := make([]opts.BarData, len(bars))
		for i, b := range bars {
			data[i] = opts.BarData{Value: "-", Name: cats[i] + ": not known"}
			if v := of(b); v > 0 {
				data[i] = opts.BarData{Value: num(float64(v)/u.div, 6), Name: cats[i] + ": " + text.Bytes(v)}
			}
		}
		bar.AddSeries(name, data, charts.WithItemStyleOpts(opts.ItemStyle{Color: color}), byteTooltip)
	}
	series("reported (bytes_allocated)", palette[0], func(b ServerBar) int64 { return b.Reported })
	series("real (packlab)", palette[1], func(b ServerBar) int64 { return b.Real })
	series("reload peak", palette[2], func(b ServerBar) int64 { return b.ReloadPeak })
	if built {
		series("advice built (bytes_allocated)", palette[5], func(b ServerBar) int64 { return b.Advised })
	}
	limit := charts.NewScatter()
	var pts []opts.ScatterData
	for i, b := range bars {
		if b.Limit > 0 {
			pts = append(pts, opts.ScatterData{Name: cats[i] + ": " + text.Bytes(b.Limit), Value: []any{cats[i], num(float64(b.Limit)/u.div, 6)}, Symbol: "diamond", SymbolSize: 14})
		}
	}
	if len(pts) > 0 {
		limit.AddSeries("server's memory limit", pts, charts.WithItemStyleOpts(opts.ItemStyle{Color: "#d62728"}), byteTooltip)
		bar.Overlap(limit)
	}
	return finish(kind, title, bar, optionVisitor{})
}

// byteTooltip: the chart's tooltip is the item's, each figure named with
// its dictionary and written with its unit ("reload peak<br/>db.a: 9.0
// MiB"), since the axis is log-scaled in one unit and figures span several.
var byteTooltip = charts.WithSeriesTooltipOpts(opts.SeriesTooltip{Formatter: types.FuncStr("{a}<br/>{b}")})
