package dict

import (
	"github.com/packlab/packlab/core"
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

// predictor is core.Predict's signature: core.Predict (shards dealt out by
// hash, as ClickHouse's and packlab's are) or core.PredictEven (every shard
// the mean's, the reload model's).
type predictor func(l core.Layout, key, value core.Type, distinct int64, opt core.Options, shards int) (core.Prediction, error)
