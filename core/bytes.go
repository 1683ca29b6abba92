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

// A row (Options.ValueBytes) is a value narrower than its V: the row's
// bytes are the low vs bytes of V's bits (FromUint64), the others zero, and
// a cell holds just those, little-endian. rowAt and setRowAt move them: two
// word moves where the row is at least a word, bytes below that; they never
// touch a byte past the row, so a cell at the slab's end is safe.

// rowAt reads a row of vs bytes (0 < vs < sizeof(T)) at p.
func rowAt[T Bits](p unsafe.Pointer, vs uintptr) T {
	b := unsafe.Slice((*byte)(p), vs)
	if vs >= 8 { // a 16-byte T: the low word, then the rest below the row's last word
		lo := le64(b)
		hi := le64(b[vs-8:]) >> (8 * (16 - vs))
		return FromUint64[T](lo, hi)
	}
	var x uint64
	for i := range vs {
		x |= uint64(b[i]) << (8 * i)
	}
	return FromUint64[T](x, 0)
}

// setRowAt writes the row of v's low vs bytes at p (see rowAt).
func setRowAt[T Bits](p unsafe.Pointer, vs uintptr, v T) {
	b := unsafe.Slice((*byte)(p), vs)
	lo, hi := ToUint64(v)
	for i := range vs {
		if i < 8 {
			b[i] = byte(lo >> (8 * i))
		} else {
			b[i] = byte(hi >> (8 * (i - 8)))
		}
	}
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// valueBytes is the bytes of V a table stores: a row's opt.ValueBytes, or
// all of V (New has refused a row wider than V).
func valueBytes[V Bits](opt Options) uintptr {
	if vs := uintptr(max(opt.ValueBytes, 0)); vs > 0 && vs < sizeOf[V]() {
		return vs
	}
	return sizeOf[V]()
}
