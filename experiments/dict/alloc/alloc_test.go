package alloc

import "testing"

// TestSizeClass: jemalloc's classes with a 16-byte quantum and 4 KiB pages
// (ClickHouse's build): 8, 16-byte steps to 128, four a doubling after.
func TestSizeClass(t *testing.T) {
	for x, want := range map[int64]int64{1: 8, 8: 8, 9: 16, 17: 32, 120: 128, 129: 160, 256: 256, 257: 320, 550: 640, 1025: 1280, 5000: 5120} {
		if got := SizeClass(x); got != want {
			t.Errorf("SizeClass(%d) = %d, want %d", x, got, want)
		}
	}
}
