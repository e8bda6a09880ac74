//go:build !noasm

#include "textflag.h"

// Go's assembler has no AMX mnemonics: the macros below emit the instructions' VEX encodings from the
// Intel SDM (vol. 2): LDTILECFG VEX.128.NP.0F38.W0 49 /0; TILERELEASE VEX.128.NP.0F38.W0 49 C0;
// TILEZERO VEX.128.F2.0F38.W0 49 11:rrr:000; TILELOADD VEX.128.F2.0F38.W0 4B and TILESTORED
// VEX.128.F3.0F38.W0 4B, both !(11):rrr:100 with a SIB byte (the index register is the row stride);
// TDPBF16PS VEX.128.F3.0F38.W0 5C 11:rrr:bbb with the third tile in VEX.vvvv (inverted). The 3-byte
// VEX prefix is C4, then E2 (R, X, B inverted and clear: no extended registers; map 0F38), then
// W0 vvvv L0 pp. Only the legacy registers AX..DI are used as base and index, so no REX bits are needed.

// Register numbers in ModRM and SIB.
#define rAX 0
#define rCX 1
#define rDX 2
#define rBX 3
#define rSI 6
#define rDI 7

#define LDTILECFG_DI BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0x07
#define TILERELEASE BYTE $0xC4; BYTE $0xE2; BYTE $0x78; BYTE $0x49; BYTE $0xC0
#define TILEZERO(t) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x49; BYTE $(0xC0|(t)<<3)

// TDPBF16PS tmm(d), tmm(a), tmm(b): tmm(d) += tmm(a) * tmm(b) on bf16 pairs, fp32 sums.
#define TDPBF16PS(d, a, b) BYTE $0xC4; BYTE $0xE2; BYTE $((15-(b))<<3|2); BYTE $0x5C; BYTE $(0xC0|(d)<<3|(a))

// TILELOADD tmm(t), disp(base)(idx*1) with no, an 8-bit or a 32-bit displacement.
#define TILELOADD(t, base, idx) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x04|(t)<<3); BYTE $((idx)<<3|(base))
#define TILELOADD8(t, base, idx, d) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x44|(t)<<3); BYTE $((idx)<<3|(base)); BYTE $(d)
#define TILELOADD32(t, base, idx, d) BYTE $0xC4; BYTE $0xE2; BYTE $0x7B; BYTE $0x4B; BYTE $(0x84|(t)<<3); BYTE $((idx)<<3|(base)); LONG $(d)

// TILESTORED disp(base)(idx*1), tmm(t).
#define TILESTORED(t, base, idx) BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $(0x04|(t)<<3); BYTE $((idx)<<3|(base))
#define TILESTORED8(t, base, idx, d) BYTE $0xC4; BYTE $0xE2; BYTE $0x7A; BYTE $0x4B; BYTE $(0x44|(t)<<3); BYTE $((idx)<<3|(base)); BYTE $(d)

// func amxConfig(cfg *[64]byte)
TEXT ·amxConfig(SB), NOSPLIT, $0-8
	MOVQ cfg+0(FP), DI
	LDTILECFG_DI
	RET

// func amxRelease()
TEXT ·amxRelease(SB), NOSPLIT, $0-0
	TILERELEASE
	RET

// func amxKernel(a, b *uint32, c *float32, ldc, chunks, astep, bstep int, load, third bool)
//
// C (32x32 floats at c, row stride ldc bytes) += (load) or = the product of one A panel and one B
// panel, chunks k-chunks of 16, astep and bstep bytes a chunk. Per chunk, A holds tiles of rows 0-15
// and 16-31 (for GemmF16 (hi|lo), for GemmF32 (h|m), then (h|l) of both), B tiles of columns 0-15
// and 16-31 (GemmF16: (hi|hi), then (lo|lo) of both; GemmF32: (h|h), (m|m), then (l|h) of both).
// With third the products of A's third and fourth tiles with B's fifth and sixth are added too.
TEXT ·amxKernel(SB), NOSPLIT, $0-58
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ c+16(FP), DX
	MOVQ ldc+24(FP), BX
	MOVQ chunks+32(FP), R9
	MOVQ $64, CX
	MOVQ BX, AX
	SHLQ $4, AX
	ADDQ DX, AX // AX: row 16 of C
	MOVQ astep+40(FP), R12
	MOVQ bstep+48(FP), R13
	MOVBLZX load+56(FP), R10
	MOVBLZX third+57(FP), R11
	TESTQ R10, R10
	JZ zero3
	TILELOADD(0, rDX, rBX)
	TILELOADD8(1, rDX, rBX, 64)
	TILELOADD(2, rAX, rBX)
	TILELOADD8(3, rAX, rBX, 64)
	JMP start3

zero3:
	TILEZERO(0)
	TILEZERO(1)
	TILEZERO(2)
	TILEZERO(3)

