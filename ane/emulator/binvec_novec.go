//go:build !amd64 || noasm

package emulator

// There is no vector code for binRun on this architecture: the scalar loops do all of it.

// hasBinVec and hasRoundVec are false here (variables, as on amd64, so that benchmarks can compare).
var hasBinVec, hasRoundVec = false, false

func binVV(op vecOp, dst, a, b []float32) int { return 0 }

func binVS(op vecOp, dst, a []float32, s float32) int { return 0 }
