package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments"
)

// Table is a table ready to show: column names and one row of text cells
// per result, formatted in Go.
type Table struct {
	Columns []Column   `json:"columns"`
	Rows    []TableRow `json:"rows"`
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

// History is the saved results, newest first, as a table to pick from.
type History struct {
	Table
	Dir      string   `json:"dir"`      // where the results are kept
	Count    int      `json:"count"`    // results listed
	Problems []string `json:"problems"` // files in Dir that could not be read, one line each
}

// History lists every saved result, newest first.
func (l *Lab) History() (History, error) {
	rs, problems, err := l.store.List()
	if err != nil {
		return History{}, ErrorOf(err, "history")
	}
	h := History{Dir: l.opt.ResultsDir, Count: len(rs), Problems: []string{}}
	for _, p := range problems {
		h.Problems = append(h.Problems, p.Error())
	}
	h.Columns = []Column{{"started", false}, {"layout", false}, {"key → value", false}, {"rows", true},
		{"shards", true}, {"mlf", true}, {"source", false}, {"bytes_allocated", true}, {"peak RSS", true},
		{"load (sec)", true}, {"runtime", false}}
	h.Rows = []TableRow{}
	for _, r := range rs { // newest first
		mlf := "–"
		if r.Layout != "hashed_array" {
			mlf = fmt.Sprint(r.MaxLoadFactor)
		}
		where := r.Runtime
		if r.Isolated {
			where += ", isolated"
		}
		h.Rows = append(h.Rows, TableRow{ID: r.ID, Cells: []string{
			startedText(r.StartedAt), r.Layout, r.KeyType + " → " + r.ValueType, experiments.FormatRows(r.Rows),
			fmt.Sprint(r.Shards), mlf, r.Source, experiments.FormatBytes(r.BytesAllocated),
			experiments.FormatBytes(r.PeakRSSBytes), fmt.Sprintf("%.3f", r.LoadSeconds), where,
		}})
	}
	return h, nil
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
	if _, err := l.results(ids, "history"); err != nil {
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

// results loads saved results by id, in the order given. field is where an
// error shows.
func (l *Lab) results(ids []string, field string) ([]experiments.Result, error) {
	if len(ids) == 0 {
		return nil, errorf(field, "no results chosen: run a comparison or pick results in History")
	}
	seen := map[string]bool{}
	var out []experiments.Result
	for _, id := range ids {
		if seen[id] {
			return nil, errorf(field, "result %s is chosen twice", id)
		}
		seen[id] = true
		r, err := l.store.Load(id)
		var fe *experiments.FieldError
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
// RSS...), formatted exactly as the Markdown export writes them.
func (l *Lab) Table(ids []string) (Table, error) {
	rs, err := l.results(ids, "export")
	if err != nil {
		return Table{}, err
	}
	var md bytes.Buffer
	if err := experiments.WriteTable(&md, rs, "markdown"); err != nil {
		return Table{}, ErrorOf(err, "export")
	}
	t, err := parseMarkdownTable(md.String())
	if err != nil {
		return Table{}, ErrorOf(err, "export")
	}
	if len(t.Rows) != len(rs) {
		return Table{}, errorf("export", "the table has %d rows for %d results", len(t.Rows), len(rs))
	}
	for i := range t.Rows {
		t.Rows[i].ID = rs[i].ID
	}
	return t, nil
}

// parseMarkdownTable reads back the table experiments.WriteTable writes as
// Markdown, so that the window shows the same cells as the export.
func parseMarkdownTable(md string) (Table, error) {
	lines := strings.Split(strings.TrimRight(md, "\n"), "\n")
	if len(lines) < 2 {
		return Table{}, errors.New("the results table is empty")
	}
	header := splitRow(lines[0])
	align := splitRow(lines[1])
	if len(align) != len(header) {
		return Table{}, fmt.Errorf("the results table's header has %d columns, its rule %d", len(header), len(align))
	}
	t := Table{Rows: []TableRow{}}
	for i, h := range header {
		t.Columns = append(t.Columns, Column{Name: h, Numeric: strings.HasSuffix(align[i], ":")})
	}
	for _, line := range lines[2:] {
		cells := splitRow(line)
		if len(cells) != len(header) {
			return Table{}, fmt.Errorf("a row of the results table has %d cells for %d columns", len(cells), len(header))
		}
		t.Rows = append(t.Rows, TableRow{Cells: cells})
	}
	return t, nil
}

// splitRow splits "| a | b \| c |" into ["a", "b | c"].
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
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
		return ChartView{}, errorf("chart", "%s: unknown chart (allowed: %s)", kind, strings.Join(experiments.ChartKinds(), ", "))
	}
	rs, err := l.results(ids, "chart")
	if err != nil {
		return ChartView{}, err
	}
	c, err := experiments.BuildChart(kind, rs)
	if errors.Is(err, experiments.ErrNoData) {
		return ChartView{Kind: kind, Title: chartTitles[kind], Option: json.RawMessage("null"), Empty: true,
			Note: "Nothing to draw: " + err.Error()}, nil
	}
	if err != nil {
		return ChartView{}, ErrorOf(err, "chart")
	}
	return ChartView{Kind: c.Kind, Title: c.Title, Option: c.Option}, nil
}

func knownChart(kind string) bool {
	for _, k := range experiments.ChartKinds() {
		if k == kind {
			return true
		}
	}
	return false
}
