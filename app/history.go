package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
	"github.com/packlab/packlab/experiments/text"
)

// Table is a table ready to show: column names and one row of text cells
// per result, formatted in Go.
type Table struct {
	Columns []Column   `json:"columns"`
	Rows    []TableRow `json:"rows"`
	// Title says what the rows are: "run hashed,packed 1e5 · desktop ·
	// started 2026-12-01 10:40:03 · 2 results", or "3 results from 2 jobs:
	// ..." (Lab.Table; empty elsewhere).
	Title string   `json:"title,omitempty"`
	Notes []string `json:"notes"` // lines for under the table (experiments.ResultNotes)
}

// Column is one column of a Table.
type Column struct {
	Name    string `json:"name"`
	Numeric bool   `json:"numeric"` // right-aligned
}

// TableRow is one result's row.
type TableRow struct {
	ID    string   `json:"id"`
	Cells []string `json:"cells"`
}

// History is the saved results by job: the jobs newest first (by the time
// each started, the time it shows), each with its results as rows to pick
// from, in the order they were measured.
//
// What it shows is one results folder (Options.ResultsDir): the person's
// own by default. Every run, sweep, Run and inspection there is a job of its own, named
// and dated; a file that is not a packlab result is not listed but named in
// Problems; results saved before jobs existed come as jobs grouped by time.
type History struct {
	Columns  []Column     `json:"columns"` // of a result's row
	Jobs     []HistoryJob `json:"jobs"`
	Dir      string       `json:"dir"`      // where the results are kept
	Count    int          `json:"count"`    // results in all the jobs
	Problems []string     `json:"problems"` // files in Dir that could not be read, one line each
}

// HistoryJob is one job in History.
type HistoryJob struct {
	ID      string     `json:"id"`
	Name    string     `json:"name"`    // "run packed,hashed 1e5", "sweep types"
	Started string     `json:"started"` // when it started, in this machine's zone
	Face    string     `json:"face"`    // "command line", "desktop", "browser", or ""
	Summary string     `json:"summary"` // "2 results · packed, hashed · UInt64→UInt16 · 100K rows"
	Legacy  bool       `json:"legacy"`  // saved before jobs: grouped by time
	Results string     `json:"results"` // how many results: "1,125"
	Rows    []TableRow `json:"rows"`    // its results, in the order measured
	// Inspection: a saved inspection of a user's ClickHouse, no results;
	// Lab.Inspection opens it.
	Inspection bool `json:"inspection"`
}

// History lists every saved job, newest first, with its results.
func (l *Lab) History() (History, error) {
	jobs, problems, err := l.store.Jobs(context.Background())
	if err != nil {
		return History{}, ErrorOf(err, "history")
	}
	h := History{Dir: l.opt.ResultsDir, Problems: []string{}, Jobs: []HistoryJob{}}
	for _, p := range problems {
		h.Problems = append(h.Problems, p.Error())
	}
	h.Columns = []Column{{"started", false}, {"layout", false}, {"key → value", false}, {"rows", true},
		{"shards", true}, {"mlf", true}, {"source", false}, {"bytes_allocated", true}, {"peak RSS", true},
		{"load (sec)", true}, {"runtime", false}}
	for _, j := range jobs {
		hj := HistoryJob{ID: j.ID, Name: text.Short(j.Name, text.MaxLabel), Started: startedText(j.StartedAt), Face: j.Face,
			Summary: store.DescribeJob(j), Legacy: j.Legacy, Results: text.Thousands(int64(len(j.Results))), Rows: []TableRow{}}
		for _, r := range j.Results {
			hj.Rows = append(hj.Rows, historyRow(r))
		}
		if j.Inspection != nil {
			hj.Inspection, hj.Results = true, "inspection"
		}
		h.Count += len(j.Results)
		h.Jobs = append(h.Jobs, hj)
	}
	return h, nil
}

// historyRow is one result's row under its job in History.
func historyRow(r result.Result) TableRow {
	mlf := "–"
	if r.Layout != "hashed_array" {
		mlf = fmt.Sprint(r.MaxLoadFactor)
	}
	where := r.Runtime
	if r.Isolated {
		where += ", isolated"
	}
	if r.SettleSeconds > 0 {
		where += ", idle " + seconds(r.SettleSeconds) + " first"
	}
	return TableRow{ID: r.ID, Cells: []string{
		startedText(r.StartedAt), layoutText(r), r.KeyType + " → " + r.ValueType, text.Rows(r.Rows),
		fmt.Sprint(r.Shards), mlf, r.Source, text.Bytes(r.BytesAllocated),
		text.Bytes(r.PeakRSSBytes), fmt.Sprintf("%.3f", r.LoadSeconds), where,
	}}
}

// layoutText is the layout, marked when its tables were reserved for the
// rows before the load.
func layoutText(r result.Result) string {
	if r.Preallocate {
		return r.Layout + " PREALLOCATE"
	}
	return r.Layout
}

// startedText shows an RFC 3339 time in the machine's zone.
func startedText(s string) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// Deleted is Delete's answer.
type Deleted struct {
	Deleted []string `json:"deleted"`
}

// Delete removes saved results by id. An unknown id is an error and
// nothing is deleted.
func (l *Lab) Delete(ids []string) (Deleted, error) {
	if len(ids) == 0 {
		return Deleted{}, errorf("history", "no results chosen to delete")
	}
	if _, err := Results(l, ids, "history"); err != nil {
		return Deleted{}, err
	}
	out := Deleted{Deleted: []string{}}
	for _, id := range ids {
		if err := l.store.Delete(id); err != nil {
			return out, ErrorOf(fmt.Errorf("deleting %s: %w", id, err), "history")
		}
		out.Deleted = append(out.Deleted, id)
	}
	return out, nil
}

