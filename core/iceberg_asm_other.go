//go:build !(amd64 || arm64)

package core

import "unsafe"

func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64 {
	return icebergMatchWords(p, fp, n, c)
}

// prefetchLines: no prefetch instruction to hand (wasm has none); a plain
// load would wait for its line, so nothing.
func prefetchLines(p unsafe.Pointer, lines uintptr) {}
