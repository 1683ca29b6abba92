// Package write writes a plan (planner.Plan) in the command line's
// formats: its candidates as JSON or CSV (the contract of packlab plan
// --format json and csv), or its details (planner.Plan.Details, worded once
// for every face) as a terminal's text or Markdown.
package write

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/text"
)

// Plan writes a plan in one of text.Formats: "json" is the array of
// candidates, best first, and nothing else; "csv" one row per candidate;
// "table" and "markdown" the answer, the ClickHouse and Go text, the
// layouts ruled out, and a table of each layout's best setup per load
// factor.
func Plan(w io.Writer, plan planner.Plan, format string) error {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "json":
		cands := []planner.Candidate{}
		for _, c := range plan.Candidates {
			if plan.Request.For == "" || c.Engine == plan.Request.For {
				cands = append(cands, c)
			}
		}
		b, err := json.MarshalIndent(cands, "", "  ")
		if err != nil {
			return fmt.Errorf("encoding the plan as JSON: %w", err)
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case "csv":
		return planCSV(w, plan)
	case "table":
		return planText(w, plan, false)
	case "markdown":
		return planText(w, plan, true)
	}
	return fmt.Errorf("unknown format %q (allowed: %s)", format, strings.Join(text.Formats(), ", "))
}

var planCSVHeader = []string{
	"rank", "layout", "key_type", "value_type", "rows", "distinct", "shards", "max_load_factor", "bucket_count", "load_factor",
	"bytes_allocated", "overhead", "steady_bytes", "peak_bytes", "reload_peak_bytes", "checked_bytes", "growing_at_once", "loader_bytes", "bytes_per_pair",
	"load_seconds", "load_rows_per_second", "load_rows_per_second_min", "load_rows_per_second_max",
	"read_seconds", "read_rows_per_second", "read_rows_per_second_min", "read_rows_per_second_max", "speed_tier", "fits",
	"clickhouse_layout", "clickhouse_first_load_peak_bytes", "clickhouse_reload_peak_bytes", "packlab_only", "engine", "answer", "why",
}

func planCSV(w io.Writer, plan planner.Plan) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(planCSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return f(*p)
	}
	bound := func(r *[2]float64, i int) string {
		if r == nil {
			return ""
		}
		return f(r[i])
	}
	for _, c := range plan.Candidates {
		if plan.Request.For != "" && c.Engine != plan.Request.For {
			continue
		}
		chFirst, chReload := "", ""
		if c.ClickHouse != nil {
			chFirst, chReload = i64(c.ClickHouse.FirstLoadPeakBytes), i64(c.ClickHouse.ReloadPeakBytes)
		}
		if err := cw.Write([]string{
			strconv.Itoa(c.Rank), c.Layout, c.KeyType, c.ValueType, i64(c.Rows), i64(c.Distinct), strconv.Itoa(c.Shards),
			f(c.MaxLoadFactor), i64(c.BucketCount), f(c.LoadFactor), i64(c.BytesAllocated), f(c.Overhead), i64(c.SteadyBytes),
			i64(c.PeakBytes), i64(c.ReloadPeakBytes), i64(c.CheckedBytes), strconv.Itoa(c.GrowingAtOnce), i64(c.LoaderBytes), f(c.BytesPerPair),
			opt(c.LoadSeconds), opt(c.LoadRowsPerSecond), bound(c.LoadRange, 0), bound(c.LoadRange, 1),
			opt(c.ReadSeconds), opt(c.ReadRowsPerSecond), bound(c.ReadRange, 0), bound(c.ReadRange, 1), strconv.Itoa(c.SpeedTier),
			strconv.FormatBool(c.Fits), c.ClickHouseLayout, chFirst, chReload, strconv.FormatBool(c.PacklabOnly), c.Engine, c.Answer, c.Why,
		}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func planText(w io.Writer, plan planner.Plan, md bool) error {
	d := plan.Details()
	var b strings.Builder
	clean := func(s string) string {
		if md {
			return text.Markdown(s)
		}
		return text.Terminal(s)
	}
	heading := func(s string) {
		if md {
			b.WriteString("\n### " + clean(s) + "\n\n")
		} else {
			b.WriteString("\n" + clean(s) + ":\n")
		}
	}
	item := func(s string) {
		if md {
			b.WriteString("- " + clean(s) + "\n")
		} else {
			b.WriteString("  " + clean(s) + "\n")
		}
	}
	if md {
		b.WriteString("## packlab plan: " + clean(d.Headline) + "\n\n")
	} else {
		b.WriteString("packlab plan: " + d.Headline + "\n\n")
	}
	answers := []string{d.Answer}
	if len(d.Answers) > 0 {
		answers = nil
		for _, a := range d.Answers {
			answers = append(answers, a.Line)
		}
	}
	for _, a := range answers {
		if md {
			b.WriteString("**Answer:** " + clean(a) + "\n\n")
		} else {
			b.WriteString("Answer: " + clean(a) + "\n")
		}
	}
	for _, a := range d.Answers {
		heading(a.Title + ": " + a.Setup)
		for _, l := range a.Lines {
			item(l)
		}
		sn := a.Snippet
		switch {
		case sn.Text == "":
		case md:
			b.WriteString("\n```" + sn.Lang + "\n" + sn.Text + "\n```\n\n")
		default:
			b.WriteString("\n")
			for _, l := range strings.Split(sn.Text, "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
		if sn.Note != "" {
			item("note: " + sn.Note)
		}
	}
	if len(d.RunnersUp) > 0 {
		heading("Runners-up, and why each lost")
		for _, l := range d.RunnersUp {
			item(l)
		}
	}
	heading("How the plan decides")
	item(d.Rule)
	if len(d.Front) > 0 {
		heading("The front: no other setup needs less memory and loads and reads as fast")
		for _, l := range d.Front {
			item(l)
		}
	}
	if len(d.RuledOut) > 0 {
		heading("Ruled out")
		for _, r := range d.RuledOut {
			item(r)
		}
	}
	heading("How these figures were made")
	for _, l := range d.HowMade {
		item(l)
	}
	heading(d.TableTitle)
	text.Grid(&b, d.Header, d.Numeric, d.Rows, md)
	_, err := io.WriteString(w, b.String())
	return err
}
