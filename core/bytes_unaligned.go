//go:build (amd64 || arm64) && !race && !asan && !msan

package core

import "unsafe"

// amd64 and arm64 load and store at any address, so a cell's key is one
// MOVQ (LDR) away however the stride places it. The conversion of an
// unaligned address to *T is exactly what the pointer checker of -race,
// -asan and -msan rejects (checkptr: "misaligned pointer conversion"), so
// those builds use bytes_portable.go instead; the race run of `make test`
// tests that twin.
//
// What it buys: the portable twin costs ~10 instructions a load (a copy of
// constant length, with its slice checks), or a call per load when written
// with encoding/binary (its size switch is too large to inline into the
// probe loop). Measured with the anchors harness at 1e7 <UInt64,UInt16>
// (README, performance).

// loadBitsAt reads a T at p; the caller guarantees that p and the
// sizeof(T) bytes after it lie inside one slab.
func loadBitsAt[T Bits](p unsafe.Pointer) T { return *(*T)(p) }

// storeBitsAt writes t at p (see loadBitsAt).
func storeBitsAt[T Bits](p unsafe.Pointer, t T) { *(*T)(p) = t }
