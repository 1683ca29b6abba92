//go:build linux && (386 || arm || mips || mipsle)

package core

import "syscall"

// mmapAnon maps bytes of zero pages, private and read-write. On 32-bit
// Linux mmap is the old call that reads its arguments from memory (386:
// in registers it fails with EFAULT) or is missing (arm); mmap2 takes them
// in registers, its offset in pages (0 here).
func mmapAnon(bytes uintptr) (uintptr, syscall.Errno) {
	p, _, e := syscall.Syscall6(syscall.SYS_MMAP2, 0, bytes, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS, ^uintptr(0), 0)
	return p, e
}
