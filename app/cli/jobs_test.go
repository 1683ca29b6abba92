package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/app/flags"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
)

// markdownRows is the table rows of a markdown report.
func markdownRows(md string) []string {
	var rows []string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| settings") {
			rows = append(rows, line)
		}
	}
	return rows
}

// TestReportByJob is issue 13's target through the command line: after a
// types sweep and one run, `packlab report` reports the run alone; --list
// lists the two jobs, newest first; --job, --all and --since pick others;
// results saved before jobs existed still load, as jobs grouped by time.
func TestReportByJob(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := packlab(t, "sweep", "types", "--layout", "packed", "--rows", "1e3", "--in-process", "--format", "csv", "--results", dir); err != nil {
		t.Fatal(err)
	}
	run := packlabResults(t, 2, "run", "--layout", "packed,hashed", "--rows", "1e4", "--in-process", "--format", "json", "--results", dir)

	// The report, with no flags: the run's two results and nothing else.
	md, stderr, err := packlab(t, "report", "--results", dir, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	rows := markdownRows(md)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "| packed SHARDS 1 MLF 0.5 | 10,000 |") || !strings.HasPrefix(rows[1], "| hashed SHARDS 1 MLF 0.5 | 10,000 |") {
		t.Errorf("report with no flags has %d rows, want the run's packed and hashed at 10,000 rows:\n%s", len(rows), md)
	}
	if !strings.Contains(stderr, "reported the last job") {
		t.Errorf("report with no flags does not say it reported the last job: %q", stderr)
	}

	// --list: two jobs, the run first.
	list, _, err := packlab(t, "report", "--results", dir, "--list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 2 {
		t.Fatalf("report --list has %d lines, want 2 jobs:\n%s", len(lines), list)
	}
	runJob := *run[0].Job
	if !strings.HasPrefix(lines[0], runJob.ID+"  ") || !strings.HasSuffix(lines[0], "command line      2 results  run packed,hashed 1e4") {
		t.Errorf("report --list line 1: %q, want the run's job %s, 2 results, run packed,hashed 1e4", lines[0], runJob.ID)
	}
	if !strings.HasSuffix(lines[1], "command line    225 results  sweep types packed 1e3") {
		t.Errorf("report --list line 2: %q, want the sweep's 225 results", lines[1])
	}
	sweepID, _, _ := strings.Cut(lines[1], "  ")

	for _, c := range []struct {
		args  []string
		rows  int
		first string
	}{
		{[]string{"--job", sweepID}, 225, "| packed UInt8/UInt8 SHARDS 1 MLF 0.5 | 256 |"},
		{[]string{"--job", runJob.ID + "," + sweepID}, 227, "| packed UInt64/UInt16 10K rows SHARDS 1 MLF 0.5 | 10,000 |"}, // in the order given
		{[]string{"--all"}, 227, "| packed UInt8/UInt8 1K rows SHARDS 1 MLF 0.5 | 256 |"},                                  // in the order they were made
		{[]string{"--since", "1h"}, 227, "| packed UInt8/UInt8 1K rows"},
		{[]string{"--since", time.Now().Add(-time.Hour).Format("2006-01-02T15:04")}, 227, ""},
	} {
		md, _, err := packlab(t, append([]string{"report", "--results", dir, "--format", "markdown"}, c.args...)...)
		if rows := markdownRows(md); err != nil || len(rows) != c.rows || !strings.HasPrefix(rows[0], c.first) {
			t.Errorf("report %s: %v, %d rows (first %q), want %d starting %q", strings.Join(c.args, " "), err, len(rows), rows[0], c.rows, c.first)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--job", "20200101T000000.000Z-0000"}, "--job 20200101T000000.000Z-0000: no such job in " + dir + " (allowed: job ids listed by 'packlab report --list')"},
		{[]string{"--since", "2099-01-01"}, "--since 2099-01-01: no job started since 2099-01-01 00:00:00 in " + dir},
		{[]string{"--all", "--ids", run[0].ID}, "--all: cannot be combined with --ids " + run[0].ID},
	} {
		_, _, err := packlab(t, append([]string{"report", "--results", dir}, c.args...)...)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("report %s: %v (exit %d), want %q, exit 2", strings.Join(c.args, " "), err, exitCode(err), c.want)
		}
	}

	// Results saved before jobs existed (no "job" in the file) still load:
	// two measured back to back are one job, one an hour later another.
	legacy := func(id, started string) {
		r := oneResult(id, strings.Split(id, "-")[1])
		r.StartedAt = started
		var m map[string]any
		b, _ := json.Marshal(r)
		_ = json.Unmarshal(b, &m)
		delete(m, "job") // as files were written before jobs
		b, _ = json.Marshal(m)
		if err := os.WriteFile(filepath.Join(dir, id+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	legacy("20200101T100001.500Z-hashed-0001", "2020-01-01T10:00:00Z")
	legacy("20200101T100003.000Z-packed-0002", "2020-01-01T10:00:02Z")
	legacy("20200101T110000.000Z-sparse-0003", "2020-01-01T10:59:59Z")
	list, stderr, err = packlab(t, "report", "--results", dir, "--list", "--all")
	if err != nil || stderr != "" {
		t.Fatalf("report --list --all with results saved before jobs: %v, %q", err, stderr)
	}
	mustSay(t, "report --list --all", list,
		"no-job-20200101T110000.000Z-sparse-0003  "+localTime("2020-01-01T10:59:59Z")+"  -                 1 result   saved before jobs: sparse · UInt64→UInt16 · 1K rows\n    20200101T110000.000Z-sparse-0003  sparse",
		"no-job-20200101T100001.500Z-hashed-0001  "+localTime("2020-01-01T10:00:00Z")+"  -                 2 results  saved before jobs: hashed, packed · UInt64→UInt16 · 1K rows\n    20200101T100001.500Z-hashed-0001  hashed",
	)
	if lines := strings.Split(strings.TrimSpace(list), "\n"); !strings.HasPrefix(lines[0], runJob.ID) {
		t.Errorf("the newest job is not listed first:\n%s", list)
	}
	md, _, err = packlab(t, "report", "--results", dir, "--format", "markdown", "--job", "no-job-20200101T100001.500Z-hashed-0001")
	if rows := markdownRows(md); err != nil || len(rows) != 2 {
		t.Errorf("report of a job saved before jobs: %v, %d rows:\n%s", err, len(rows), md)
	}
}

// TestReportSkipsTheCalibration: a plan's calibration that ran after the
// user's last run is not what `packlab report` reports by default (issue
// 28: it picked the calibration instead of the run just made); --job
// still reports it.
func TestReportSkipsTheCalibration(t *testing.T) {
	dir := t.TempDir()
	run := packlabResults(t, 1, "run", "--layout", "packed", "--rows", "1e4", "--in-process", "--format", "json", "--results", dir)
	// A calibration job started after the run, as `packlab plan
	// --calibrate` makes one.
	cal := run[0]
	job := result.NewJob(planner.CalibrationJobName([]config.Config{{Rows: 2_000_000}}), "", time.Now().Add(time.Second))
	cal.Job, cal.ID = &job, job.ID+"-r1"
	if err := (&store.Store{Dir: dir}).Save(cal); err != nil {
		t.Fatal(err)
	}

	md, stderr, err := packlab(t, "report", "--results", dir, "--format", "markdown")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, run[0].Job.Name) || strings.Contains(md, "plan calibration") {
		t.Errorf("report with no flags does not report the run %q:\n%s", run[0].Job.Name, md)
	}
	if !strings.Contains(stderr, "calibration is reported only with --job") {
		t.Errorf("report does not say it skipped the calibration: %q", stderr)
	}
	md, _, err = packlab(t, "report", "--results", dir, "--format", "markdown", "--job", job.ID)
	if err != nil || !strings.Contains(md, "plan calibration") {
		t.Errorf("report --job %s: %v\n%s", job.ID, err, md)
	}
}

// TestHistoryClear: `packlab history clear` deletes every saved result of
// the folder after asking (or with --yes), refuses to delete unasked when
// there is no terminal to ask on, and leaves other files alone.
func TestHistoryClear(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := packlab(t, "run", "--layout", "packed,hashed", "--rows", "1e4", "--in-process", "--format", "csv", "--results", dir); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out, errw strings.Builder
	err := cmdHistory(ctx, []string{"clear", "--results", dir}, strings.NewReader("y\n"), &out, &errw)
	var ue *flags.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "would delete 2 result(s) of 1 job(s) in "+dir+"; add --yes") {
		t.Fatalf("clear without --yes and no terminal: %v", err)
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(n) != 2 {
		t.Fatalf("%d results left after a refused clear, want 2", len(n))
	}
	if _, stderr, err := packlab(t, "history", "clear", "--yes", "--results", dir); err != nil ||
		!strings.Contains(stderr, "deleted 2 result(s) of 1 job(s) from "+dir) {
		t.Fatalf("history clear --yes: %v, %q", err, stderr)
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(n) != 0 {
		t.Errorf("%d results left after clear", len(n))
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("clear removed a file that is not a result: %v", err)
	}
	if _, stderr, err := packlab(t, "history", "clear", "--yes", "--results", dir); err != nil || !strings.Contains(stderr, "nothing to clear") {
		t.Errorf("clearing an empty history: %v, %q", err, stderr)
	}
	if _, _, err := packlab(t, "history", "wipe"); err == nil || !strings.Contains(err.Error(), `"wipe" after history (allowed: list, clear)`) {
		t.Errorf("history wipe: %v", err)
	}
}

// zeros is an endless input of NUL bytes, as /dev/zero is.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestPromptGivesUp: history clear's prompt gives up, deleting nothing, on
// input that is no terminal though a device (/dev/zero is refused as /dev/null
// is, not read forever), on a line that is no answer (read no further than
// maxAnswer bytes), at the end of the input, and on a signal (issue 48).
func TestPromptGivesUp(t *testing.T) {
	for _, dev := range []string{"/dev/zero", "/dev/null"} {
		f, err := os.Open(dev)
		if err != nil {
			t.Skip(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmdHistoryClearAsked(t, f) }()
		select {
		case err := <-done:
			var ue *flags.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "add --yes") {
				t.Errorf("history clear reading %s: %v, want the refusal that says add --yes", dev, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("history clear reading %s did not end within 10 s", dev)
		}
		f.Close()
	}
	ctx, cancel := context.WithCancel(context.Background())
	for _, in := range []io.Reader{zeros{}, strings.NewReader(""), strings.NewReader("n\n"), strings.NewReader("maybe")} {
		a, err := readAnswer(ctx, in)
		if err != nil || len(a) > maxAnswer+1 || a == "y" {
			t.Errorf("readAnswer: %q (%d bytes), %v; want no answer", a[:min(len(a), 8)], len(a), err)
		}
	}
	r, w := io.Pipe() // nothing ever comes: only the signal ends the wait
	defer w.Close()
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if a, err := readAnswer(ctx, r); err == nil {
		t.Errorf("readAnswer after a signal: %q, nil; want the signal's error", a)
	}
}

// cmdHistoryClearAsked runs history clear without --yes on a folder of one
// result, stdin in.
func cmdHistoryClearAsked(t *testing.T, in *os.File) error {
	dir := t.TempDir()
	if _, _, err := packlab(t, "run", "--layout", "packed", "--rows", "1e3", "--in-process", "--format", "csv", "--results", dir); err != nil {
		return err
	}
	var out, errw strings.Builder
	return cmdHistory(context.Background(), []string{"clear", "--results", dir}, in, &out, &errw)
}

// TestHistoryClearWhileSaving: history clear refuses, deleting nothing,
// while another packlab's job saves into the folder (it deleted a running
// sweep's results, issue 48); a mark left by a process that is gone does
// not stop it.
func TestHistoryClearWhileSaving(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := packlab(t, "run", "--layout", "packed", "--rows", "1e3", "--in-process", "--format", "csv", "--results", dir); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "30") // another process, its job saving
	if err := other.Start(); err != nil {
		t.Skip(err)
	}
	defer other.Process.Kill()
	mark := filepath.Join(dir, fmt.Sprintf(".packlab-job-%d", other.Process.Pid))
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := packlab(t, "history", "clear", "--yes", "--results", dir)
	if err == nil || !strings.Contains(err.Error(), "a job is saving into "+dir) {
		t.Errorf("history clear while a job saves: %v", err)
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(n) != 1 {
		t.Errorf("%d results left, want the 1 saved", len(n))
	}
	other.Process.Kill()
	other.Wait()
	if _, stderr, err := packlab(t, "history", "clear", "--yes", "--results", dir); err != nil || !strings.Contains(stderr, "deleted 1 result") {
		t.Errorf("history clear after the job's process is gone: %v, %q", err, stderr)
	}
}
