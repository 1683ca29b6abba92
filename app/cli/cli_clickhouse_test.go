package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/drivertest"
)

// needClickHouse points the command at packlab-ch: $PACKLAB_CH_WORKER, or
// bin/packlab-ch (drivertest.NeedWorker; TestMain works in the checkout).
func needClickHouse(t *testing.T) {
	t.Helper()
	drivertest.NeedWorker(t, "bin", chdriver.WorkerEnv, chdriver.WorkerName, chdriver.BuildCommand, func() (bool, string) {
		st := chdriver.Status()
		return st.Available, st.Problem
	})
}

// reportHTML writes dir's last job as an HTML report and returns it.
func reportHTML(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "report.html")
	if _, _, err := packlab(t, "report", "--results", dir, "--out", out); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(html)
}

// TestClickHouseRunAndReport is the command at 1e6 rows (the docs
// have 1e7): packed, ch_sparse_hashed, hashed and ch_hashed in one run, the
// ClickHouse lines under the table, and the report's charts name all four,
// ClickHouse's drawn apart.
func TestClickHouseRunAndReport(t *testing.T) {
	needClickHouse(t)
	if testing.Short() {
		t.Skip("loads 1e6 rows four times")
	}
	dir := t.TempDir()
	_, stderr, err := packlab(t, "run", "--layout", "packed,ch_sparse_hashed,hashed,ch_hashed", "--rows", "1e6", "--results", dir)
	if err != nil {
		t.Fatal(err)
	}
	mustSay(t, "run's notes", stderr, "ch_hashed SHARDS 1 MLF 0.5: ClickHouse 26.", "LAYOUT(HASHED()): bytes_allocated 33,554,664, packlab computes 33,554,664 (+0.00 %)")
	html := reportHTML(t, dir)
	mustSay(t, "the report", html, "packed", "ch_sparse_hashed", "ch_hashed", "dotted: ClickHouse", "ClickHouse itself (chDB), measured the same way", "yellow and orange lines: ClickHouse itself")
}

// TestPlanVerify: plan --verify builds the plan's ClickHouse dictionary in
// ClickHouse and prints its figures beside the plan's model, which agree,
// and its reload's peak beside the model's.
func TestPlanVerify(t *testing.T) {
	needClickHouse(t)
	stdout, _, err := packlab(t, "plan", "--rows", "1e6", "--memory", "1GiB", "--no-calibrate", "--verify", "--no-save", "--results", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`verified in ClickHouse 26\.[0-9.]+: LAYOUT\(\w+\(.*\)\) at 1M rows`).MatchString(stdout) ||
		!regexp.MustCompile(`memory: (bytes_allocated|tracked_bytes) [0-9,]+ \([0-9.]+ bytes a row\), the plan's model of the same dictionary [0-9,]+ \([0-9.]+\), [+-]0\.[0-2]\d %`).MatchString(stdout) ||
		!regexp.MustCompile(`reload: ClickHouse peaked at [0-9.]+ MiB during a reload \(.*\), the plan's model of the same reload [0-9.]+ MiB \([+-][0-9.]+ %\); the first load peaked at`).MatchString(stdout) {
		t.Errorf("plan --verify wrote\n%s", stdout)
	}
}

// TestPlanVerifyAttributes: a plan of several attributes is verified with
// all of them (it built the value alone: 13.11 bytes a row against the
// plan's 62 for UInt16,Nullable(String)), and its reload beside the
// plan's model of it.
func TestPlanVerifyAttributes(t *testing.T) {
	needClickHouse(t)
	stdout, _, err := packlab(t, "plan", "--rows", "2e5", "--attributes", "UInt16,UInt32,Nullable(String)", "--no-calibrate", "--verify", "--no-save", "--results", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`memory: (?:bytes_allocated|tracked_bytes) [0-9,]+ \(([0-9.]+) bytes a row\), the plan's model of the same dictionary [0-9,]+ \([0-9.]+\), [+-]0\.[0-2]\d %`).FindStringSubmatch(stdout)
	if m == nil || !strings.Contains(stdout, "the plan's model of the same reload") {
		t.Fatalf("plan --verify wrote\n%s", stdout)
	}
	if perRow, _ := strconv.ParseFloat(m[1], 64); perRow < 30 {
		t.Errorf("%s bytes a row: the verification left out attributes\n%s", m[1], stdout)
	}
}

