//go:build amd64 && !noasm

#include "textflag.h"

// The Go assembler has no AVX512_BF16 mnemonics: VDPBF16PS (EVEX.512.F3.0F38.W0 52 /r) is written as
// its bytes, register to register, with its Intel operands dst, src1, src2 named beside each.

// ZERO12 clears Z0-Z11: the accumulators and the operands of the loops.
#define ZERO12 VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11;

// func dotBF16(acc *[16]float32, a, b *[32]uint16)
TEXT ·dotBF16(SB), NOSPLIT, $0-24
	MOVQ acc+0(FP), AX
	MOVQ a+8(FP), BX
	MOVQ b+16(FP), CX
	VMOVUPS (AX), Z0
	VMOVUPS (BX), Z1
	VMOVUPS (CX), Z2
	BYTE $0x62; BYTE $0xf2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xc2 // VDPBF16PS Z2, Z1, Z0
	VMOVUPS Z0, (AX)
	VZEROUPPER
	RET

// func loopBF16(n int): n rounds of eight independent VDPBF16PS zmm (registers only)
TEXT ·loopBF16(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	ZERO12
bf16:
	BYTE $0x62; BYTE $0xd2; BYTE $0x3e; BYTE $0x48; BYTE $0x52; BYTE $0xc1 // VDPBF16PS Z9, Z8, Z0 (Go operand order: Z0 += Z8 . Z9 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x3e; BYTE $0x48; BYTE $0x52; BYTE $0xca // VDPBF16PS Z10, Z8, Z1 (Go operand order: Z1 += Z8 . Z10 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x3e; BYTE $0x48; BYTE $0x52; BYTE $0xd3 // VDPBF16PS Z11, Z8, Z2 (Go operand order: Z2 += Z8 . Z11 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x36; BYTE $0x48; BYTE $0x52; BYTE $0xda // VDPBF16PS Z10, Z9, Z3 (Go operand order: Z3 += Z9 . Z10 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x36; BYTE $0x48; BYTE $0x52; BYTE $0xe3 // VDPBF16PS Z11, Z9, Z4 (Go operand order: Z4 += Z9 . Z11 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x2e; BYTE $0x48; BYTE $0x52; BYTE $0xeb // VDPBF16PS Z11, Z10, Z5 (Go operand order: Z5 += Z10 . Z11 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x3e; BYTE $0x48; BYTE $0x52; BYTE $0xf0 // VDPBF16PS Z8, Z8, Z6 (Go operand order: Z6 += Z8 . Z8 in bf16 pairs)
	BYTE $0x62; BYTE $0xd2; BYTE $0x36; BYTE $0x48; BYTE $0x52; BYTE $0xf9 // VDPBF16PS Z9, Z9, Z7 (Go operand order: Z7 += Z9 . Z9 in bf16 pairs)
	DECQ CX
	JNZ bf16
	VZEROUPPER
	RET

// func loopFMA(n int): n rounds of eight independent VFMADD231PS zmm (registers only)
TEXT ·loopFMA(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	ZERO12
fma:
	VFMADD231PS Z9, Z8, Z0
	VFMADD231PS Z10, Z8, Z1
	VFMADD231PS Z11, Z8, Z2
	VFMADD231PS Z10, Z9, Z3
	VFMADD231PS Z11, Z9, Z4
	VFMADD231PS Z11, Z10, Z5
	VFMADD231PS Z8, Z8, Z6
	VFMADD231PS Z9, Z9, Z7
	DECQ CX
	JNZ fma
	VZEROUPPER
	RET
