//go:build !linux

package core

// compactStreamRelease: elsewhere a growth holds the old slab whole until
// the pass ends (a Go allocation, or a mapping without madvise in syscall).
const compactStreamRelease = false

type slabReleaser struct{ done uintptr }

func newSlabReleaser([]byte) slabReleaser { return slabReleaser{} }

func (r *slabReleaser) upTo(uintptr) {}
