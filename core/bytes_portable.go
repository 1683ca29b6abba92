//go:build !(amd64 || arm64 || 386 || wasm || ppc64le || s390x || loong64)

package core

import "unsafe"

// On machines whose loads must be aligned (or are emulated by the kernel
// when they are not), a T is moved as sizeof(T) bytes: a copy of constant
// length through byte pointers, correct at any address.

// loadBitsAt reads a T at p; the caller guarantees that p and the
// sizeof(T) bytes after it lie inside one slab.
func loadBitsAt[T Bits](p unsafe.Pointer) (t T) {
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&t)), unsafe.Sizeof(t)), unsafe.Slice((*byte)(p), unsafe.Sizeof(t)))
	return t
}

// storeBitsAt writes t at p (see loadBitsAt).
func storeBitsAt[T Bits](p unsafe.Pointer, t T) {
	copy(unsafe.Slice((*byte)(p), unsafe.Sizeof(t)), unsafe.Slice((*byte)(unsafe.Pointer(&t)), unsafe.Sizeof(t)))
}
