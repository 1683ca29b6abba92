package core

import "syscall"

// hugeSlab is the size from which a slab asks for transparent huge pages.
const hugeSlab = 4 << 20

// adviseSlab asks the kernel to back a large slab with 2 MiB pages
// (transparent huge pages, `madvise` mode on most distributions). Random
// probes over hundreds of MB then miss the TLB far less: see the README's
// performance section for what it buys. A kernel that refuses is ignored.
func adviseSlab(b []byte) {
	if len(b) >= hugeSlab && slabHuge {
		_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	}
}

// slabHuge turns the huge-page advice on; a variable so benchmarks can
// compare with and without.
var slabHuge = true