// Results loads the lab l's saved results by id, in the order given. field
// is where an error shows. A function, not a method, as Check.
func Results(l *Lab, ids []string, field string) ([]result.Result, error) {
	if len(ids) == 0 {
		return nil, errorf(field, "no results chosen: run a comparison or pick results in History")
	}
	seen := map[string]bool{}
	var out []result.Result
	for _, id := range ids {
		if seen[id] {
			return nil, errorf(field, "result %s is chosen twice", id)
		}
		seen[id] = true
		r, err := l.store.Load(id)
		var fe *fault.FieldError
		if errors.As(err, &fe) {
			return nil, errorf(field, "result %s: not in %s (deleted?)", id, l.opt.ResultsDir)
		}
		if err != nil {
			return nil, ErrorOf(fmt.Errorf("result %s: %w", id, err), field)
		}
		out = append(out, r)
	}
	return out, nil
}

// Table returns the chosen results in the seed table's columns (settings,
// load and read seconds, read million rows/s, bytes_allocated, RSS, peak
// RSS...), the cells the terminal's and the Markdown export's tables print
// (report.Cells).
func (l *Lab) Table(ids []string) (Table, error) {
	rs, err := Results(l, ids, "export")
	if err != nil {
		return Table{}, err
	}
	header, numeric, rows := report.Cells(rs)
	t := Table{Rows: make([]TableRow, len(rows))}
	for i, h := range header {
		t.Columns = append(t.Columns, Column{Name: h, Numeric: numeric[i]})
	}
	for i, cells := range rows {
		t.Rows[i] = TableRow{ID: rs[i].ID, Cells: cells}
	}
	t.Title = selectionTitle(rs)
	t.Notes = append([]string{}, formLines(experiments.ResultNotes(rs))...)
	return t, nil
}

// selectionTitle says which job or jobs the chosen results come from, so
// that the comparison's heading describes what it shows.
func selectionTitle(rs []result.Result) string {
	jobs := store.Jobs(rs)
	n := len(rs)
	results := text.Count(n, "result", "results")
	if len(jobs) == 1 {
		j := jobs[0]
		parts := []string{text.Short(j.Name, text.MaxLabel)}
		if j.Face != "" {
			parts = append(parts, j.Face)
		}
		if j.StartedAt != "" {
			parts = append(parts, "started "+startedText(j.StartedAt))
		}
		if types := sharedTypes(rs); types != "" {
			parts = append(parts, types)
		}
		return strings.Join(append(parts, results), " · ")
	}
	var names []string
	for i := len(jobs) - 1; i >= 0; i-- { // oldest first, as the rows are
		names = append(names, text.Short(jobs[i].Name, text.MaxLabel))
	}
	return fmt.Sprintf("%s from %d jobs: %s", results, len(jobs), strings.Join(names, "; "))
}

// sharedTypes is the key and value types (every attribute's) that all of
// rs have, "UInt64 → UInt16, UInt32", for the heading of a table whose
// settings leave out what the rows share; "" when they differ.
func sharedTypes(rs []result.Result) string {
	if len(rs) == 0 || rs[0].KeyType == "" {
		return ""
	}
	for _, r := range rs[1:] {
		if r.KeyType != rs[0].KeyType || result.ValueText(r) != result.ValueText(rs[0]) {
			return ""
		}
	}
	return rs[0].KeyType + " → " + strings.ReplaceAll(result.ValueText(rs[0]), ",", ", ")
}

// ChartView is one chart for the page: the ECharts option Go built, or,
// when the chosen results hold nothing that chart can show, Empty and a
// Note saying why.
type ChartView struct {
	Kind   string          `json:"kind"`
	Title  string          `json:"title"`
	Option json.RawMessage `json:"option"` // hand to ECharts' setOption unchanged
	Empty  bool            `json:"empty"`
	Note   string          `json:"note"`
}

// Chart builds the chart of kind over the chosen results (experiments'
// BuildChart: the same option the HTML report and the browser render).
func (l *Lab) Chart(kind string, ids []string) (ChartView, error) {
	if !knownChart(kind) {
		return ChartView{}, errorf("chart", "%s: unknown chart (allowed: %s)", kind, strings.Join(report.ChartKinds(), ", "))
	}
	rs, err := Results(l, ids, "chart")
	if err != nil {
		return ChartView{}, err
	}
	c, err := report.BuildChart(kind, rs)
	if errors.Is(err, report.ErrNoData) {
		return ChartView{Kind: kind, Title: chartTitles[kind], Option: json.RawMessage("null"), Empty: true,
			Note: "Nothing to draw: " + noDataReason(err)}, nil
	}
	if err != nil {
		return ChartView{}, ErrorOf(err, "chart")
	}
	return ChartView{Kind: c.Kind, Title: c.Title, Option: c.Option}, nil
}

// noDataReason is why a chart has nothing to draw (report.NoDataError's
// Why), without the chart's kind and the sentinel's words around it.
func noDataReason(err error) string {
	if nd := (*report.NoDataError)(nil); errors.As(err, &nd) {
		return nd.Why
	}
	return err.Error()
}

func knownChart(kind string) bool {
	for _, k := range report.ChartKinds() {
		if k == kind {
			return true
		}
	}
	return false
}
