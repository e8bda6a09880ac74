//go:build !amd64 || noasm

package optim

// adamConsts are the update's constants.
type adamConsts struct {
	b1, c1, b2, c2, decay, bc1, bc2, lr, eps, gs float32
}

// hasAdamVec is false here: there is no vector code on this architecture.
var hasAdamVec = false

// adamVec does nothing here.
func adamVec(w, g, m, v []float32, c adamConsts) int { return 0 }
