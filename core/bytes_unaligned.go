//go:build amd64 || arm64 || 386 || wasm || ppc64le || s390x || loong64

package core

import "unsafe"

// These machines load and store at any address (wasm's memory instructions
// take any address too), so a cell's key is one move (MOVQ, LDR) however
// the stride places it. The race detector's pointer checks accept it:
// checkptr rejects a misaligned conversion only for types that hold
// pointers (Go issue 37298), and Bits never do. Elsewhere
// bytes_portable.go moves the bytes one by one.

// loadBitsAt reads a T at p; the caller guarantees that p and the
// sizeof(T) bytes after it lie inside one slab.
func loadBitsAt[T Bits](p unsafe.Pointer) T { return *(*T)(p) }

// storeBitsAt writes t at p (see loadBitsAt).
func storeBitsAt[T Bits](p unsafe.Pointer, t T) { *(*T)(p) = t }
