package report

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestServerChart: a bar per figure and dictionary, the limit as points,
// an unknown figure not drawn, and no dictionary is ErrNoData.
func TestServerChart(t *testing.T) {
	if _, err := ServerChart(nil); !errors.Is(err, ErrNoData) {
		t.Errorf("no dictionary: %v, want ErrNoData", err)
	}
	_, series := seriesOf(t, []ServerBar{
		{Name: "db.a", Reported: 4 << 20, Real: 5 << 20, ReloadPeak: 9 << 20, Limit: 8 << 30},
		{Name: "db.cache", Reported: 1 << 20, Limit: 8 << 30},
	})
	if len(series) != 4 || series[3].Type != "scatter" || !strings.Contains(series[3].Name, "limit") {
		t.Fatalf("series %+v, want three bars and the limit", series)
	}
	if v := series[1].Data[1].Value; v != "-" {
		t.Errorf("an unmodelled dictionary's real bytes drawn as %v", v)
	}
	if v := series[2].Data[0].Value; v != 9.0 { // in MiB, the smallest figure's unit
		t.Errorf("reload peak %v MiB, want 9", v)
	}
}

// serverSeries is a ServerChart's series as its option holds them.
type serverSeries []struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Data []struct {
		Value any `json:"value"`
	} `json:"data"`
}

func seriesOf(t *testing.T, bars []ServerBar) (Chart, serverSeries) {
	t.Helper()
	c, err := ServerChart(bars)
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Series serverSeries `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &o); err != nil {
		t.Fatal(err)
	}
	return c, o.Series
}

// TestServerChartAdviceBuilt: a dictionary whose advice was built on the
// server has a fourth bar, its copy's bytes_allocated; without one the
// chart has no such series (an empty legend entry).
func TestServerChartAdviceBuilt(t *testing.T) {
	c, series := seriesOf(t, []ServerBar{
		{Name: "db.a", Reported: 8 << 20, Real: 8 << 20, ReloadPeak: 20 << 20, Limit: 8 << 30, Advised: 5 << 20},
		{Name: "db.b", Reported: 1 << 20, Limit: 8 << 30},
	})
	if len(series) != 5 || series[3].Name != "advice built (bytes_allocated)" || series[3].Data[0].Value != 5.0 || series[3].Data[1].Value != "-" {
		t.Errorf("series %+v, want the advice's bar fourth: 5 MiB for db.a, none for db.b", series)
	}
	if !strings.Contains(string(c.Option), "advice built: its copy's bytes_allocated") {
		t.Error("the chart's subtitle does not say what the advice's bar is")
	}
}

// TestServerChartTooltipsSayUnits: hovering a bar or the limit names the
// dictionary and gives the figure with its unit, not the log axis' number.
func TestServerChartTooltipsSayUnits(t *testing.T) {
	c, err := ServerChart([]ServerBar{{Name: "db.a", Reported: 4 << 20, ReloadPeak: 9 << 20, Limit: 8 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	var o struct {
		Tooltip struct {
			Trigger string `json:"trigger"`
		} `json:"tooltip"`
		Series []struct {
			Tooltip struct {
				Formatter string `json:"formatter"`
			} `json:"tooltip"`
			Data []struct {
				Name string `json:"name"`
			} `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &o); err != nil {
		t.Fatal(err)
	}
	if o.Tooltip.Trigger != "item" {
		t.Errorf("tooltip trigger %q, want item", o.Tooltip.Trigger)
	}
	want := []string{"db.a: 4.0 MiB", "db.a: not known", "db.a: 9.0 MiB", "db.a: 8.0 GiB"}
	for i, s := range o.Series {
		if !strings.Contains(s.Tooltip.Formatter, "{b}") || len(s.Data) != 1 || s.Data[0].Name != want[i] {
			t.Errorf("series %d: tooltip %q over %+v, want {b} naming %q", i, s.Tooltip.Formatter, s.Data, want[i])
		}
	}
}
