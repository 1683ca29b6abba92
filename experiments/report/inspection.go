package report

// A saved inspection of a user's ClickHouse in a report: the same words as
// packlab inspect prints (InspectionText), and in the HTML report a section
// of its own with the dictionaries' table, the findings, each advice with
// its CREATE DICTIONARY, and ServerChart.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// InspectionJob is a saved inspection as a report shows it: the job it was
// kept as and what it found.
type InspectionJob struct {
	Job        result.Job
	Inspection *server.Inspection
}

// InspectionChart is ServerChart of every dictionary of ins: a bar group
// each, named by database.name (node first on a cluster).
func InspectionChart(ins *server.Inspection) (Chart, error) {
	var bars []ServerBar
	for _, d := range ins.Dictionaries {
		name := d.Database + "." + d.Name
		if len(ins.Nodes) > 1 {
			name = d.Node + " " + name
		}
		b := ServerBar{Name: name, Reported: d.BytesAllocated, Real: d.RealBytes, ReloadPeak: d.ReloadPeakBytes, Limit: d.ServerMemoryLimitBytes}
		if v := d.Verification; v != nil {
			b.Advised = v.BytesAllocated
		}
		bars = append(bars, b)
	}
	return ServerChart(bars)
}

// InspectionText is the inspection for a terminal or, md, as Markdown: a
// line per node, a table of the dictionaries, then each one's findings and
// advice. Everything the server said is made safe to print
// (text.Terminal, text.Markdown).
func InspectionText(ins *server.Inspection, md bool) string {
	safe := text.Terminal
	if md {
		safe = text.Markdown
	}
	var b strings.Builder
	where := ins.Server
	if ins.Cluster != "" {
		where += fmt.Sprintf(", cluster %s (%s)", ins.Cluster, text.Count(len(ins.Nodes), "node", "nodes"))
	}
	fmt.Fprintf(&b, "ClickHouse %s at %s: %s, inspected in %.2f s\n", safe(ins.Release), safe(where), text.Count(len(ins.Dictionaries), "dictionary", "dictionaries"), ins.Seconds)
	for _, n := range ins.Nodes {
		limit := "no memory limit known"
		if n.MemoryLimitBytes > 0 {
			limit = "limit " + text.Bytes(n.MemoryLimitBytes) + " (" + n.MemoryLimitFrom + ")"
		}
		fmt.Fprintf(&b, "node %s%s: holds %s, %s\n", safe(n.Name), safe(otherRelease(ins, n)), text.Bytes(n.TrackedBytes), limit)
	}
	b.WriteString("\n")
	header := []string{"node", "dictionary", "layout", "status", "rows", "bytes_allocated", "model", "real", "reload peak"}
	numeric := []bool{false, false, false, false, true, true, true, true, true}
	var rows [][]string
	for _, d := range ins.Dictionaries {
		model, real, peak := "not modelled", "-", "-"
		if d.Modelled {
			model, real, peak = text.Bytes(d.ModelBytes), text.Bytes(d.RealBytes), text.Bytes(d.ReloadPeakBytes)
		}
		rows = append(rows, []string{safe(d.Node), safe(dictName(d)), safe(text.OrDash(d.Layout)), safe(d.Status),
			text.Thousands(d.ElementCount), text.Bytes(d.BytesAllocated), model, real, peak})
	}
	text.Grid(&b, header, numeric, rows, md)
	for _, f := range ins.Findings {
		fmt.Fprintf(&b, "\n%s\n", safe(f))
	}
	for _, d := range ins.Dictionaries {
		fmt.Fprintf(&b, "\n%s on %s", safe(dictName(d)), safe(d.Node))
		if md {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "\n  key %s; attributes %s; source %s; lifetime %d-%d s\n",
			safe(columns(d.KeyNames, d.KeyTypes)), safe(columns(d.AttributeNames, d.AttributeTypes)), safe(text.OrDash(d.Source)), d.LifetimeMin, d.LifetimeMax)
		if d.NotModelled != "" {
			fmt.Fprintf(&b, "  not modelled: %s\n", safe(d.NotModelled))
		}
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "  note: %s\n", safe(n))
		}
		for _, f := range d.Findings {
			fmt.Fprintf(&b, "  finding: %s\n", safe(f))
		}
		if a := d.Advice; a != nil {
			fmt.Fprintf(&b, "  advice: %s, %s steady, %s at a reload's peak: %s\n", safe(a.Layout), text.Bytes(a.SteadyBytes), text.Bytes(a.ReloadPeakBytes), safe(a.Why))
			if md {
				fmt.Fprintf(&b, "\n```sql\n%s\n```\n", strings.ReplaceAll(text.Terminal(a.DDL), "```", "` ` `"))
			} else {
				for _, line := range strings.Split(a.DDL, "\n") {
					fmt.Fprintf(&b, "    %s\n", text.Terminal(line))
				}
			}
		}
		if v := d.Verification; v != nil {
			for _, l := range v.Lines() {
				fmt.Fprintf(&b, "  verified: %s\n", safe(l))
			}
		}
		if d.VerifyProblem != "" {
			fmt.Fprintf(&b, "  not verified: %s\n", safe(d.VerifyProblem))
		}
	}
	return b.String()
}

func dictName(d server.Dictionary) string {
	if d.Database == "" {
		return d.Name
	}
	return d.Database + "." + d.Name
}

func columns(names, types []string) string {
	var out []string
	for i, n := range names {
		t := "?"
		if i < len(types) {
			t = types[i]
		}
		out = append(out, n+" "+t)
	}
	return text.OrDash(strings.Join(out, ", "))
}

