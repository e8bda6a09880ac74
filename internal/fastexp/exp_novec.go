//go:build !amd64 || noasm

package fastexp

// expVecWidth is the lanes of one vector block; there is no vector code on this architecture.
const expVecWidth = 8

// hasExpVec is false: expShifted runs expShiftedGo.
const hasExpVec = false

// expShiftedVec does nothing here.
func expShiftedVec(dst, src []float32, shift float32, neg bool) int { return 0 }

// use512 is never set here: there is no AVX-512 code.
var use512 = false
