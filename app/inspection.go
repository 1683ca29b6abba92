package app

// An inspection of a user's ClickHouse as the window shows it: the "Your
// ClickHouse" tab's answer (clickhouse.go), and a saved inspection opened
// in the History tab (Lab.Inspection). Built for every face: the browser
// lab's history reads saved inspections too, though it cannot inspect.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// ClickHouseView is an inspection for the "Your ClickHouse" tab: what
// server.Inspect found, and its chart (report.ServerChart), built here so
// that the page draws it and computes nothing.
type ClickHouseView struct {
	*server.Inspection
	Chart ChartView `json:"chart"`
	// The history's job that keeps it ("" when it was not kept), and
	// why it could not be kept, if so.
	JobID       string `json:"job_id"`
	JobName     string `json:"job_name"`
	Started     string `json:"started"` // a saved inspection's time, in this machine's zone (History)
	SaveProblem string `json:"save_problem,omitempty"`
	// Why the verification asked for (ClickHouseForm.Verify) was refused
	// or failed.
	VerifyProblem string `json:"verify_problem,omitempty"`
	// The tab's words, made here: a line per node, the dictionaries'
	// table as text cells, every finding on one line, and the advice.
	Headline  string           `json:"headline"`
	NodeLines []string         `json:"node_lines"`
	Table     ClickHouseTable  `json:"table"`
	Lines     []string         `json:"finding_lines"`
	Advice    []ClickHouseHint `json:"advice_boxes"`
}

// ClickHouseTable is the tab's table of dictionaries: one row per
// dictionary and node.
type ClickHouseTable struct {
	Header  []string   `json:"header"`
	Numeric []bool     `json:"numeric"`
	Rows    [][]string `json:"rows"`
}

// ClickHouseHint is one dictionary's advice: its CREATE DICTIONARY to
// copy (none for one not modelled) and why; the dictionary's name, by
// which its advice is built on the server (ClickHouseForm.Verify: on every
// replica that holds it, on a cluster), and what its verification
// measured.
type ClickHouseHint struct {
	Title    string   `json:"title"`
	DDL      string   `json:"ddl"`
	Note     string   `json:"note"`
	Name     string   `json:"name,omitempty"`
	Verified []string `json:"verified,omitempty"`
}

