package emulator

import "github.com/anestar/anestar/internal/vec"

// vecOp is an operation of the vector code (package vec).
type vecOp = vec.Op

const (
	vecAdd   = vec.Add
	vecSub   = vec.Sub
	vecMul   = vec.Mul
	vecDiv   = vec.Div
	vecRSub  = vec.RSub
	vecRDiv  = vec.RDiv
	vecRound = vec.Round
)

// binVecMin is the shortest run worth a call into the vector code.
const binVecMin = vec.MinRun

// hasBinVec and hasRoundVec report whether the vector code runs here, and its rounding ops;
// variables, so that benchmarks and tests can compare with the scalar code alone.
var (
	hasBinVec   = vec.Has()
	hasRoundVec = vec.HasRound()
)

// binVV runs the vector code on the longest prefix of whole blocks and returns its length.
func binVV(op vecOp, dst, a, b []float32) int {
	if !hasBinVec || (op >= vecRound && !hasRoundVec) {
		return 0
	}
	return vec.VV(op, dst, a, b)
}

// binVS is binVV with a scalar second operand (or first, for vecRSub and vecRDiv).
func binVS(op vecOp, dst, a []float32, s float32) int {
	if !hasBinVec || (op >= vecRound && !hasRoundVec) {
		return 0
	}
	return vec.VS(op, dst, a, s)
}

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

// binRunRound is binRun, each result rounded to fp16 when rnd: in one pass where the vector code
// rounds, else computed and then rounded (the same bits).
func binRunRound(code binCode, rnd bool, dst, a []float32, ia int, b []float32, ib int) {
	k := 0
	if rnd {
		k = binRunRounded(code, dst, a, ia, b, ib)
	}
	binRun(code, dst[k:], a[k*ia:], ia, b[k*ib:], ib)
	if rnd {
		roundSlice(dst[k:])
	}
}
