//go:build !js

package app

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestInspectClickHouse: the window's way to inspect a server; a bad URL
// is the url field's error.
func TestInspectClickHouse(t *testing.T) {
	lab, err := New(Options{ResultsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.InspectClickHouse(ClickHouseForm{URL: "localhost"}); err == nil || ErrorOf(err, "").Field != "url" {
		t.Errorf("a bad URL: %v, want the url field's error", err)
	}
	if _, err := lab.InspectClickHouse(ClickHouseForm{URL: "http://127.0.0.1:1", QueryTimeout: "soon"}); err == nil || ErrorOf(err, "").Field != "query_timeout" {
		t.Errorf("a bad timeout: %v, want the query_timeout field's error", err)
	}
	if _, err := lab.InspectClickHouse(ClickHouseForm{URL: "clickhouse://127.0.0.1:1"}); ErrorOf(err, "").Field != "clickhouse" || strings.Contains(err.Error(), "\n") {
		t.Errorf("a closed port: %v, want one line, the connection's error", err)
	}
	node := servertest.Start(t)
	node.Table(t, "src", "v UInt16", "sipHash64(number), number", 10000)
	node.Dictionary(t, "d", "src", "v UInt16", "LIFETIME(0) LAYOUT(HASHED())")
	// A user the server refuses: the Your ClickHouse tab's user field, and
	// in the Plan tab (which has no such control) its table's field,
	// naming the other tab's.
	if _, err := lab.InspectClickHouse(ClickHouseForm{URL: node.HTTPURL(), User: "nope"}); ErrorOf(err, "").Field != "user" {
		t.Errorf("a refused user: %v, want the user field's error", err)
	}
	if _, err := lab.PlanFromTable(PlanForm{From: "src", Server: ClickHouseForm{URL: node.HTTPURL(), User: "nope"}}); ErrorOf(err, "").Field != "plan_from" ||
		!strings.Contains(err.Error(), "the Your ClickHouse tab's user: nope: refused by ClickHouse") {
		t.Errorf("a plan over a table as a refused user: %v (field %s), want plan_from's error naming the other tab's user", err, ErrorOf(err, "").Field)
	}
	ins, err := lab.InspectClickHouse(ClickHouseForm{URL: " " + node.HTTPURL() + " "})
	if err != nil || len(ins.Dictionaries) != 1 || !ins.Dictionaries[0].Modelled || !strings.HasPrefix(ins.Release, "26.7") {
		t.Fatalf("%+v, %v", ins, err)
	}
	if ins.Chart.Empty || !strings.Contains(string(ins.Chart.Option), "default.d") {
		t.Errorf("the chart %+v does not draw default.d", ins.Chart)
	}
	if len(ins.Table.Rows) != 1 || ins.Table.Rows[0][0] != "default.d" || len(ins.Table.Rows[0]) != len(ins.Table.Header) ||
		len(ins.NodeLines) != 1 || len(ins.Advice) != 1 {
		t.Errorf("the tab's words: %+v %q %+v", ins.Table, ins.NodeLines, ins.Advice)
	}

	// Kept as a job: History lists it, Inspection opens the same view from
	// the saved file, DeleteInspection removes it.
	if ins.JobID == "" || ins.SaveProblem != "" {
		t.Fatalf("the inspection was not kept: job %q, %q", ins.JobID, ins.SaveProblem)
	}
	h, err := lab.History()
	if err != nil || len(h.Jobs) != 1 || !h.Jobs[0].Inspection || h.Jobs[0].ID != ins.JobID || h.Jobs[0].Face != "desktop" ||
		!strings.HasPrefix(h.Jobs[0].Summary, "inspection · ClickHouse "+ins.Release+" · 1 node · 1 dictionary · ") {
		t.Fatalf("History: %+v, %v", h.Jobs, err)
	}
	saved, err := lab.Inspection(ins.JobID)
	if err != nil || saved.Started == "" || !slices.EqualFunc(saved.Table.Rows, ins.Table.Rows, slices.Equal) || string(saved.Chart.Option) != string(ins.Chart.Option) {
		t.Errorf("the saved inspection opened: %+v, %v", saved.Table, err)
	}
	if _, err := lab.Inspection("20261201T000000.000Z-0000"); ErrorOf(err, "").Field != "history" {
		t.Errorf("an unknown job: %v", err)
	}
	if d, err := lab.DeleteInspection(ins.JobID); err != nil || !slices.Equal(d.Deleted, []string{ins.JobID}) {
		t.Errorf("DeleteInspection: %+v, %v", d, err)
	}
	if h, _ := lab.History(); len(h.Jobs) != 0 {
		t.Errorf("History after the delete: %+v", h.Jobs)
	}
}

// TestCancelInspect: Cancel stops an inspection of a server that never
// answers, long before its timeouts.
func TestCancelInspect(t *testing.T) {
	lab, err := New(Options{ResultsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mute := servertest.Mute(t)
	time.AfterFunc(300*time.Millisecond, lab.CancelInspect)
	start := time.Now()
	_, err = lab.InspectClickHouse(ClickHouseForm{URL: "clickhouse://" + mute, ConnectTimeout: "30", QueryTimeout: "30"})
	if e := ErrorOf(err, ""); e.Field != "clickhouse" || !strings.Contains(e.Message, "cancelled") || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled after 0.3 s: %v after %.1f s, want the clickhouse field's cancel at once", err, time.Since(start).Seconds())
	}
}

// TestInspectTimeoutWords: a server that never answers is the
// clickhouse field's timeout, naming the form's timeout that ended it.
func TestInspectTimeoutWords(t *testing.T) {
	lab, err := New(Options{ResultsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	mute := servertest.Mute(t)
	_, err = lab.InspectClickHouse(ClickHouseForm{URL: "clickhouse://" + mute, ConnectTimeout: "1", QueryTimeout: "30"})
	if e := ErrorOf(err, ""); e.Field != "clickhouse" || !strings.HasSuffix(e.Message, "timeout: no answer in 1s (the Connect timeout)") {
		t.Errorf("a server that never answers: %v, want the clickhouse field's timeout naming the Connect timeout", err)
	}
}

// TestVerifyPlan: the Plan tab builds its ClickHouse answer in ClickHouse
// itself, every attribute of it, reporting under PlanVerificationID; its
// lines put ClickHouse's figures beside the plan's model, and the run is
// kept in the history. A bad form is its field's error.
func TestVerifyPlan(t *testing.T) {
	l, ev := newLab(t)
	lim, _ := l.Limits()
	if lim.PlanVerificationID != PlanVerificationID {
		t.Errorf("limits give the verification's id as %q", lim.PlanVerificationID)
	}
	if _, err := l.VerifyPlan(PlanForm{Rows: "0"}); ErrorOf(err, "").Field != "plan_rows" {
		t.Errorf("rows 0: %v, want the rows field's error", err)
	}
	if !lim.ClickHouse.Available {
		t.Skipf("ClickHouse's layouts are unavailable here: %s", lim.ClickHouse.Note)
	}
	v, err := l.VerifyPlan(PlanForm{Rows: "2e5", Key: "UInt64", Attributes: []string{"UInt16", "Nullable(String)"}})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(v.Lines, "\n")
	if !strings.Contains(v.Title, "at 200K rows, built in ClickHouse") || !strings.Contains(all, "the plan's model of the same dictionary") || v.ResultID == "" {
		t.Fatalf("VerifyPlan: %q, %q, result %q", v.Title, v.Lines, v.ResultID)
	}
	ev.mu.Lock()
	progress := slices.ContainsFunc(ev.all, func(e event) bool {
		p, ok := e.data.(Progress)
		return e.name == EventProgress && ok && p.ID == PlanVerificationID
	})
	ev.mu.Unlock()
	if !progress {
		t.Error("no progress under the verification's id")
	}
	h, err := l.History()
	kept := err == nil && slices.ContainsFunc(h.Jobs, func(j HistoryJob) bool {
		return strings.HasPrefix(j.Name, "plan verification ch_") && slices.ContainsFunc(j.Rows, func(r TableRow) bool { return r.ID == v.ResultID })
	})
	if !kept {
		t.Errorf("the verification's run %s is not a job of the history: %v", v.ResultID, err)
	}
}
