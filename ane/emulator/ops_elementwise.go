package emulator

import (
	"math"

	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/internal/fastexp"
	"github.com/anestar/anestar/internal/vec"
	"github.com/anestar/anestar/mil"
)

// binary operator codes.
type binCode uint8

const (
	opAdd binCode = iota
	opSub
	opMul
	opDiv
	opPow
	opMax
	opMin
)

// bcastPlan walks the output of a broadcasting op as rows of a contiguous inner run. Operand i's
// elements for row r start at off[i][r] and advance by inc[i] (0 or 1) along the run.
type bcastPlan struct {
	rows, inner int     // row count and run length; rows*inner is the output size
	off         [][]int // per operand, the start of each row
	inc         []int   // per operand, the step along a run
}

// planBroadcast builds the walk of out over operands that broadcast to it numpy-style.
func planBroadcast(op *mil.Op, out []int, ins ...[]int) (*bcastPlan, error) {
	return planBroadcastStrided(op, out, ins, make([][]int, len(ins)))
}

// planBroadcastStrided is planBroadcast for operands with element strides strs over their dims (nil
// for a dense operand), whose innermost dim of more than one element has stride 1.
func planBroadcastStrided(op *mil.Op, out []int, ins, strs [][]int) (*bcastPlan, error) {
	r := len(out)
	// Operand strides over out's dims, 0 where the operand broadcasts.
	str := make([][]int, len(ins))
	for i, s := range ins {
		if len(s) > r {
			return nil, opErr(op, "operand %d has shape %v, wider than the result %v", i, s, out)
		}
		str[i] = make([]int, r)
		n := 1
		for k := r - 1; k >= 0; k-- {
			j := k - (r - len(s))
			d := 1
			if j >= 0 {
				d = s[j]
			}
			switch {
			case d == out[k]:
				if d != 1 {
					str[i][k] = n
					if strs[i] != nil {
						str[i][k] = strs[i][j]
					}
				}
			case d == 1:
			default:
				return nil, opErr(op, "operand %d has shape %v, which does not broadcast to %v", i, s, out)
			}
			n *= d
		}
	}
	// Collapse: drop size-1 dims, then merge neighbours that every operand walks contiguously.
	var dims []int
	var ds [][]int
	for k := 0; k < r; k++ {
		if out[k] == 1 {
			continue
		}
		col := make([]int, len(ins))
		for i := range ins {
			col[i] = str[i][k]
		}
		if m := len(dims) - 1; m >= 0 {
			ok := true
			for i := range ins {
				if ds[m][i] != col[i]*out[k] {
					ok = false
				}
			}
			if ok {
				dims[m] *= out[k]
				for i := range ins {
					ds[m][i] = col[i]
				}
				continue
			}
		}
		dims = append(dims, out[k])
		ds = append(ds, col)
	}
	p := &bcastPlan{inner: 1, rows: 1, inc: make([]int, len(ins)), off: make([][]int, len(ins))}
	if len(dims) > 0 {
		last := len(dims) - 1
		p.inner = dims[last]
		for i := range ins {
			p.inc[i] = ds[last][i]
		}
		dims, ds = dims[:last], ds[:last]
	}
	for _, d := range dims {
		p.rows *= d
	}
	if numel(out) == 0 {
		p.rows, p.inner = 0, 0
	}
	for i := range ins {
		p.off[i] = make([]int, p.rows)
		for row := 0; row < p.rows; row++ {
			rem, o := row, 0
			for k := len(dims) - 1; k >= 0; k-- {
				o += (rem % dims[k]) * ds[k][i]
				rem /= dims[k]
			}
			p.off[i][row] = o
		}
	}
	return p, nil
}

// rowsGrain turns an element grain into a row grain for parallel loops over rows of n elements.
func rowsGrain(n int) int { return max(1, 1<<14/max(n, 1)) }

