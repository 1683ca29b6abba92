// Package alloc is how ClickHouse's allocations hold memory, apart from
// what a dictionary keeps in them: its Arena's chunks (ArenaBytes),
// jemalloc's size classes (SizeClass) and google's sparse_hash_map in them
// (SparseHashMapBytes). Arithmetic on sizes only.
package alloc

import (
	"math"
	"math/bits"

	"github.com/packlab/packlab/core"
)

// ArenaBytes is what ClickHouse's Arena (Arena.h) allocates to hold count
// pieces of piece bytes, one after another: chunks of 4 KiB, each twice
// the last up to 128 MiB, then 128 MiB each; a chunk keeps its last 63
// bytes as padding (pad_right), and a piece that does not fit in what is
// left of a chunk starts the next one.
//
// The chunks past the doubling ones all hold as many pieces, so they are
// counted at once: one a chunk took minutes for 1e11 Strings of 2 KB
// summed for every setup of a plan, and for ever at 2^62.
func ArenaBytes(count int64, piece float64) int64 {
	const initial, threshold, padRight = 4096, 128 << 20, 63
	var sum int64
	left := float64(count)
	size := int64(initial)
	for ; left > 0 && size < threshold; size *= 2 {
		sum = core.SaturatingAdd(sum, size)
		left -= math.Floor(float64(size-padRight) / max(piece, 1))
	}
	if left > 0 {
		// A piece longer than a chunk is taken as one a chunk.
		per := max(math.Floor(float64(threshold-padRight)/max(piece, 1)), 1)
		chunks := math.Ceil(left / per)
		if chunks >= math.MaxInt64/threshold {
			return math.MaxInt64
		}
		sum = core.SaturatingAdd(sum, core.SaturatingMul(int64(chunks), threshold))
	}
	return sum
}

// sparseGroup is google sparsetable's group: 48 buckets.
const sparseGroup = 48

// SparseHashMapBytes is what one sparse_hash_map of n keys in buckets cells
// (packlab's sparse geometry, core.Prediction.BucketCount) holds in
// jemalloc, cells of cell bytes (std::pair<const K, V>, padded): each
// group's vector at its expected size class, a group's cells binomial with
// each bucket occupied at the table's fill.
func SparseHashMapBytes(n, buckets, cell int64) int64 {
	if n <= 0 || buckets <= 0 {
		return 0
	}
	groups := (buckets + sparseGroup - 1) / sparseGroup
	p := min(float64(n)/float64(buckets), 1)
	// E[sizeClass(k*cell)] for k ~ Binomial(48, p), in logs so that no
	// term underflows at a fill near 0 or 1.
	lg, _ := math.Lgamma(sparseGroup + 1)
	var vector float64
	for k := 1; k <= sparseGroup; k++ {
		a, _ := math.Lgamma(float64(k) + 1)
		b, _ := math.Lgamma(float64(sparseGroup-k) + 1)
		w := lg - a - b + float64(k)*math.Log(p)
		if p < 1 {
			w += float64(sparseGroup-k) * math.Log1p(-p)
		} else if k < sparseGroup {
			continue
		}
		vector += math.Exp(w) * float64(SizeClass(int64(k)*cell))
	}
	return core.SaturatingAdd(core.SaturatingMul(groups, 16), int64(math.Round(vector*float64(groups))))
}

// SizeClass is the size class jemalloc (ClickHouse's allocator)
// serves a request of x bytes from: 8, then 16-byte steps to 128, then four
// classes between powers of two (160, 192, 224, 256, 320, ...).
func SizeClass(x int64) int64 {
	switch {
	case x <= 8:
		return 8
	case x <= 128:
		return (x + 15) &^ 15
	}
	lg := 63 - bits.LeadingZeros64(uint64(x-1)) // 2^lg < x <= 2^(lg+1)
	step := int64(1) << (lg - 2)
	return (x + step - 1) / step * step
}