start3:
loop3:
	TILELOADD(4, rSI, rCX)
	TILELOADD32(5, rSI, rCX, 1024)
	TILELOADD(6, rDI, rCX)
	TILELOADD32(7, rDI, rCX, 1024)
	TDPBF16PS(0, 4, 6)
	TDPBF16PS(1, 4, 7)
	TDPBF16PS(2, 5, 6)
	TDPBF16PS(3, 5, 7)
	TILELOADD32(6, rDI, rCX, 2048)
	TILELOADD32(7, rDI, rCX, 3072)
	TDPBF16PS(0, 4, 6)
	TDPBF16PS(1, 4, 7)
	TDPBF16PS(2, 5, 6)
	TDPBF16PS(3, 5, 7)
	TESTQ R11, R11
	JZ next3
	TILELOADD32(4, rSI, rCX, 2048)
	TILELOADD32(5, rSI, rCX, 3072)
	TILELOADD32(6, rDI, rCX, 4096)
	TILELOADD32(7, rDI, rCX, 5120)
	TDPBF16PS(0, 4, 6)
	TDPBF16PS(1, 4, 7)
	TDPBF16PS(2, 5, 6)
	TDPBF16PS(3, 5, 7)

next3:
	ADDQ R12, SI
	ADDQ R13, DI
	DECQ R9
	JNZ loop3

store3:
	TILESTORED(0, rDX, rBX)
	TILESTORED8(1, rDX, rBX, 64)
	TILESTORED(2, rAX, rBX)
	TILESTORED8(3, rAX, rBX, 64)
	RET

// The split of an fp16 value x (held in float32) into bf16 values: hi = x with its low 16 bits
// cleared, lo = x - hi (exact in float32; it has at most 3 significant bits when x is an fp16 value,
// so it is exact in bf16 too). Rows holding a value out of the contract — inf, NaN, a float32
// denormal (VFPCLASSPS classes 0xB9), or a value with any of its low 13 bits set, which no fp16
// value has — are reported in the returned mask (bit i: row i). Constants: Z28 0xFFFF0000,
// Z29 0x1FFF. Z0 is x; out: Z1 hi, Z2 lo (both as the high halves of float32s).
#define SPLIT \
	VFPCLASSPSZ $0xB9, Z0, K2; \
	VPTESTMD Z29, Z0, K3; \
	KORW K2, K3, K3; \
	KORTESTW K3, K3; \
	JZ 2(PC); \
	ORQ R11, R10; \
	VPANDD Z28, Z0, Z1; \
	VSUBPS Z1, Z0, Z2; \
	VPANDD Z28, Z2, Z2

#define SPLITCONST \
	MOVL $0xFFFF0000, AX; \
	VPBROADCASTD AX, Z28; \
	MOVL $0x1FFF, AX; \
	VPBROADCASTD AX, Z29; \
	XORQ R10, R10; \
	MOVQ $1, R11

// func amxConvA(dst *uint32, src *float32, stride, rows int) (inexact uint32)
//
// Writes rows rows of 16 A-operand words (hi | lo<<16) to dst (64 bytes a row) from rows of 16
// float32 at src, stride elements apart.
TEXT ·amxConvA(SB), NOSPLIT, $0-36
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), BX
	SHLQ $2, BX
	MOVQ rows+24(FP), CX
	SPLITCONST
rowA:
	VMOVUPS (SI), Z0
	SPLIT
	VPSRLD $16, Z0, Z3
	VPORD Z2, Z3, Z3
	VMOVUPS Z3, (DI)
	ADDQ BX, SI
	ADDQ $64, DI
	SHLQ $1, R11
	DECQ CX
	JNZ rowA
	MOVL R10, inexact+32(FP)
	VZEROUPPER
	RET

// func amxConvB(hi, lo *uint32, src *float32, stride, rows int) (inexact uint32)
//
// Writes rows rows of 16 B-operand words to hi (hi | hi<<16) and lo (lo | lo<<16), 64 bytes a row,
// from rows of 16 float32 at src, stride elements apart.
TEXT ·amxConvB(SB), NOSPLIT, $0-44
	MOVQ hi+0(FP), DI
	MOVQ lo+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ stride+24(FP), BX
	SHLQ $2, BX
	MOVQ rows+32(FP), CX
	SPLITCONST
rowB:
	VMOVUPS (SI), Z0
	SPLIT
	VPSRLD $16, Z0, Z3
	VPORD Z1, Z3, Z3
	VMOVUPS Z3, (DI)
	VPSRLD $16, Z2, Z3
	VPORD Z2, Z3, Z3
	VMOVUPS Z3, (DX)
	ADDQ BX, SI
	ADDQ $64, DI
	ADDQ $64, DX
	SHLQ $1, R11
	DECQ CX
	JNZ rowB
	MOVL R10, inexact+40(FP)
	VZEROUPPER
	RET
