package core

import (
	"fmt"
	"math"
	"math/bits"
	"sync"
	"unsafe"
)

// Prediction is what a table of one layout will hold after a load, worked
// out from the layout's growth rule before anything is allocated.
//
// Every figure saturates: a count or a byte figure that would not fit in an
// int64 is math.MaxInt64 (8 EiB), never a wrapped-around number, so a
// prediction can be compared with any amount of memory and always says
// "too much" for a load no machine can hold. Saturated says it happened.
type Prediction struct {
	BucketCount int64 `json:"bucket_count"` // cells over all shards after the load
	FinalBytes  int64 `json:"final_bytes"`  // bytes_allocated after the load
	PeakBytes   int64 `json:"peak_bytes"`   // the most the tables hold at once during the load, every shard growing at once
	// GrowthBytes is what one shard holds above its final size at the
	// moment of its last growth (for a table that grows by reallocating,
	// the old slab): with g shards growing at once, the tables hold
	// FinalBytes + g*GrowthBytes at their peak; PeakBytes is g = shards.
	GrowthBytes int64 `json:"growth_bytes"`
	Estimated   bool  `json:"estimated"`      // the layout's geometry is a model, not a replay (gomap, sparse vectors)
	PerShardMax int64 `json:"per_shard_rows"` // distinct keys a shard gets on average, rounded up
	// ValueBytes is the part of FinalBytes that hashed_array's value arrays
	// hold, over all shards (0 for every other layout): a dictionary with
	// several attributes keeps one index and one such array per attribute.
	ValueBytes int64 `json:"value_bytes,omitempty"`
	Saturated  bool  `json:"saturated"` // some figure exceeded math.MaxInt64 and stands at it
}

// MaxPredictRows is the most distinct keys Predict takes: 2^62, as many as
// a source can give (core/source bounds a generator's rows by it).
const MaxPredictRows = int64(1) << 62

// SaturatingAdd is a+b for non-negative a and b, or math.MaxInt64 when the
// sum does not fit: the arithmetic of Prediction's figures, for callers that
// add to them.
func SaturatingAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// SaturatingMul is a*b for non-negative a and b, or math.MaxInt64 when the
// product does not fit.
func SaturatingMul(a, b int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(lo)
}

// saturate is n as an int64, or math.MaxInt64 when it does not fit.
func saturate(n uint64) int64 { return int64(min(n, math.MaxInt64)) }

// saturateFloat is x as an int64, or math.MaxInt64 when it does not fit.
func saturateFloat(x float64) int64 {
	if x >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(max(x, 0))
}

// Predict works out the memory of loading `distinct` distinct keys into
// `shards` tables of one layout (the loader's own buffers are not
// included). The peak is the moment of the last growth: for hashed, packed
// and hashed_array the new slab alone where slabs grow in place (Linux),
// the old and the new slab where they are copied (macOS, js/wasm); for
// compact the new slab and what is left of the old one at the end of its
// growth pass (Linux releases it behind the pass); in every shard at once:
// the loader deals rows out as they come, so the shards reach their growth
// points together. A table reserved for at least its keys (opt.Reserve,
// each shard its ShardReserve) does not grow: its peak is its final size.
// distinct is 0 to MaxPredictRows, shards 1 to MaxShards (0 means 1).
//
// ShardOf deals keys out by their hash, so a shard's keys are binomial
// about distinct/shards, not that mean each: where the mean lies near a
// growth point some shards grow and some do not. Each figure is the
// shards' expectation over that spread (ShardSteps); where every count of
// the spread builds the mean's table it is PredictEven's, to the byte.
// 130,560 random keys in hashed SHARDS 64 (2,040 a shard, where 4,096
// cells hold 2,048) allocated 8,920,064 bytes in 557,056 cells; Predict
// says 9,546,436 in 596,204, PredictEven 4,201,472 in 262,144. Which
// shards grow is chance: one load of 64 shards can be 5-10 % off the
// expectation (TestPredictShardsDealtByHash).
func Predict(layout Layout, key, value Type, distinct int64, opt Options, shards int) (Prediction, error) {
	var cells, final, growth, values float64
	var one Prediction
	runs := 0
	err := EachShard(layout, key, value, distinct, opt, shards, func(p Prediction, _ int64, w float64) {
		one, runs = p, runs+1
		cells += w * float64(p.BucketCount)
		final += w * float64(p.FinalBytes)
		growth += w * float64(p.GrowthBytes)
		values += w * float64(p.ValueBytes)
	})
	if err != nil {
		return Prediction{}, err
	}
	shards = max(shards, 1)
	out := evenShards(one, distinct, shards)
	if runs == 1 { // every shard's table is the mean's
		return out, nil
	}
	s := float64(shards)
	out.BucketCount = saturateFloat(math.Round(cells * s))
	out.FinalBytes = saturateFloat(math.Round(final * s))
	out.GrowthBytes = saturateFloat(math.Round(growth))
	out.ValueBytes = saturateFloat(math.Round(values * s))
	out.PeakBytes = SaturatingAdd(out.FinalBytes, SaturatingMul(out.GrowthBytes, int64(shards))) // every shard growing at once
	out.Saturated = out.PeakBytes == math.MaxInt64 || out.BucketCount == math.MaxInt64
	return out, nil
}

// EachShard calls g with the table of layout one of shards tables holds
// when a hash deals distinct keys out to them: once for each run of counts
// that builds one table (ShardSteps), with the run's mean count and its
// weight; each table reserved for its share of opt.Reserve (ShardReserve).
// Predict sums them; a model of what stands beside each table (ClickHouse's
// sparse_hash_map in jemalloc's classes) takes them one by one.
func EachShard(layout Layout, key, value Type, distinct int64, opt Options, shards int, g func(p Prediction, n int64, weight float64)) error {
	shards, err := checkPredict(distinct, opt, shards)
	if err != nil {
		return err
	}
	reserve := ShardReserve(opt.Reserve, shards)
	seen := map[int64]Prediction{} // a run's count is often a bisection's
	at := func(n int64) Prediction {
		p, ok := seen[n]
		if !ok {
			var e error
			if p, e = predictShard(layout, key, value, n, reserve, opt); e != nil {
				err = e
			}
			seen[n] = p
		}
		return p
	}
	cellsAt := func(n int64) int64 {
		if layout == LayoutSparse { // its cells without its pages' model, most of its prediction's time
			return saturate(max(sparseBucketsFor(uint64(n), opt.mlf()), sparseBucketsFor(reserve, opt.mlf())))
		}
		return at(n).BucketCount
	}
	ShardSteps(distinct, shards, cellsAt, func(n int64, w float64) { g(at(n), n, w) })
	return err
}

// PredictEven is Predict with every shard given the mean's keys (rounded
// up): the tables at the moments when shards fed alike grow together,
// which is what a reload's memory tracker sees (experiments/dict/reload).
func PredictEven(layout Layout, key, value Type, distinct int64, opt Options, shards int) (Prediction, error) {
	shards, err := checkPredict(distinct, opt, shards)
	if err != nil {
		return Prediction{}, err
	}
	// Each shard's table is built for its share of the reservation.
	p, err := predictShard(layout, key, value, ceilDiv(distinct, shards), ShardReserve(opt.Reserve, shards), opt)
	if err != nil {
		return Prediction{}, err
	}
	return evenShards(p, distinct, shards), nil
}

// checkPredict refuses what Predict does not take, and gives the shards
// (0 means 1).
func checkPredict(distinct int64, opt Options, shards int) (int, error) {
	if err := opt.Validate(); err != nil {
		return 0, err
	}
	if shards == 0 {
		shards = 1
	}
	if shards < MinShards || shards > MaxShards {
		return 0, fmt.Errorf("shards %d is out of range (allowed: %d to %d)", shards, MinShards, MaxShards)
	}
	if distinct < 0 || distinct > MaxPredictRows {
		return 0, fmt.Errorf("rows %d is out of range (allowed: 0 to %d)", distinct, MaxPredictRows)
	}
	return shards, nil
}

