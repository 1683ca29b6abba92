package core

import (
	"syscall"
	"unsafe"
)

// compactStreamRelease: a growing compact table hands its old slab back to
// the kernel page by page as its growth pass leaves them.
const compactStreamRelease = true

// slabReleaser hands back the start of a slab that a sequential pass has
// finished reading, in whole 2 MiB-aligned pieces (a transparent huge page
// released in part is only split, not freed), with madvise(MADV_DONTNEED):
// the pages leave the process's resident set at once, and the mapping stays
// whole for the munmap that ends it (Go's syscall.Munmap takes only whole
// mappings). Poisoned for tests, they become inaccessible instead.
type slabReleaser struct {
	slab []byte
	done uintptr // bytes of the slab's start released so far
}

func newSlabReleaser(slab []byte) slabReleaser { return slabReleaser{slab: slab} }

// upTo releases what lies before byte n of the slab, once enough has
// gathered.
func (r *slabReleaser) upTo(n uintptr) {
	base := uintptr(unsafe.Pointer(unsafe.SliceData(r.slab)))
	boundary := (base + n) &^ (compactReleaseAlign - 1)
	if boundary < base+r.done+compactReleaseEvery {
		return
	}
	end := boundary - base
	b := r.slab[r.done:end]
	var err error
	if slabPoison.Load() {
		err = syscall.Mprotect(b, syscall.PROT_NONE)
	} else {
		err = syscall.Madvise(b, syscall.MADV_DONTNEED)
	}
	if err != nil {
		return // the pages stay until the slab is unmapped
	}
	slabLive.Add(-int64(len(b)))
	r.done = end
}
