//go:build !noasm

#include "textflag.h"
#include "elementwise.h"

// Operand order is Go's: VSUBPS b, a, d computes d = a - b, VDIVPS b, a, d computes d = a / b.

// LOOP runs OP on blocks of 8 floats of (SI) and Y1 into (DI), AX counting up to CX, then jumps to
// DONE; LOADB loads Y1 for each block (vvAVX2) or nothing (vsAVX2, where Y1 holds the scalar).
#define LOOP(NAME, LOADB, OP, DONE) \
NAME:                          \
	CMPQ    AX, CX;            \
	JGE     DONE;              \
	VMOVUPS (SI)(AX*4), Y0;    \
	LOADB;                     \
	OP;                        \
	VMOVUPS Y0, (DI)(AX*4);    \
	ADDQ    $8, AX;            \
	JMP     NAME

#define LOADB VMOVUPS (DX)(AX*4), Y1
#define NOLOAD NOP
#define ADD VADDPS Y1, Y0, Y0
#define SUB VSUBPS Y1, Y0, Y0
#define MUL VMULPS Y1, Y0, Y0
#define DIV VDIVPS Y1, Y0, Y0
#define RSUB VSUBPS Y0, Y1, Y0
#define RDIV VDIVPS Y0, Y1, Y0
#define BCAST VBROADCASTSS s+24(FP), Y1

// The same, then rounded to fp16 and back (ties to even, as half.RoundF16To's vector code).
#define R16 VCVTPS2PH $0, Y0, X0; VCVTPH2PS X0, Y0
#define ADD16 ADD; R16
#define SUB16 SUB; R16
#define MUL16 MUL; R16
#define DIV16 DIV; R16
#define RSUB16 RSUB; R16
#define RDIV16 RDIV; R16

// func vvAVX2(op Op, dst, a, b *float32, n int)
TEXT ·vvAVX2(SB), NOSPLIT, $0-40
	VV_BODY

// func vsAVX2(op Op, dst, a *float32, s float32, n int)
TEXT ·vsAVX2(SB), NOSPLIT, $0-40
	VS_BODY

// func rowsAxpyAVX2(dst, x, b *float32, k, ldb, n int)
// dst[i] = sum over j < k of x[j]*b[j*ldb+i] for i < n (a multiple of 8): each product rounded, then
// added to the sum in j's order from +0, 64 lanes at a time while 64 are left, then 32, then 8.
TEXT ·rowsAxpyAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ ldb+32(FP), R8
	MOVQ n+40(FP), R9
	SHLQ $2, R8
	XORQ AX, AX

	// 64 lanes a block: eight sums in flight hide the adds' latency (each sum's terms are added in
	// j's order, one after another, so fewer sums leave the adder waiting)
ra64:
	LEAQ 64(AX), R11
	CMPQ R11, R9
	JGT  ra32
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ (DX)(AX*4), R10
	XORQ BX, BX

ra64loop:
	CMPQ         BX, CX
	JGE          ra64store
	VBROADCASTSS (SI)(BX*4), Y8
	VMULPS       (R10), Y8, Y9
	VADDPS       Y9, Y0, Y0
	VMULPS       32(R10), Y8, Y10
	VADDPS       Y10, Y1, Y1
	VMULPS       64(R10), Y8, Y11
	VADDPS       Y11, Y2, Y2
	VMULPS       96(R10), Y8, Y12
	VADDPS       Y12, Y3, Y3
	VMULPS       128(R10), Y8, Y13
	VADDPS       Y13, Y4, Y4
	VMULPS       160(R10), Y8, Y14
	VADDPS       Y14, Y5, Y5
	VMULPS       192(R10), Y8, Y15
	VADDPS       Y15, Y6, Y6
	VMULPS       224(R10), Y8, Y9
	VADDPS       Y9, Y7, Y7
	ADDQ         R8, R10
	INCQ         BX
	JMP          ra64loop

ra64store:
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	VMOVUPS Y4, 128(DI)(AX*4)
	VMOVUPS Y5, 160(DI)(AX*4)
	VMOVUPS Y6, 192(DI)(AX*4)
	VMOVUPS Y7, 224(DI)(AX*4)
	ADDQ    $64, AX
	JMP     ra64

ra32:
	LEAQ 32(AX), R11
	CMPQ R11, R9
	JGT  ra8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	LEAQ (DX)(AX*4), R10
	XORQ BX, BX

ra32loop:
	CMPQ         BX, CX
	JGE          ra32store
	VBROADCASTSS (SI)(BX*4), Y4
	VMULPS       (R10), Y4, Y5
	VADDPS       Y5, Y0, Y0
	VMULPS       32(R10), Y4, Y6
	VADDPS       Y6, Y1, Y1
	VMULPS       64(R10), Y4, Y7
	VADDPS       Y7, Y2, Y2
	VMULPS       96(R10), Y4, Y8
	VADDPS       Y8, Y3, Y3
	ADDQ         R8, R10
	INCQ         BX
	JMP          ra32loop

