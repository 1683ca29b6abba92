//go:build !amd64

package core

import "unsafe"

// icebergMatch is icebergMatchWords where there is no SSE2 (iceberg_amd64.s).
func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64 {
	return icebergMatchWords(p, fp, n, c)
}

// icebergMatchBatch is icebergMatchBatchWords where there is no SSE2.
func icebergMatchBatch(base unsafe.Pointer, offs *icebergHomes, xs, cands *[icebergKeys]uint64, n int, shift, lmask, c, so, st, kb uint64) uint64 {
	return icebergMatchBatchWords(base, offs, xs, cands, n, shift, lmask, c, so, st, kb)
}

// icebergGetWord is icebergGetWordGo where there is no assembly version.
func icebergGetWord(f *icebergYard, x uint64) (w, r uint64) { return icebergGetWordGo(f, x) }
