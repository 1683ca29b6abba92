package core

import "unsafe"

func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64 {
	return icebergMatchWords(p, fp, n, c)
}

// prefetchLines asks the cache for the lines lines (>= 1) from p on.
//
//go:noescape
func prefetchLines(p unsafe.Pointer, lines uintptr)