func ceilDiv(distinct int64, shards int) int64 {
	return (distinct + int64(shards) - 1) / int64(shards)
}

// evenShards is shards tables of p's each.
func evenShards(p Prediction, distinct int64, shards int) Prediction {
	p.PerShardMax = ceilDiv(distinct, shards)
	s := int64(shards)
	p.BucketCount = SaturatingMul(p.BucketCount, s)
	shardPeak := SaturatingAdd(p.FinalBytes, p.GrowthBytes)
	p.FinalBytes = SaturatingMul(p.FinalBytes, s)
	p.ValueBytes = SaturatingMul(p.ValueBytes, s)
	// Shards load in parallel and fill alike: all of them grow at once.
	p.PeakBytes = SaturatingMul(shardPeak, s)
	p.Saturated = p.PeakBytes == math.MaxInt64 || p.BucketCount == math.MaxInt64
	return p
}

// ShardSteps calls g with the keys a shard gets when a hash deals
// distinct keys out to shards, and that count's probability: once for
// each run of counts over which step(n) stays the same (step must not
// decrease as n grows: a table's cells, an arena's chunks), with the run's
// mean count and its weight under the normal law that approximates the
// binomial, the tails beyond 4 standard deviations folded into the ends;
// with one shard, once with every key; within one run, once with the mean
// rounded up. A figure that is a step function of
// the count, or a line within each step, has its expectation exactly:
// sum g's n's figure times its weight. The runs are found by bisection, so
// a spread within one step costs two calls of step, and one over a growth
// point about twenty.
func ShardSteps(distinct int64, shards int, step func(n int64) int64, g func(n int64, weight float64)) {
	if shards <= 1 {
		g(distinct, 1)
		return
	}
	s := float64(shards)
	mean := float64(distinct) / s
	sd := math.Sqrt(mean * (1 - 1/s))
	lo := max(int64(math.Floor(mean-4*sd)), 0)
	hi := max(int64(math.Ceil(mean+4*sd)), lo)
	// starts holds the first count of each run after the first.
	var starts []int64
	var split func(a, b, sa, sb int64)
	split = func(a, b, sa, sb int64) {
		if sa == sb {
			return
		}
		if b-a == 1 {
			starts = append(starts, b)
			return
		}
		m := a + (b-a)/2
		sm := step(m)
		split(a, m, sa, sm)
		split(m, b, sm, sb)
	}
	split(lo, hi, step(lo), step(hi))
	if len(starts) == 0 || sd == 0 {
		g((distinct+int64(shards)-1)/int64(shards), 1) // PredictEven's count
		return
	}
	phi := func(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
	Phi := func(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
	from := lo
	for i := 0; i <= len(starts); i++ {
		to := hi
		if i < len(starts) {
			to = starts[i] - 1
		}
		// The run [from, to] with continuity correction; the first and the
		// last take the tails.
		a, b := (float64(from)-0.5-mean)/sd, (float64(to)+0.5-mean)/sd
		if i == 0 {
			a = math.Inf(-1)
		}
		if i == len(starts) {
			b = math.Inf(1)
		}
		w := Phi(b) - Phi(a)
		if w > 0 {
			// The mean of the normal law truncated to [a, b].
			m := mean + sd*(phi(a)-phi(b))/w
			g(min(max(int64(math.Round(m)), from), to), w)
		}
		if i < len(starts) {
			from = starts[i]
		}
	}
}

// predictShard is one shard's table of n distinct keys, reserved for
// reserve: its cells, bytes and what its last growth holds, replayed from
// the layout's growth rule.
func predictShard(layout Layout, key, value Type, n int64, reserve uint64, opt Options) (Prediction, error) {
	var p Prediction
	switch layout {
	case LayoutHashed, LayoutPacked:
		cell := int64(PaddedCellBytes(key, value))
		if layout == LayoutPacked {
			cell = int64(PairBytes(key, value))
		}
		g := newGrower(opt.mlf(), dictionaryFastDegree)
		header := emptyBytes(layout, key, value) - saturate(g.cells())*cell
		g.reserve(reserve)
		final, prev := g.cellsFor(uint64(n))
		p.BucketCount = saturate(final)
		p.FinalBytes = SaturatingAdd(SaturatingMul(saturate(final), cell), header)
		p.GrowthBytes = copiedSlab(SaturatingMul(saturate(prev), cell))
	case LayoutSparse:
		buckets, final, peak := sparsePredict(uint64(n), reserve, uint32(PaddedCellBytes(key, value)), opt.mlf())
		p.BucketCount = saturate(buckets)
		p.FinalBytes = saturateFloat(final)
		p.GrowthBytes = saturateFloat(peak - final)
		p.Estimated = true
	case LayoutHashedArray:
		cell := int64(paddedCell(key.Size, key.Align, 8, wordAlign)) // struct{K; uint64}
		g := newGrower(DefaultMaxLoadFactor, hashedArrayFastDegree)
		header := emptyBytes(layout, key, value) - saturate(g.cells())*cell
		g.reserve(reserve)
		final, prev := g.cellsFor(uint64(n))
		// The value array starts at PODArray's 4 KiB, or at the reservation.
		vals := saturate(hashedArrayValueCap(max(reserve, 1), uint64(value.Size)))
		prevVals := int64(0)
		for vals < n {
			prevVals, vals = vals, vals*2 // vals is a power of two, n <= 2^62
		}
		if n == 0 && reserve == 0 {
			vals = 0
		}
		size := int64(value.Size)
		p.BucketCount = saturate(final)
		p.ValueBytes = SaturatingMul(vals, size)
		p.FinalBytes = SaturatingAdd(SaturatingAdd(SaturatingMul(saturate(final), cell), p.ValueBytes), header)
		p.GrowthBytes = copiedSlab(max(SaturatingMul(saturate(prev), cell), SaturatingMul(prevVals, size)))
	case LayoutCompact:
		mlf := compactMLF(opt)
		final, prev := compactSlotsFor(compactReserveSlots(reserve, mlf), uint64(n), mlf)
		slab := func(m uint64) int64 {
			g := compactGeometry(key.Size, value.Size, m, mlf)
			return SaturatingAdd(SaturatingMul(saturate(g.slots), int64(g.w)), int64(g.pad))
		}
		g := compactGeometry(key.Size, value.Size, final, mlf)
		p.BucketCount = saturate(g.m + g.maxDisp)
		p.FinalBytes = SaturatingAdd(slab(final), int64(unsafe.Sizeof(Compact[U128, U128]{})))
		if prev > 0 {
			// The growth pass releases the old slab behind it (Linux):
			// at its end at most two release steps of it are left.
			p.GrowthBytes = slab(prev)
			if compactStreamRelease {
				p.GrowthBytes = min(p.GrowthBytes, 2*compactReleaseEvery)
			}
		}
	case LayoutIceberg:
		mlf := icebergMLF(opt)
		final, prev := icebergBucketsFor(key.Size, value.Size, icebergReserveBuckets(key.Size, value.Size, reserve, mlf), uint64(n), mlf)
		sh := icebergShapeOf(key.Size, value.Size, final, mlf)
		yard := func(y icebergYard) int64 {
			return SaturatingAdd(SaturatingMul(saturate(y.m), int64(y.bb)), icebergPad)
		}
		p.BucketCount = saturate(sh.front.m*sh.front.c + sh.back.m*sh.back.c)
		p.FinalBytes = SaturatingAdd(SaturatingAdd(yard(sh.front), yard(sh.back)), int64(unsafe.Sizeof(Iceberg[U128, U128]{})))
		if prev > 0 {
			// A growth holds the new yards, the old back yard, and the old
			// front yard's part the pass has not released yet.
			old := icebergShapeOf(key.Size, value.Size, prev, mlf)
			p.GrowthBytes = SaturatingAdd(yard(old.back), yard(old.front))
			if compactStreamRelease {
				p.GrowthBytes = SaturatingAdd(yard(old.back), min(yard(old.front), 2*compactReleaseEvery))
			}
		}
	case LayoutGoMap:
		slot := int64(PaddedCellBytes(key, value))
		slots, tables := goMapGeometry(n, saturate(reserve))
		p.BucketCount = slots
		p.FinalBytes = goMapBytes(slots, tables, slot)
		// Tables split one at a time: the peak is one table above the
		// final, unless the hint made room for them all.
		if uint64(n) > reserve {
			p.GrowthBytes = min(slots, 1024) * (slot + 1)
		}
		p.Estimated = true
	default:
		_, err := ParseLayout(string(layout))
		return Prediction{}, err
	}
	return p, nil
}

// ShardReserve is the reservation each of `shards` tables gets for a
// Sharded table reserved for `reserve` keys in all: its even share plus six
// standard deviations of how many keys a shard gets (a binomial count:
// shardHash spreads keys evenly), so that no shard of a load of `reserve`
// random keys outgrows its table; a shard that does grows as usual. At 1e8
// keys in 16 shards the margin is 0.24 % of a share. One shard gets it all.
func ShardReserve(reserve int64, shards int) uint64 {
	if reserve <= 0 {
		return 0
	}
	r := uint64(reserve)
	if shards <= 1 {
		return r
	}
	share := (r + uint64(shards) - 1) / uint64(shards)
	return share + uint64(math.Ceil(6*math.Sqrt(float64(share))))
}

// copiedSlab is what a growth that reallocates a slab of `old` bytes holds
// above the new one: nothing where slabs grow in place (Linux: mremap moves
// the old pages into the new slab), the old slab where they are copied.
func copiedSlab(old int64) int64 {
	if slabsGrowInPlace {
		return 0
	}
	return old
}

// emptyBytes is bytes_allocated of an empty table of layout l for
// <key,value>, as the table itself computes it: what Predict adds to the
// cells it works out (the header, the zero-key cell) so that its figure for
// the computed layouts is exact, whatever their headers hold. One small
// empty table per layout and pair of sizes is built, once.
func emptyBytes(l Layout, key, value Type) int64 {
	k := emptyKey{l, key.Size, value.Size}
	if b, ok := emptyCache.Load(k); ok {
		return b.(int64)
	}
	var b int64
	switch key.Size {
	case 1:
		b = emptyBytesV[uint8](l, value)
	case 2:
		b = emptyBytesV[uint16](l, value)
	case 4:
		b = emptyBytesV[uint32](l, value)
	case 8:
		b = emptyBytesV[uint64](l, value)
	default:
		b = emptyBytesV[U128](l, value)
	}
	emptyCache.Store(k, b)
	return b
}

type emptyKey struct {
	l                  Layout
	keySize, valueSize int
}

var emptyCache sync.Map // emptyKey -> int64

func emptyBytesV[K Bits](l Layout, value Type) int64 {
	// A row (Options.ValueBytes) is carried in the narrowest V that holds it.
	switch {
	case value.Size <= 1:
		return emptyOf[K, uint8](l, value.Size)
	case value.Size <= 2:
		return emptyOf[K, uint16](l, value.Size)
	case value.Size <= 4:
		return emptyOf[K, uint32](l, value.Size)
	case value.Size <= 8:
		return emptyOf[K, uint64](l, value.Size)
	}
	return emptyOf[K, U128](l, value.Size)
}

func emptyOf[K, V Bits](l Layout, valueBytes int) int64 {
	opt := Options{}
	if l == LayoutPacked || l == LayoutCompact || l == LayoutIceberg {
		opt.ValueBytes = valueBytes
	}
	m, err := New[K, V](l, opt)
	if err != nil {
		return 0
	}
	defer m.Close()
	return m.Stats().BytesAllocated
}
