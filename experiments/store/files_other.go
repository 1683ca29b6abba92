//go:build !unix

package store

// openNonblock: outside Unix there are no named pipes in the file system to
// block an open, and js/wasm has no O_NONBLOCK.
const openNonblock = 0

// processAlive: no other process's life can be asked here; a job's mark
// is taken as its process's end.
func processAlive(pid int) bool { return false }
