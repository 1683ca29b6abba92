package chdriver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestStaleFoldersRemoved: a run's folder whose lab process is gone (killed
// with kill -9: it removed nothing) is removed by the next run; a live
// process's folder, and one whose name holds no process id, are left.
func TestStaleFoldersRemoved(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	tmp := t.TempDir()
	stale := filepath.Join(tmp, folderPrefix+strconv.Itoa(gone.Process.Pid)+"-123")
	live := filepath.Join(tmp, folderPrefix+strconv.Itoa(os.Getpid())+"-456")
	other := filepath.Join(tmp, folderPrefix+"789")
	for _, d := range []string{stale, live, other} {
		if err := os.MkdirAll(filepath.Join(d, "files"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleFolders(tmp)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the folder of process %d, gone, is still there (%v)", gone.Process.Pid, err)
	}
	for _, d := range []string{live, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