// binaryOp returns the builder of an elementwise binary op with broadcasting.
func binaryOp(code binCode) builder {
	return func(c *compiler, op *mil.Op) (step, error) {
		x, err := c.tensorArg(op, "x")
		if err != nil {
			return step{}, err
		}
		y, err := c.tensorArg(op, "y")
		if err != nil {
			return step{}, err
		}
		out, err := c.result(op, 0)
		if err != nil {
			return step{}, err
		}
		want, err := mil.BroadcastShapes(x.shape, y.shape)
		if err != nil {
			return step{}, opErr(op, "%v", err)
		}
		if numel(want) != numel(out.shape) {
			return step{}, opErr(op, "result has shape %v, x and y broadcast to %v", out.shape, want)
		}
		p, err := planBroadcastStrided(op, want, [][]int{x.shape, y.shape}, [][]int{viewStrides(x), viewStrides(y)})
		if err != nil {
			return step{}, err
		}
		xd, yd, od := x.data, y.data, out.data
		n, ia, ib := p.inner, p.inc[0], p.inc[1]
		oa, ob := p.off[0], p.off[1]
		rnd := c.rounds(out)
		fuse := rnd && n >= binVecMin // long runs: the vector code rounds as it computes
		body := func(lo, hi int) {
			for r := lo; r < hi; r++ {
				binRunRound(code, fuse, od[r*n:(r+1)*n], xd[oa[r]:], ia, yd[ob[r]:], ib)
			}
			if rnd && !fuse {
				roundSlice(od[lo*n : hi*n])
			}
		}
		run := func() error { parallel(p.rows, rowsGrain(n), body); return nil }
		s := step{outs: []*tensor{out}, flops: float64(numel(want)), fused: true, run: run}
		if code == opDiv && out.dtype == mil.Int32 {
			s.run = func() error { return intDiv(op, yd, od, func() { parallel(p.rows, rowsGrain(n), body) }) }
		} else if p.rows == 1 && n > 0 {
			// One run: any range of it is a piece (chain.go).
			x0, y0 := xd[oa[0]:], yd[ob[0]:]
			s.pw = &piecewise{n: n, fine: true, out: flat(od), ins: []access{{x0[:max(n*ia, 1)], ia}, {y0[:max(n*ib, 1)], ib}},
				fn: func(lo, hi int) { binRunRound(code, rnd, od[lo:hi], x0[lo*ia:], ia, y0[lo*ib:], ib) }}
		} else if p.rows > 1 && n > 0 {
			// Rows of runs: any range of rows is a piece.
			s.pw = &piecewise{n: p.rows, fn: body, out: access{od[:p.rows*n], n},
				ins: []access{rowsAccess(xd, oa, n, ia), rowsAccess(yd, ob, n, ib)}}
		}
		return s, nil
	}
}

// binRun computes dst[j] = a[j*ia] op b[j*ib] for one run; ia and ib are 0 or 1.
func binRun(code binCode, dst, a []float32, ia int, b []float32, ib int) {
	n := len(dst)
	switch {
	case ia == 1 && ib == 1:
		a, b = a[:n], b[:n]
		if op, ok := vecOpOf(code, false); ok && n >= binVecMin {
			k := binVV(op, dst, a, b)
			dst, a, b = dst[k:], a[k:], b[k:]
		}
		switch code {
		case opAdd:
			for j := range dst {
				dst[j] = a[j] + b[j]
			}
		case opSub:
			for j := range dst {
				dst[j] = a[j] - b[j]
			}
		case opMul:
			for j := range dst {
				dst[j] = a[j] * b[j]
			}
		case opDiv:
			for j := range dst {
				dst[j] = a[j] / b[j]
			}
		default:
			for j := range dst {
				dst[j] = binScalar(code, a[j], b[j])
			}
		}
	case ia == 1:
		a = a[:n]
		s := b[0]
		if op, ok := vecOpOf(code, false); ok && n >= binVecMin {
			k := binVS(op, dst, a, s)
			dst, a = dst[k:], a[k:]
		}
		switch code {
		case opAdd:
			for j := range dst {
				dst[j] = a[j] + s
			}
		case opSub:
			for j := range dst {
				dst[j] = a[j] - s
			}
		case opMul:
			for j := range dst {
				dst[j] = a[j] * s
			}
		case opDiv:
			for j := range dst {
				dst[j] = a[j] / s
			}
		case opPow:
			powRun(dst, a, s)
		default:
			for j := range dst {
				dst[j] = binScalar(code, a[j], s)
			}
		}
	case ib == 1:
		b = b[:n]
		s := a[0]
		if op, ok := vecOpOf(code, true); ok && n >= binVecMin {
			k := binVS(op, dst, b, s)
			dst, b = dst[k:], b[k:]
		}
		switch code {
		case opAdd:
			for j := range dst {
				dst[j] = s + b[j]
			}
		case opSub:
			for j := range dst {
				dst[j] = s - b[j]
			}
		case opMul:
			for j := range dst {
				dst[j] = s * b[j]
			}
		default:
			for j := range dst {
				dst[j] = binScalar(code, s, b[j])
			}
		}
	default:
		v := binScalar(code, a[0], b[0])
		for j := range dst {
			dst[j] = v
		}
	}
}

