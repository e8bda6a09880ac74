//go:build !noasm

#include "textflag.h"

// Offsets of the constants in the table (64 bytes each).
#define LOG2E 0(R8)
#define HALF 64(R8)
#define LN2HI 128(R8)
#define LN2LO 192(R8)
#define C6 256(R8)
#define C5 320(R8)
#define C4 384(R8)
#define C3 448(R8)
#define C2 512(R8)
#define C1 576(R8)
#define ONE 640(R8)
#define FASTLO 704(R8)
#define FASTHI 768(R8)
#define UNDER 832(R8)
#define OVER 896(R8)
#define INF 960(R8)
#define BIAS 1024(R8)
#define MINUS1 1088(R8)

// func expShiftedAVX512(dst, src *float32, n int, shift float32, sign uint32, tab *[expTabLen + 1][16]float32) (done int)
// expShiftedAVX2 (exp_amd64.s) sixteen lanes at a time: the same operations in the same order, each
// rounded to float32, so the same bits; the compares set mask registers, which select the lanes.
// Operand order is Go's: VCMPPS $p, b, a, k sets k = a p b; a masked op writes only the lanes of its
// mask (OP src, ..., K, dst).
TEXT ·expShiftedAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Z14
	VBROADCASTSS sign+28(FP), Z15
	MOVQ tab+32(FP), R8
	XORQ AX, AX
	VPXORD Z13, Z13, Z13 // zero

loop:
	CMPQ AX, CX
	JGE  done

	// x = (src ^ sign) - shift
	VMOVUPS (SI)(AX*4), Z0
	VPXORD  Z15, Z0, Z0
	VSUBPS  Z14, Z0, Z0

	// Lanes the block handles: fast | below UNDER | above OVER | NaN.
	VCMPPS $0x0d, FASTLO, Z0, K1 // x >= lo
	VCMPPS $0x02, FASTHI, Z0, K2 // x <= hi
	KANDW  K2, K1, K1            // fast
	VCMPPS $0x01, UNDER, Z0, K2  // x < under
	VCMPPS $0x0e, OVER, Z0, K3   // x > over
	VCMPPS $0x03, Z0, Z0, K4     // NaN
	KORW   K2, K1, K5
	KORW   K3, K5, K5
	KORW   K4, K5, K5
	KMOVW  K5, DX
	CMPL   DX, $0xffff
	JNE    done

	// t = x*log2e + 0.5; ni = floor(t)
	VMULPS     LOG2E, Z0, Z6
	VADDPS     HALF, Z6, Z6
	VCVTTPS2DQ Z6, Z7
	VCVTDQ2PS  Z7, Z8
	VCMPPS     $0x0e, Z6, Z8, K6 // float(ni) > t
	VPADDD     MINUS1, Z7, K6, Z7 // ni -= 1 there
	VCVTDQ2PS  Z7, Z8             // n

	// r = (x - n*ln2hi) - n*ln2lo
	VMULPS LN2HI, Z8, Z9
	VSUBPS Z9, Z0, Z10
	VMULPS LN2LO, Z8, Z9
	VSUBPS Z9, Z10, Z10

	// p = ((((c6*r + c5)*r + c4)*r + c3)*r + c2)*r + c1
	VMULPS C6, Z10, Z11
	VADDPS C5, Z11, Z11
	VMULPS Z10, Z11, Z11
	VADDPS C4, Z11, Z11
	VMULPS Z10, Z11, Z11
	VADDPS C3, Z11, Z11
	VMULPS Z10, Z11, Z11
	VADDPS C2, Z11, Z11
	VMULPS Z10, Z11, Z11
	VADDPS C1, Z11, Z11

	// e = ((p*r)*r + r) + 1, times 2^ni
	VMULPS Z10, Z11, Z11
	VMULPS Z10, Z11, Z11
	VADDPS Z10, Z11, Z11
	VADDPS ONE, Z11, Z11
	VPADDD BIAS, Z7, Z7
	VPSLLD $23, Z7, Z7
	VMULPS Z7, Z11, Z11

	// result: e where fast, 0 below, +inf above, x (NaN) otherwise
	VMOVUPS INF, K3, Z0
	VMOVAPS Z13, K2, Z0
	VMOVAPS Z11, K1, Z0
	VMOVUPS Z0, (DI)(AX*4)

	ADDQ $16, AX
	JMP  loop

done:
	VZEROUPPER
	MOVQ AX, done+40(FP)
	RET
