//go:build linux

package machine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeCgroups lays out a cgroup file system under a temporary folder: a
// cgroup2 mount and a v1 memory mount, this process in /app (v2) and
// /job/x (v1), with the files given (path relative to the folder -> text).
// It returns the /proc/self/cgroup and mountinfo files to read.
func fakeCgroups(t *testing.T, files map[string]string) (cgroupFile, mountinfoFile string) {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "unified", "app"), 0o755)
	os.MkdirAll(filepath.Join(root, "memory", "job", "x"), 0o755)
	cgroupFile = filepath.Join(root, "cgroup")
	mountinfoFile = filepath.Join(root, "mountinfo")
	os.WriteFile(cgroupFile, []byte("9:name=systemd:/\n4:memory:/job/x\n0::/app\n"), 0o644)
	os.WriteFile(mountinfoFile, []byte(
		"25 30 0:22 / /sys rw,nosuid - sysfs sysfs rw\n"+
			"35 25 0:30 / "+filepath.Join(root, "unified")+" rw,relatime shared:9 - cgroup2 cgroup2 rw\n"+
			"36 25 0:31 / "+filepath.Join(root, "memory")+" rw,relatime shared:10 - cgroup cgroup rw,memory\n"), 0o644)
	return cgroupFile, mountinfoFile
}

const gib = int64(1) << 30

// TestCgroupRoom: the room under the tightest limit from this process's
// cgroup up to the root, v2 and v1, with reclaimable cache not counted as
// used; no limit anywhere is -1.
func TestCgroupRoom(t *testing.T) {
	n := func(v int64) string { return strconv.FormatInt(v, 10) + "\n" }
	for _, c := range []struct {
		name  string
		files map[string]string
		room  int64
		where string
	}{
		{"v2 limit, cache not counted", map[string]string{
			"unified/app/memory.max": n(gib), "unified/app/memory.current": n(300 << 20),
			"unified/app/memory.stat": "anon 200000\ninactive_file " + strconv.Itoa(100<<20) + "\nactive_file 5\n",
		}, gib - 200<<20, "unified/app/memory.max"},
		{"v1 limit on the parent", map[string]string{
			"memory/job/x/memory.limit_in_bytes": "9223372036854771712\n", "memory/job/x/memory.usage_in_bytes": n(1 << 20),
			"memory/job/memory.limit_in_bytes": n(2 * gib), "memory/job/memory.usage_in_bytes": n(gib / 2),
		}, 2*gib - gib/2, "memory/job/memory.limit_in_bytes"},
		{"both: the tighter", map[string]string{
			"unified/app/memory.max": n(4 * gib), "unified/app/memory.current": n(gib),
			"memory/job/x/memory.limit_in_bytes": n(gib), "memory/job/x/memory.usage_in_bytes": n(gib / 4),
		}, gib - gib/4, "memory/job/x/memory.limit_in_bytes"},
		{"usage over the limit", map[string]string{
			"unified/app/memory.max": n(gib), "unified/app/memory.current": n(2 * gib),
		}, 0, "unified/app/memory.max"},
		{"no limit", map[string]string{
			"unified/app/memory.max": "max\n", "unified/app/memory.current": n(gib),
		}, -1, ""},
	} {
		cg, mi := fakeCgroups(t, c.files)
		room, where := cgroupRoom(cg, mi)
		if room != c.room || !strings.Contains(where, c.where) {
			t.Errorf("%s: room %d (%s), want %d (%s)", c.name, room, where, c.room, c.where)
		}
	}
}

// TestAvailableMemoryHonoursCgroupLimit: issue 14's case, a 1 GiB cgroup
// on a machine with far more memory: what a run may take is the cgroup's
// room, and from says the cgroup bounded it (the guard's refusal quotes
// it: TestGuardRefuses).
func TestAvailableMemoryHonoursCgroupLimit(t *testing.T) {
	if m := memAvailable(); m >= 0 && m < 2*gib {
		t.Skip("this machine has less than 2 GiB available: MemAvailable bounds it already")
	}
	cg, mi := fakeCgroups(t, map[string]string{
		"unified/app/memory.max": strconv.FormatInt(gib, 10), "unified/app/memory.current": "52428800",
	})
	oldCg, oldMi := procCgroupFile, procMountinfoFile
	procCgroupFile, procMountinfoFile = cg, mi
	defer func() { procCgroupFile, procMountinfoFile = oldCg, oldMi }()

	got, from := AvailableMemory()
	if want := "the cgroup limit of 1024 MiB (" + filepath.Join(filepath.Dir(cg), "unified", "app", "memory.max") + ") less what the cgroup uses"; got != gib-50<<20 || from != want {
		t.Errorf("AvailableMemory in a 1 GiB cgroup = %d, %q; want %d, %q", got, from, gib-50<<20, want)
	}
}

// TestKBFields: the /proc fields in bytes, in the order asked, -1 for one
// the file lacks or one not in kB; this process's own figures are sane.
func TestKBFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "status")
	text := "Name:\tx\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t4\nVmSize: 7 MB\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got := kBFields(path, "VmRSS", "VmHWM", "VmSwap", "Threads", "VmSize")
	if want := []int64{1 << 20, 2 << 20, -1, -1, -1}; !slices.Equal(got, want) {
		t.Errorf("kBFields = %v, want %v", got, want)
	}
	if got := kBFields(filepath.Join(path, "none"), "VmRSS"); got[0] != -1 {
		t.Errorf("an unreadable file: %v", got)
	}
	rss, hwm := StatusMemory()
	if rss <= 0 || hwm < rss || memAvailable() <= 0 {
		t.Errorf("this process: rss %d, hwm %d, MemAvailable %d", rss, hwm, memAvailable())
	}
}
