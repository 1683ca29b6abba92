package core

import (
	"fmt"
	"slices"
	"unsafe"
)

// Prediction is what a table of one layout will hold after a load, worked
// out from the layout's growth rule before anything is allocated.
type Prediction struct {
	BucketCount int64 `json:"bucket_count"`   // cells over all shards after the load
	FinalBytes  int64 `json:"final_bytes"`    // bytes_allocated after the load
	PeakBytes   int64 `json:"peak_bytes"`     // the most the tables hold at once during the load
	Estimated   bool  `json:"estimated"`      // the layout's geometry is a model, not a replay (gomap, sparse vectors)
	PerShardMax int64 `json:"per_shard_rows"` // distinct keys the fullest shard is assumed to get
}

// Predict works out the memory of loading `distinct` distinct keys into
// `shards` tables of one layout. Shards are assumed even (ShardOf spreads
// keys evenly; the loader's own buffers are not included). The peak is the
// moment of the last growth, when the old and the new slab are both alive.
func Predict(layout Layout, key, value Type, distinct int64, opt Options, shards int) (Prediction, error) {
	if err := opt.Validate(); err != nil {
		return Prediction{}, err
	}
	if shards < 1 {
		shards = 1
	}
	if distinct < 0 {
		return Prediction{}, fmt.Errorf("rows %d is negative", distinct)
	}
	n := (distinct + int64(shards) - 1) / int64(shards)
	var p Prediction
	switch layout {
	case LayoutHashed, LayoutPacked:
		cell := int64(PaddedCellBytes(key, value))
		if layout == LayoutPacked {
			cell = int64(PairBytes(key, value))
		}
		g := newGrower(opt.mlf(), dictionaryFastDegree)
		final, prev := g.cellsFor(uint64(n))
		header := int64(unsafe.Sizeof(Hashed[U128, U128]{}))
		p.BucketCount = int64(final)
		p.FinalBytes = int64(final)*cell + header
		p.PeakBytes = p.FinalBytes + int64(prev)*cell
	case LayoutSparse:
		cell := int64(PaddedCellBytes(key, value))
		mlf := opt.mlf()
		buckets := sparseBucketsFor(uint64(n), mlf)
		bytesAt := func(buckets uint64, elems int64) int64 {
			groups := int64((buckets + sparseGroupSize - 1) / sparseGroupSize)
			if groups == 0 || elems == 0 {
				return groups * 16
			}
			// Vectors are allocated at size classes: take the class that fits
			// the mean group, scaled to the group count.
			mean := (elems + groups - 1) / groups
			c := int64(cap(slices.Grow([]byte(nil), int(mean*cell)))) / cell
			capacity := min(c, sparseGroupSize) * elems / max(mean, 1)
			return groups*16 + capacity*cell
		}
		p.BucketCount = int64(buckets)
		p.FinalBytes = bytesAt(buckets, n)
		p.PeakBytes = p.FinalBytes
		if buckets > sparseStartingBuckets {
			prev := buckets / 2
			moved := int64(float64(prev) * mlf)
			p.PeakBytes = max(p.FinalBytes, bytesAt(prev, moved)+bytesAt(buckets, moved))
		}
		p.Estimated = true
	case LayoutHashedArray:
		cell := int64(paddedCell(key.Size, key.Align, 8, 8))
		g := newGrower(DefaultMaxLoadFactor, hashMapFastDegree)
		final, prev := g.cellsFor(uint64(n))
		vals := int64(podArrayInitialBytes / value.Size)
		prevVals := int64(0)
		for vals < n {
			prevVals, vals = vals, vals*2
		}
		if n == 0 {
			vals = 0
		}
		p.BucketCount = int64(final)
		p.FinalBytes = int64(final)*cell + vals*int64(value.Size) + 256
		p.PeakBytes = p.FinalBytes + max(int64(prev)*cell, prevVals*int64(value.Size))
	case LayoutGoMap:
		// A swiss map's table doubles up to 1024 slots, then splits when 7/8
		// full. Hashes spread evenly, so tables fill and split together: a
		// map of n > 896 keys has about nextPow2(n/896) tables of 1024 slots
		// (near a boundary some have split and some not yet).
		slot := int64(PaddedCellBytes(key, value))
		slots, tables := int64(8), int64(0)
		switch {
		case n <= 8:
		case n <= 896:
			for n > slots*7/8 {
				slots *= 2
			}
			tables = 1
		default:
			tables = 1
			for tables*896 < n {
				tables *= 2
			}
			slots = tables * 1024
		}
		p.BucketCount = slots
		p.FinalBytes = slots*slot + slots + tables*(8+int64(unsafe.Sizeof(swissTable{}))) + int64(unsafe.Sizeof(swissMap{}))
		// Tables split one at a time: the peak is one table above the final.
		p.PeakBytes = p.FinalBytes + min(slots, 1024)*(slot+1)
		p.Estimated = true
	default:
		_, err := ParseLayout(string(layout))
		return Prediction{}, err
	}
	p.PerShardMax = n
	p.BucketCount *= int64(shards)
	p.FinalBytes *= int64(shards)
	// Shards load in parallel: in the worst case all grow at once.
	p.PeakBytes *= int64(shards)
	return p, nil
}
