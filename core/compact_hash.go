package core

import "unsafe"

// The compact layout's hashes are bijections: a key of w bits maps to a
// hash of w bits and back, so a table that knows part of the hash from where
// it keeps the pair (the home slot) need store only the rest, and can still
// give the key back (compact.go).
//
//	key bytes  hash                                          inverse
//	1, 2, 4, 8 fmix64's steps on the key's w bits, placed in  the steps backwards
//	           the top of the word (for w = 64 exactly
//	           ClickHouse's intHash64)
//	16         3 Feistel rounds of 64-bit halves with        the rounds in reverse
//	           intHash64 as the round function                order
//
// Every step is invertible: x ^= x >> k is its own inverse on w bits when
// k >= w/2 (the bits it reads are ones it did not change), a multiply by an
// odd constant is undone by a multiply by its inverse mod 2^64 (which is
// also its inverse mod 2^w), and a Feistel round a ^= F(b) is undone by
// itself whatever F is. TestCompactHashInverts checks every width.
//
// A key of w < 64 bits works in the top w bits of the word: the word's low
// 64-w bits stay zero through every step (the shifts are masked, and a
// multiply keeps low zero bits zero), so one function serves every width
// and inlines into the probe loops.

// compactMix mixes the top 64-L bits of y, whose low L bits are zero.
func compactMix(y uint64, L uint) uint64 {
	sh, keep := 33-L/2, ^uint64(0)<<L
	y ^= y >> sh & keep
	y *= 0xff51afd7ed558ccd
	y ^= y >> sh & keep
	y *= 0xc4ceb9fe1a85ec53
	y ^= y >> sh & keep
	return y
}

// compactUnmix inverts compactMix.
func compactUnmix(y uint64, L uint) uint64 {
	sh, keep := 33-L/2, ^uint64(0)<<L
	y ^= y >> sh & keep
	y *= 0x9cb4b2f8129337db // 0xc4ceb9fe1a85ec53^-1 mod 2^64
	y ^= y >> sh & keep
	y *= 0x4f74430c22a54005 // 0xff51afd7ed558ccd^-1
	y ^= y >> sh & keep
	return y
}

// compactHashWord is the hash of a key of at most 8 bytes: its bits mixed,
// in the top of the word. It inlines into the probe loops.
func compactHashWord[K Bits](k K) uint64 {
	var w U128
	*(*K)(unsafe.Pointer(&w)) = k
	L := 64 - 8*uint(unsafe.Sizeof(k))
	if hostBigEndian {
		return compactMix(w[0]>>L<<L, L) // the key's bytes come first: the top of the word there
	}
	return compactMix(w[0]<<L, L)
}

// Feistel round keys: intHash64(0) == 0, so each round mixes its input
// with a constant first (digits of pi, e and sqrt 2).
const (
	feistelKey1 = 0x243f6a8885a308d3
	feistelKey2 = 0xb7e151628aed2a6a
	feistelKey3 = 0x6a09e667f3bcc908
)

// feistel128 runs three Feistel rounds over (a, b) with the round keys k1,
// k2, k3. Forward (feistelKey1, 2, 3) it mixes a 16-byte key (lo, hi) into
// (e, x): x, the word a table takes its home slot from, depends on every
// bit of both halves. The same rounds with the keys in reverse order (3, 2,
// 1) undo it: each round is b ^= f(a) or a ^= f(b), its own inverse.
func feistel128(a, b, k1, k2, k3 uint64) (uint64, uint64) {
	b ^= intHash64(a ^ k1)
	a ^= intHash64(b ^ k2)
	b ^= intHash64(a ^ k3)
	return a, b
}

// compactHash is the compact table's hash of any key: x, whose order is
// the table's slot order, and e, the second word of a 16-byte key's hash
// (0 for narrower keys).
func compactHash[K Bits](k K) (x, e uint64) {
	if sizeOf[K]() <= 8 {
		return compactHashWord(k), 0
	}
	lo, hi := ToUint64(k)
	e, x = feistel128(lo, hi, feistelKey1, feistelKey2, feistelKey3)
	return x, e
}

// compactKey inverts compactHash.
func compactKey[K Bits](x, e uint64) K {
	if sizeOf[K]() <= 8 {
		L := uint(64 - 8*sizeOf[K]())
		return FromUint64[K](compactUnmix(x, L)>>L, 0)
	}
	lo, hi := feistel128(e, x, feistelKey3, feistelKey2, feistelKey1)
	return FromUint64[K](lo, hi)
}