ra32store:
	VMOVUPS Y0, (DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ    $32, AX
	JMP     ra32

ra8:
	CMPQ   AX, R9
	JGE    radone
	VXORPS Y0, Y0, Y0
	LEAQ   (DX)(AX*4), R10
	XORQ   BX, BX

ra8loop:
	CMPQ         BX, CX
	JGE          ra8store
	VBROADCASTSS (SI)(BX*4), Y4
	VMULPS       (R10), Y4, Y5
	VADDPS       Y5, Y0, Y0
	ADDQ         R8, R10
	INCQ         BX
	JMP          ra8loop

ra8store:
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     ra8

radone:
	VZEROUPPER
	RET

// func maxAVX2(a *float32, n int, m float32) float32
// The largest of m and a[0..n) (n a multiple of 8), NaN entries ignored: each lane keeps max(a, lane)
// with the lane as VMAXPS's second source, which it returns when a is NaN or equal.
TEXT ·maxAVX2(SB), NOSPLIT, $0-28
	MOVQ         a+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS m+16(FP), Y0
	VMOVAPS      Y0, Y1
	XORQ         AX, AX

mx16:
	LEAQ    16(AX), R11
	CMPQ    R11, CX
	JGT     mx8
	VMOVUPS (SI)(AX*4), Y2
	VMOVUPS 32(SI)(AX*4), Y3
	VMAXPS  Y0, Y2, Y0
	VMAXPS  Y1, Y3, Y1
	ADDQ    $16, AX
	JMP     mx16

mx8:
	CMPQ    AX, CX
	JGE     mxred
	VMOVUPS (SI)(AX*4), Y2
	VMAXPS  Y0, Y2, Y0

mxred:
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func rowsAxpyF16AVX2(dst, x *float32, b *uint16, k, ldb, n int)
// rowsAxpyAVX2 with B's values fp16, converted exactly to float32 as they load (half the bytes of the
// weights to stream), and each product added by VFMADD231PS: x's values fp16 too, the product is exact,
// so the fused add rounds as the separate one would. 64 lanes a block, then 32, then 8.
TEXT ·rowsAxpyF16AVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ ldb+32(FP), R8
	MOVQ n+40(FP), R9
	SHLQ $1, R8
	XORQ AX, AX

rh64:
	LEAQ 64(AX), R11
	CMPQ R11, R9
	JGT  rh32
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ (DX)(AX*2), R10
	XORQ BX, BX

rh64loop:
	CMPQ         BX, CX
	JGE          rh64store
	VBROADCASTSS (SI)(BX*4), Y8
	VCVTPH2PS    0(R10), Y9
	VFMADD231PS  Y9, Y8, Y0
	VCVTPH2PS    16(R10), Y10
	VFMADD231PS  Y10, Y8, Y1
	VCVTPH2PS    32(R10), Y11
	VFMADD231PS  Y11, Y8, Y2
	VCVTPH2PS    48(R10), Y12
	VFMADD231PS  Y12, Y8, Y3
	VCVTPH2PS    64(R10), Y13
	VFMADD231PS  Y13, Y8, Y4
	VCVTPH2PS    80(R10), Y14
	VFMADD231PS  Y14, Y8, Y5
	VCVTPH2PS    96(R10), Y15
	VFMADD231PS  Y15, Y8, Y6
	VCVTPH2PS    112(R10), Y9
	VFMADD231PS  Y9, Y8, Y7
	ADDQ         R8, R10
	INCQ         BX
	JMP          rh64loop

rh64store:
	VMOVUPS Y0, 0(DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	VMOVUPS Y4, 128(DI)(AX*4)
	VMOVUPS Y5, 160(DI)(AX*4)
	VMOVUPS Y6, 192(DI)(AX*4)
	VMOVUPS Y7, 224(DI)(AX*4)
	ADDQ    $64, AX
	JMP     rh64

rh32:
	LEAQ 32(AX), R11
	CMPQ R11, R9
	JGT  rh8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	LEAQ (DX)(AX*2), R10
	XORQ BX, BX

rh32loop:
	CMPQ         BX, CX
	JGE          rh32store
	VBROADCASTSS (SI)(BX*4), Y8
	VCVTPH2PS    0(R10), Y9
	VFMADD231PS  Y9, Y8, Y0
	VCVTPH2PS    16(R10), Y10
	VFMADD231PS  Y10, Y8, Y1
	VCVTPH2PS    32(R10), Y11
	VFMADD231PS  Y11, Y8, Y2
	VCVTPH2PS    48(R10), Y12
	VFMADD231PS  Y12, Y8, Y3
	ADDQ         R8, R10
	INCQ         BX
	JMP          rh32loop

rh32store:
	VMOVUPS Y0, 0(DI)(AX*4)
	VMOVUPS Y1, 32(DI)(AX*4)
	VMOVUPS Y2, 64(DI)(AX*4)
	VMOVUPS Y3, 96(DI)(AX*4)
	ADDQ    $32, AX
	JMP     rh32

rh8:
	LEAQ 8(AX), R11
	CMPQ R11, R9
	JGT  rhdone
	VXORPS Y0, Y0, Y0
	LEAQ (DX)(AX*2), R10
	XORQ BX, BX

rh8loop:
	CMPQ         BX, CX
	JGE          rh8store
	VBROADCASTSS (SI)(BX*4), Y8
	VCVTPH2PS    0(R10), Y9
	VFMADD231PS  Y9, Y8, Y0
	ADDQ         R8, R10
	INCQ         BX
	JMP          rh8loop

rh8store:
	VMOVUPS Y0, 0(DI)(AX*4)
	ADDQ    $8, AX
	JMP     rh8

rhdone:
	VZEROUPPER
	RET