// sampleDictionary is the dictionary file docs/cli.md's attribute example
// reads.
const sampleDictionary = "examples/users.tsv.gz"

// TestSampleDictionaryFile runs docs/cli.md's example of a file's
// attributes as written: ClickHouse's three layouts load the 5,000 rows
// with price, country and name from the file's columns, and packlab's
// model of each dictionary is ClickHouse's figure within 0.1 %.
func TestSampleDictionaryFile(t *testing.T) {
	needClickHouse(t)
	doc, err := os.ReadFile(filepath.Join("docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "bin/packlab run ") && strings.Contains(line, "--source "+sampleDictionary) && strings.Contains(line, "ch_hashed") {
			cmd, _, _ := strings.Cut(line, "#")
			example = strings.Fields(cmd)[1:]
		}
	}
	if example == nil {
		t.Fatalf("docs/cli.md has no example 'bin/packlab run --layout ch_hashed... --source %s'", sampleDictionary)
	}
	res := packlabResults(t, 3, append(example, "--no-save", "--format", "json")...)
	for _, r := range res {
		ch := r.ClickHouse
		if r.ElementCount != 5000 || strings.Join(r.AttributeColumns, ",") != "country,name" || ch == nil {
			t.Fatalf("%s: %d keys, columns %v, ClickHouse %+v; want 5000 keys from the file's country and name", r.Layout, r.ElementCount, r.AttributeColumns, ch)
		}
		measured, off := r.BytesAllocated, 0.001*float64(ch.ModelBytes)
		below, above := off, off
		if ch.ComparedWith == "tracked_bytes" {
			// The tracker counts ClickHouse's own memory of the load
			// besides the table, so it lies above the model: over 9 runs
			// (one under -race) +43 to +142 KiB, in steps of about 32 KiB.
			// Below, only a small slack for the model itself.
			measured, below, above = ch.TrackedBytes, 32<<10, 192<<10
		}
		t.Logf("%s: %s %d, model %d", r.Layout, ch.ComparedWith, measured, ch.ModelBytes)
		if d := float64(measured - ch.ModelBytes); d < -below || d > above {
			t.Errorf("%s: ClickHouse's %s %d, packlab's model %d: want from %.0f bytes below to %.0f above", r.Layout, ch.ComparedWith, measured, ch.ModelBytes, below, above)
		}
	}
}

// TestClickHouseSignal: SIGQUIT during a ClickHouse run ends packlab as
// every stopping signal does: exit 131 (128 + 3), one line naming it, no
// goroutine dump, no worker left, and no packlab-ch-* folder left in the
// temporary folder (issue 48: a dump, exit 2 and an 80 MB folder).
func TestClickHouseSignal(t *testing.T) {
	needClickHouse(t)
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	cmd := exec.Command(exe, "run", "--layout", "ch_hashed", "--rows", "3e6", "--no-save")
	cmd.Env = append(os.Environ(), mainEnv+"=1", "TMPDIR="+tmp)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// 300 ms after the folder: the worker started, the rows streaming.
	signalWhen(t, cmd, &stderr, filepath.Join(tmp, "packlab-ch-*", "files"), "ClickHouse folder",
		300*time.Millisecond, syscall.SIGQUIT, 20*time.Second)
	if got := cmd.ProcessState.ExitCode(); got != 131 {
		t.Errorf("exit code %d after SIGQUIT, want 131", got)
	}
	if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, "stopped by SIGQUIT") || strings.Contains(s, "goroutine") {
		t.Errorf("stderr after SIGQUIT: %q; want one line naming it", s)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "packlab-ch-*")); len(left) > 0 {
		t.Errorf("left after SIGQUIT: %v", left)
	}
}
