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
