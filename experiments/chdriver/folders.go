package chdriver

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A ClickHouse run's folder (its database and source files, 80 MB and more)
// is made in the temporary folder as packlab-ch-PID-RANDOM, PID the lab
// process's: the worker removes it as it ends, and the lab again after the
// worker (a crash, a signal). A lab killed outright (kill -9, the kernel's
// out-of-memory killer) removes nothing, so each run first removes the
// folders of lab processes that are gone (removeStaleFolders).

// folderPrefix starts a run's folder's name.
const folderPrefix = "packlab-ch-"

// removeStaleFolders removes the run folders in tmp whose lab process is
// gone; a folder of a live process, another user's, or of a name that
// holds no process id is left alone.
func removeStaleFolders(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, ok := folderOwner(e.Name())
		if !ok || !e.IsDir() || processAlive(pid) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

// folderOwner is the lab process id a run folder's name holds.
func folderOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, folderPrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	return pid, ok && err == nil && pid > 0
}

// processAlive reports whether process pid exists (another user's too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
