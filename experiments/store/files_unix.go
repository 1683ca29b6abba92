//go:build unix

package store

import "syscall"

// openNonblock is or-ed into the flags of an open that must not wait: on a
// named pipe, open(2) without it blocks until the other end opens.
const openNonblock = syscall.O_NONBLOCK

// processAlive reports whether process pid exists (another user's too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
