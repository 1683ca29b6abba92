package core

import (
	"syscall"
	"unsafe"
)

// mmapAnon maps bytes of zero pages, private and read-write. On s390x mmap
// reads its six arguments from memory, as syscall's own mmap passes them.
func mmapAnon(bytes uintptr) (uintptr, syscall.Errno) {
	args := [6]uintptr{0, bytes, syscall.PROT_READ | syscall.PROT_WRITE,
		syscall.MAP_PRIVATE | syscall.MAP_ANONYMOUS, ^uintptr(0), 0}
	p, _, e := syscall.Syscall(syscall.SYS_MMAP, uintptr(unsafe.Pointer(&args[0])), 0, 0)
	return p, e
}
