package core

import (
	"math/bits"
	"unsafe"

	"github.com/packlab/packlab/core/internal/mix"
)

// intHash64 is the Murmur3 64-bit finalizer (fmix64), ClickHouse's
// DefaultHash for integer keys. ClickHouse's Hash.h calls the identity hash
// "disastrous" for linear probing: sequential keys would fill one run.
//
// It is mix.Mix's shape written out: through mix.Mix (6 arguments) hashKey
// would cost 71 of the inliner's 80 and Sparse's hashBatch 91, and Sparse's
// batch loops would then call hashBatch instead of holding it.
func intHash64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// hashKey is the in-table hash: which cell a key's probe starts at. Keys of
// up to 8 bytes are zero-extended and finalized (ClickHouse's intHash64); a
// 16-byte key folds its high word into the low one through a multiply by an
// odd constant first, so both words reach every bit of the result.
//
// It is written to stay under the compiler's inlining budget (cost 80), so
// that the probe loops call no function: ToUint64's size switch (cost 60)
// made it cost 172, and a second finalizer for the high word 127.
func hashKey[K Bits](k K) uint64 {
	lo, hi := keyWords(k)
	return intHash64(lo ^ hi*0x9e3779b97f4a7c15)
}

// keyWords is ToUint64 for hashing: k's bits zero-extended to two words, by
// storing k at the start of a zeroed [2]uint64. On a little-endian machine
// (amd64, arm64, wasm) the two agree; on a big-endian one the hash differs
// but is still a function of the key's bits, which is all a table needs.
func keyWords[K Bits](k K) (lo, hi uint64) {
	var w U128
	*(*K)(unsafe.Pointer(&w)) = k
	return w[0], w[1]
}

// shardHash picks a key's shard. It must be independent of hashKey, or every
// shard would use only the cells whose index bits match its number. ClickHouse
// uses CRC32C for this; packlab uses a multiply-xorshift mixer (the stafford
// "mix13" variant of splitmix64) with constants unrelated to fmix64's.
func shardHash[K Bits](k K) uint64 {
	lo, hi := ToUint64(k)
	x := lo ^ bits.RotateLeft64(hi, 32)*0x94d049bb133111eb
	return mix.Mix(x, 30, 0xbf58476d1ce4e5b9, 27, 0x94d049bb133111eb, 31)
}

// ShardOf returns the shard, in [0, shards), that owns key. ClickHouse takes
// the hash modulo the shard count, not a mask, so any count works.
func ShardOf[K Bits](key K, shards int) int {
	if shards <= 1 {
		return 0
	}
	return int(shardHash(key) % uint64(shards))
}

// PairChecksum is one pair's contribution to an order-independent checksum:
// the sum (mod 2^64) over a set of pairs is the same whatever order they were
// loaded in, and changes when a pair is lost, added twice or altered.
func PairChecksum[K, V Bits](k K, v V) uint64 {
	klo, khi := ToUint64(k)
	vlo, vhi := ToUint64(v)
	return intHash64(klo^intHash64(khi^0x2545f4914f6cdd1d)) ^ intHash64(vlo+bits.RotateLeft64(vhi, 17)+0x9e3779b97f4a7c15)*0x9fb21c651e98df25
}
