//go:build !amd64 || noasm

package emulator

// There is no vector code for binRun on this architecture: the scalar loops do all of it.

// hasBinVec is false here (a variable, as on amd64, so that benchmarks can compare).
var hasBinVec = false

func binVV(op vecOp, dst, a, b []float32) int { return 0 }

func binVS(op vecOp, dst, a []float32, s float32) int { return 0 }
