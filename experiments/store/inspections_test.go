package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/server"
)

func sampleInspection() *server.Inspection {
	return &server.Inspection{Server: "clickhouse://127.0.0.1:9000", Release: "26.7.1.1", Nodes: []server.Node{{Name: "127.0.0.1:9000", MemoryLimitBytes: 1 << 30}},
		Dictionaries: []server.Dictionary{{Node: "127.0.0.1:9000", Database: "default", Name: "d", Layout: "LAYOUT(HASHED())", ElementCount: 100, BytesAllocated: 4096,
			Findings: []string{"SPARSE_HASHED holds the same rows in less"}}}}
}

// TestInspectionJobs: a saved inspection is a job of its own beside the
// jobs of runs, newest first, found and deleted by its id; List (every
// reader of results, old ones included) does not see it; a corrupt or
// foreign file in its folder is a problem line, not a failure.
func TestInspectionJobs(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	r := sampleResult("20261201T100000.000Z-hashed-0001")
	rj := result.NewJob("run hashed", result.FaceCLI, t0)
	r.Job = &rj
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	ins := sampleInspection()
	ij := result.NewJob(ins.JobName(), result.FaceCLI, t0.Add(time.Minute))
	if ij.Name != "inspect clickhouse://127.0.0.1:9000 (1 dictionary)" {
		t.Errorf("job name %q", ij.Name)
	}
	if err := s.SaveInspection(ij, ins); err != nil {
		t.Fatal(err)
	}
	if results, problems, err := s.List(); err != nil || len(problems) != 0 || len(results) != 1 {
		t.Errorf("List with an inspection saved: %d results, problems %v, %v", len(results), problems, err)
	}
	jobs, problems, err := s.Jobs(context.Background())
	if err != nil || len(problems) != 0 || len(jobs) != 2 {
		t.Fatalf("Jobs: %d, %v, %v", len(jobs), problems, err)
	}
	if jobs[0].ID != ij.ID || jobs[0].Inspection == nil || len(jobs[0].Results) != 0 || jobs[1].ID != rj.ID {
		t.Errorf("Jobs, newest first: %s (inspection %v), %s", jobs[0].ID, jobs[0].Inspection != nil, jobs[1].ID)
	}
	if jobs[0].Inspection.Dictionaries[0].BytesAllocated != 4096 || jobs[0].Name != ij.Name || jobs[0].Face != result.FaceCLI {
		t.Errorf("the inspection read back: %+v", jobs[0])
	}
	if last, _ := LastAsked(jobs); last.ID != ij.ID {
		t.Errorf("LastAsked = %s, want the inspection, a job a person asked for", last.ID)
	}
	if d := DescribeJob(jobs[0]); d != "inspection · ClickHouse 26.7.1.1 · 1 node · 1 dictionary · 1 finding" {
		t.Errorf("DescribeJob = %q", d)
	}
	if !isSavedResult(s.inspectionPath(ij.ID)) {
		t.Error("a report's --out could replace a saved inspection")
	}

	// Corrupt, foreign and torn files in the inspections' folder.
	dir := filepath.Join(s.Dir, InspectionsFolder)
	for name, body := range map[string]string{
		"torn.json":    `{"kind":"inspection","job":{"id":"torn"},"inspection":{"server":`,
		"result.json":  `{"id":"x","layout":"hashed","rows":10}`,
		"renamed.json": `{"kind":"inspection","job":{"id":"other"},"inspection":{"server":"x"}}`,
		"notes.txt":    "hello",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	jobs, problems, err = s.Jobs(context.Background())
	if err != nil || len(jobs) != 2 || len(problems) != 3 {
		t.Fatalf("Jobs beside bad files: %d jobs, problems %v, %v", len(jobs), problems, err)
	}
	for _, want := range []string{"torn.json: not an inspection file", "result.json: not an inspection file", `renamed.json: its job id "other" is not its file's name`} {
		if !strings.Contains(fmtErrors(problems), want) {
			t.Errorf("problems %v do not say %q", problems, want)
		}
	}

	if ids, err := s.DeleteJob(context.Background(), ij.ID); err != nil || len(ids) != 0 {
		t.Fatalf("DeleteJob of the inspection: %v, %v", ids, err)
	}
	if _, err := os.Stat(s.inspectionPath(ij.ID)); !os.IsNotExist(err) {
		t.Errorf("the inspection's file is left: %v", err)
	}
	if _, err := s.FindJob(context.Background(), ij.ID); err == nil {
		t.Error("the deleted inspection is still a job")
	}
	if err := s.SaveInspection(result.Job{ID: "../x"}, ins); err == nil {
		t.Error("an inspection saved under the id ../x")
	}
}

func fmtErrors(errs []error) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString(e.Error() + "\n")
	}
	return b.String()
}
