#include "textflag.h"

// func prefetchOffsets(base unsafe.Pointer, offs *homes, n int)
TEXT ·prefetchOffsets(SB), NOSPLIT, $0-24
	MOVD base+0(FP), R0
	MOVD offs+8(FP), R1
	MOVD n+16(FP), R2
	CMP $0, R2
	BLE done
loop:
	MOVD.P 8(R1), R3
	ADD R0, R3, R3
	PRFM (R3), PLDL1KEEP
	SUB $1, R2, R2
	CBNZ R2, loop
done:
	RET

// func prefetchLines(p unsafe.Pointer, lines uintptr)
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVD p+0(FP), R0
	MOVD lines+8(FP), R1
loop:
	PRFM (R0), PLDL1KEEP
	ADD $64, R0, R0
	SUB $1, R1, R1
	CBNZ R1, loop
	RET
