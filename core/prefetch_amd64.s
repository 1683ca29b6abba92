#include "textflag.h"

// func prefetchOffsets(base unsafe.Pointer, offs *homes, n int)
TEXT ·prefetchOffsets(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ offs+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	MOVQ (BX), DX
	PREFETCHT0 (AX)(DX*1)
	ADDQ $8, BX
	DECQ CX
	JNZ loop
done:
	RET

// func prefetchLines(p unsafe.Pointer, lines uintptr)
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ lines+8(FP), CX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
	RET
