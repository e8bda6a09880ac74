package nn

import (
	"math"

	"github.com/anestar/anestar/internal/par"
)

// Softmax sets each row of y to the softmax of that row of the row-major
// [rows, cols] matrix x: y[r,j] = exp(x[r,j] - max_r) / sum_j exp(x[r,j] - max_r).
// Subtracting the row maximum keeps it finite for any finite input. y may
// alias x.
func Softmax(y, x []float32, rows, cols int) error {
	chk := lengthCheck{op: "nn.Softmax"}
	chk.dims("rows, cols", rows, cols)
	chk.atLeast("x", x, rows*cols)
	chk.atLeast("y", y, rows*cols)
	if chk.err != nil {
		return chk.err
	}
	par.Grained(rows, max(1, elemGrain/cols), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			softmaxRow(y[r*cols:(r+1)*cols], x[r*cols:(r+1)*cols])
		}
	})
	return nil
}

// softmaxRow writes softmax(x) to y and returns log(sum exp(x - max)) + max,
// the row's log-sum-exp.
func softmaxRow(y, x []float32) float64 {
	m := rowMax(x)
	var sum float64
	for j, v := range x {
		e := math.Exp(float64(v - m))
		y[j] = float32(e)
		sum += e
	}
	inv := 1 / sum
	for j := range y {
		y[j] = float32(float64(y[j]) * inv)
	}
	return math.Log(sum) + float64(m)
}

// SoftmaxBackward sets dx to the gradient through a row softmax from the
// softmax output y and the output gradient dy:
// dx[r,j] = y[r,j] * (dy[r,j] - sum_k dy[r,k]*y[r,k]). dx may alias dy.
func SoftmaxBackward(dx, dy, y []float32, rows, cols int) error {
	chk := lengthCheck{op: "nn.SoftmaxBackward"}
	chk.dims("rows, cols", rows, cols)
	chk.atLeast("dx", dx, rows*cols)
	chk.atLeast("dy", dy, rows*cols)
	chk.atLeast("y", y, rows*cols)
	if chk.err != nil {
		return chk.err
	}
	par.Grained(rows, max(1, elemGrain/cols), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			yr, dyr, dxr := y[r*cols:(r+1)*cols], dy[r*cols:(r+1)*cols], dx[r*cols:(r+1)*cols]
			var dot float64
			for j, v := range yr {
				dot += float64(dyr[j] * v)
			}
			for j, v := range yr {
				dxr[j] = v * (dyr[j] - float32(dot))
			}
		}
	})
	return nil
}
