#include "textflag.h"

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
