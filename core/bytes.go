package core

import (
	"encoding/binary"
	"unsafe"
)

// loadBits reads a T stored little-endian at the start of b. Packed cells sit
// at any byte offset, and converting an unaligned address to *T is rejected
// by the race detector's pointer checks, so the bytes are read through a
// byte array (see loadBitsAt), which compiles to one unaligned move.
func loadBits[T Bits](b []byte) T {
	_ = b[sizeOf[T]()-1] // the one bounds check: b holds a whole T
	return loadBitsAt[T](unsafe.Pointer(unsafe.SliceData(b)))
}

// storeBits writes t little-endian at the start of b.
func storeBits[T Bits](b []byte, t T) {
	p := unsafe.Pointer(&t)
	switch sizeOf[T]() {
	case 1:
		b[0] = *(*uint8)(p)
	case 2:
		binary.LittleEndian.PutUint16(b, *(*uint16)(p))
	case 4:
		binary.LittleEndian.PutUint32(b, *(*uint32)(p))
	case 8:
		binary.LittleEndian.PutUint64(b, *(*uint64)(p))
	default:
		w := *(*U128)(p)
		binary.LittleEndian.PutUint64(b, w[0])
		binary.LittleEndian.PutUint64(b[8:], w[1])
	}
}

// loadBitsAt is loadBits at p with no bounds check: the caller guarantees
// that p and the sizeof(T) bytes after it lie inside one slab. The load goes
// through a byte array, whose alignment is 1, so it is as legal at an odd
// address as loadBits, and the race detector's pointer checks accept it.
func loadBitsAt[T Bits](p unsafe.Pointer) T {
	var t T
	q := unsafe.Pointer(&t)
	switch sizeOf[T]() {
	case 1:
		*(*uint8)(q) = *(*uint8)(p)
	case 2:
		*(*uint16)(q) = binary.LittleEndian.Uint16((*[2]byte)(p)[:])
	case 4:
		*(*uint32)(q) = binary.LittleEndian.Uint32((*[4]byte)(p)[:])
	case 8:
		*(*uint64)(q) = binary.LittleEndian.Uint64((*[8]byte)(p)[:])
	default:
		b := (*[16]byte)(p)
		*(*U128)(q) = U128{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	}
	return t
}
