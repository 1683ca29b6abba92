#include "textflag.h"

// func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64
//
// The header's bytes 1..c (c <= 64) compared with fp 16 at a time
// (PCMPEQB, PMOVMSKB: SSE2, every amd64 has it), the bits of the first n
// kept. It reads 16, 32 or 64 bytes from p+1: within the bucket, the next
// one or the slab's pad.
TEXT ·icebergMatch(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), AX
	MOVBQZX fp+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), SI
	MOVQ $0x0101010101010101, DX
	IMULQ DX, BX
	MOVQ BX, X0
	PUNPCKLQDQ X0, X0
	MOVOU 1(AX), X1
	PCMPEQB X0, X1
	PMOVMSKB X1, BX
	CMPQ SI, $16
	JLE mask
	MOVOU 17(AX), X2
	PCMPEQB X0, X2
	PMOVMSKB X2, DX
	SHLQ $16, DX
	ORQ DX, BX
	CMPQ SI, $32
	JLE mask
	MOVOU 33(AX), X3
	MOVOU 49(AX), X4
	PCMPEQB X0, X3
	PCMPEQB X0, X4
	PMOVMSKB X3, DX
	PMOVMSKB X4, DI
	SHLQ $48, DI
	SHLQ $32, DX
	ORQ DI, DX
	ORQ DX, BX
mask:
	CMPQ CX, $64
	JAE done
	MOVQ $1, DX
	SHLQ CX, DX
	DECQ DX
	ANDQ DX, BX
done:
	MOVQ BX, ret+32(FP)
	RET
