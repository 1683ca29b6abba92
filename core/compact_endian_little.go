//go:build !(mips || mips64 || ppc64 || s390x)

package core

// hostBigEndian: keyWords puts a narrow key's bytes at the bottom of its word.
const hostBigEndian = false
