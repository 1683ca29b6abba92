//go:build unix

package regular

import "syscall"

// OpenNonblock is or-ed into the flags of an open that must not wait: on a
// named pipe, open(2) without it blocks until the other end opens.
const OpenNonblock = syscall.O_NONBLOCK
