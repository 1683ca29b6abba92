//go:build linux || darwin

package core

import (
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// On Linux and macOS a slab is an anonymous private mapping: zero pages
// that become resident only when first written (as calloc's large blocks),
// invisible to the Go collector, and returned to the OS by munmap at once.

// slabPoison, when set (tests only), makes osFree revoke access to a slab
// instead of unmapping it, so that any later touch faults rather than
// reading a new mapping that reused the address. poisoned collects them.
var (
	slabPoison atomic.Bool
	poisonMu   sync.Mutex
	poisoned   [][]byte
)

func osAlloc(bytes uintptr) ([]byte, error) {
	b, err := syscall.Mmap(-1, 0, int(bytes), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, err
	}
	adviseSlab(b)
	return b, nil
}

func osFree(b []byte) {
	if slabPoison.Load() {
		if err := syscall.Mprotect(b, syscall.PROT_NONE); err != nil {
			panic("core: poisoning a slab: " + err.Error())
		}
		poisonMu.Lock()
		poisoned = append(poisoned, b)
		poisonMu.Unlock()
		return
	}
	if err := syscall.Munmap(b); err != nil {
		// Only a slab newSlab did not return can fail here: a bug.
		panic("core: releasing a slab at " + ptrString(unsafe.Pointer(&b[0])) + ": " + err.Error())
	}
}

// unpoison unmaps every slab poisoned so far (tests only).
func unpoison() {
	poisonMu.Lock()
	defer poisonMu.Unlock()
	for _, b := range poisoned {
		_ = syscall.Munmap(b)
	}
	poisoned = nil
}

func ptrString(p unsafe.Pointer) string {
	const hex = "0123456789abcdef"
	u := uintptr(p)
	buf := []byte("0x0000000000000000")
	for i := len(buf) - 1; i >= 2; i-- {
		buf[i] = hex[u&15]
		u >>= 4
	}
	return string(buf)
}

// poisonable: released slabs can be made inaccessible (tests).
const poisonable = true
