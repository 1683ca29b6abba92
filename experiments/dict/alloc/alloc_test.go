package alloc

import (
	"math"
	"testing"
	"time"
)

// TestSizeClass: jemalloc's classes with a 16-byte quantum and 4 KiB pages
// (ClickHouse's build): 8, 16-byte steps to 128, four a doubling after.
func TestSizeClass(t *testing.T) {
	for x, want := range map[int64]int64{1: 8, 8: 8, 9: 16, 17: 32, 120: 128, 129: 160, 256: 256, 257: 320, 550: 640, 1025: 1280, 5000: 5120} {
		if got := SizeClass(x); got != want {
			t.Errorf("SizeClass(%d) = %d, want %d", x, got, want)
		}
	}
}

// arenaBytesByChunk is ArenaBytes as it was written: a chunk at a time.
func arenaBytesByChunk(count int64, piece float64) int64 {
	const initial, threshold, padRight = 4096, 128 << 20, 63
	var sum int64
	left := float64(count)
	for size := int64(initial); left > 0; {
		sum += size
		left -= math.Floor(float64(size-padRight) / max(piece, 1))
		if size < threshold {
			size *= 2
		}
	}
	return sum
}

// TestArenaBytes: the same bytes as chunk by chunk, from an empty arena to
// past the doubling chunks; and at once for any count, where counting
// chunk by chunk took 3 ms a call at 1e11 Strings of 2 KB (a plan's
// thousands of calls, minutes) and for ever at 2^62, saturating.
func TestArenaBytes(t *testing.T) {
	for _, piece := range []float64{0, 1, 8.5, 20, 2052, 4096} {
		for _, count := range []int64{0, 1, 63, 4032, 4033, 1e5, 65_432, 1e6, 123_456_789, 1e9} {
			if got, want := ArenaBytes(count, piece), arenaBytesByChunk(count, piece); got != want {
				t.Errorf("ArenaBytes(%d, %g) = %d, want %d", count, piece, got, want)
			}
		}
	}
	done := make(chan [2]int64, 1)
	go func() { done <- [2]int64{ArenaBytes(math.MaxInt64, 4096), ArenaBytes(1<<62, 2052)} }()
	select {
	case got := <-done:
		if got[0] != math.MaxInt64 || got[1] != math.MaxInt64 {
			t.Errorf("ArenaBytes(MaxInt64, 4096), ArenaBytes(2^62, 2052) = %d, want them saturated", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ArenaBytes of 2^62 Strings has not returned after 5 s")
	}
}
