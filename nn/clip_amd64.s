//go:build !noasm

#include "textflag.h"

// LANES adds the 16 float32 at (SI)(AX*4), widened to float64 and, with SQ, squared, to the lanes:
// 0-3 in Y0, 4-7 in Y1, 8-11 in Y2, 12-15 in Y3.
#define LANES(NAME, SQ, DONE) \
NAME:                              \
	CMPQ      AX, CX;              \
	JGE       DONE;                \
	VCVTPS2PD (SI)(AX*4), Y4;      \
	VCVTPS2PD 16(SI)(AX*4), Y5;    \
	VCVTPS2PD 32(SI)(AX*4), Y6;    \
	VCVTPS2PD 48(SI)(AX*4), Y7;    \
	SQ;                            \
	VADDPD    Y4, Y0, Y0;          \
	VADDPD    Y5, Y1, Y1;          \
	VADDPD    Y6, Y2, Y2;          \
	VADDPD    Y7, Y3, Y3;          \
	ADDQ      $16, AX;             \
	JMP       NAME

#define SQUARE VMULPD Y4, Y4, Y4; VMULPD Y5, Y5, Y5; VMULPD Y6, Y6, Y6; VMULPD Y7, Y7, Y7

// func laneSumAVX2(x *float32, n int, lanes *[16]float64, square bool)
// Adds float64(x[i]) (squared with square) to lanes[i%16] for i < n.
TEXT ·laneSumAVX2(SB), NOSPLIT, $0-25
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    lanes+16(FP), DI
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ    AX, AX
	CMPB    square+24(FP), $0
	JEQ     plain
	LANES(squares, SQUARE, done)
	LANES(plain, NOP, done)

done:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET
