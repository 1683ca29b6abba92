//go:build unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/report"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/store"
)

// saveResult writes one result file as the store does.
func saveResult(t *testing.T, dir string, r result.Result) {
	t.Helper()
	s, err := store.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
}

func oneResult(id, layout string) result.Result {
	return result.Result{ID: id, Layout: layout, KeyType: "UInt64", ValueType: "UInt16", Rows: 1000, Shards: 1,
		ElementCount: 1000, BucketCount: 2048, BytesAllocated: 32768, Timeline: []result.TimelinePoint{{}}}
}

// packlabWithin runs the command line and fails the test if it has not
// returned within limit (the old report hung in open(2) on a FIFO).
func packlabWithin(t *testing.T, limit time.Duration, ctx context.Context, args ...string) (string, string, error) {
	t.Helper()
	type out struct {
		o, e string
		err  error
	}
	done := make(chan out, 1)
	go func() {
		var o, e strings.Builder
		err := runContext(ctx, args, &o, &e)
		done <- out{o.String(), e.String(), err}
	}()
	select {
	case r := <-done:
		return r.o, r.e, r.err
	case <-time.After(limit):
		t.Fatalf("packlab %q did not return within %v", args, limit)
	}
	return "", "", nil
}

// TestReportFolderContents: a results folder holding a FIFO named x.json, a
// link z.json to /dev/zero and an oversized file is reported on at once:
// each is skipped with a line saying what it is, the good result is
// reported, and nothing hangs or runs out of memory.
func TestReportFolderContents(t *testing.T) {
	dir := t.TempDir()
	saveResult(t, dir, oneResult("20261201T100000.000Z-hashed-0001", "hashed"))
	if err := syscall.Mkfifo(filepath.Join(dir, "x.json"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "z.json")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(store.MaxResultBytes + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	big.Close()
	stdout, stderr, err := packlabWithin(t, 10*time.Second, context.Background(), "report", "--list", "--all", "--results", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "20261201T100000.000Z-hashed-0001  hashed") {
		t.Errorf("the good result is not listed:\n%s", stdout)
	}
	for _, want := range []string{
		"packlab: skipped result " + filepath.Join(dir, "x.json") + ": is a named pipe (FIFO), not a regular file",
		"packlab: skipped result " + filepath.Join(dir, "z.json") + ": is a character device, not a regular file",
		"packlab: skipped result " + filepath.Join(dir, "big.json") + ": is 16.0 MiB, more than the 16.0 MiB a result file may be",
	} {
		if !strings.Contains(stderr, want+"\n") {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// --ids names the FIFO's id: refused the same way, at once.
	_, _, err = packlabWithin(t, 10*time.Second, context.Background(), "report", "--ids", "x", "--results", dir)
	if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") {
		t.Errorf("report --ids x: %v", err)
	}
	// Ctrl-C: a cancelled report stops with exit code 130 and writes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(t.TempDir(), "r.html")
	_, _, err = packlabWithin(t, 10*time.Second, ctx, "report", "--results", dir, "--out", out)
	if !errors.Is(err, fault.ErrCancelled) || exitCode(err) != 130 {
		t.Errorf("cancelled report: %v (exit %d), want cancelled, 130", err, exitCode(err))
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a cancelled report wrote %s: %v", out, err)
	}
}

// TestReportOut: --out (with --force, TestReportOutIsNeverASurprise says
// why) replaces a regular file through a temporary file
// (mode 0644 for a new one, the old mode kept), writes through a symbolic
// link (the link stays), writes a device directly (it stays a device), and
// refuses a folder, a name ending in / and a FIFO nobody reads, leaving no
// temporary file behind.
func TestReportOut(t *testing.T) {
	results := t.TempDir()
	saveResult(t, results, oneResult("20261201T100000.000Z-packed-0001", "packed"))
	dir := t.TempDir()
	report := func(out string) error {
		_, _, err := packlabWithin(t, 20*time.Second, context.Background(), "report", "--results", results, "--format", "markdown", "--out", out, "--force")
		return err
	}
	mustReport := func(out string) {
		t.Helper()
		if err := report(out); err != nil {
			t.Fatal(err)
		}
	}
	isReport := func(path string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(b), "| packed SHARDS 1") {
			t.Errorf("%s is not the report: %v\n%s", path, err, b)
		}
	}

	fresh := filepath.Join(dir, "new.md")
	mustReport(fresh)
	isReport(fresh)
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o644 {
		t.Errorf("a new report has mode %v, want 0644", st.Mode().Perm())
	}
	old := filepath.Join(dir, "old.md")
	os.WriteFile(old, []byte("old"), 0o600)
	mustReport(old)
	isReport(old)
	if st, _ := os.Stat(old); st.Mode().Perm() != 0o600 {
		t.Errorf("a replaced report has mode %v, want the old 0600", st.Mode().Perm())
	}

	link := filepath.Join(dir, "link.md")
	target := filepath.Join(t.TempDir(), "target.md")
	os.WriteFile(target, []byte("old"), 0o644)
	os.Symlink(target, link)
	mustReport(link)
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("--out on a symbolic link replaced the link: %v %v", st.Mode(), err)
	}
	isReport(target)

	// A device is written, never replaced. The test makes its own node of
	// /dev/null's device (1, 3) rather than risk the system's.
	null := filepath.Join(t.TempDir(), "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Logf("no device node of our own (%v): writing /dev/stdout's kind is not checked", err)
	} else {
		mustReport(null)
		if st, err := os.Stat(null); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("--out on a device replaced it: mode %v, %v", st.Mode(), err)
		}
	}

	for _, c := range []struct{ out, want string }{
		{dir, "--out " + dir + ": is a folder, which a report would replace"},
		{dir + "/", "--out " + dir + "/: names a folder"},
		{filepath.Join(dir, "missing", "r.md"), "--out " + filepath.Join(dir, "missing", "r.md") + ": cannot write in its folder: no such file or directory"},
	} {
		if err := report(c.out); err == nil || !strings.HasPrefix(err.Error(), c.want) || exitCode(err) != 2 {
			t.Errorf("--out %s: %v (exit %d), want %q, exit 2", c.out, err, exitCode(err), c.want)
		}
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err == nil {
		if err := report(fifo); err == nil || !strings.Contains(err.Error(), "is a named pipe that no program is reading") {
			t.Errorf("--out on a FIFO with no reader: %v", err)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestTerminalEscapes: text from a result file (a crafted layout or type
// name) reaches a terminal with its control characters written out, and a
// markdown table with its markup escaped.
func TestTerminalEscapes(t *testing.T) {
	dir := t.TempDir()
	r := oneResult("20261201T100000.000Z-hashed-0001", "hashed\x1b]0;pwned\x07\x1b[2J<img src=x onerror=alert(1)>|`x`")
	b, _ := json.Marshal(r)
	os.WriteFile(filepath.Join(dir, r.ID+".json"), b, 0o644)

	list, _, err := packlab(t, "report", "--list", "--all", "--results", dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(list, "\x1b\x07") || !strings.Contains(list, `hashed\x1b]0;pwned\x07\x1b[2J<img`) {
		t.Errorf("report --list printed control characters raw: %q", list)
	}
	md, _, err := packlab(t, "report", "--format", "markdown", "--results", dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(strings.ReplaceAll(md, "\\`", ""), "\x1b\x07<>`") || !strings.Contains(md, "| hashed\\x1b]0;pwned\\x07\\x1b[2J&lt;img src=x onerror=alert(1)&gt;\\|\\`x\\` SHARDS 1") {
		t.Errorf("markdown is not escaped:\n%s", md)
	}
	// The terminal table (run's default format) shows the same cells.
	var table strings.Builder
	if err := report.WriteTable(&table, []result.Result{r}, "table"); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(table.String(), "\x1b\x07") {
		t.Errorf("table printed control characters raw: %q", table.String())
	}
}

// TestGuardRefusalExitCode: the memory guard's refusal is bad input like
// every other refusal: exit 2, one line.
func TestGuardRefusalExitCode(t *testing.T) {
	_, _, err := packlab(t, "run", "--layout", "hashed", "--rows", "1e12", "--no-save")
	var me *experiments.MemoryError
	if !errors.As(err, &me) || exitCode(err) != 2 {
		t.Errorf("guard refusal: %v, exit %d; want a MemoryError, exit 2", err, exitCode(err))
	}
}

// TestStdinAndProcessSubstitution: --source /dev/stdin and a shell's
// <(cmd) (here /dev/fd/3 of the packlab process) are read once, by the
// worker through the descriptor its parent hands it: the worker's own stdin
// is its job pipe, and it has no descriptor 3 of its own.
func TestStdinAndProcessSubstitution(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	var data strings.Builder
	for i := 1; i <= 3000; i++ {
		data.WriteString(strconv.Itoa(i) + "\t7\n")
	}
	for _, path := range []string{"/dev/stdin", "/dev/fd/3"} {
		cmd := exec.Command(exe, "run", "--layout", "packed", "--source", path, "--no-save", "--format", "json")
		cmd.Env = append(os.Environ(), mainEnv+"=1")
		if path == "/dev/stdin" {
			cmd.Stdin = strings.NewReader(data.String()) // a pipe
		} else {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			go func() { w.WriteString(data.String()); w.Close() }()
			cmd.ExtraFiles = []*os.File{r}
			defer r.Close()
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		timer := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
		out, err := cmd.Output()
		timer.Stop()
		if err != nil {
			t.Fatalf("--source %s: %v\n%s", path, err, stderr.String())
		}
		var res []result.Result
		if err := json.Unmarshal(out, &res); err != nil || len(res) != 1 || res[0].ElementCount != 3000 || res[0].Source != path || !res[0].Isolated {
			t.Errorf("--source %s: %v %+v", path, err, res)
		}
		if !strings.Contains(stderr.String(), "packlab: --source "+path+" is a pipe: read once as it comes") {
			t.Errorf("--source %s: stderr does not say it is read once:\n%s", path, stderr.String())
		}
	}
}

// TestReportMarkdownNotes: the markdown report is the table and, as a list
// under it, what the HTML report says under its table: what was measured,
// and the notes on compact's information limit and on a load the kernel
// held up.
func TestReportMarkdownNotes(t *testing.T) {
	dir := t.TempDir()
	c := oneResult("20261201T100000.000Z-compact-0001", "compact")
	c.MaxLoadFactor, c.Isolated = 0.9, true
	p := oneResult("20261201T100001.000Z-packed-0002", "packed")
	p.MaxLoadFactor, p.Isolated, p.LoadSeconds, p.LoadKernelSeconds, p.HugePages = 0.5, true, 2.92, 1.99, "on"
	c.HugePages = "on"
	saveResult(t, dir, c)
	saveResult(t, dir, p)
	md, _, err := packlab(t, "report", "--format", "markdown", "--all", "--results", dir)
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "the markdown report", md,
		"| compact SHARDS 1 MLF 0.9 |",
		"\n- 2 runs of compact, packed\n",
		"\n- each run in a fresh process: RSS and peak RSS are the run's own\n",
		"\n- compact SHARDS 1 MLF 0.9: 32.77 bytes a pair for 1,000 pairs",
		"\n- packed SHARDS 1 MLF 0.5: the kernel spent 1.99 s of CPU time in its 2.92 s load\n",
		"\n- the kernel's time in a load is page faults",
	)
}

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

// TestResultsNotAFolder: a --results that is a file (a result file given
// for its folder, say), or below one, is refused as not a folder, exit 2, by every
// command that reads the folder: report said "no such folder" and history
// "no results folder at ...: nothing saved", exit 0; a folder that is not
// there keeps its own words.
func TestResultsNotAFolder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "20261201T100000.000Z-hashed-0001.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "none")
	under := filepath.Join(file, "results") // a file stands in its path
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"report", "--results", file}, "--results " + file + ": not a folder (allowed: a folder of saved results", 2},
		{[]string{"report", "--list", "--results", file}, "--results " + file + ": not a folder", 2},
		{[]string{"history", "list", "--results", file}, "--results " + file + ": not a folder", 2},
		{[]string{"history", "clear", "--yes", "--results", file}, "--results " + file + ": not a folder", 2},
		{[]string{"history", "list", "--results", under}, "--results " + under + ": not a folder: a file stands in its path", 2},
		{[]string{"report", "--results", under}, "--results " + under + ": not a folder: a file stands in its path", 2},
		{[]string{"report", "--results", missing}, "--results " + missing + ": no such folder", 2},
		{[]string{"history", "list", "--results", missing}, "", 0},
	} {
		_, stderr, err := packlab(t, c.args...)
		if c.want == "" {
			if err != nil || !strings.Contains(stderr, "no results folder at "+missing) {
				t.Errorf("packlab %q: %v, %q; want no error and a line saying there is no folder", c.args, err, stderr)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || exitCode(err) != c.code {
			t.Errorf("packlab %q: %v (exit %d), want %q, exit %d", c.args, err, exitCode(err), c.want, c.code)
		}
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the file given as --results is gone: %v", err)
	}
}

// fullWriter refuses every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestListToAFullOutput: a list of jobs that cannot be written is a
// failure (exit 1, the write's error), not a silent success: report --list
// and history list > /dev/full exited 0 having printed nothing.
func TestListToAFullOutput(t *testing.T) {
	dir := t.TempDir()
	saveResult(t, dir, oneResult("20261201T100000.000Z-hashed-0001", "hashed"))
	for _, args := range [][]string{
		{"report", "--list", "--results", dir},
		{"report", "--list", "--all", "--results", dir},
		{"history", "list", "--results", dir},
	} {
		var stderr bytes.Buffer
		err := runContext(context.Background(), args, fullWriter{}, &stderr)
		if !errors.Is(err, syscall.ENOSPC) || exitCode(err) != 1 {
			t.Errorf("packlab %q to a full output: %v (exit %d), want no space left, exit 1", args, err, exitCode(err))
		}
	}
}
