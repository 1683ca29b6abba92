package core

import "unsafe"

// icebergMatch is the slots among the first n (of c <= 64) of the bucket
// at p whose fingerprint byte is fp, one bit a slot: the header's bytes
// 1..c compared 16 at a time (iceberg_amd64.s). Elsewhere it is
// icebergMatchWords, 8 at a time.
//
//go:noescape
func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64

// icebergMatchBatch is icebergMatch for a batch: cands[j] is the candidate
// slots of the bucket at base+offs[j] for the fingerprint of hash xs[j]
// (the low byte of xs[j]>>shift & lmask), j < n; one assembly call a
// batch (iceberg_amd64.s). It prefetches the lines of each bucket's first
// candidate slot (the one at bit so + s*st of its bucket; its first byte,
// and byte 7 past bit +kb) and returns bit j set where cands[j] is 0.
//
//go:noescape
func icebergMatchBatch(base unsafe.Pointer, offs *icebergHomes, xs, cands *[icebergKeys]uint64, n int, shift, lmask, c, so, st, kb uint64) (none uint64)

// icebergGetWord is a single Get's front-yard lookup of hash x in f, in
// one call (iceberg_amd64.s): r is icebergHit (w the slot's value bits),
// icebergMiss, icebergBack or icebergSlots (see icebergGetWordGo, which
// is what it computes).
//
//go:noescape
func icebergGetWord(f *icebergYard, x uint64) (w, r uint64)
