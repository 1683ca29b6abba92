//go:build !js

package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// ClickHouseForm is the "Your ClickHouse" tab's form as typed: a server to
// inspect (experiments/server). The password is the form's (a window has
// no environment to take it from); it is never returned, saved or logged.
type ClickHouseForm struct {
	URL      string `json:"url"` // clickhouse://host:9000, http://host:8123, https://host:8443
	User     string `json:"user"`
	Database string `json:"database"`
	Password string `json:"password"`
	CAFile   string `json:"ca_file"`
	Cluster  string `json:"cluster"`   // every replica of this cluster
	NoSample bool   `json:"no_sample"` // no query of a source's String lengths
	// Seconds as typed; "" is the default (server.DefaultConnectTimeout,
	// server.DefaultQueryTimeout).
	ConnectTimeout string `json:"connect_timeout"`
	QueryTimeout   string `json:"query_timeout"`
}

// ClickHouseView is an inspection for the "Your ClickHouse" tab: what
// server.Inspect found, and its chart (report.ServerChart), built here so
// that the page draws it and computes nothing.
type ClickHouseView struct {
	*server.Inspection
	Chart ChartView `json:"chart"`
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
// copy (none for one not modelled) and why.
type ClickHouseHint struct {
	Title string `json:"title"`
	DDL   string `json:"ddl"`
	Note  string `json:"note"`
}

// words fills the view's text from its inspection.
func (v *ClickHouseView) words() {
	ins := v.Inspection
	several := len(ins.Nodes) > 1
	v.Headline = fmt.Sprintf("%s: ClickHouse %s, %d dictionar%s, read in %.1f s", ins.Server, ins.Release,
		len(ins.Dictionaries), map[bool]string{true: "y", false: "ies"}[len(ins.Dictionaries) == 1], ins.Seconds)
	if ins.Cluster != "" {
		v.Headline += fmt.Sprintf(" (cluster %s, %d nodes)", ins.Cluster, len(ins.Nodes))
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
		v.NodeLines = append(v.NodeLines, fmt.Sprintf("%s: ClickHouse %s, %s; holds %s now, %s of it in %d dictionar%s",
			n.Name, ins.Release, limit, text.Bytes(n.TrackedBytes), text.Bytes(held), count, map[bool]string{true: "y", false: "ies"}[count == 1]))
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
			v.Advice = append(v.Advice, ClickHouseHint{Title: who + ": " + d.Advice.Layout, DDL: d.Advice.DDL,
				Note: fmt.Sprintf("steady %s, reload peak %s. %s", text.Bytes(d.Advice.SteadyBytes), text.Bytes(d.Advice.ReloadPeakBytes), d.Advice.Why)})
		case !d.Modelled:
			v.Advice = append(v.Advice, ClickHouseHint{Title: who + ": not modelled", Note: d.NotModelled})
		}
	}
}

// timeoutField reads a timeout field: "" is 0 (the default).
func timeoutField(field, v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 3600 {
		return 0, &Error{Field: field, Message: fmt.Sprintf("%q: not a timeout (allowed: seconds, more than 0 and at most 3600)", v)}
	}
	return time.Duration(f * float64(time.Second)), nil
}

// InspectClickHouse inspects the server of f: every dictionary beside
// packlab's model, the findings and the advice (server.Inspect). An error
// names the form's field ("url", "cluster", "ca_file") or "clickhouse".
// CancelInspect stops it.
func (l *Lab) InspectClickHouse(f ClickHouseForm) (ClickHouseView, error) {
	connect, err := timeoutField("connect_timeout", f.ConnectTimeout)
	if err != nil {
		return ClickHouseView{}, err
	}
	query, err := timeoutField("query_timeout", f.QueryTimeout)
	if err != nil {
		return ClickHouseView{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l.inspectMu.Lock()
	if l.inspectStop == nil {
		l.inspectStop = map[int]context.CancelFunc{}
	}
	l.inspectSeq++
	id := l.inspectSeq
	l.inspectStop[id] = cancel
	l.inspectMu.Unlock()
	defer func() {
		l.inspectMu.Lock()
		delete(l.inspectStop, id)
		l.inspectMu.Unlock()
	}()
	s := server.Settings{URL: strings.TrimSpace(f.URL), User: strings.TrimSpace(f.User), Database: strings.TrimSpace(f.Database),
		Password: f.Password, CAFile: strings.TrimSpace(f.CAFile), ConnectTimeout: connect, QueryTimeout: query}
	// The client does not give up a handshake on its context's cancel (a
	// server that accepts and never answers holds it to the timeouts): the
	// inspection runs aside, and Cancel answers at once; it ends on its own.
	type answer struct {
		ins *server.Inspection
		err error
	}
	done := make(chan answer, 1)
	go func() {
		ins, err := server.Inspect(ctx, s, server.Options{Cluster: strings.TrimSpace(f.Cluster), NoSample: f.NoSample})
		done <- answer{ins, err}
	}()
	var ins *server.Inspection
	select {
	case a := <-done:
		ins, err = a.ins, a.err
	case <-ctx.Done():
	}
	if ctx.Err() != nil {
		return ClickHouseView{}, &Error{Field: "clickhouse", Message: "the inspection was cancelled"}
	}
	if err != nil {
		return ClickHouseView{}, clickHouseError(err)
	}
	v := ClickHouseView{Inspection: ins}
	v.words()
	var bars []report.ServerBar
	for _, d := range ins.Dictionaries {
		name := d.Database + "." + d.Name
		if len(ins.Nodes) > 1 {
			name = d.Node + " " + name
		}
		bars = append(bars, report.ServerBar{Name: name, Reported: d.BytesAllocated, Real: d.RealBytes, ReloadPeak: d.ReloadPeakBytes, Limit: d.ServerMemoryLimitBytes})
	}
	if c, err := report.ServerChart(bars); err != nil {
		v.Chart = ChartView{Kind: report.ServerChartKind, Empty: true, Note: "no dictionary on this server"}
	} else {
		v.Chart = ChartView{Kind: c.Kind, Title: c.Title, Option: c.Option}
	}
	return v, nil
}

// CancelInspect stops every inspection in progress: each returns the
// clickhouse field's error "the inspection was cancelled".
func (l *Lab) CancelInspect() {
	l.inspectMu.Lock()
	defer l.inspectMu.Unlock()
	for _, stop := range l.inspectStop {
		stop()
	}
}

func clickHouseError(err error) *Error {
	var fe *fault.FieldError
	if errors.As(err, &fe) {
		field := map[string]string{"url": "url", "cluster": "cluster", "ca_file": "ca_file"}[fe.Field]
		if field == "" {
			field = "clickhouse"
		}
		return &Error{Field: field, Message: fieldMessage(fe)}
	}
	return &Error{Field: "clickhouse", Message: fault.Render(err, formName)}
}
