//go:build !amd64 || noasm

package cpu

// hasClipVec is false here: there is no vector code on this architecture.
var hasClipVec = false

// sumSquaresVec does nothing here.
func sumSquaresVec(x []float32, lanes *[16]float64) int { return 0 }

// scaleVec does nothing here.
func scaleVec(x []float32, s float32) int { return 0 }

// sumVec does nothing here.
func sumVec(x []float32, lanes *[16]float64) int { return 0 }
