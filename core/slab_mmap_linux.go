//go:build linux && !(386 || arm || mips || mipsle || s390x)

package core

import "syscall"

// mmapAnon maps bytes of zero pages, private and read-write: mmap with its
// six arguments in registers, as 64-bit Linux takes it.
func mmapAnon(bytes uintptr) (uintptr, syscall.Errno) {
	p, _, e := syscall.Syscall6(syscall.SYS_MMAP, 0, bytes, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS, ^uintptr(0), 0)
	return p, e
}
