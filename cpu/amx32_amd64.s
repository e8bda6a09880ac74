//go:build !noasm

#include "textflag.h"

// The float32 split of the AMX gemm (see amx32_amd64.go); the tile kernel is amx_amd64.s's.

// RNE16(x, t): t = x rounded to nearest even at bit 16 with the low 16 bits cleared (bf16 in the high
// half), as integers: x + 0x7FFF + bit 16 of x. Right for finite values; overflow to inf is caught by
// the checks. Constants: Z26 0x7FFF, Z27 1, Z28 0xFFFF0000.
#define RNE16(x, t) \
	VPSRLD $16, x, t; \
	VPANDD Z27, t, t; \
	VPADDD Z26, t, t; \
	VPADDD x, t, t; \
	VPANDD Z28, t, t

// SPLIT3: Z0 = x; out Z1 = h = bf16(x), Z3 = m = bf16(x - h), Z4 = l = x - h - m, each a bf16 value
// in a float32's high half, with x = h + m + l exactly for x = ±0 and for 2^-103 <= |x| < 0x7F7F8000
// (as bits): below, m or l could be bf16 denormals, which AMX reads as 0; from 0x7F7F8000 on, h
// rounds to inf (and NaNs and infinities are beyond). Elements outside are marked in K5, elements
// with l != 0 OR'd into Z30. Constants: Z24 2^-103, Z25 0x7F7F8000 - 2^-103 (as bits), Z29 0x7FFFFFFF.
#define SPLIT3 \
	RNE16(Z0, Z1); \
	VSUBPS Z1, Z0, Z2; \
	RNE16(Z2, Z3); \
	VSUBPS Z3, Z2, Z4; \
	VPANDD Z29, Z0, Z5; \
	VPSUBD Z24, Z5, Z6; \
	VPCMPUD $1, Z25, Z6, K1; \
	VPTESTMD Z5, Z5, K2; \
	KANDNW K2, K1, K3; \
	KORW K3, K5, K5; \
	VPORD Z4, Z30, Z30

#define SPLIT3CONST \
	MOVL $0x7FFF, AX; \
	VPBROADCASTD AX, Z26; \
	MOVL $1, AX; \
	VPBROADCASTD AX, Z27; \
	MOVL $0xFFFF0000, AX; \
	VPBROADCASTD AX, Z28; \
	MOVL $0x7FFFFFFF, AX; \
	VPBROADCASTD AX, Z29; \
	MOVL $0x0C000000, AX; \
	VPBROADCASTD AX, Z24; \
	MOVL $0x737F8000, AX; \
	VPBROADCASTD AX, Z25; \
	VPXORD Z30, Z30, Z30; \
	KXORW K5, K5, K5

// SPLIT3END leaves the verdicts in AX (elements outside) and DX (elements with l != 0).
#define SPLIT3END \
	KMOVW K5, AX; \
	VPTESTMD Z30, Z30, K6; \
	KMOVW K6, DX

// func amxConvA3(dst *uint32, src *float32, stride, rows int) (bad, low uint32)
//
// Writes rows rows of 16 A-operand words (h | m<<16) to dst and (h | l<<16) to dst+512 words (64
// bytes a row each) from rows of 16 float32 at src, stride elements apart.
TEXT ·amxConvA3(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), BX
	SHLQ $2, BX
	MOVQ rows+24(FP), CX
	SPLIT3CONST
rowA3:
	VMOVUPS (SI), Z0
	SPLIT3
	VPSRLD $16, Z1, Z5
	VPORD Z3, Z5, Z6
	VMOVUPS Z6, (DI)
	VPORD Z4, Z5, Z6
	VMOVUPS Z6, 2048(DI)
	ADDQ BX, SI
	ADDQ $64, DI
	DECQ CX
	JNZ rowA3
	SPLIT3END
	MOVL AX, bad+32(FP)
	MOVL DX, low+36(FP)
	VZEROUPPER
	RET

// func amxConvB3(dst *uint32, src *float32, stride, rows int) (bad, low uint32)
//
// Writes rows rows of 16 B-operand words (h | h<<16) to dst, (m | m<<16) to dst+512 words and
// (l | h<<16) to dst+1024 words, 64 bytes a row each, from rows of 16 float32 at src, stride apart.
TEXT ·amxConvB3(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), BX
	SHLQ $2, BX
	MOVQ rows+24(FP), CX
	SPLIT3CONST
rowB3:
	VMOVUPS (SI), Z0
	SPLIT3
	VPSRLD $16, Z1, Z5
	VPORD Z1, Z5, Z6
	VMOVUPS Z6, (DI)
	VPSRLD $16, Z3, Z5
	VPORD Z3, Z5, Z6
	VMOVUPS Z6, 2048(DI)
	VPSRLD $16, Z4, Z5
	VPORD Z1, Z5, Z6
	VMOVUPS Z6, 4096(DI)
	ADDQ BX, SI
	ADDQ $64, DI
	DECQ CX
	JNZ rowB3
	SPLIT3END
	MOVL AX, bad+32(FP)
	MOVL DX, low+36(FP)
	VZEROUPPER
	RET
