//go:build !noasm

#include "textflag.h"
#include "elementwise.h"

// The AVX-512 forms of vvAVX2 and vsAVX2 (vec_amd64.s): the same IEEE operations sixteen lanes at a
// time, hence the same bits. Operand order is Go's, as there.

// LOOP runs OP on blocks of 16 floats of (SI) and Z1 into (DI), AX counting up to CX, then jumps to
// DONE; LOADB loads Z1 for each block (vvAVX512) or nothing (vsAVX512, where Z1 holds the scalar).
#define LOOP(NAME, LOADB, OP, DONE) \
NAME:                          \
	CMPQ    AX, CX;            \
	JGE     DONE;              \
	VMOVUPS (SI)(AX*4), Z0;    \
	LOADB;                     \
	OP;                        \
	VMOVUPS Z0, (DI)(AX*4);    \
	ADDQ    $16, AX;           \
	JMP     NAME

#define LOADB VMOVUPS (DX)(AX*4), Z1
#define NOLOAD NOP
#define ADD VADDPS Z1, Z0, Z0
#define SUB VSUBPS Z1, Z0, Z0
#define MUL VMULPS Z1, Z0, Z0
#define DIV VDIVPS Z1, Z0, Z0
#define RSUB VSUBPS Z0, Z1, Z0
#define RDIV VDIVPS Z0, Z1, Z0
#define BCAST VBROADCASTSS s+24(FP), Z1

// The same, then rounded to fp16 and back, ties to even.
#define R16 VCVTPS2PH $0, Z0, Y0; VCVTPH2PS Y0, Z0
#define ADD16 ADD; R16
#define SUB16 SUB; R16
#define MUL16 MUL; R16
#define DIV16 DIV; R16
#define RSUB16 RSUB; R16
#define RDIV16 RDIV; R16

// func vvAVX512(op Op, dst, a, b *float32, n int)
TEXT ·vvAVX512(SB), NOSPLIT, $0-40
	VV_BODY

// func vsAVX512(op Op, dst, a *float32, s float32, n int)
TEXT ·vsAVX512(SB), NOSPLIT, $0-40
	VS_BODY
