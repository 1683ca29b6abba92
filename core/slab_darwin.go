package core

import "syscall"

// On macOS a slab is an anonymous private mapping (syscall.Mmap); there is
// no mremap, so a growing slab is copied into a new one (growByCopy).

const slabsGrowInPlace = false

// slabsMapped: slabs are mappings the OS may refuse, not Go allocations.
const slabsMapped = true

// slabsAskHugePages: no transparent huge pages here.
const slabsAskHugePages = false

func osAlloc(bytes uintptr) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(bytes), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
}

func osUnmap(b []byte) {
	if err := syscall.Munmap(b); err != nil {
		panic("core: releasing a slab: " + err.Error())
	}
}

func osGrow(b []byte, bytes uintptr) ([]byte, error) { return growByCopy(b, bytes) }
