//go:build !noasm

#include "textflag.h"

// func sumSquaresAVX2(x *float32, n int, lanes *[16]float64)
// Lanes 0-3 in Y0, 4-7 in Y1, 8-11 in Y2, 12-15 in Y3: element i goes to lane i%16.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    lanes+16(FP), DI
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ    AX, AX

loop:
	CMPQ      AX, CX
	JGE       done
	VCVTPS2PD (SI)(AX*4), Y4
	VCVTPS2PD 16(SI)(AX*4), Y5
	VCVTPS2PD 32(SI)(AX*4), Y6
	VCVTPS2PD 48(SI)(AX*4), Y7
	VMULPD    Y4, Y4, Y4
	VMULPD    Y5, Y5, Y5
	VMULPD    Y6, Y6, Y6
	VMULPD    Y7, Y7, Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $16, AX
	JMP       loop

done:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET

// func scaleAVX2(x *float32, s float32, n int)
TEXT ·scaleAVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), SI
	VBROADCASTSS s+8(FP), Y7
	MOVQ         n+16(FP), CX
	XORQ         AX, AX

sloop:
	CMPQ    AX, CX
	JGE     sdone
	VMULPS  (SI)(AX*4), Y7, Y0
	VMOVUPS Y0, (SI)(AX*4)
	ADDQ    $8, AX
	JMP     sloop

sdone:
	VZEROUPPER
	RET

// func sumAVX2(x *float32, n int, lanes *[16]float64)
// As sumSquaresAVX2, without the squares: element i is added to lane i%16.
TEXT ·sumAVX2(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	MOVQ    lanes+16(FP), DI
	VMOVUPD 0(DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	XORQ    AX, AX

sumloop:
	CMPQ      AX, CX
	JGE       sumdone
	VCVTPS2PD (SI)(AX*4), Y4
	VCVTPS2PD 16(SI)(AX*4), Y5
	VCVTPS2PD 32(SI)(AX*4), Y6
	VCVTPS2PD 48(SI)(AX*4), Y7
	VADDPD    Y4, Y0, Y0
	VADDPD    Y5, Y1, Y1
	VADDPD    Y6, Y2, Y2
	VADDPD    Y7, Y3, Y3
	ADDQ      $16, AX
	JMP       sumloop

sumdone:
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	VZEROUPPER
	RET
