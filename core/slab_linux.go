package core

import (
	"syscall"
	"unsafe"
)

// On Linux a slab is an anonymous private mapping, made and released with
// raw system calls (not syscall.Mmap, whose bookkeeping cannot follow a
// mapping that mremap moved): zero pages that become resident only when
// first written, invisible to the Go collector, returned by munmap at once.
//
// A growing slab is remapped, as ClickHouse's Allocator::realloc does with
// mremap for large buffers: the kernel moves the page table entries, not
// the bytes, so the old cells need no copy and are never resident twice.
// A table that grows this way holds only its new slab at the peak of a
// growth (slabsGrowInPlace), where a copy would hold the old one beside it.

// slabsGrowInPlace: osGrow keeps the old pages (mremap), so a growth's
// peak is the new slab alone.
const slabsGrowInPlace = true

// slabsMapped: slabs are mappings the OS may refuse, not Go allocations.
const slabsMapped = true

// hugeSlab is the size from which a slab asks for transparent huge pages.
const hugeSlab = 4 << 20

// slabsAskHugePages: large slabs may ask for transparent huge pages
// (HugePages, SetHugePages).
const slabsAskHugePages = true

func osAlloc(bytes uintptr) ([]byte, error) {
	p, e := mmapAnon(bytes)
	if e != 0 {
		return nil, e
	}
	b := unsafe.Slice((*byte)(mapped(p)), bytes)
	adviseSlab(b)
	return b, nil
}

// adviseSlab asks the kernel to back a large slab with 2 MiB pages
// (transparent huge pages, `madvise` mode on most distributions), as
// ClickHouse's Allocator can: a probe over hundreds of MB then misses the
// TLB far less, and a load takes one page fault per 2 MiB instead of per
// 4 KiB. With huge pages turned off (SetHugePages) it refuses them instead,
// so that "off" means off under the `always` mode too. A kernel that
// refuses the advice is ignored.
func adviseSlab(b []byte) {
	if len(b) < hugeSlab {
		return
	}
	advice := syscall.MADV_HUGEPAGE
	if !slabHuge.Load() {
		advice = syscall.MADV_NOHUGEPAGE
	}
	_ = syscall.Madvise(b, advice)
}

func osUnmap(b []byte) {
	if _, _, e := syscall.Syscall(syscall.SYS_MUNMAP, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0); e != 0 {
		// Only a slab osAlloc did not return can fail here: a bug.
		panic("core: releasing a slab: " + e.Error())
	}
}

// osGrow returns b grown to bytes (> len(b)): the same contents, zeros
// after them. It may move the slab; b is invalid afterwards unless it
// fails, in which case b is untouched.
func osGrow(b []byte, bytes uintptr) ([]byte, error) {
	if slabPoison.Load() {
		return growByCopy(b, bytes)
	}
	const mremapMayMove = 1
	p, _, e := syscall.Syscall6(syscall.SYS_MREMAP, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), bytes, mremapMayMove, 0, 0)
	if e != 0 {
		return nil, e
	}
	g := unsafe.Slice((*byte)(mapped(p)), bytes)
	adviseSlab(g)
	return g, nil
}

// mapped turns an address the kernel returned into a pointer. The memory is
// not Go's: the collector never moves or frees it, so the hazard go vet
// warns of in a uintptr-to-pointer conversion does not apply.
func mapped(addr uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&addr)) }
