//go:build unix

package store

import "syscall"

// openNonblock is or-ed into the flags of an open that must not wait: on a
// named pipe, open(2) without it blocks until the other end opens.
const openNonblock = syscall.O_NONBLOCK
