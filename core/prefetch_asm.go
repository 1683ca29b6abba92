//go:build amd64 || arm64

package core

import "unsafe"

// prefetchOffsets asks the cache for the line at base+offs[i] for each of
// the first n offsets (PREFETCHT0 on amd64, PRFM PLDL1KEEP on arm64): the
// hint retires at once, and the data arrives while the CPU goes on. One
// call per batch: Go has no prefetch intrinsic a package may use.
//
//go:noescape
func prefetchOffsets(base unsafe.Pointer, offs *homes, n int)

// prefetchLines asks the cache for the lines lines (>= 1) from p on: a
// bucket of whole cache lines (iceberg's).
//
//go:noescape
func prefetchLines(p unsafe.Pointer, lines uintptr)
