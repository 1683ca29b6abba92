//go:build !(linux || darwin)

package core

import (
	"sync/atomic"
	"unsafe"
)

// Where there is no mmap (js/wasm, Windows, ...), a slab is a Go
// allocation: []uint64, so that cells of any alignment up to 8 fit it,
// released to the collector when the table drops it. A growing slab is
// copied into a new one.

const slabsGrowInPlace = false

// slabsMapped: slabs are mappings the OS may refuse, not Go allocations.
const slabsMapped = false

// slabsAskHugePages: no transparent huge pages here.
const slabsAskHugePages = false

var slabPoison atomic.Bool

const poisonable = false

func osAlloc(bytes uintptr) ([]byte, error) {
	w := make([]uint64, (bytes+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), bytes), nil
}

func osFree(b []byte) {}

func unpoison() {}

func osGrow(b []byte, bytes uintptr) ([]byte, error) { return growByCopy(b, bytes) }