// powRun is dst = a ** s for a scalar exponent, with the exponents RMSNorm and friends use done directly.
func powRun(dst, a []float32, s float32) {
	switch s {
	case 2:
		for j := range dst {
			dst[j] = a[j] * a[j]
		}
	case 0.5:
		for j := range dst {
			dst[j] = float32(math.Sqrt(float64(a[j])))
		}
	case -0.5:
		for j := range dst {
			dst[j] = float32(1 / math.Sqrt(float64(a[j])))
		}
	default:
		for j := range dst {
			dst[j] = binScalar(opPow, a[j], s)
		}
	}
}

// binScalar is one element of a binary op.
func binScalar(code binCode, a, b float32) float32 {
	switch code {
	case opAdd:
		return a + b
	case opSub:
		return a - b
	case opMul:
		return a * b
	case opDiv:
		return a / b
	case opPow:
		return float32(math.Pow(float64(a), float64(b)))
	case opMax:
		if a != a || b != b {
			return float32(math.NaN())
		}
		return max(a, b)
	case opMin:
		if a != a || b != b {
			return float32(math.NaN())
		}
		return min(a, b)
	}
	return float32(math.NaN())
}

// unaryOp builds the elementwise ops of one input.
func unaryOp(c *compiler, op *mil.Op) (step, error) {
	x, out, err := c.xAndSameShape(op)
	if err != nil {
		return step{}, err
	}
	var f func(dst, src []float32)
	cost := 1.0
	switch op.Kind {
	case "sqrt":
		f = mapF64(math.Sqrt)
	case "exp":
		f, cost = func(dst, src []float32) { fastexp.Shifted(dst, src, 0, false) }, 4
	case "sigmoid":
		f, cost = func(dst, src []float32) {
			fastexp.Shifted(dst, src, 0, true)
			recipOnePlus(dst)
		}, 5
	case "silu":
		f, cost = func(dst, src []float32) {
			fastexp.Shifted(dst, src, 0, true)
			recipOnePlus(dst)
			src = src[:len(dst)]
			for i := vec.VV(vec.Mul, dst, src, dst); i < len(dst); i++ {
				dst[i] = src[i] * dst[i]
			}
		}, 6
	case "relu":
		f = func(dst, src []float32) {
			src = src[:len(dst)]
			for i, v := range src {
				dst[i] = max(v, 0) // NaN stays NaN, -0 gives +0 (Go's max), as v > 0 || v != v ? v : 0
			}
		}
	case "tanh":
		f, cost = mapF64(math.Tanh), 4
	case "rsqrt", "log":
		def := 1e-12
		if op.Kind == "log" {
			def = 1e-45
		}
		eps, err := c.floatArg(op, "epsilon", def)
		if err != nil {
			return step{}, err
		}
		// The epsilon is a value of x's dtype.
		e := float64(float32(eps))
		if isFloat16(x.dtype) {
			e = float64(half.RoundF16(float32(eps)))
		}
		if op.Kind == "rsqrt" {
			f = mapF64(func(v float64) float64 { return 1 / math.Sqrt(v+e) })
		} else {
			f = mapF64(func(v float64) float64 { return math.Log(v + e) })
		}
	case "gelu":
		mode, err := c.strArg(op, "mode", "EXACT")
		if err != nil {
			return step{}, err
		}
		switch mode {
		case "EXACT":
			f = mapF64(func(v float64) float64 { return 0.5 * v * (1 + math.Erf(v/math.Sqrt2)) })
		case "TANH_APPROXIMATION":
			f = mapF64(func(v float64) float64 {
				return 0.5 * v * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(v+0.044715*v*v*v)))
			})
		case "SIGMOID_APPROXIMATION":
			f = mapF32(func(v float32) float32 { return v * sigmoid32(1.702*v) })
		default:
			return step{}, opErr(op, "argument mode: %q is not one of %q", mode, mil.GeluModes)
		}
		cost = 8
	default:
		return step{}, unsupported(op)
	}
	xd, od := x.data, out.data
	rnd := c.rounds(out)
	body := func(lo, hi int) {
		f(od[lo:hi], xd[lo:hi])
		if rnd {
			roundSlice(od[lo:hi])
		}
	}
	s := step{outs: []*tensor{out}, flops: cost * float64(len(od)), fused: true,
		run: func() error { parallel(len(od), 1<<13, body); return nil }}
	if len(od) > 0 {
		s.pw = &piecewise{n: len(od), fine: true, fn: body, out: flat(od), ins: []access{flat(xd[:len(od)])}}
	}
	return s, nil
}

