package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

func stored(id, started string, job *result.Job) result.Result {
	return result.Result{ID: id, StartedAt: started, Layout: strings.Split(id, "-")[1], KeyType: "UInt64", ValueType: "UInt16", Rows: 1000, Job: job}
}

// TestJobsGrouping: results group by their job, newest job first, each
// job's results in the order measured; results with no job group by time.
func TestJobsGrouping(t *testing.T) {
	a := result.NewJob("run packed,hashed 1e3", result.FaceCLI, time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	b := result.NewJob("sweep types", result.FaceDesktop, time.Date(2026, 12, 1, 11, 0, 0, 0, time.UTC))
	rs := []result.Result{
		stored("20261201T110005.000Z-hashed-0004", "2026-12-01T11:00:04Z", &b),
		stored("20261201T100002.000Z-hashed-0002", "2026-12-01T10:00:01Z", &a),
		stored("20261201T100001.000Z-packed-0001", "2026-12-01T10:00:00Z", &a),
		// Saved before jobs: two back to back, then one after a pause.
		stored("20200101T000010.000Z-gomap-0011", "2020-01-01T00:00:05Z", nil),
		stored("20200101T000004.000Z-packed-0010", "2020-01-01T00:00:00Z", nil),
		stored("20200101T001000.000Z-sparse-0012", "2020-01-01T00:09:00Z", nil),
	}
	jobs := Jobs(rs)
	var got []string
	for _, j := range jobs {
		got = append(got, j.Name+": "+strings.Join(j.ResultIDs(), " "))
	}
	want := []string{
		"sweep types: 20261201T110005.000Z-hashed-0004",
		"run packed,hashed 1e3: 20261201T100001.000Z-packed-0001 20261201T100002.000Z-hashed-0002",
		"saved before jobs: sparse · UInt64→UInt16 · 1K rows: 20200101T001000.000Z-sparse-0012",
		"saved before jobs: packed, gomap · UInt64→UInt16 · 1K rows: 20200101T000004.000Z-packed-0010 20200101T000010.000Z-gomap-0011",
	}
	if !slices.Equal(got, want) {
		t.Errorf("jobs\n got %q\nwant %q", got, want)
	}
	if !jobs[2].Legacy || jobs[1].Legacy || jobs[2].ID != "no-job-20200101T001000.000Z-sparse-0012" || jobs[0].Face != result.FaceDesktop {
		t.Errorf("jobs %+v", jobs)
	}
	if d := DescribeJob(jobs[1]); d != "2 results · packed, hashed · UInt64→UInt16 · 1K rows" {
		t.Errorf("DescribeJob = %q", d)
	}
}

// TestStoreJobs: a saved job is found by its id and deleted whole; results
// saved before jobs load beside it; an unknown job is named.
func TestStoreJobs(t *testing.T) {
	s, err := OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	job := result.NewJob("run packed,hashed 1e3", result.FaceCLI, time.Now())
	for _, r := range []result.Result{
		stored("20261201T100001.000Z-packed-0001", "2026-12-01T10:00:00Z", &job),
		stored("20261201T100002.000Z-hashed-0002", "2026-12-01T10:00:01Z", &job),
		stored("20200101T000004.000Z-packed-0010", "2020-01-01T00:00:00Z", nil),
	} {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	jobs, problems, err := s.Jobs(ctx)
	if err != nil || len(problems) != 0 || len(jobs) != 2 || jobs[0].ID != job.ID || len(jobs[0].Results) != 2 || *jobs[0].Results[0].Job != job {
		t.Fatalf("jobs %+v, %v, %v", jobs, problems, err)
	}
	deleted, err := s.DeleteJob(ctx, job.ID)
	if err != nil || len(deleted) != 2 {
		t.Fatalf("DeleteJob: %v, %v", deleted, err)
	}
	if left, _ := filepath.Glob(filepath.Join(s.Dir, "*.json")); len(left) != 1 || filepath.Base(left[0]) != "20200101T000004.000Z-packed-0010.json" {
		t.Errorf("after deleting the job the folder holds %v, want the old result alone", left)
	}
	var fe *fault.FieldError
	if _, err := s.DeleteJob(ctx, job.ID); !errors.As(err, &fe) || !strings.Contains(err.Error(), "job "+job.ID+": no such job in "+s.Dir) {
		t.Errorf("deleting it again: %v", err)
	}
	if _, err := s.DeleteJob(ctx, "no-job-20200101T000004.000Z-packed-0010"); err != nil {
		t.Errorf("deleting a job saved before jobs: %v", err)
	}
}

// TestTestsKeepOutOfTheUsersHistory: a test program cannot save into the
// person's own results folder (its runs would show in their History).
func TestTestsKeepOutOfTheUsersHistory(t *testing.T) {
	home := filepath.Join(string(filepath.Separator), "home", "someone")
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	for _, dir := range []string{"", filepath.Join(home, ".local", "share", "packlab", "results")} {
		_, err := OpenStore(dir)
		if err == nil || !strings.Contains(err.Error(), "a test program may not save into the user's results folder") {
			t.Errorf("OpenStore(%q) in a test: %v, want a refusal", dir, err)
		}
	}
	if _, err := os.Stat(home); err == nil {
		t.Errorf("the refusal created %s", home)
	}
	// Under the temporary folder (XDG_DATA_HOME set by a test) it is a
	// test's own.
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	if _, err := OpenStore(""); err != nil {
		t.Errorf("OpenStore with XDG_DATA_HOME under %s: %v", os.TempDir(), err)
	}
}
