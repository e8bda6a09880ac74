//go:build !noasm

#include "textflag.h"

// Offsets of the constants in the table (32 bytes each).
#define LOG2E 0(R8)
#define HALF 32(R8)
#define LN2HI 64(R8)
#define LN2LO 96(R8)
#define C6 128(R8)
#define C5 160(R8)
#define C4 192(R8)
#define C3 224(R8)
#define C2 256(R8)
#define C1 288(R8)
#define ONE 320(R8)
#define FASTLO 352(R8)
#define FASTHI 384(R8)
#define UNDER 416(R8)
#define OVER 448(R8)
#define INF 480(R8)
#define BIAS 512(R8)

// func expShiftedAVX2(dst, src *float32, n int, shift float32, sign uint32, tab *[17][8]float32) (done int)
// Operand order is Go's: VSUBPS b, a, d computes d = a - b; VCMPPS $p, b, a, d computes d = a p b;
// VBLENDVPS m, s, a, d computes d = m ? s : a.
TEXT ·expShiftedAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS shift+24(FP), Y14
	VBROADCASTSS sign+28(FP), Y15
	MOVQ tab+32(FP), R8
	XORQ AX, AX
	VXORPS Y13, Y13, Y13 // zero

loop:
	CMPQ AX, CX
	JGE  done

	// x = (src ^ sign) - shift
	VMOVUPS (SI)(AX*4), Y0
	VXORPS  Y15, Y0, Y0
	VSUBPS  Y14, Y0, Y0

	// Lanes the block handles: fast | below UNDER | above OVER | NaN.
	VCMPPS    $0x0d, FASTLO, Y0, Y1 // x >= lo
	VCMPPS    $0x02, FASTHI, Y0, Y2 // x <= hi
	VANDPS    Y2, Y1, Y1            // fast
	VCMPPS    $0x01, UNDER, Y0, Y2  // x < under
	VCMPPS    $0x0e, OVER, Y0, Y3   // x > over
	VCMPPS    $0x03, Y0, Y0, Y4     // NaN
	VORPS     Y2, Y1, Y5
	VORPS     Y3, Y5, Y5
	VORPS     Y4, Y5, Y5
	VMOVMSKPS Y5, DX
	CMPL      DX, $0xff
	JNE       done

	// t = x*log2e + 0.5; ni = floor(t)
	VMULPS    LOG2E, Y0, Y6
	VADDPS    HALF, Y6, Y6
	VCVTTPS2DQ Y6, Y7
	VCVTDQ2PS Y7, Y8
	VCMPPS    $0x0e, Y6, Y8, Y9 // float(ni) > t
	VPADDD    Y9, Y7, Y7        // ni -= 1 there
	VCVTDQ2PS Y7, Y8            // n

	// r = (x - n*ln2hi) - n*ln2lo
	VMULPS LN2HI, Y8, Y9
	VSUBPS Y9, Y0, Y10
	VMULPS LN2LO, Y8, Y9
	VSUBPS Y9, Y10, Y10

	// p = ((((c6*r + c5)*r + c4)*r + c3)*r + c2)*r + c1
	VMULPS C6, Y10, Y11
	VADDPS C5, Y11, Y11
	VMULPS Y10, Y11, Y11
	VADDPS C4, Y11, Y11
	VMULPS Y10, Y11, Y11
	VADDPS C3, Y11, Y11
	VMULPS Y10, Y11, Y11
	VADDPS C2, Y11, Y11
	VMULPS Y10, Y11, Y11
	VADDPS C1, Y11, Y11

	// e = ((p*r)*r + r) + 1, times 2^ni
	VMULPS Y10, Y11, Y11
	VMULPS Y10, Y11, Y11
	VADDPS Y10, Y11, Y11
	VADDPS ONE, Y11, Y11
	VPADDD BIAS, Y7, Y7
	VPSLLD $23, Y7, Y7
	VMULPS Y7, Y11, Y11

	// result: e where fast, 0 below, +inf above, x (NaN) otherwise
	VMOVUPS   INF, Y12
	VBLENDVPS Y3, Y12, Y0, Y0
	VBLENDVPS Y2, Y13, Y0, Y0
	VBLENDVPS Y1, Y11, Y0, Y0
	VMOVUPS   Y0, (DI)(AX*4)

	ADDQ $8, AX
	JMP  loop

done:
	VZEROUPPER
	MOVQ AX, done+40(FP)
	RET
