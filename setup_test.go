package main

// The set-up steps of `make test` and `make lab` (deps-desktop, deps-web:
// build/install-debs.sh) on a machine that has none of the packages: one
// line per step, apt's output in a log file named there, shown only when
// apt fails. apt-get and dpkg-query are stand-ins here (a test cannot
// install packages); everything else — make, the Makefile, the script — is
// what a user runs.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// aptLines is about what apt printed installing the desktop packages on a
// fresh Debian 12 (the issue counted 1,850 lines; 2,000 here).
const aptLines = 2000

// freshMachine makes a PATH that has the tools the set-up steps use but
// none of the packages they install: dpkg-query knows no package, and
// apt-get prints aptLines lines and fails when FAIL_PACKAGE is among those
// it is asked to install. It records its calls in calls.
func freshMachine(t *testing.T) (path, calls string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "sh", "make", "date", "mkdir", "tail", "sed", "grep", "id", "dirname", "cat", "env", "seq"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	calls = filepath.Join(dir, "calls")
	stubs := map[string]string{
		"dpkg-query": "exit 1\n",
		"sudo":       `exec "$@"` + "\n",
		"apt-get": fmt.Sprintf(`echo "apt-get $*" >> %q
for i in $(seq %d); do echo "Get:$i http://deb.debian.org/debian bookworm/main amd64 package-$i"; done
for a in "$@"; do
	if [ -n "${FAIL_PACKAGE:-}" ] && [ "$a" = "$FAIL_PACKAGE" ]; then echo "E: Unable to locate package $a"; exit 100; fi
done
`, calls, aptLines/2),
	}
	for name, body := range stubs {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return bin, calls
}

func runMake(t *testing.T, path, logs string, extra []string, targets ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(path, "make"), append([]string{"--no-print-directory"}, targets...)...)
	cmd.Env = append([]string{"PATH=" + path, "PACKLAB_LOG_DIR=" + logs, "HOME=" + os.Getenv("HOME")}, extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFreshMachineSetupIsQuiet: on a fresh machine the two install steps
// print two lines between them, each naming what it installs, its log and
// how long it took; apt's 2,000 lines are in the logs.
func TestFreshMachineSetupIsQuiet(t *testing.T) {
	path, calls := freshMachine(t)
	logs := t.TempDir()
	out, err := runMake(t, path, logs, nil, "deps-desktop", "deps-web", "deps-refs")
	if err != nil {
		t.Fatalf("make deps-desktop deps-web deps-refs: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Errorf("the install steps printed %d lines, want 3 (one per step):\n%s", len(lines), out)
	}
	for i, step := range []string{"deps-desktop", "deps-web", "deps-refs"} {
		log := filepath.Join(logs, step+".log")
		want := regexp.MustCompile(`^` + step + `: installing [a-z0-9.+ -]+ with apt-get \(output in ` + regexp.QuoteMeta(log) + `\) \.\.\. done in \d+ s$`)
		if i >= len(lines) || !want.MatchString(lines[i]) {
			t.Errorf("line %d of the set-up: %q, want it to match %s", i+1, lines[i%len(lines)], want)
		}
		b, err := os.ReadFile(log)
		if n := strings.Count(string(b), "\nGet:"); err != nil || n < aptLines-2 {
			t.Errorf("%s holds %d of apt's %d lines (%v)", log, n, aptLines, err)
		}
	}
	if len(lines) < 3 || !strings.Contains(lines[0], " libgtk-3-dev ") || !strings.Contains(lines[1], "chromium nodejs") || !strings.Contains(lines[2], " libboost1.81-dev ") {
		t.Errorf("the lines do not name the packages:\n%s", out)
	}
	got, _ := os.ReadFile(calls)
	if !strings.Contains(string(got), "apt-get update\napt-get install -y build-essential pkg-config libgtk-3-dev") {
		t.Errorf("apt-get was called as:\n%s", got)
	}
}

// TestSetupInstallsOnlyWhatIsMissing: packages dpkg knows, and commands on
// PATH, are not installed again; with nothing missing, apt is not run.
func TestSetupInstallsOnlyWhatIsMissing(t *testing.T) {
	path, calls := freshMachine(t)
	// pkg-config is installed; node is on PATH (however it got there).
	dpkg := "#!/bin/sh\nfor a; do last=$a; done\n[ \"$last\" = pkg-config ] && { printf 'install ok installed'; exit 0; }\nexit 1\n"
	if err := os.WriteFile(filepath.Join(path, "dpkg-query"), []byte(dpkg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "node"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := runMake(t, path, t.TempDir(), nil, "deps-desktop", "deps-web")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, _ := os.ReadFile(calls)
	if strings.Contains(string(got), "pkg-config") || strings.Contains(string(got), "nodejs") || !strings.Contains(string(got), "install -y chromium\n") {
		t.Errorf("apt-get was asked for what is there:\n%s", got)
	}
	// Everything there: one line each, and no apt at all.
	os.Remove(calls)
	if err := os.WriteFile(filepath.Join(path, "dpkg-query"), []byte("#!/bin/sh\nprintf 'install ok installed'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "chromium"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err = runMake(t, path, t.TempDir(), nil, "deps-desktop", "deps-web", "deps-refs")
	want := "deps-desktop: nothing to install (7 packages already there)\ndeps-web: nothing to install (2 packages already there)\n" +
		"deps-refs: nothing to install (6 packages already there)\n"
	if err != nil || out != want {
		t.Errorf("with everything installed: %v\n%q\nwant %q", err, out, want)
	}
	if _, err := os.Stat(calls); err == nil {
		t.Errorf("apt-get ran with nothing to install")
	}
}

// TestSetupFailureShowsApt: when apt fails, the step says so, shows the end
// of apt's output (the reason) and the make stops.
func TestSetupFailureShowsApt(t *testing.T) {
	path, _ := freshMachine(t)
	logs := t.TempDir()
	out, err := runMake(t, path, logs, []string{"FAIL_PACKAGE=xauth"}, "deps-desktop")
	if err == nil {
		t.Fatalf("make deps-desktop succeeded when apt failed:\n%s", out)
	}
	log := filepath.Join(logs, "deps-desktop.log")
	if !strings.HasPrefix(out, "deps-desktop: installing ") || !strings.Contains(out, "failed after ") ||
		!strings.Contains(out, "the end of "+log+":") || !strings.Contains(out, "    E: Unable to locate package xauth") {
		t.Errorf("a failed install printed:\n%s\nwant the step's line, the failure and apt's last lines", out)
	}
	if n := strings.Count(out, "\n"); n > 60 {
		t.Errorf("a failed install printed %d lines, want apt's last 40 and a few more", n)
	}
}

// TestBinariesHaveTheirOwnNames: make build, make desktop (and make lab)
// and make web-binary write three different files, so a build of one kind
// never silently replaces another kind under the same name.
func TestBinariesHaveTheirOwnNames(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	out, err := exec.Command("make", "-n", "--no-print-directory", "build", "desktop", "web-binary", "lab").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n: %v\n%s", err, out)
	}
	outputs := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if !slices.Contains(f, "build") {
			continue // not a Go build (make lab also compiles the C++ reference maps)
		}
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "-o" {
				tags := "(none)"
				for j := range f {
					if f[j] == "-tags" && j+1 < len(f) {
						tags = f[j+1]
					}
				}
				if prev, ok := outputs[f[i+1]]; ok && prev != tags {
					t.Errorf("%s is written by builds with tags %s and %s", f[i+1], prev, tags)
				}
				outputs[f[i+1]] = tags
			}
		}
	}
	want := map[string]string{"bin/packlab": "(none)", "bin/packlab-desktop": "desktop,production,webkit2_41", "bin/packlab-web": "embedweb"}
	if fmt.Sprint(outputs) != fmt.Sprint(want) {
		t.Errorf("the make targets write %v, want %v", outputs, want)
	}
	if !strings.Contains(string(out), "./bin/packlab-desktop") {
		t.Errorf("make lab does not open bin/packlab-desktop:\n%s", out)
	}
}

// TestStagesSayTheirTimeAndTheirTests: a stage of `make test`
// (build/stage.sh) prints one line when it ends, with the tests a go test
// -v run passed; a line while it runs past its tick; and, when it fails,
// the failing test's line and the end of its log, with the command's exit
// status.
func TestStagesSayTheirTimeAndTheirTests(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	logs := t.TempDir()
	stage := func(script string) (string, error) {
		cmd := exec.Command("bash", "build/stage.sh", "unit", "--gotest", "--", "sh", "-c", script)
		cmd.Env = append(os.Environ(), "PACKLAB_LOG_DIR="+logs, "STAGE_TICK=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := stage("echo '=== RUN   TestA'; sleep 2.5; echo '--- PASS: TestA (0.00s)'; echo '    --- PASS: TestA/sub (0.00s)'; echo '--- SKIP: TestB (0.00s)'; echo ok")
	if err != nil {
		t.Fatalf("a passing stage failed: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; !regexp.MustCompile(`^unit: ok in \ds \(2 passed, 1 skipped\)$`).MatchString(last) {
		t.Errorf("last line %q, want the time and 2 passed, 1 skipped", last)
	}
	if !strings.Contains(out, "unit: running, ") || !strings.Contains(out, "=== RUN   TestA") {
		t.Errorf("no line while the stage ran past its tick:\n%s", out)
	}
	if strings.Contains(out, "--- PASS") {
		t.Errorf("a passing stage printed its tests:\n%s", out)
	}

	out, err = stage("echo '--- FAIL: TestC (0.00s)'; echo '    c_test.go:9: got 1, want 2'; echo FAIL; exit 3")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("a failing stage: %v, want exit 3\n%s", err, out)
	}
	for _, want := range []string{"unit: FAILED in ", "(exit 3)", "0 passed, 1 failed", "--- FAIL: TestC", "got 1, want 2", filepath.Join(logs, "stage-unit.log")} {
		if !strings.Contains(out, want) {
			t.Errorf("a failing stage's output lacks %q:\n%s", want, out)
		}
	}
	counts, _ := os.ReadFile(filepath.Join(logs, "test-counts"))
	if string(counts) != "2 0 1\n0 1 0\n" {
		t.Errorf("test-counts = %q, want both stages' counts", counts)
	}
}
