//go:build !((amd64 || arm64) && !race && !asan && !msan)

package core

import "unsafe"

// Where unaligned loads are not the hardware's (or a pointer checker
// watches every conversion: -race, -asan, -msan), a T is moved as
// sizeof(T) bytes: a copy of constant length, through byte pointers whose
// alignment is 1, which the checker accepts at any address.

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
