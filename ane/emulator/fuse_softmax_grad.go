package emulator

import (
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// Softmax gradient. The chain of the attention backward (mil's softmax rule)
//
//	a1 = mul(p, g)
//	r1 = reduce_sum(a1, axes=[-1], keep_dims=true)
//	d1 = sub(g, r1)
//	a2 = mul(p, d1)          the second centering pass, when present
//	r2 = reduce_sum(a2, ...)
//	d2 = sub(d1, r2)
//	e  = mul(p, d2)
//	ds = mul(e, scale)       scale a constant scalar
//
// runs row by row (the rows' sums side by side: addRows): each centering pass's row sum, then ds, each
// op's result rounded as that op rounds it and each sum accumulated in the same order as reduce_sum, so
// the bits are those of the separate ops; the intermediate tensors are never stored.

// maxCenterings bounds the centering passes a chain may have.
const maxCenterings = 4

// centering is the rounding of one centering pass's three ops (mul, reduce_sum, sub).
type centering struct{ rA, rR, rD bool }

// softmaxGrad is the compiled chain.
type softmaxGrad struct {
	p, g, out []float32
	n         int // row length
	scale     float32
	passes    []centering // in the order they run
	rE, rS    bool        // whether the last two muls round their results to fp16
}

// centerOps is one centering pass's ops: aop = mul(p, x), rop = reduce_sum(aop), dop = sub(x, rop).
type centerOps struct {
	ai, ri, di    int
	aop, rop, dop *mil.Op
}

// matchCentering matches dop = sub(x, reduce_sum(mul(p, x), axes=[-1], keep_dims=true)) over shape,
// returning the pass's ops and x.
func (r *rewriter) matchCentering(di int, dop *mil.Op, pName string, shape []int) (centerOps, string, bool) {
	g := r.g
	x := ref(dop, "x")
	ri, rop, ok := g.inner(ref(dop, "y"), "reduce_sum")
	if !ok || x == "" {
		return centerOps{}, "", false
	}
	want := append(append([]int{}, shape[:len(shape)-1]...), 1)
	if !sameShape(resultShape(rop), want) {
		return centerOps{}, "", false
	}
	axes, ok, err := r.intsArg(rop, "axes")
	if err != nil || !ok || len(axes) != 1 || (axes[0] != -1 && axes[0] != len(shape)-1) {
		return centerOps{}, "", false
	}
	if kd, err := r.boolArg(rop, "keep_dims", false); err != nil || !kd {
		return centerOps{}, "", false
	}
	ai, aop, ok := g.inner(ref(rop, "x"), "mul")
	if !ok || !sameShape(resultShape(aop), shape) {
		return centerOps{}, "", false
	}
	ax, ay := ref(aop, "x"), ref(aop, "y")
	if !(ax == pName && ay == x) && !(ax == x && ay == pName) {
		return centerOps{}, "", false
	}
	return centerOps{ai: ai, ri: ri, di: di, aop: aop, rop: rop, dop: dop}, x, true
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
	// The centering passes, found last first; a pass's x read twice (by its mul and its sub) may be
	// the result of the pass before it.
	c, x, ok := r.matchCentering(di, dop, pName, shape)
	if !ok {
		return nil
	}
	passes := []centerOps{c}
	for len(passes) < maxCenterings {
		j, op, ok := g.innerRead(x, "sub", 2)
		if !ok || !sameShape(resultShape(op), shape) {
			break
		}
		prev, px, ok := r.matchCentering(j, op, pName, shape)
		if !ok {
			break
		}
		passes, x = append([]centerOps{prev}, passes...), px
	}
	var ops []int
	for _, c := range passes {
		ops = append(ops, c.ai, c.ri, c.di)
	}
	ops = append(ops, ei, i)
	first := passes[0]
	return &fusion{ops: ops, build: func(c *compiler) (step, error) {
		p, err := c.tensorArg(first.aop, argNamed(first.aop, pName))
		if err != nil {
			return step{}, err
		}
		gr, err := c.tensorArg(first.dop, "x")
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
			rE: c.roundsOp(eop), rS: c.roundsOp(last)}
		for _, ps := range passes {
			f.passes = append(f.passes, centering{rA: c.roundsOp(ps.aop), rR: c.roundsOp(ps.rop), rD: c.roundsOp(ps.dop)})
		}
		rows := 0
		if n > 0 {
			rows = len(out.data) / n
		}
		body := f.rows
		return step{outs: []*tensor{out}, flops: float64(2+4*len(passes)) * float64(len(out.data)), fused: true,
			run: func() error {
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

// rows computes rows [lo, hi) in groups of rowGroup (addRows sums them side by side), one op at a time
// over the rows (which stay in L1) on the vector code (rounding as it computes); the output rows hold
// the centered values, a block on the stack the products.
func (f *softmaxGrad) rows(lo, hi int) {
	n := f.n
	sc := []float32{f.scale}
	var prod [rowGroup][128]float32 // products of a block of each row's columns
	var block [rowGroup][]float32
	var sum [rowGroup]float32
	row := func(v []float32, r int) []float32 { return v[r*n : (r+1)*n] }
	for r0 := lo; r0 < hi; r0 += rowGroup {
		g := min(rowGroup, hi-r0)
		for pass, c := range f.passes {
			x := f.out
			if pass == 0 {
				x = f.g
			}
			sum = [rowGroup]float32{}
			for j := 0; j < n; j += len(prod[0]) {
				k := min(len(prod[0]), n-j)
				for i := range g {
					binRunRound(opMul, c.rA, prod[i][:k], row(f.p, r0+i)[j:j+k], 1, row(x, r0+i)[j:j+k], 1)
					block[i] = prod[i][:k]
				}
				addRows(sum[:g], block[:g])
			}
			for i := range g {
				if c.rR {
					sum[i] = half.RoundF16(sum[i])
				}
				binRunRound(opSub, c.rD, row(f.out, r0+i), row(x, r0+i), 1, sum[i:i+1], 0)
			}
		}
		for i := range g {
			out := row(f.out, r0+i)
			binRunRound(opMul, f.rE, out, out, 1, row(f.p, r0+i), 1)
			binRunRound(opMul, f.rS, out, out, 1, sc, 0)
		}
	}
}
