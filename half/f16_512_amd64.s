//go:build !noasm

#include "textflag.h"

// The AVX-512 forms of the F16C conversions (f16_amd64.s): the same instructions on ZMM registers,
// thirty-two values a loop, hence the same bits.

// func roundF16AVX512(dst, src *float32, n int)
// Rounds n (a multiple of 32) float32 values to half precision and back, ties to even.
TEXT ·roundF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   rdone
rloop:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z2
	VCVTPS2PH $0, Z0, Y1
	VCVTPS2PH $0, Z2, Y3
	VCVTPH2PS Y1, Z0
	VCVTPH2PS Y3, Z2
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z2, 64(DI)
	ADDQ      $128, SI
	ADDQ      $128, DI
	DECQ      CX
	JNZ       rloop
rdone:
	VZEROUPPER
	RET

// func encodeF16AVX512(dst *byte, src *float32, n int)
// Stores n (a multiple of 32) float32 values as little-endian halves, ties to even.
TEXT ·encodeF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   edone
eloop:
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z2
	VCVTPS2PH $0, Z0, (DI)
	VCVTPS2PH $0, Z2, 32(DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       eloop
edone:
	VZEROUPPER
	RET

// func decodeF16AVX512(dst *float32, src *byte, n int) (done int)
// decodeF16F16C thirty-two values at a time: it stops before the first block of thirty-two that holds
// an infinity or NaN, which the caller converts, and returns the number of values converted.
TEXT ·decodeF16AVX512(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	SHRQ         $5, CX
	XORQ         DX, DX
	MOVL         $0x7c007c00, AX
	MOVD         AX, X6
	VPBROADCASTD X6, Y6
	JCXZQ        ddone
dloop:
	VMOVDQU   (SI), Y4
	VMOVDQU   32(SI), Y5
	VPAND     Y6, Y4, Y7
	VPAND     Y6, Y5, Y8
	VPCMPEQW  Y6, Y7, Y7
	VPCMPEQW  Y6, Y8, Y8
	VPOR      Y7, Y8, Y7
	VPTEST    Y7, Y7
	JNZ       ddone
	VCVTPH2PS Y4, Z0
	VCVTPH2PS Y5, Z2
	VMOVUPS   Z0, (DI)
	VMOVUPS   Z2, 64(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	ADDQ      $32, DX
	DECQ      CX
	JNZ       dloop
ddone:
	MOVQ DX, done+24(FP)
	VZEROUPPER
	RET
