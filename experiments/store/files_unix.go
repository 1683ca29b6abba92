//go:build unix

package store

import "syscall"

// processAlive reports whether process pid exists (another user's too).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
