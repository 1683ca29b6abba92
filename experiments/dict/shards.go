package dict

import (
	"math"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict/alloc"
)

// ClickHouse deals a sharded dictionary's keys out by their hash (a key's
// shard is its hash modulo the shards), so a shard's keys are binomial
// about distinct/shards, not that mean each. Where the mean lies near a
// growth point some shards grow and some do not: 200,000 rows in
// SPARSE_HASHED(SHARDS 64 MAX_LOAD_FACTOR 0.77) held 25,258,400 bytes on a
// 26.7 server, its UInt16's PackedHashMaps 5,087,336 alone, where 64 even
// shards of 3,125 keys (2^12 cells, 3,154 at most) hold 20,888,992 and
// 2,629,736: about a third of the shards got more than 3,154 keys and
// grew to 2^14 cells. With 1e6 keys a shard or more the spread is a tenth
// of a percent of the mean, and a shard's table is the mean's.

// predictor is core.Predict's signature: core.Predict (even shards) or
// shardedPredict (ClickHouse's hash-dealt ones).
type predictor func(l core.Layout, key, value core.Type, distinct int64, opt core.Options, shards int) (core.Prediction, error)

// eachShard calls g with core.Predict's one table of layout l for each
// count of keys a hash deals a shard (alloc.ShardSpread) and its weight;
// each table reserved for its share of opt's reservation.
func eachShard(l core.Layout, key, value core.Type, distinct int64, opt core.Options, shards int, g func(p core.Prediction, n int64, weight float64)) error {
	one := opt
	one.Reserve = int64(core.ShardReserve(opt.Reserve, shards))
	var err error
	alloc.ShardSpread(distinct, shards, func(n int64, w float64) {
		p, e := core.Predict(l, key, value, n, one, 1)
		if e != nil {
			err = e
			return
		}
		g(p, n, w)
	})
	return err
}

// shardedPredict is core.Predict of ClickHouse's shards tables of layout l
// over distinct keys dealt out by their hash: each shard's figures its
// expectation over the spread of its keys (eachShard), summed; where every
// count of the spread builds the mean's table, core.Predict's even shards
// as they are.
func shardedPredict(l core.Layout, key, value core.Type, distinct int64, opt core.Options, shards int) (core.Prediction, error) {
	even, err := core.Predict(l, key, value, distinct, opt, shards)
	if err != nil || shards <= 1 || even.Saturated {
		return even, err
	}
	var cells, final, growth, values float64
	same := true
	err = eachShard(l, key, value, distinct, opt, shards, func(p core.Prediction, _ int64, w float64) {
		same = same && p.BucketCount*int64(shards) == even.BucketCount && p.ValueBytes*int64(shards) == even.ValueBytes
		cells += w * float64(p.BucketCount)
		final += w * float64(p.FinalBytes)
		growth += w * float64(p.GrowthBytes)
		values += w * float64(p.ValueBytes)
	})
	if err != nil || same {
		return even, err
	}
	s := float64(shards)
	out := even
	out.BucketCount = int64(math.Round(cells * s))
	out.FinalBytes = int64(math.Round(final * s))
	out.GrowthBytes = int64(math.Round(growth))
	out.ValueBytes = int64(math.Round(values * s))
	out.PeakBytes = int64(math.Round((final + growth) * s))
	return out, nil
}
