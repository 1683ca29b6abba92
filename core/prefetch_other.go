//go:build !(amd64 || arm64)

package core

import "unsafe"

// prefetchOffsets touches the byte at base+offs[i] for each of the first n
// offsets: with no prefetch instruction to hand (wasm has none), plain
// independent loads, which the CPU can still overlap.
func prefetchOffsets(base unsafe.Pointer, offs *homes, n int) {
	var sink uint8
	for _, o := range offs[:n] {
		sink += *(*uint8)(unsafe.Add(base, o))
	}
	touchSink.Store(uint32(sink))
}

// prefetchLines: a plain load would wait for its line, so nothing.
func prefetchLines(p unsafe.Pointer, lines uintptr) {}
