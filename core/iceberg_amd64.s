#include "textflag.h"

// MATCH leaves in BX the header's bytes 1..c (c in SI, c <= 64) that equal
// the fingerprint byte in BX, one bit a byte, of the bucket at AX:
// compared 16 at a time (PCMPEQB, PMOVMSKB: SSE2, every amd64 has it),
// 16, 32 or 64 bytes read from AX+1 (within the bucket, the next one or
// the slab's pad), then on to the label done. It writes DX, t and X0-X4.
#define MATCH(t, done) \
	MOVQ $0x0101010101010101, DX \
	IMULQ DX, BX \
	MOVQ BX, X0 \
	PUNPCKLQDQ X0, X0 \
	MOVOU 1(AX), X1 \
	PCMPEQB X0, X1 \
	PMOVMSKB X1, BX \
	CMPQ SI, $16 \
	JLE done \
	MOVOU 17(AX), X2 \
	PCMPEQB X0, X2 \
	PMOVMSKB X2, DX \
	SHLQ $16, DX \
	ORQ DX, BX \
	CMPQ SI, $32 \
	JLE done \
	MOVOU 33(AX), X3 \
	MOVOU 49(AX), X4 \
	PCMPEQB X0, X3 \
	PCMPEQB X0, X4 \
	PMOVMSKB X3, DX \
	PMOVMSKB X4, t \
	SHLQ $48, t \
	SHLQ $32, DX \
	ORQ t, DX \
	ORQ DX, BX

// func icebergMatch(p unsafe.Pointer, fp byte, n, c uint64) uint64
//
// The header's bytes 1..c that equal fp (MATCH), the bits of the first n
// kept.
TEXT ·icebergMatch(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), AX
	MOVBQZX fp+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), SI
	MATCH(DI, mask)
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

// func icebergMatchBatch(base unsafe.Pointer, offs *icebergHomes, xs, cands *[icebergKeys]uint64, n int, shift, lmask, c, so, st, kb uint64) (none uint64)
//
// icebergMatch for the n buckets at base+offs[j], the fingerprint of hash
// xs[j] (the low byte of xs[j]>>shift & lmask), the count from the bucket's
// header, into cands[j]: one call a batch in place of one a key, so that
// the loop around it keeps its values in registers (GetMany's match
// stage). It prefetches the lines of each bucket's first candidate slot,
// the one at bit so + s*st (its first byte and byte 7 past bit +kb), and
// returns bit j set for each key with no candidate.
TEXT ·icebergMatchBatch(SB), NOSPLIT, $0-96
	MOVQ base+0(FP), R8
	MOVQ offs+8(FP), R9
	MOVQ xs+16(FP), R10
	MOVQ cands+24(FP), R11
	MOVQ n+32(FP), R12
	MOVQ lmask+48(FP), R13
	MOVQ c+56(FP), SI
	MOVQ $1, R14 // bit j
	XORQ R15, R15 // none
	TESTQ R12, R12
	JLE batchdone
batchloop:
	MOVQ (R9), AX
	ADDQ R8, AX
	MOVQ (R10), BX
	MOVQ shift+40(FP), CX
	SHRQ CX, BX
	ANDQ R13, BX
	MOVBQZX BL, BX
	MOVBQZX (AX), DI
	ANDQ $0x3f, DI
	MATCH(CX, batchmask)
batchmask:
	// The first count slots' bits (a count is at most 63).
	MOVQ DI, CX
	MOVQ $1, DX
	SHLQ CX, DX
	DECQ DX
	ANDQ DX, BX
	MOVQ BX, (R11)
	TESTQ BX, BX
	JZ batchnone
	// The first candidate's slot's lines.
	BSFQ BX, CX
	IMULQ st+72(FP), CX
	ADDQ so+64(FP), CX
	MOVQ CX, DX
	SHRQ $3, CX
	PREFETCHT0 (AX)(CX*1)
	ADDQ kb+80(FP), DX
	SHRQ $3, DX
	PREFETCHT0 7(AX)(DX*1)
	JMP batchnext
batchnone:
	ORQ R14, R15
batchnext:
	SHLQ $1, R14
	ADDQ $8, R9
	ADDQ $8, R10
	ADDQ $8, R11
	DECQ R12
	JNZ batchloop
batchdone:
	MOVQ R15, none+88(FP)
	RET