// rowsAccess is the memory an operand of a broadcast walk reads per row: row r of n elements
// from d[off[r]] on, inc 0 or 1 apart. Rows laid end to end from off[0] are row-by-row reads;
// anything else may be read by any row.
func rowsAccess(d []float32, off []int, n, inc int) access {
	lo, hi := off[0], off[0]
	dense := inc == 1
	for r, o := range off {
		lo, hi = min(lo, o), max(hi, o)
		dense = dense && o == off[0]+r*n
	}
	if dense {
		return access{d[off[0] : off[0]+len(off)*n], n}
	}
	return access{d[lo : hi+max(n*inc, 1)], 0}
}

// recipOnePlus sets d[i] = 1 / (1 + d[i]), the float32 sum then the float32 quotient (the sigmoid of x
// from e^-x), on the vector code where it runs.
func recipOnePlus(d []float32) {
	k := vec.VS(vec.Add, d, d, 1)
	vec.VS(vec.RDiv, d[:k], d[:k], 1)
	for i := k; i < len(d); i++ {
		d[i] = 1 / (1 + d[i])
	}
}

// mapF32 lifts a float32 function to a loop.
func mapF32(f func(float32) float32) func(dst, src []float32) {
	return func(dst, src []float32) {
		src = src[:len(dst)]
		for i, v := range src {
			dst[i] = f(v)
		}
	}
}

// mapF64 lifts a float64 function to a loop, rounding each result to float32 once.
func mapF64(f func(float64) float64) func(dst, src []float32) {
	return func(dst, src []float32) {
		src = src[:len(dst)]
		for i, v := range src {
			dst[i] = float32(f(float64(v)))
		}
	}
}

// intDiv runs an int32 real_div (div) after checking that no divisor in y is 0, and truncates the
// quotients toward zero: an int32 tensor cannot hold inf, NaN or fractions.
func intDiv(op *mil.Op, y, out []float32, div func()) error {
	for i, v := range y {
		if v == 0 {
			return opErr(op, "int32 division by zero (element %d of y): an int32 result cannot hold inf or NaN", i)
		}
	}
	div()
	for i, v := range out {
		out[i] = float32(math.Trunc(float64(v)))
	}
	return nil
}
