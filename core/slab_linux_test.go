package core

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestHugePagesSetting: SetHugePages decides whether a large slab may get
// transparent huge pages, as the kernel sees the mapping (THPeligible in
// /proc/self/smaps): a user who turns them off gets none, whatever the
// system's THP mode, and one who leaves them on gets slabs the kernel may
// back with them. Slabs grown by mremap follow the setting of the growth.
func TestHugePagesSetting(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		t.Skip("no transparent huge pages on this kernel:", err)
	}
	was := HugePages()
	defer SetHugePages(was)
	for _, on := range []bool{false, true} {
		SetHugePages(on)
		if HugePages() != on {
			t.Fatalf("SetHugePages(%v): HugePages() = %v", on, HugePages())
		}
		want := on && !strings.Contains(string(mode), "[never]")
		b := mustSlab(LayoutPacked, 8<<20)
		if got := thpEligible(t, b); got != want {
			t.Errorf("huge pages %v: a new 8 MiB slab is THP-eligible %v, want %v (THP mode %q)", on, got, want, strings.TrimSpace(string(mode)))
		}
		SetHugePages(!on) // a growth follows the setting at its time
		g, err := growSlab(LayoutPacked, b, 16<<20)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := thpEligible(t, g), !on && !strings.Contains(string(mode), "[never]"); got != want {
			t.Errorf("huge pages %v after the growth: the grown slab is THP-eligible %v, want %v", !on, got, want)
		}
		freeSlab(g)
	}
}

// thpEligible reads the THPeligible line of the mapping that holds b.
func thpEligible(t *testing.T, b []byte) bool {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip("no /proc/self/smaps:", err)
	}
	defer f.Close()
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "THPeligible:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "THPeligible:")) == "1"
		}
	}
	t.Skipf("smaps has no THPeligible line for the slab at %#x", addr)
	return false
}
