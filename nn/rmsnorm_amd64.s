//go:build !noasm

#include "textflag.h"

// Operand order is Go's: VSUBPS b, a, d computes d = a - b.

// func rmsColsAVX2(ss, dot, x, dy, w *float32, C, S, n int)
// For each block of 8 columns: Y0 = sum_c x*x, Y1 = sum_c (dy*x)*w[c], rows c in order.
TEXT ·rmsColsAVX2(SB), NOSPLIT, $0-64
	MOVQ ss+0(FP), DI
	MOVQ dot+8(FP), R8
	MOVQ x+16(FP), SI
	MOVQ dy+24(FP), R9
	MOVQ w+32(FP), R10
	MOVQ C+40(FP), R11
	MOVQ S+48(FP), R12
	SHLQ $2, R12 // row stride in bytes
	MOVQ n+56(FP), CX
	XORQ AX, AX  // column

block:
	CMPQ   AX, CX
	JGE    done
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	LEAQ   (SI)(AX*4), BX // x[c*S+s]
	MOVQ   R10, DX        // &w[c]
	MOVQ   R11, R13       // rows left
	TESTQ  R9, R9
	JZ     sqonly
	LEAQ   (R9)(AX*4), R14 // dy[c*S+s]

rows:
	VMOVUPS      (BX), Y2
	VMULPS       Y2, Y2, Y3
	VADDPS       Y3, Y0, Y0
	VMULPS       (R14), Y2, Y4 // dy*x
	VBROADCASTSS (DX), Y5
	VMULPS       Y5, Y4, Y4    // (dy*x)*w
	VADDPS       Y4, Y1, Y1
	ADDQ         R12, BX
	ADDQ         R12, R14
	ADDQ         $4, DX
	DECQ         R13
	JNZ          rows
	VMOVUPS      Y0, (DI)(AX*4)
	VMOVUPS      Y1, (R8)(AX*4)
	ADDQ         $8, AX
	JMP          block

sqonly:
	VMOVUPS (BX), Y2
	VMULPS  Y2, Y2, Y3
	VADDPS  Y3, Y0, Y0
	ADDQ    R12, BX
	DECQ    R13
	JNZ     sqonly
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     block

done:
	VZEROUPPER
	RET

// func rmsScaleAVX2(out, x, r *float32, wc float32, n int)
TEXT ·rmsScaleAVX2(SB), NOSPLIT, $0-40
	MOVQ         out+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         r+16(FP), DX
	VBROADCASTSS wc+24(FP), Y7
	MOVQ         n+32(FP), CX
	XORQ         AX, AX

loop:
	CMPQ    AX, CX
	JGE     sdone
	VMOVUPS (SI)(AX*4), Y0
	VMULPS  (DX)(AX*4), Y0, Y0 // x*r
	VMULPS  Y7, Y0, Y0         // (x*r)*wc
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     loop

sdone:
	VZEROUPPER
	RET

// func rmsGradAVX2(dx, dy, x, r, coef *float32, wc float32, lanes *[8]float32, n int)
TEXT ·rmsGradAVX2(SB), NOSPLIT, $0-64
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), SI
	MOVQ         x+16(FP), R8
	MOVQ         r+24(FP), R9
	MOVQ         coef+32(FP), R10
	VBROADCASTSS wc+40(FP), Y7
	MOVQ         lanes+48(FP), R11
	MOVQ         n+56(FP), CX
	VMOVUPS      (R11), Y6
	XORQ         AX, AX

gloop:
	CMPQ    AX, CX
	JGE     gdone
	VMOVUPS (SI)(AX*4), Y0  // dy
	VMOVUPS (R8)(AX*4), Y1  // x
	VMOVUPS (R9)(AX*4), Y2  // r
	VMULPS  Y1, Y0, Y3      // dy*x
	VMULPS  Y2, Y3, Y3      // (dy*x)*r
	VADDPS  Y3, Y6, Y6      // lanes
	VMULPS  Y7, Y2, Y4      // r*wc
	VMULPS  Y0, Y4, Y4      // (r*wc)*dy
	VMULPS  (R10)(AX*4), Y1, Y5 // x*coef
	VSUBPS  Y5, Y4, Y4      // (r*wc)*dy - x*coef
	VMOVUPS Y4, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     gloop

gdone:
	VMOVUPS Y6, (R11)
	VZEROUPPER
	RET
