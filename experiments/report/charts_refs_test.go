package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/result"
)

// fxWithReference is the chart fixture plus a C++ reference map's result.
func fxWithReference() []result.Result {
	rs := fxResults()
	r := rs[1]
	r.ID, r.Layout, r.Reference = "20261130T205900Z-boost_flat-1a2b", "boost_flat", "boost::unordered_flat_map (Boost 1.81)"
	r.Shards, r.ClickHouseLayout, r.MaxLoadFactor = 1, "", 0.875
	r.Workers = r.Workers[:1]
	return append(rs, r)
}

// TestChartsMarkReferences: in every chart a reference map reads as one:
// "(C++)" after its name, its bars hatched (an ECharts decal, which no bar
// of packlab's has), its lines in the reference colour family, and a note
// that says whose figures they are, the legend's style key saying which
// bars are hatched (and the subtitle not saying it again).
func TestChartsMarkReferences(t *testing.T) {
	rs := fxWithReference()
	for _, kind := range ChartKinds() {
		c, err := BuildChart(kind, rs)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		opt := string(c.Option)
		if !strings.Contains(opt, "boost_flat (C++)") {
			t.Errorf("%s: the reference is not named boost_flat (C++)", kind)
		}
		if strings.Contains(opt, "hashed (C++)") || strings.Contains(opt, "packed (C++)") {
			t.Errorf("%s: a layout of packlab's is named C++", kind)
		}
		var o struct {
			Series []struct {
				Type      string            `json:"type"`
				Name      string            `json:"name"`
				Data      []json.RawMessage `json:"data"`
				ItemStyle struct {
					Color string `json:"color"`
				} `json:"itemStyle"`
			} `json:"series"`
		}
		if err := json.Unmarshal(c.Option, &o); err != nil {
			t.Fatal(err)
		}
		bars, key := false, ""
		for _, s := range o.Series {
			switch s.Type {
			case "pie": // the style key, in the legend
				key = strings.Join(slices.Collect(func(yield func(string) bool) {
					for _, d := range s.Data {
						var slice struct {
							Name      string `json:"name"`
							ItemStyle struct {
								Decal any `json:"decal"`
							} `json:"itemStyle"`
						}
						_ = json.Unmarshal(d, &slice)
						if !yield(fmt.Sprintf("%s %v", slice.Name, slice.ItemStyle.Decal != nil)) {
							return
						}
					}
				}), ", ")
			case "bar":
				if len(s.Data) == 0 {
					continue
				}
				bars = true
				var hatched []int
				for i, d := range s.Data {
					if strings.Contains(string(d), `"decal"`) {
						hatched = append(hatched, i)
					}
				}
				if len(hatched) == 0 {
					t.Errorf("%s, series %q: no bar is hatched", kind, s.Name)
				}
				if !strings.Contains(c.Title+opt, referenceNote) {
					t.Errorf("%s: no note says what the hatching means", kind)
				}
			case "line":
				ref := strings.Contains(s.Name, "(C++)")
				if ref != slices.Contains(referencePalette, s.ItemStyle.Color) {
					t.Errorf("%s, line %q: colour %s; references take the reference family %v, packlab's layouts never", kind, s.Name, s.ItemStyle.Color, referencePalette)
				}
			}
		}
		if want := "plain: packlab false, hatched: C++ map true"; bars && key != want {
			t.Errorf("%s: the legend's style key is %q, want %q", kind, key, want)
		}
		// The legend says which style is whose; the subtitle does not again.
		var title struct {
			Title struct {
				Subtext string `json:"subtext"`
			} `json:"title"`
		}
		_ = json.Unmarshal(c.Option, &title)
		if sub := title.Title.Subtext; key != "" && (strings.Contains(sub, "hatched") || strings.Contains(sub, "plain")) {
			t.Errorf("%s: the subtitle repeats the legend's style key: %q", kind, sub)
		}
	}
}

// TestTableMarksReferences: the table names a reference map "(C++)", gives
// it no SHARDS or MLF (it has its library's own), and marks an estimated
// bytes_allocated with "~".
func TestTableMarksReferences(t *testing.T) {
	rs := fxWithReference()
	rs[len(rs)-1].Estimated = true
	var b strings.Builder
	if err := WriteTable(&b, rs, "markdown"); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "| boost_flat (C++) |") || !strings.Contains(last, "| ~") {
		t.Errorf("the reference's row %q, want it named boost_flat (C++), no SHARDS or MLF, and a ~ on bytes_allocated", last)
	}
}
