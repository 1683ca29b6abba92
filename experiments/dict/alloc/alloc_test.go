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

// TestShardSpread: the weights sum to one about the mean, and one shard
// is every key once.
func TestShardSpread(t *testing.T) {
	var sum, mean float64
	ShardSpread(200_000, 64, func(n int64, w float64) { sum += w; mean += w * float64(n) })
	if sum < 0.999999 || sum > 1.000001 || mean < 3120 || mean > 3130 {
		t.Errorf("64 shards of 200,000 keys: weights %.6f, mean %.1f; want 1 and 3,125", sum, mean)
	}
	calls := 0
	ShardSpread(5, 1, func(n int64, w float64) {
		calls++
		if n != 5 || w != 1 {
			t.Errorf("one shard: %d keys at %v", n, w)
		}
	})
	if calls != 1 {
		t.Errorf("one shard: %d calls", calls)
	}
}
