//go:build !amd64 || noasm

package nn

// hasRMSVec is false here: there is no vector code on this architecture.
var hasRMSVec = false

// rmsColsVec does nothing here.
func rmsColsVec(ss, dot, x, dy, w []float32, C, S int) int { return 0 }

// rmsScaleVec does nothing here.
func rmsScaleVec(out, x, r []float32, wc float32) int { return 0 }

// rmsGradVec does nothing here.
func rmsGradVec(dx, dy, x, r, coef []float32, wc float32, lanes *[8]float32) int { return 0 }
