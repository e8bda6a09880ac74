//go:build !amd64 || noasm

package nn

// hasClipVec is false here: there is no vector code on this architecture.
var hasClipVec = false

// laneSumVec does nothing here.
func laneSumVec(x []float32, lanes *[16]float64, square bool) int { return 0 }
