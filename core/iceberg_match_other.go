//go:build !amd64

package core

import "unsafe"

// icebergMatch is icebergMatchWords where there is no SSE2 (iceberg_amd64.s).
func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64 {
	return icebergMatchWords(p, fp, n, c)
}
