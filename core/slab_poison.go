//go:build linux || darwin

package core

import (
	"sync"
	"sync/atomic"
	"syscall"
)

// slabPoison, when set (tests only), makes osFree revoke access to a slab
// instead of unmapping it, so that any later touch faults rather than
// reading a new mapping that reused the address; osGrow then always moves.
// poisoned collects the revoked slabs, which unpoison unmaps.
var (
	slabPoison atomic.Bool
	poisonMu   sync.Mutex
	poisoned   [][]byte
)

// osFree returns a slab to the OS (osUnmap), or poisons it in tests.
func osFree(b []byte) {
	if slabPoison.Load() {
		poison(b)
		return
	}
	osUnmap(b)
}

// poisonable: released slabs can be made inaccessible (tests).
const poisonable = true

func poison(b []byte) {
	if err := syscall.Mprotect(b, syscall.PROT_NONE); err != nil {
		panic("core: poisoning a slab: " + err.Error())
	}
	poisonMu.Lock()
	poisoned = append(poisoned, b)
	poisonMu.Unlock()
}

// unpoison unmaps every slab poisoned so far (tests only).
func unpoison() {
	poisonMu.Lock()
	defer poisonMu.Unlock()
	for _, b := range poisoned {
		osUnmap(b)
	}
	poisoned = nil
}
