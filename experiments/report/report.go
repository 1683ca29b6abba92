package report

// The report: one self-contained HTML file from saved results — a summary
// of what was measured and where, the results table, then every chart that
// has data. ECharts is inlined once; the file loads nothing from a network,
// so it can be mailed, archived or opened on a machine with no connection.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

// DefaultReportTitle is the title WriteReport uses when given none.
const DefaultReportTitle = "packlab report"

// WriteReport writes one self-contained HTML report of results: the table,
// then every chart kind that has data (a kind with none is named at the
// end, with why). It writes nothing if it fails.
func WriteReport(w io.Writer, results []result.Result, title string) error {
	return WriteJobsReport(w, results, nil, title)
}

// WriteJobsReport is WriteReport of results and saved inspections: the
// results' table and charts, if any, then a section per inspection (its
// nodes, its dictionaries' table, findings, advice with each CREATE
// DICTIONARY, and ServerChart). It writes nothing if it fails.
func WriteJobsReport(w io.Writer, results []result.Result, inspections []InspectionJob, title string) error {
	if len(results) == 0 && len(inspections) == 0 {
		return errors.New("report: no results to report")
	}
	if strings.TrimSpace(title) == "" {
		title = DefaultReportTitle
	}
	d := pageData{Title: title, Report: true}
	for i, ij := range inspections {
		p, err := inspectionSection(ij, fmt.Sprintf("%s-inspection-%d", chartElementID(ServerChartKind), i+1))
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		d.Inspections = append(d.Inspections, p)
	}
	if len(results) == 0 {
		d.Summary = inspectionsSummary(inspections)
		var buf bytes.Buffer
		if err := writePage(&buf, d, nil); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	d.Summary = append(reportSummary(results), inspectionsSummary(inspections)...)

	header, rows := humanCells(results)
	t := &pageTable{Header: header, Rows: rows}
	for _, c := range humanColumns {
		t.Numeric = append(t.Numeric, c.numeric)
	}
	d.Table = t

	builders := make([]func([]result.Result) (Chart, error), 0, len(chartKinds)+2)
	for _, k := range chartKinds {
		builders = append(builders, k.build)
	}
	// The seed's claims, when the results hold runs of them (packlab sweep
	// seed-claims): a table of each claim beside the measurement, and its
	// charts.
	if claims := SeedClaims(results); len(claims) > 0 {
		header, rows := claimsTable(claims)
		d.Claims = &pageTable{Header: header, Numeric: make([]bool, len(header)), Rows: rows}
		builders = append(builders, SeedClaimsChart, LoadScalingChart)
	}
	var cs []Chart
	for _, build := range builders {
		c, err := build(results)
		if nd := (*NoDataError)(nil); errors.As(err, &nd) {
			d.Omitted = append(d.Omitted, nd.Kind+" chart: "+nd.Why)
			continue
		}
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		cs = append(cs, c)
	}

	var buf bytes.Buffer
	if err := writePage(&buf, d, cs); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteReportMarkdown is the report as markdown, for a document: its title
// (DefaultReportTitle when empty) as a heading, the results table, then the HTML report's summary lines as a list (what was
// measured, where, how memory was measured, and the notes on compact's
// information limit and on loads the kernel held up), then the seed's
// claims where the results measured them.
func WriteReportMarkdown(w io.Writer, results []result.Result, title string) error {
	return WriteJobsReportMarkdown(w, results, nil, title)
}

// WriteJobsReportMarkdown is WriteReportMarkdown of results and saved
// inspections: the results' part, if any, then a section per inspection
// with what packlab inspect --format markdown prints (InspectionText).
func WriteJobsReportMarkdown(w io.Writer, results []result.Result, inspections []InspectionJob, title string) error {
	if strings.TrimSpace(title) == "" {
		title = DefaultReportTitle
	}
	if _, err := io.WriteString(w, "# "+text.Markdown(title)+"\n\n"); err != nil {
		return err
	}
	if len(results) > 0 || len(inspections) == 0 {
		if err := WriteTable(w, results, "markdown"); err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString("\n")
		for _, line := range reportSummary(results) {
			b.WriteString("- " + text.Markdown(line) + "\n")
		}
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
		if err := WriteClaims(w, results, "markdown"); err != nil {
			return err
		}
	}
	for _, ij := range inspections {
		head := "\n## " + text.Markdown(text.Short(ij.Job.Name, text.MaxLabel)) + "\n\njob " + text.Markdown(ij.Job.ID)
		if ij.Job.StartedAt != "" {
			head += ", inspected " + text.Markdown(ij.Job.StartedAt)
		}
		if _, err := io.WriteString(w, head+"\n\n"+InspectionText(ij.Inspection, true)); err != nil {
			return err
		}
	}
	return nil
}

// inspectionsSummary is a line per saved inspection for the report's
// summary.
func inspectionsSummary(inspections []InspectionJob) []string {
	var lines []string
	for _, ij := range inspections {
		ins := ij.Inspection
		lines = append(lines, fmt.Sprintf("inspected %s: ClickHouse %s, %s (%s)", ins.Server, text.OrDash(ins.Release), text.Count(len(ins.Dictionaries), "dictionary", "dictionaries"), text.OrDash(ij.Job.StartedAt)))
	}
	return lines
}

// reportSummary says in a few lines what the results are: how many runs of
// which layouts, types, rows and shards, from which source, when, on which
// machine and how memory was measured.
func reportSummary(results []result.Result) []string {
	var asked, layouts, types, rows, shards, sources, hosts, started []string
	isolated, estimated := 0, false
	for _, r := range results {
		if r.Job != nil && r.Job.Name != "" {
			asked = addOnce(asked, text.Short(r.Job.Name, text.MaxLabel))
		}
		layouts = addOnce(layouts, text.OrDash(r.Layout))
		types = addOnce(types, text.OrDash(r.KeyType)+"/"+text.OrDash(result.ValueText(r)))
		rows = addOnce(rows, text.Rows(r.Rows))
		shards = addOnce(shards, strconv.Itoa(r.Shards))
		if r.Source != "" {
			sources = addOnce(sources, r.Source)
		}
		if r.Host.CPUs > 0 {
			hosts = addOnce(hosts, fmt.Sprintf("%s/%s, %d CPUs, %s memory, %s",
				r.Host.OS, r.Host.Arch, r.Host.CPUs, text.Bytes2(int64(r.Host.TotalMemory)), r.Host.GoVersion))
		}
		if r.StartedAt != "" {
			started = append(started, r.StartedAt)
		}
		if r.Isolated {
			isolated++
		}
		estimated = estimated || r.Estimated
	}
	runs := "runs"
	if len(results) == 1 {
		runs = "run"
	}
	var lines []string
	if len(asked) > 0 {
		lines = append(lines, "asked: "+strings.Join(asked, "; "))
	}
	lines = append(lines,
		fmt.Sprintf("%d %s of %s", len(results), runs, strings.Join(layouts, ", ")),
		fmt.Sprintf("key/value types %s · rows %s · shards %s", strings.Join(types, ", "), strings.Join(rows, ", "), strings.Join(shards, ", ")),
	)
	if len(sources) > 0 {
		lines = append(lines, "keys: "+strings.Join(sources, ", "))
	}
	if len(started) > 0 {
		slices.Sort(started)
		when := started[0]
		if last := started[len(started)-1]; last != when {
			when += " to " + last
		}
		lines = append(lines, "measured "+when)
	}
	if len(hosts) > 0 {
		lines = append(lines, "on "+strings.Join(hosts, "; "))
	}
	switch isolated {
	case len(results):
		lines = append(lines, "each run in a fresh process: RSS and peak RSS are the run's own")
	case 0:
		lines = append(lines, "runs measured in-process: RSS and peak RSS include the measuring process")
	default:
		lines = append(lines, fmt.Sprintf("%d of %d runs in a fresh process; the others in-process, so their RSS includes the measuring process", isolated, len(results)))
	}
	if estimated {
		lines = append(lines, "~ marks a bytes_allocated read from Go's own map or worked out from a C++ map's geometry, an estimate rather than a computed figure")
	}
	if slices.ContainsFunc(results, result.Result.IsReference) {
		lines = append(lines, "(C++) marks a reference map: a C++ library's map, loaded with the same keys and measured the same way in a process of its own (hatched in the charts)")
	}
	for _, n := range experiments.ResultNotes(results) {
		lines = append(lines, fault.Fields(n, fault.Plain)) // the notes name fields
	}
	return lines
}

// addOnce is list with s at its end, unless list holds s already.
func addOnce(list []string, s string) []string {
	if !slices.Contains(list, s) {
		list = append(list, s)
	}
	return list
}
