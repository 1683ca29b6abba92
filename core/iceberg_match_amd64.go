package core

import "unsafe"

// icebergMatch is the slots among the first n (of c <= 64) of the bucket
// at p whose fingerprint byte is fp, one bit a slot: the header's bytes
// 1..c compared 16 at a time (iceberg_amd64.s). Elsewhere it is
// icebergMatchWords, 8 at a time.
//
//go:noescape
func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64
