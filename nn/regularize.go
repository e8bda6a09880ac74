package nn

import (
	"fmt"
	"math"
)

// L2Penalty returns lambda/2 * sum(w^2), whose gradient AddL2Grad adds.
func L2Penalty(w []float32, lambda float32) float64 {
	var s float64
	for _, v := range w {
		s += float64(v) * float64(v)
	}
	return float64(lambda) / 2 * s
}

// AddL2Grad adds lambda*w to g, the gradient of L2Penalty. Followed by an
// SGD step this is the reference library's decay w *= 1 - lr*lambda.
func AddL2Grad(g, w []float32, lambda float32) error {
	if len(g) < len(w) {
		return fmt.Errorf("nn.AddL2Grad: g has %d elements, need %d", len(g), len(w))
	}
	for i, v := range w {
		g[i] += lambda * v
	}
	return nil
}

// L1Penalty returns lambda * sum(|w|), whose (sub)gradient AddL1Grad adds.
func L1Penalty(w []float32, lambda float32) float64 {
	var s float64
	for _, v := range w {
		s += math.Abs(float64(v))
	}
	return float64(lambda) * s
}

// AddL1Grad adds lambda*sign(w) to g (0 where w is 0), the subgradient of
// L1Penalty.
func AddL1Grad(g, w []float32, lambda float32) error {
	if len(g) < len(w) {
		return fmt.Errorf("nn.AddL1Grad: g has %d elements, need %d", len(g), len(w))
	}
	for i, v := range w {
		switch {
		case v > 0:
			g[i] += lambda
		case v < 0:
			g[i] -= lambda
		}
	}
	return nil
}
