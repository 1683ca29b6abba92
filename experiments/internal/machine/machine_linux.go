//go:build linux

package machine

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// procMemory reads the kernel's view of this process's memory from /proc.
// Only Linux has it; machine_other.go reports "unknown" elsewhere.

// CurrentRSS is the resident set size now, in bytes, from /proc/self/statm
// (its second field, in pages): cheaper than parsing /proc/self/status, so
// the peak sampler can poll it every few milliseconds. -1 if unreadable.
func CurrentRSS() int64 {
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return -1
	}
	defer f.Close()
	var buf [128]byte
	n, _ := f.Read(buf[:])
	fields := bytes.Fields(buf[:n])
	if len(fields) < 2 {
		return -1
	}
	pages, err := strconv.ParseInt(string(fields[1]), 10, 64)
	if err != nil {
		return -1
	}
	return pages * int64(os.Getpagesize())
}

// StatusMemory returns VmRSS and VmHWM (the resident high-water mark) from
// /proc/self/status, in bytes; -1 for a field it cannot read.
func StatusMemory() (rss, hwm int64) {
	v := kBFields("/proc/self/status", "VmRSS", "VmHWM")
	return v[0], v[1]
}

// kBFields reads the fields named names ("VmRSS: 123456 kB") of a /proc file in
// bytes, -1 for each one missing or unreadable.
func kBFields(path string, names ...string) []int64 {
	out := make([]int64, len(names))
	for i := range out {
		out[i] = -1
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		name, rest, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		i := slices.IndexFunc(names, func(n string) bool { return string(name) == n }) // compared, not copied
		if i < 0 {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 2 && string(f[1]) == "kB" {
			if v, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
				out[i] = v * 1024
			}
		}
	}
	return out
}

// ResetPeak sets VmHWM back to the current RSS by writing "5" to
// /proc/self/clear_refs (Linux 4.0 and later). It reports whether the kernel
// accepted it: a kernel built without CONFIG_PROC_PAGE_MONITOR, or a sandbox
// that makes /proc read-only, refuses, and then VmHWM keeps the process's
// earlier high-water mark (see peakOf for what the measurement does then).
func ResetPeak() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// MemoryMeasurable reports whether this platform gives RSS figures at all.
const MemoryMeasurable = true

// AvailableMemory is MemAvailable from /proc/meminfo: free memory plus the
// page cache and slabs the kernel can reclaim without swapping (what free(1)
// shows as "available"), in bytes; -1 if unreadable. pbnjay/memory's
// FreeMemory reads sysinfo's freeram, which leaves the page cache out and so
// reads low on any machine that has read files lately.
//
// A cgroup memory limit (cgroup.go) and an address-space limit (ulimit -v,
// which a run's worker inherits) bound it further: the result is the
// smallest, and from says which one it is. A table past an address-space
// limit would end in the Go runtime's fatal "out of memory", which no
// program can catch, so the guard must refuse it first.
func AvailableMemory() (bytes int64, from string) {
	avail, from := memAvailable(), "MemAvailable in /proc/meminfo"
	if room, where := cgroupRoom(procCgroupFile, procMountinfoFile); room >= 0 && (avail < 0 || room < avail) {
		avail, from = room, where
	}
	if room := addressSpaceRoom(); room >= 0 && (avail < 0 || room < avail) {
		return room, "the address-space limit (ulimit -v) less this process's size"
	}
	if avail < 0 {
		return -1, ""
	}
	return avail, from
}

// Where this process's cgroups and mounts are listed; tests point them at
// a made-up cgroup file system.
var (
	procCgroupFile    = "/proc/self/cgroup"
	procMountinfoFile = "/proc/self/mountinfo"
)

func memAvailable() int64 { return kBFields("/proc/meminfo", "MemAvailable")[0] }

// KernelCPU is the CPU time the kernel has spent for this process so far,
// all threads (getrusage's system time); during a load, page faults above
// all: mapping and zeroing the tables' new memory.
func KernelCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Stime.Nano())
}

// addressSpaceRoom is RLIMIT_AS less this process's virtual size (VmSize),
// or -1 with no such limit.
func addressSpaceRoom() int64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur == ^uint64(0) || lim.Cur > 1<<62 {
		return -1
	}
	vm := kBFields("/proc/self/status", "VmSize")[0]
	if vm < 0 {
		return -1
	}
	return max(int64(lim.Cur)-vm, 0)
}
