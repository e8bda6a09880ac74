//go:build !noasm

#include "textflag.h"

// func roundF16F16C(dst, src *float32, n int)
// Rounds n (a multiple of 16) float32 values to half precision and back, ties to even.
TEXT ·roundF16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   rdone
rloop:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y2
	VCVTPS2PH $0, Y0, X1
	VCVTPS2PH $0, Y2, X3
	VCVTPH2PS X1, Y0
	VCVTPH2PS X3, Y2
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y2, 32(DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       rloop
rdone:
	VZEROUPPER
	RET

// func encodeF16F16C(dst *byte, src *float32, n int)
// Stores n (a multiple of 16) float32 values as little-endian halves, ties to even.
TEXT ·encodeF16F16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   edone
eloop:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y2
	VCVTPS2PH $0, Y0, (DI)
	VCVTPS2PH $0, Y2, 16(DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       eloop
edone:
	VZEROUPPER
	RET

// func decodeF16F16C(dst *float32, src *byte, n int) (done int)
// Loads up to n (a multiple of 16) little-endian halves as float32 values, sixteen at a time, and
// stops before the first block of sixteen that holds an infinity or NaN (exponent field all ones):
// VCVTPH2PS quiets signalling NaNs, which F16ToF32 keeps, so the caller converts such blocks.
// It returns the number of values converted.
TEXT ·decodeF16F16C(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	XORQ DX, DX
	MOVL $0x7c007c00, AX
	MOVD AX, X6
	VPSHUFD $0, X6, X6
	JCXZQ ddone
dloop:
	VMOVDQU   (SI), X4
	VMOVDQU   16(SI), X5
	VPAND     X6, X4, X7
	VPAND     X6, X5, X8
	VPCMPEQW  X6, X7, X7
	VPCMPEQW  X6, X8, X8
	VPOR      X7, X8, X7
	VPTEST    X7, X7
	JNZ       ddone
	VCVTPH2PS X4, Y0
	VCVTPH2PS X5, Y2
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y2, 32(DI)
	ADDQ      $32, SI
	ADDQ      $64, DI
	ADDQ      $16, DX
	DECQ      CX
	JNZ       dloop
ddone:
	MOVQ DX, done+24(FP)
	VZEROUPPER
	RET
