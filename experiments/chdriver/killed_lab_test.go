package chdriver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
)

// TestWorkerLeavesNoFolderWhenTheLabIsKilled: a lab killed with SIGKILL
// during a ClickHouse run (issue 48) leaves no packlab-ch-* folder and no
// worker: packlab-ch notices its lab has gone (its parent process changes,
// or its pipes break) and removes its folder. The lab is this test binary
// run again, loading 1e7 rows; it is killed once its worker's folder holds
// the rows' file.
func TestWorkerLeavesNoFolderWhenTheLabIsKilled(t *testing.T) {
	if os.Getenv("PACKLAB_TEST_KILLED_LAB") == "1" {
		_, _ = experiments.Run(context.Background(), config.Config{Layouts: []string{"ch_hashed"}, Rows: 10_000_000, NoRead: true, Force: true}, experiments.RunOptions{})
		return
	}
	if testing.Short() {
		t.Skip("starts a lab and ClickHouse and kills the lab; not under -short")
	}
	needClickHouse(t)
	tmp := t.TempDir()
	lab := exec.Command(os.Args[0], "-test.run=^TestWorkerLeavesNoFolderWhenTheLabIsKilled$")
	lab.Env = append(os.Environ(), "PACKLAB_TEST_KILLED_LAB=1", "TMPDIR="+tmp)
	if err := lab.Start(); err != nil {
		t.Fatal(err)
	}
	defer lab.Process.Kill()
	prefix := filepath.Join(tmp, folderPrefix+strconv.Itoa(lab.Process.Pid)+"-")
	var folder string
	var worker int
	for deadline := time.Now().Add(2 * time.Minute); folder == "" || worker == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no worker with a folder %s* holding rows.bin after 2 minutes", prefix)
		}
		found, _ := filepath.Glob(prefix + "*/files/rows.bin")
		if len(found) > 0 {
			folder = filepath.Dir(filepath.Dir(found[0]))
		}
		worker = workerOf(lab.Process.Pid)
	}
	if err := lab.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = lab.Wait()
	start := time.Now()
	for {
		_, err := os.Stat(folder)
		if os.IsNotExist(err) && !running(worker) {
			t.Logf("folder and worker %d gone %v after the lab's SIGKILL", worker, time.Since(start).Round(time.Millisecond))
			return
		}
		if time.Since(start) > 10*time.Second {
			_ = exec.Command("kill", "-9", strconv.Itoa(worker)).Run()
			t.Fatalf("10 s after the lab was killed: folder %s there: %v; worker %d running: %v", folder, err == nil, worker, running(worker))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childOf is a child process of pid, 0 if none.
func workerOf(pid int) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if fields := strings.Fields(string(b)); len(fields) > 0 {
			n, _ := strconv.Atoi(fields[0])
			return n
		}
	}
	return 0
}

// running reports whether process pid exists and is not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
