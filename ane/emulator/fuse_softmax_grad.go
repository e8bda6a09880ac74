package emulator

import (
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// Softmax gradient. The chain of the attention backward
//
//	a  = mul(p, g)
//	r  = reduce_sum(a, axes=[-1], keep_dims=true)
//	d  = sub(g, r)
//	e  = mul(p, d)
//	ds = mul(e, scale)      scale a constant scalar
//
// runs as one pass per row: the row sum of p*g, then ds, each op's result rounded as that op rounds it
// and the sum accumulated in the same order as reduce_sum, so the bits are those of the separate ops;
// the four intermediate tensors are never stored.

// softmaxGrad is the compiled chain.
type softmaxGrad struct {
	p, g, out          []float32
	n                  int // row length
	scale              float32
	rA, rR, rD, rE, rS bool // whether each op rounds its result to fp16
}

// matchSoftmaxGrad matches the chain ending at mul op last (index i).
func (r *rewriter) matchSoftmaxGrad(i int, last *mil.Op) *fusion {
	g := r.g
	shape := resultShape(last)
	if len(shape) < 1 {
		return nil
	}
	ei, eop, scaleV, ok := r.constOperand(last, "mul")
	if !ok || !sameShape(resultShape(eop), shape) {
		return nil
	}
	scale, err := constTensor("scale", scaleV, r.w)
	if err != nil || len(scale.data) != 1 || len(scale.shape) > len(shape) {
		return nil
	}
	// e = mul(p, d): one operand is d, made by sub.
	var di int
	var dop *mil.Op
	pName := ""
	for _, arg := range [2][2]string{{"x", "y"}, {"y", "x"}} {
		if j, op, ok := g.inner(ref(eop, arg[0]), "sub"); ok {
			di, dop, pName = j, op, ref(eop, arg[1])
			break
		}
	}
	if dop == nil || pName == "" || !sameShape(resultShape(dop), shape) {
		return nil
	}
	gName := ref(dop, "x")
	ri, rop, ok := g.inner(ref(dop, "y"), "reduce_sum")
	if !ok || gName == "" {
		return nil
	}
	want := append(append([]int{}, shape[:len(shape)-1]...), 1)
	if !sameShape(resultShape(rop), want) {
		return nil
	}
	axes, ok, err := r.intsArg(rop, "axes")
	if err != nil || !ok || len(axes) != 1 || (axes[0] != -1 && axes[0] != len(shape)-1) {
		return nil
	}
	if kd, err := r.boolArg(rop, "keep_dims", false); err != nil || !kd {
		return nil
	}
	ai, aop, ok := g.inner(ref(rop, "x"), "mul")
	if !ok || !sameShape(resultShape(aop), shape) {
		return nil
	}
	ax, ay := ref(aop, "x"), ref(aop, "y")
	if !(ax == pName && ay == gName) && !(ax == gName && ay == pName) {
		return nil
	}
	return &fusion{ops: []int{ai, ri, di, ei, i}, build: func(c *compiler) (step, error) {
		p, err := c.tensorArg(aop, argNamed(aop, pName))
		if err != nil {
			return step{}, err
		}
		gr, err := c.tensorArg(dop, "x")
		if err != nil {
			return step{}, err
		}
		out, err := c.result(last, 0)
		if err != nil {
			return step{}, err
		}
		if err := checkShape(last, p.name, p.shape, out.shape); err != nil {
			return step{}, err
		}
		if err := checkShape(last, gr.name, gr.shape, out.shape); err != nil {
			return step{}, err
		}
		n := shape[len(shape)-1]
		f := &softmaxGrad{p: p.data, g: gr.data, out: out.data, n: n, scale: scale.data[0],
			rA: c.roundsOp(aop), rR: c.roundsOp(rop), rD: c.roundsOp(dop), rE: c.roundsOp(eop), rS: c.roundsOp(last)}
		rows := 0
		if n > 0 {
			rows = len(out.data) / n
		}
		body := f.rows
		return step{outs: []*tensor{out}, flops: 6 * float64(len(out.data)), fused: true, run: func() error {
			parallel(rows, rowsGrain(n), body)
			return nil
		}}, nil
	}}
}

// argNamed is the argument of op ("x" or "y") that refers to value name.
func argNamed(op *mil.Op, name string) string {
	if ref(op, "x") == name {
		return "x"
	}
	return "y"
}

// rows computes rows [lo, hi), one op at a time over each row (which stays in L1) on the vector code
// (rounding as it computes); the output row serves as the scratch of the intermediate values. The sum
// stays one float32 addition after another, reduce_sum's order.
func (f *softmaxGrad) rows(lo, hi int) {
	n, scale := f.n, f.scale
	sc := []float32{scale}
	var sum [1]float32
	for r := lo; r < hi; r++ {
		p, g, out := f.p[r*n:(r+1)*n], f.g[r*n:(r+1)*n], f.out[r*n:(r+1)*n]
		binRunRound(opMul, f.rA, out, p, 1, g, 1)
		var s float32
		for _, a := range out {
			s += a
		}
		if f.rR {
			s = half.RoundF16(s)
		}
		sum[0] = s
		binRunRound(opSub, f.rD, out, g, 1, sum[:], 0)
		binRunRound(opMul, f.rE, out, out, 1, p, 1)
		binRunRound(opMul, f.rS, out, out, 1, sc, 0)
	}
}
