//go:build !noasm

#include "textflag.h"

// func adamAVX2(w, grad, m, v *float32, n int, c *adamConsts)
// Per lane, in the scalar code's order:
//   g = g*gs;  m = b1*m + c1*g;  v = b2*v + (c2*g)*g;  w = w*decay - (lr*(m/bc1)) / (sqrt(v/bc2) + eps)
// Operand order is Go's: VSUBPS b, a, d computes d = a - b; VDIVPS b, a, d computes d = a / b.
TEXT ·adamAVX2(SB), NOSPLIT, $0-48
	MOVQ         w+0(FP), DI
	MOVQ         grad+8(FP), SI
	MOVQ         m+16(FP), R10
	MOVQ         v+24(FP), R11
	MOVQ         n+32(FP), CX
	MOVQ         c+40(FP), R8
	VBROADCASTSS 0(R8), Y8   // b1
	VBROADCASTSS 4(R8), Y9   // c1
	VBROADCASTSS 8(R8), Y10  // b2
	VBROADCASTSS 12(R8), Y11 // c2
	VBROADCASTSS 16(R8), Y12 // decay
	VBROADCASTSS 20(R8), Y13 // bc1
	VBROADCASTSS 24(R8), Y14 // bc2
	VBROADCASTSS 28(R8), Y15 // lr
	VBROADCASTSS 32(R8), Y7  // eps
	VBROADCASTSS 36(R8), Y6  // gs
	XORQ         AX, AX

loop:
	CMPQ    AX, CX
	JGE     done
	VMULPS  (SI)(AX*4), Y6, Y0 // g*gs
	VMULPS  (R10)(AX*4), Y8, Y1 // b1*m
	VMULPS  Y0, Y9, Y2      // c1*g
	VADDPS  Y2, Y1, Y1      // m
	VMOVUPS Y1, (R10)(AX*4)
	VMULPS  (R11)(AX*4), Y10, Y3 // b2*v
	VMULPS  Y0, Y11, Y4     // c2*g
	VMULPS  Y0, Y4, Y4      // (c2*g)*g
	VADDPS  Y4, Y3, Y3      // v
	VMOVUPS Y3, (R11)(AX*4)
	VDIVPS  Y13, Y1, Y1     // m/bc1
	VMULPS  Y1, Y15, Y1     // lr*(m/bc1)
	VDIVPS  Y14, Y3, Y3     // v/bc2
	VSQRTPS Y3, Y3
	VADDPS  Y7, Y3, Y3      // + eps
	VDIVPS  Y3, Y1, Y1      // step
	VMOVUPS (DI)(AX*4), Y5
	VMULPS  Y12, Y5, Y5     // w*decay
	VSUBPS  Y1, Y5, Y5      // w - step
	VMOVUPS Y5, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     loop

done:
	VZEROUPPER
	RET
