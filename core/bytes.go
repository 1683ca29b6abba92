package core

import "unsafe"

// Packed cells sit at any byte offset. bytes_unaligned.go and
// bytes_portable.go move a T to and from such a cell: a plain unaligned
// load or store where the hardware does them (amd64, arm64, wasm, ...), byte
// moves elsewhere. A table only ever reads what it wrote, so the bytes are
// in the machine's order.

// loadBits reads a T stored at the start of b.
func loadBits[T Bits](b []byte) T {
	_ = b[sizeOf[T]()-1] // the one bounds check: b holds a whole T
	return loadBitsAt[T](unsafe.Pointer(unsafe.SliceData(b)))
}

// storeBits writes t at the start of b.
func storeBits[T Bits](b []byte, t T) {
	_ = b[sizeOf[T]()-1]
	storeBitsAt(unsafe.Pointer(unsafe.SliceData(b)), t)
}
