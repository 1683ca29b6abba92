#include "textflag.h"
#include "go_asm.h"

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

// func icebergGetWord(f *icebergYard, x uint64) (w, r uint64)
//
// A single Get's front-yard lookup, written out in one call (see
// icebergGetWordGo, the same in Go): the bucket's other lines prefetched,
// the header matched 32 bytes at a time, the candidates' slots read one
// 8-byte load each, then the spill bit. Its fields are read through
// go_asm.h's offsets, as memory operands where an instruction takes one.
//
// What bounds a loop of single Gets is how many of them the CPU holds in
// flight while their buckets' lines come from memory, and what runs out
// first is its integer registers: in one process at 1e7 (CPU ns a Get,
// through an interface, as the side-by-side harness calls it), 64 more
// instructions that each write a general register cost 41-49 ns, 64 NOPs
// or compares (no register written) nothing, 24 that wait on the bucket's
// line 26-28. So this path writes as few general registers as it can: the
// fingerprint is broadcast in an XMM register (PUNPCKLBW, PSHUFLW), the
// prefetches are two instructions with no loop, the count is not read
// (the slots past it are zero: the yard's constant mask, cmask, keeps the
// c fingerprints, and a key whose remainder is 0, the one an empty slot
// could match, takes the Go path), constants and fields are memory
// operands. Measured against the code before it: see Get.
TEXT ·icebergGetWord(SB), NOSPLIT, $0-32
	MOVQ f+0(FP), DI
	CMPB icebergYard_word(DI), $0
	JEQ getslots
	MOVQ x+8(FP), AX
	MOVQ AX, R8
	MULQ icebergYard_m(DI)
	MOVQ icebergYard_bb(DI), CX
	IMULQ CX, DX
	ADDQ icebergYard_base(DI), DX
	MOVQ DX, SI // p, the front bucket
	// Its other lines (a yard of one-word slots has buckets of 1 to 4):
	// the second and the last, then any between them.
	CMPQ CX, $64
	JEQ getrem
	PREFETCHT0 64(SI)
	PREFETCHT0 -64(SI)(CX*1)
	CMPQ CX, $192
	JBE getrem
	LEAQ -128(SI)(CX*1), R9
	LEAQ 128(SI), R10
getpf:
	PREFETCHT0 (R10)
	ADDQ $64, R10
	CMPQ R10, R9
	JBE getpf
getrem:
	// rem = x >> rs & lmask (rs = 64-kw; SHRQ takes the count mod 64).
	MOVQ icebergYard_rs(DI), CX
	SHRQ CX, R8
	ANDQ icebergYard_lmask(DI), R8
	JZ getslots // remainder 0: it could match an empty slot's zero bits
	// The fingerprint, rem's low byte, in all 16 bytes of X0.
	MOVQ R8, X0
	PUNPCKLBW X0, X0
	PSHUFLW $0, X0, X0
	PUNPCKLQDQ X0, X0
	MOVOU 1(SI), X1
	MOVOU 17(SI), X2
	PCMPEQB X0, X1
	PCMPEQB X0, X2
	PMOVMSKB X1, BX
	PMOVMSKB X2, DX
	SHLQ $16, DX
	ORQ DX, BX
	CMPQ icebergYard_c(DI), $32
	JA getwide
getmask:
	// The c fingerprints' bits: the slots past the count are zero, and
	// match only a zero fingerprint, whose key's remainder past it is
	// not zero (above), so the compare below turns them down.
	ANDQ icebergYard_cmask(DI), BX
	MOVQ R8, R11
	SHRQ $8, R11 // want: the remainder past its fingerprint (a front slot has no choice bit)
getcand:
	TESTQ BX, BX
	JZ getnone
	BSFQ BX, CX
	IMULQ icebergYard_st(DI), CX
	ADDQ icebergYard_so(DI), CX
	MOVQ CX, DX
	SHRQ $3, DX
	MOVQ (SI)(DX*1), DX
	ANDQ $7, CX
	SHRQ CX, DX
	MOVQ DX, R10
	ANDQ icebergYard_kmask(DI), R10
	CMPQ R10, R11
	JNE getnext
	MOVQ icebergYard_kf(DI), CX
	SHRQ CX, DX
	ANDQ icebergYard_vmask(DI), DX
	MOVQ DX, w+16(FP)
	MOVQ $1, r+24(FP) // icebergHit
	RET
getnext:
	LEAQ -1(BX), R10
	ANDQ R10, BX
	JMP getcand
getwide:
	// c > 32: the header's bytes 33..64 too.
	MOVOU 33(SI), X3
	MOVOU 49(SI), X4
	PCMPEQB X0, X3
	PCMPEQB X0, X4
	PMOVMSKB X3, DX
	PMOVMSKB X4, R10
	SHLQ $48, R10
	SHLQ $32, DX
	ORQ R10, DX
	ORQ DX, BX
	JMP getmask
getnone:
	// The spill bit spillBit(mulHi(rem*0x9e3779b97f4a7c15, sk)) (spillAt).
	MOVQ $0x9e3779b97f4a7c15, AX
	IMULQ R8, AX
	MULQ icebergYard_sk(DI)
	// spillBit(j): sbase+j, or where the yard adds the count byte's two
	// (sc, a branch taken the same way by every lookup of a table) 6+j for
	// j < sc and sbase+j-sc after. The select written inline on every
	// miss made misses at 1e7 (sc 0) 1.11x-1.35x a hit's time, from
	// 0.83x-0.98x (BenchmarkMiss, 3 rounds in turn).
	MOVQ icebergYard_sc(DI), R10
	TESTQ R10, R10
	JNZ getspillcount
	ADDQ icebergYard_sbase(DI), DX
getspillbit:
	MOVQ DX, CX
	SHRQ $3, DX
	MOVBQZX (SI)(DX*1), DX
	ANDQ $7, CX
	SHRQ CX, DX
	ANDQ $1, DX
	SHLQ $1, DX // icebergBack (2) if set, icebergMiss (0) if not
	MOVQ $0, w+16(FP)
	MOVQ DX, r+24(FP)
	RET
getspillcount:
	LEAQ 6(DX), R11
	MOVQ DX, CX
	SUBQ R10, DX
	ADDQ icebergYard_sbase(DI), DX
	CMPQ CX, R10
	CMOVQCS R11, DX
	JMP getspillbit
getslots:
	MOVQ $0, w+16(FP)
	MOVQ $3, r+24(FP) // icebergSlots
	RET