// pageInspection is one inspection's section of the HTML report.
type pageInspection struct {
	Heading  string
	Lines    []string // the job, the server, each node
	Table    *pageTable
	Findings []string
	Dicts    []pageDictionary
	Chart    *pageChart
	Omitted  string // why there is no chart
}

// pageDictionary is one dictionary's lines and advice under the table.
type pageDictionary struct {
	Title string
	Lines []string
	DDL   string
}

// inspectionSection is ij as the HTML report's section; the page's
// template escapes every string the server gave.
func inspectionSection(ij InspectionJob, chartID string) (pageInspection, error) {
	ins := ij.Inspection
	p := pageInspection{Heading: text.Short(ij.Job.Name, text.MaxLabel)}
	job := "job " + ij.Job.ID
	if ij.Job.StartedAt != "" {
		job += ", inspected " + ij.Job.StartedAt
	}
	if ij.Job.Face != "" {
		job += " from the " + ij.Job.Face
	}
	where := ins.Server
	if ins.Cluster != "" {
		where += fmt.Sprintf(", cluster %s (%s)", ins.Cluster, text.Count(len(ins.Nodes), "node", "nodes"))
	}
	p.Lines = append(p.Lines, job, fmt.Sprintf("ClickHouse %s at %s: %s, inspected in %.2f s", ins.Release, where, text.Count(len(ins.Dictionaries), "dictionary", "dictionaries"), ins.Seconds))
	for _, n := range ins.Nodes {
		limit := "no memory limit known"
		if n.MemoryLimitBytes > 0 {
			limit = "limit " + text.Bytes(n.MemoryLimitBytes) + " (" + n.MemoryLimitFrom + ")"
		}
		p.Lines = append(p.Lines, fmt.Sprintf("node %s%s: holds %s, %s", n.Name, otherRelease(ins, n), text.Bytes(n.TrackedBytes), limit))
	}
	t := &pageTable{
		Header:  []string{"node", "dictionary", "layout", "keys", "attributes", "status", "rows", "bytes_allocated", "model", "real", "reload peak", "server's limit"},
		Numeric: []bool{false, false, false, false, false, false, true, true, true, true, true, true},
	}
	// One node: its name and limit are in its line above, not in every row
	// (twelve columns ran off a 1280 px page).
	several := len(ins.Nodes) > 1
	if !several {
		t.Header, t.Numeric = t.Header[1:len(t.Header)-1], t.Numeric[1:len(t.Numeric)-1]
	}
	for _, d := range ins.Dictionaries {
		model, real, peak := "not modelled", "-", "-"
		if d.Modelled {
			model, real, peak = text.Bytes(d.ModelBytes), text.Bytes(d.RealBytes), text.Bytes(d.ReloadPeakBytes)
		}
		limit := "-"
		if d.ServerMemoryLimitBytes > 0 {
			limit = text.Bytes(d.ServerMemoryLimitBytes)
		}
		row := []string{d.Node, dictName(d), text.OrDash(d.Layout), columns(d.KeyNames, d.KeyTypes), columns(d.AttributeNames, d.AttributeTypes),
			d.Status, text.Thousands(d.ElementCount), text.Bytes(d.BytesAllocated), model, real, peak, limit}
		if !several {
			row = row[1 : len(row)-1]
		}
		t.Rows = append(t.Rows, row)
		pd := pageDictionary{Title: dictName(d) + " on " + d.Node}
		pd.Lines = append(pd.Lines, fmt.Sprintf("source %s; lifetime %d-%d s", text.OrDash(d.Source), d.LifetimeMin, d.LifetimeMax))
		if d.LastException != "" {
			pd.Lines = append(pd.Lines, "last exception: "+d.LastException)
		}
		if d.NotModelled != "" {
			pd.Lines = append(pd.Lines, "not modelled: "+d.NotModelled)
		}
		for _, n := range d.Notes {
			pd.Lines = append(pd.Lines, "note: "+n)
		}
		for _, f := range d.Findings {
			pd.Lines = append(pd.Lines, "finding: "+f)
		}
		if a := d.Advice; a != nil {
			pd.Lines = append(pd.Lines, fmt.Sprintf("advice: %s, %s steady, %s at a reload's peak: %s", a.Layout, text.Bytes(a.SteadyBytes), text.Bytes(a.ReloadPeakBytes), a.Why))
			pd.DDL = a.DDL
		}
		if v := d.Verification; v != nil {
			for _, l := range v.Lines() {
				pd.Lines = append(pd.Lines, "verified: "+l)
			}
		}
		if d.VerifyProblem != "" {
			pd.Lines = append(pd.Lines, "not verified: "+d.VerifyProblem)
		}
		p.Dicts = append(p.Dicts, pd)
	}
	if len(t.Rows) > 0 {
		p.Table = t
	}
	p.Findings = ins.Findings
	c, err := InspectionChart(ins)
	if errors.Is(err, ErrNoData) {
		p.Omitted = strings.TrimSuffix(err.Error(), ": "+ErrNoData.Error())
		return p, nil
	}
	if err != nil {
		return p, err
	}
	pc, err := toPageChart(c, chartID)
	if err != nil {
		return p, err
	}
	p.Chart = &pc
	return p, nil
}

// otherRelease is " (ClickHouse R)" for a node whose release R is not the
// one of the node connected to, else "".
func otherRelease(ins *server.Inspection, n server.Node) string {
	if n.Release == "" || n.Release == ins.Release {
		return ""
	}
	return " (ClickHouse " + n.Release + ")"
}
