package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
)

func fxInspection() InspectionJob {
	ins := &server.Inspection{Server: "clickhouse://ch1:9000", Release: "26.7.2.1", Seconds: 0.2,
		Nodes: []server.Node{{Name: "ch1:9000", MemoryLimitBytes: 8 << 30, MemoryLimitFrom: "max_server_memory_usage", TrackedBytes: 1 << 30}},
		Dictionaries: []server.Dictionary{
			{Node: "ch1:9000", Database: "default", Name: "<script>x</script>", Layout: "LAYOUT(HASHED())", Status: "LOADED", KeyNames: []string{"id"}, KeyTypes: []string{"UInt64"},
				AttributeNames: []string{"v"}, AttributeTypes: []string{"UInt16"}, ElementCount: 1_000_000, BytesAllocated: 33 << 20, ModelBytes: 33 << 20, RealBytes: 33 << 20,
				ReloadPeakBytes: 90 << 20, ServerMemoryLimitBytes: 8 << 30, Modelled: true, Findings: []string{"SPARSE_HASHED holds the same rows in 21 MiB"},
				Advice: &server.Advice{Layout: "LAYOUT(SPARSE_HASHED())", DDL: "CREATE OR REPLACE DICTIONARY default.`<script>x</script>` ... LAYOUT(SPARSE_HASHED())", SteadyBytes: 21 << 20, ReloadPeakBytes: 56 << 20, Why: "less memory"},
				Verification: &server.Verification{Server: "clickhouse://ch1:9000", Release: "26.7.2.1", Node: "ch1:9000", Database: "packlab_verify_0a", Layout: "LAYOUT(SPARSE_HASHED())",
					ElementCount: 1_000_000, BytesAllocated: 22 << 20, ModelBytes: 22 << 20, Dropped: true, Of: "default.<script>x</script>", OfLayout: "LAYOUT(HASHED())", OfBytesAllocated: 33 << 20}},
			{Node: "ch1:9000", Database: "default", Name: "c", Layout: "LAYOUT(CACHE(SIZE_IN_CELLS 1000))", Status: "LOADED", ElementCount: 10, BytesAllocated: 4096, NotModelled: "CACHE is not modelled",
				VerifyProblem: "not modelled (CACHE is not modelled): there is no advice to build"},
		}}
	return InspectionJob{Job: result.NewJob(ins.JobName(), result.FaceCLI, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)), Inspection: ins}
}

// TestInspectionReport: a report of an inspection alone has its section
// (the table, findings, advice with its DDL, the chart) and no results'
// parts, every name the server gave escaped; with results, both; the
// Markdown is inspect's own text.
func TestInspectionReport(t *testing.T) {
	ij := fxInspection()
	var b bytes.Buffer
	if err := WriteJobsReport(&b, nil, []InspectionJob{ij}, ""); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<h2>inspect clickhouse://ch1:9000 (2 dictionaries, 1 advice built)</h2>", "default.&lt;script&gt;x&lt;/script&gt;", "1,000,000", "33.0 MiB", "90.0 MiB", "8.0 GiB",
		"finding: SPARSE_HASHED holds the same rows in 21 MiB", "CREATE OR REPLACE DICTIONARY", "not modelled: CACHE is not modelled", `id="packlab-server-dictionaries-inspection-1"`,
		"verified: verified on ClickHouse 26.7.2.1", "not verified: not modelled (CACHE is not modelled): there is no advice to build", "verified: beside default.&lt;script&gt;x&lt;/script&gt; as it serves (LAYOUT(HASHED())): bytes_allocated 23,068,672 against its 34,603,008 (-33.3 %)"} {
		if !strings.Contains(html, want) {
			t.Errorf("the inspection's report lacks %q", want)
		}
	}
	if strings.Contains(html, "against 0 B") { // the fixture's verification keeps no real bytes of its dictionary
		t.Error("a verification compares its memory with a dictionary's real bytes it does not know")
	}
	if strings.Contains(html, "<script>x</script>") || strings.Contains(html, "<h2>Results</h2>") || strings.Contains(html, "<h2>Charts</h2>") {
		t.Error("the inspection's report pastes a name unescaped, or has the results' parts")
	}
	// One node: no column of its name and limit (they are in its line), and
	// a layout may break after its parentheses, so the table fits 1280 px.
	if strings.Contains(html, "<th>node</th>") || strings.Contains(html, "<th>server&#39;s limit</th>") || !strings.Contains(html, "<td>LAYOUT(<wbr>CACHE(<wbr>SIZE_IN_CELLS 1000))</td>") {
		t.Error("the one node's table has its node and limit columns, or a layout without break opportunities")
	}
	b.Reset()
	if err := WriteJobsReport(&b, fxResults(), []InspectionJob{ij}, ""); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, "<h2>Results</h2>") || !strings.Contains(s, "<h2>Charts</h2>") || !strings.Contains(s, "<h2>inspect clickhouse://ch1:9000") {
		t.Error("a report of runs and an inspection lacks one of them")
	}
	b.Reset()
	if err := WriteJobsReportMarkdown(&b, nil, []InspectionJob{ij}, ""); err != nil {
		t.Fatal(err)
	}
	if md := b.String(); !strings.Contains(md, "## inspect clickhouse://ch1:9000") || !strings.Contains(md, InspectionText(ij.Inspection, true)) || strings.Contains(md, " runs of ") {
		t.Errorf("the Markdown of an inspection:\n%s", md)
	}
}