// words fills the view's text from its inspection.
func (v *ClickHouseView) words() {
	ins := v.Inspection
	several := len(ins.Nodes) > 1
	v.Headline = fmt.Sprintf("%s: ClickHouse %s, %s, read in %.1f s", ins.Server, ins.Release,
		text.Count(len(ins.Dictionaries), "dictionary", "dictionaries"), ins.Seconds)
	if ins.Cluster != "" {
		v.Headline += fmt.Sprintf(" (cluster %s, %s)", ins.Cluster, text.Count(len(ins.Nodes), "node", "nodes"))
	}
	for _, n := range ins.Nodes {
		limit := "memory limit unknown"
		if n.MemoryLimitBytes > 0 {
			limit = "memory limit " + text.Bytes(n.MemoryLimitBytes) + " (" + n.MemoryLimitFrom + ")"
		}
		var held int64
		count := 0
		for _, d := range ins.Dictionaries {
			if d.Node == n.Name {
				held += max(d.RealBytes, d.BytesAllocated)
				count++
			}
		}
		v.NodeLines = append(v.NodeLines, fmt.Sprintf("%s: ClickHouse %s, %s; holds %s now, %s of it in %s",
			n.Name, cmp.Or(n.Release, ins.Release), limit, text.Bytes(n.TrackedBytes), text.Bytes(held), text.Count(count, "dictionary", "dictionaries")))
	}
	t := &v.Table
	if several {
		t.Header, t.Numeric = append(t.Header, "node"), append(t.Numeric, false)
	}
	for _, c := range []struct {
		name string
		num  bool
	}{{"dictionary", false}, {"layout", false}, {"keys", false}, {"attributes", false}, {"elements", true},
		{"bytes_allocated", true}, {"packlab's model", true}, {"real memory", true}, {"reload peak", true}, {"status", false}} {
		t.Header, t.Numeric = append(t.Header, c.name), append(t.Numeric, c.num)
	}
	figure := func(n int64, ok bool) string {
		if !ok || n <= 0 {
			return "–"
		}
		return text.Bytes(n)
	}
	v.Lines = append(v.Lines, ins.Findings...)
	for _, d := range ins.Dictionaries {
		name := d.Database + "." + d.Name
		var row []string
		if several {
			row = append(row, d.Node)
		}
		status := d.Status
		if d.LastException != "" {
			status += ": " + d.LastException
		}
		layout := d.Layout
		if d.XML {
			layout += " (from a configuration file)"
		}
		row = append(row, name, layout, strings.Join(d.KeyTypes, ", "), strings.Join(d.AttributeTypes, ", "),
			text.Thousands(d.ElementCount), text.Bytes(d.BytesAllocated), figure(d.ModelBytes, d.Modelled),
			figure(d.RealBytes, d.Modelled), figure(d.ReloadPeakBytes, d.Modelled), status)
		t.Rows = append(t.Rows, row)
		who := name
		if several {
			who = d.Node + " " + name
		}
		for _, f := range d.Findings {
			v.Lines = append(v.Lines, who+": "+f)
		}
		switch {
		case d.Advice != nil:
			h := ClickHouseHint{Title: who + ": " + d.Advice.Layout, DDL: d.Advice.DDL,
				Note: fmt.Sprintf("steady %s, reload peak %s. %s", text.Bytes(d.Advice.SteadyBytes), text.Bytes(d.Advice.ReloadPeakBytes), d.Advice.Why)}
			h.Name = name // built on its node, or on every replica that holds it
			if d.Verification != nil {
				h.Verified = d.Verification.Lines()
			}
			if d.VerifyProblem != "" {
				h.Verified = append(h.Verified, "Not verified: "+d.VerifyProblem)
			}
			v.Advice = append(v.Advice, h)
		case !d.Modelled:
			v.Advice = append(v.Advice, ClickHouseHint{Title: who + ": not modelled", Note: d.NotModelled})
		}
	}
}

// inspectionView is ins with the tab's words and its chart
// (report.InspectionChart), built here so that the page computes nothing.
func inspectionView(ins *server.Inspection) ClickHouseView {
	v := ClickHouseView{Inspection: ins}
	v.words()
	if c, err := report.InspectionChart(ins); err != nil {
		v.Chart = ChartView{Kind: report.ServerChartKind, Option: json.RawMessage("null"), Empty: true, Note: "no dictionary on this server"}
	} else {
		v.Chart = ChartView{Kind: c.Kind, Title: c.Title, Option: c.Option}
	}
	return v
}

// Inspection opens a saved inspection of the history by its job id: the
// same view the "Your ClickHouse" tab shows after an inspection.
func (l *Lab) Inspection(jobID string) (ClickHouseView, error) {
	j, err := l.store.FindJob(context.Background(), jobID)
	var fe *fault.FieldError
	if errors.As(err, &fe) {
		return ClickHouseView{}, errorf("history", "job %s: not in %s (deleted?)", jobID, l.opt.ResultsDir)
	}
	if err != nil {
		return ClickHouseView{}, ErrorOf(err, "history")
	}
	if j.Inspection == nil {
		return ClickHouseView{}, errorf("history", "job %s is not an inspection: its results are picked in the table", jobID)
	}
	v := inspectionView(j.Inspection)
	v.JobID, v.JobName, v.Started = j.ID, j.Name, startedText(j.StartedAt)
	return v, nil
}

// DeleteInspection removes a saved inspection from the history by its job
// id.
func (l *Lab) DeleteInspection(jobID string) (Deleted, error) {
	if _, err := l.Inspection(jobID); err != nil {
		return Deleted{}, err
	}
	if err := l.store.DeleteInspection(jobID); err != nil {
		return Deleted{}, ErrorOf(fmt.Errorf("deleting %s: %w", jobID, err), "history")
	}
	return Deleted{Deleted: []string{jobID}}, nil
}
