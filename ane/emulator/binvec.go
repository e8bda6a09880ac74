package emulator

// vecOp names the operation of the vector code of binRun (binvec_amd64.s): its values are the
// assembly's dispatch codes.
type vecOp int

const (
	vecAdd  vecOp = iota // a + b
	vecSub               // a - b
	vecMul               // a * b
	vecDiv               // a / b
	vecRSub              // s - a (binVS only)
	vecRDiv              // s / a (binVS only)

	vecRound vecOp = 8 // added to an op: the result rounded to fp16 (the assembly's second set of loops)
)

// binVecMin is the shortest run worth a call into the vector code.
const binVecMin = 32

// vecOpOf returns the vector code's op for a op b, or false when the vector code has none; with
// scalarFirst, for s op b with a scalar s.
func vecOpOf(code binCode, scalarFirst bool) (vecOp, bool) {
	switch code {
	case opAdd:
		return vecAdd, true
	case opMul:
		return vecMul, true
	case opSub:
		if scalarFirst {
			return vecRSub, true
		}
		return vecSub, true
	case opDiv:
		if scalarFirst {
			return vecRDiv, true
		}
		return vecDiv, true
	}
	return 0, false
}

// binRunRounded runs as much of one run of binRun (dst[j] = a[j*ia] op b[j*ib]) as the vector code
// does with each result rounded to fp16 in the same pass, and returns how many elements it did: the
// caller computes and rounds the rest.
func binRunRounded(code binCode, dst, a []float32, ia int, b []float32, ib int) int {
	if !hasRoundVec {
		return 0
	}
	switch {
	case ia == 1 && ib == 1:
		if op, ok := vecOpOf(code, false); ok {
			return binVV(op+vecRound, dst, a, b)
		}
	case ia == 1:
		if op, ok := vecOpOf(code, false); ok {
			return binVS(op+vecRound, dst, a, b[0])
		}
	case ib == 1:
		if op, ok := vecOpOf(code, true); ok {
			return binVS(op+vecRound, dst, b, a[0])
		}
	}
	return 0
}
