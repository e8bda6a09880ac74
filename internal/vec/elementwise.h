// The bodies of vvAVX2 and vsAVX2 (vec_amd64.s) and of their AVX-512 forms (vec512_amd64.s): each
// loads its arguments, dispatches on the op (Op's values) and runs that op's loop. The including file
// defines the loop and the registers: LOOP (a block's loads, op and store), LOADB and NOLOAD (the
// second operand per block, or none), BCAST (the scalar into the second operand's register) and the
// op macros ADD ... RDIV16.

#define VV_BODY \
	MOVQ op+0(FP), R9; \
	MOVQ dst+8(FP), DI; \
	MOVQ a+16(FP), SI; \
	MOVQ b+24(FP), DX; \
	MOVQ n+32(FP), CX; \
	XORQ AX, AX; \
	CMPQ R9, $1; \
	JEQ  vvsub; \
	CMPQ R9, $2; \
	JEQ  vvmul; \
	CMPQ R9, $3; \
	JEQ  vvdiv; \
	CMPQ R9, $8; \
	JEQ  vvadd16; \
	CMPQ R9, $9; \
	JEQ  vvsub16; \
	CMPQ R9, $10; \
	JEQ  vvmul16; \
	CMPQ R9, $11; \
	JEQ  vvdiv16; \
	LOOP(vvadd, LOADB, ADD, vvdone); \
	LOOP(vvsub, LOADB, SUB, vvdone); \
	LOOP(vvmul, LOADB, MUL, vvdone); \
	LOOP(vvdiv, LOADB, DIV, vvdone); \
	LOOP(vvadd16, LOADB, ADD16, vvdone); \
	LOOP(vvsub16, LOADB, SUB16, vvdone); \
	LOOP(vvmul16, LOADB, MUL16, vvdone); \
	LOOP(vvdiv16, LOADB, DIV16, vvdone); \
vvdone: \
	VZEROUPPER; \
	RET

#define VS_BODY \
	MOVQ op+0(FP), R9; \
	MOVQ dst+8(FP), DI; \
	MOVQ a+16(FP), SI; \
	BCAST; \
	MOVQ n+32(FP), CX; \
	XORQ AX, AX; \
	CMPQ R9, $1; \
	JEQ  vssub; \
	CMPQ R9, $2; \
	JEQ  vsmul; \
	CMPQ R9, $3; \
	JEQ  vsdiv; \
	CMPQ R9, $4; \
	JEQ  vsrsub; \
	CMPQ R9, $5; \
	JEQ  vsrdiv; \
	CMPQ R9, $8; \
	JEQ  vsadd16; \
	CMPQ R9, $9; \
	JEQ  vssub16; \
	CMPQ R9, $10; \
	JEQ  vsmul16; \
	CMPQ R9, $11; \
	JEQ  vsdiv16; \
	CMPQ R9, $12; \
	JEQ  vsrsub16; \
	CMPQ R9, $13; \
	JEQ  vsrdiv16; \
	LOOP(vsadd, NOLOAD, ADD, vsdone); \
	LOOP(vssub, NOLOAD, SUB, vsdone); \
	LOOP(vsmul, NOLOAD, MUL, vsdone); \
	LOOP(vsdiv, NOLOAD, DIV, vsdone); \
	LOOP(vsrsub, NOLOAD, RSUB, vsdone); \
	LOOP(vsrdiv, NOLOAD, RDIV, vsdone); \
	LOOP(vsadd16, NOLOAD, ADD16, vsdone); \
	LOOP(vssub16, NOLOAD, SUB16, vsdone); \
	LOOP(vsmul16, NOLOAD, MUL16, vsdone); \
	LOOP(vsdiv16, NOLOAD, DIV16, vsdone); \
	LOOP(vsrsub16, NOLOAD, RSUB16, vsdone); \
	LOOP(vsrdiv16, NOLOAD, RDIV16, vsdone); \
vsdone: \
	VZEROUPPER; \
	RET
