package store

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A job that saves into a results folder marks it while it runs: an empty
// file .packlab-job-PID, removed when the job ends, so that clearing the
// history does not delete what a running job has saved (and go on saving
// after it). A mark of a process that is gone (killed) counts for nothing
// and is removed.

// jobMarkPrefix starts a running job's mark's name.
const jobMarkPrefix = ".packlab-job-"

// MarkJob marks the folder as saved into by this process's job, until
// release is called.
func (s *Store) MarkJob() (release func()) {
	path := filepath.Join(s.Dir, jobMarkPrefix+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return func() {}
	}
	return func() { _ = os.Remove(path) }
}

// JobsSaving are the process ids of live processes whose jobs are saving
// into the folder (MarkJob), this one's left out.
func (s *Store) JobsSaving() []int {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), jobMarkPrefix)
		pid, err := strconv.Atoi(digits)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if !processAlive(pid) {
			_ = os.Remove(filepath.Join(s.Dir, e.Name()))
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}
