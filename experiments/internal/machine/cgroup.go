package machine

// The memory a cgroup lets this process have. A container, a systemd unit
// or a CI runner puts a limit on a cgroup (v2: memory.max; v1:
// memory.limit_in_bytes), and the kernel's OOM killer enforces it while
// /proc/meminfo's MemAvailable still shows the whole machine. The guard
// takes the smaller of the two (see MemoryCheck.AvailableFrom).
//
// The room under a limit is the limit minus what the cgroup uses, not
// counting the page cache it holds on the inactive list (inactive_file),
// which the kernel reclaims before it kills anything (the working set, as
// container runtimes report it). Every cgroup from this process's up to the
// root of the hierarchy can hold a limit; the tightest one counts.

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroupRoom is the tightest room under a cgroup memory limit for the
// process whose /proc/PID/cgroup and /proc/PID/mountinfo are given: the
// bytes left, and where the limit is ("" and -1 when no cgroup limits it).
func cgroupRoom(cgroupFile, mountinfoFile string) (room int64, where string) {
	room = -1
	cg, err := os.ReadFile(cgroupFile)
	if err != nil {
		return -1, ""
	}
	mi, err := os.ReadFile(mountinfoFile)
	if err != nil {
		return -1, ""
	}
	mounts := cgroupMounts(mi)
	for line := range strings.SplitSeq(strings.TrimSpace(string(cg)), "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var m cgroupMount
		var ok bool
		var files [3]string // limit, usage, the memory.stat key of reclaimable cache
		switch {
		case parts[0] == "0" && parts[1] == "":
			m, ok = mounts["cgroup2"]
			files = [3]string{"memory.max", "memory.current", "inactive_file"}
		case hasWord(parts[1], "memory"):
			m, ok = mounts["memory"]
			files = [3]string{"memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"}
		}
		if !ok {
			continue
		}
		rel, inside := strings.CutPrefix(parts[2], m.root)
		if !inside {
			continue // the cgroup is outside what this mount shows
		}
		dir := filepath.Join(m.point, rel)
		for {
			if r, ok := cgroupLevelRoom(dir, files); ok && (room < 0 || r < room) {
				room = r
				limit, _ := readCgroupNumber(filepath.Join(dir, files[0]))
				where = fmt.Sprintf("the cgroup limit of %d MiB (%s) less what the cgroup uses", limit>>20, filepath.Join(dir, files[0]))
			}
			if dir == m.point || len(dir) <= len(m.point) {
				break
			}
			dir = filepath.Dir(dir)
		}
	}
	return room, where
}

// noLimit: a v1 limit this large is "no limit" (the kernel shows
// PAGE_COUNTER_MAX pages, 9223372036854771712 bytes on 4 KiB pages).
const noLimit = int64(1) << 62

// cgroupLevelRoom is the room under one cgroup's limit, if it has one.
func cgroupLevelRoom(dir string, files [3]string) (int64, bool) {
	limit, ok := readCgroupNumber(filepath.Join(dir, files[0]))
	if !ok || limit >= noLimit {
		return 0, false
	}
	usage, ok := readCgroupNumber(filepath.Join(dir, files[1]))
	if !ok {
		return 0, false
	}
	if stat, err := os.ReadFile(filepath.Join(dir, "memory.stat")); err == nil {
		for line := range bytes.SplitSeq(stat, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte(files[2]+" ")); ok {
				if n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64); err == nil && n <= usage {
					usage -= n
				}
			}
		}
	}
	return max(limit-usage, 0), true
}

// readCgroupNumber reads a cgroup file holding one number ("max": none).
func readCgroupNumber(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// cgroupMount is where a cgroup hierarchy is mounted, and which of its
// cgroups the mount point shows (root: "/" unless in a cgroup namespace or
// a bind mount of a sub-tree).
type cgroupMount struct{ root, point string }

// cgroupMounts finds the cgroup2 mount and the v1 memory controller's in
// mountinfo: "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE SUPER".
func cgroupMounts(mountinfo []byte) map[string]cgroupMount {
	out := map[string]cgroupMount{}
	sc := bufio.NewScanner(bytes.NewReader(mountinfo))
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgroupMount{root: unescapeMount(f[3]), point: unescapeMount(f[4])}
		if m.root == "/" {
			m.root = ""
		}
		switch {
		case g[0] == "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = m
			}
		case g[0] == "cgroup" && hasWord(g[2], "memory"):
			if _, seen := out["memory"]; !seen {
				out["memory"] = m
			}
		}
	}
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasWord reports whether the comma-separated list holds w.
func hasWord(list, w string) bool {
	for x := range strings.SplitSeq(list, ",") {
		if x == w {
			return true
		}
	}
	return false
}
