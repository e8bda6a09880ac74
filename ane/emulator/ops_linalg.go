package emulator

import (
	"unsafe"

	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/internal/transpose"
	"github.com/anestar/anestar/internal/vec"
	"github.com/anestar/anestar/mil"
)

// The products run in float32: in FP32 mode through cpu.SgemmF32, on AMX tiles where the cpu package
// chose them (cpu.GemmName; a three-part split of each float32, fp32-class error), else on the BLAS.
// In FP16 mode every operand already holds fp16 values, whose products are exact in float32; the sums
// accumulate in float32 and the step rounds the result to fp16 once, which is the ANE's arithmetic.
// Products of two fp16 operands in FP16 mode go through cpu.SgemmF16 instead, the same arithmetic
// (exact products, float32 sums) on AMX tiles where the cpu package chose them (cpu.F16GemmName),
// else the same BLAS.

// gemmFunc is the signature of cpu.Sgemm and its variants.
type gemmFunc = func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error

// gemmFor returns the product for operands x and y, single-threaded when serial: in FP16 mode
// cpu.SgemmF16 when both hold fp16 values, else cpu.Sgemm (with AMX's three-part path for these the
// 384/1024/6/256 layer measured 4% slower); in FP32 mode cpu.SgemmF32.
func (c *compiler) gemmFor(x, y *tensor, serial bool) gemmFunc {
	f16 := c.opts.Numerics == FP16 && isFloat16(x.dtype) && isFloat16(y.dtype)
	switch {
	case f16 && serial:
		return cpu.SgemmF16Serial
	case f16:
		return cpu.SgemmF16
	case c.opts.Numerics == FP16 && serial:
		return cpu.SgemmSerial
	case c.opts.Numerics == FP16:
		return cpu.Sgemm
	case serial:
		return cpu.SgemmF32Serial
	}
	return cpu.SgemmF32
}

// mmPlan is a resolved matmul: operands, product sizes and the offset of each batch's matrices.
type mmPlan struct {
	x, y       *tensor
	tx, ty     bool
	m, n, k    int      // op(x) is m x k, op(y) is k x n
	xc, yc     int      // stored columns (leading dimensions) of x and y
	xoff, yoff []int    // per batch, the first element of its x and y matrix
	gemm       gemmFunc // the product, split over goroutines by the cpu package
	gemmSerial gemmFunc // the product on the calling goroutine
}

// batches is the number of products.
func (p *mmPlan) batches() int { return len(p.xoff) }

// flops is the multiply-adds of all products, counted twice.
func (p *mmPlan) flops() float64 { return 2 * float64(len(p.xoff)*p.m*p.n*p.k) }

// product computes batch b into dst (m x n, row stride n), single-threaded when serial.
func (p *mmPlan) product(b int, dst []float32, serial bool) error {
	f := p.gemm
	if serial {
		f = p.gemmSerial
	}
	return f(p.tx, p.ty, p.m, p.n, p.k, 1, p.x.data[p.xoff[b]:], p.xc, p.y.data[p.yoff[b]:], p.yc, 0, dst, p.n)
}

// planMatmul resolves op's operands and checks them against result shape out.
func (c *compiler) planMatmul(op *mil.Op, out []int) (*mmPlan, error) {
	return c.planMatmulT(op, out, false)
}

// mmOperand returns op's matmul operand arg (x or y) and its transpose flag, read through a folded
// transpose (fuse_transpose.go) as its input with the flag flipped.
func (c *compiler) mmOperand(op *mil.Op, arg string) (*tensor, bool, error) {
	tr, err := c.boolArg(op, "transpose_"+arg, false)
	if err != nil {
		return nil, false, err
	}
	if src, ok := c.rw.folded(ref(op, arg)); ok {
		if t, ok := c.env[src]; ok {
			return t, !tr, nil
		}
		return nil, false, opErr(op, "argument %s: %q is not defined", arg, src)
	}
	t, err := c.tensorArg(op, arg)
	return t, tr, err
}

// planMatmulT is planMatmul for the result of op transposed in its last two dims when transposed is
// set: op(y)^T op(x)^T.
func (c *compiler) planMatmulT(op *mil.Op, out []int, transposed bool) (*mmPlan, error) {
	x, tx, err := c.mmOperand(op, "x")
	if err != nil {
		return nil, err
	}
	y, ty, err := c.mmOperand(op, "y")
	if err != nil {
		return nil, err
	}
	if transposed {
		if len(x.shape) < 2 || len(y.shape) < 2 {
			return nil, opErr(op, "a transposed product needs operands of rank 2 or more")
		}
		x, y, tx, ty = y, x, !ty, !tx
	}
	want, err := mil.MatmulShape(x.shape, y.shape, tx, ty)
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	if err := checkShape(op, "result", out, want); err != nil {
		return nil, err
	}
	// Read rank-1 operands as matrices; a vector is never transposed.
	xs, ys := x.shape, y.shape
	if len(xs) == 1 {
		xs, tx = []int{1, xs[0]}, false
	}
	if len(ys) == 1 {
		ys, ty = []int{ys[0], 1}, false
	}
	xr, xc := xs[len(xs)-2], xs[len(xs)-1] // stored rows, columns
	yr, yc := ys[len(ys)-2], ys[len(ys)-1]
	m, k := xr, xc
	if tx {
		m, k = xc, xr
	}
	n := yc
	if ty {
		n = yr
	}
	batch, err := mil.BroadcastShapes(xs[:len(xs)-2], ys[:len(ys)-2])
	if err != nil {
		return nil, opErr(op, "%v", err)
	}
	xoff, err := batchOffsets(op, batch, xs[:len(xs)-2], xr*xc)
	if err != nil {
		return nil, err
	}
	yoff, err := batchOffsets(op, batch, ys[:len(ys)-2], yr*yc)
	if err != nil {
		return nil, err
	}
	// A view read in place (inplace.go) has its own leading dimension and matrix offsets.
	if x.lay != nil {
		xc = x.lay.matrices(xoff, xr*xc)
	}
	if y.lay != nil {
		yc = y.lay.matrices(yoff, yr*yc)
	}
	return &mmPlan{x: x, y: y, tx: tx, ty: ty, m: m, n: n, k: k, xc: xc, yc: yc, xoff: xoff, yoff: yoff,
		gemm: c.gemmFor(x, y, false), gemmSerial: c.gemmFor(x, y, true)}, nil
}

// matmulOp builds matmul with numpy batch broadcasting: one sgemm per batch.
func matmulOp(c *compiler, op *mil.Op) (step, error) {
	out, err := c.result(op, 0)
	if err != nil {
		return step{}, err
	}
	p, err := c.planMatmul(op, out.shape)
	if err != nil {
		return step{}, err
	}
	return matmulStep(c, p, out), nil
}

// matmulStep is the step of product p into out.
func matmulStep(c *compiler, p *mmPlan, out *tensor) step {
	od := out.data
	nb, mn := p.batches(), p.m*p.n
	if nb == 1 {
		return step{outs: []*tensor{out}, flops: p.flops(), run: func() error { return p.product(0, od, false) }}
	}
	// Batches (heads) run in parallel, one single-threaded product each, rounded as each finishes.
	rnd := c.rounds(out)
	errs := make([]error, nb)
	body := func(lo, hi int) {
		for b := lo; b < hi; b++ {
			errs[b] = p.product(b, od[b*mn:], true)
			if rnd {
				roundSlice(od[b*mn : (b+1)*mn])
			}
		}
	}
	grain := p.batchGrain()
	return step{outs: []*tensor{out}, flops: p.flops(), fused: true, run: func() error {
		parallel(nb, grain, body)
		return firstErr(errs)
	}}
}

// batchGrainMACs is the least work, in multiply-adds, that a piece of a batched product is handed to
// another goroutine for: handing a piece over and waiting for it costs microseconds, which the
// products of generation's one column (a head's scores against a short cache, some hundreds of
// multiply-adds) never repay.
const batchGrainMACs = 1 << 15

// batchGrain is how many of p's products make a piece worth running on another goroutine.
func (p *mmPlan) batchGrain() int { return max(1, batchGrainMACs/max(1, p.m*p.n*p.k)) }

// firstErr is the first non-nil error of errs.
func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// batchOffsets returns, for each index of the broadcast batch shape, the element offset of the matching
// matrix of an operand with batch dims dims and matrices of size mat.
func batchOffsets(op *mil.Op, batch, dims []int, mat int) ([]int, error) {
	p, err := planBroadcast(op, batch, dims)
	if err != nil {
		return nil, err
	}
	offs := make([]int, 0, numel(batch))
	for r := 0; r < p.rows; r++ {
		for j := 0; j < p.inner; j++ {
			offs = append(offs, (p.off[0][r]+j*p.inc[0])*mat)
		}
	}
	if len(batch) == 0 || numel(batch) == 1 {
		offs = []int{0}
	}
	return offs, nil
}

// weightedArgs reads the arguments x, weight and the optional bias of linear and conv, and makes
// their result 0 with a fresh buffer.
func (c *compiler) weightedArgs(op *mil.Op) (x, w, bias, out *tensor, err error) {
	if x, err = c.tensorArg(op, "x"); err != nil {
		return nil, nil, nil, nil, err
	}
	if w, err = c.tensorArg(op, "weight"); err != nil {
		return nil, nil, nil, nil, err
	}
	if bias, err = c.optTensorArg(op, "bias"); err != nil {
		return nil, nil, nil, nil, err
	}
	if out, err = c.result(op, 0); err != nil {
		return nil, nil, nil, nil, err
	}
	return x, w, bias, out, nil
}

// oneColumnWeights is the most weights a pointwise conv over one column keeps transposed (convOp):
// cpu's few-rows product, which it then runs, suits a matrix that stays in cache. In fp16 too: every
// conv of a stories42M- or 110M-shaped token program as fp16 rows (oneColumnF16) ran 0.9x and 0.86x
// the tokens/s of the library's product, its first token 3.6x and 4.2x later (the transposes).
const oneColumnWeights = 1 << 16

// linearOp builds linear: x @ weight^T + bias over x's last dim, one sgemm.
func linearOp(c *compiler, op *mil.Op) (step, error) {
	x, w, bias, out, err := c.weightedArgs(op)
	if err != nil {
		return step{}, err
	}
	if len(x.shape) < 1 || len(w.shape) != 2 || w.shape[1] != x.shape[len(x.shape)-1] {
		return step{}, opErr(op, "x %v and weight %v do not fit ([..., Din] and [Dout, Din])", x.shape, w.shape)
	}
	dout, din := w.shape[0], w.shape[1]
	m := len(x.data) / max(din, 1)
	if din == 0 {
		m = numel(x.shape[:len(x.shape)-1])
	}
	if len(out.data) != m*dout {
		return step{}, opErr(op, "result has shape %v, want %d rows of %d", out.shape, m, dout)
	}
	if bias != nil && len(bias.data) != dout {
		return step{}, opErr(op, "bias has %d elements, weight has %d outputs", len(bias.data), dout)
	}
	xd, wd, od := x.data, w.data, out.data
	gemm := c.gemmFor(x, w, false)
	return step{outs: []*tensor{out}, flops: 2 * float64(m*dout*din), run: func() error {
		beta := float32(0)
		if bias != nil {
			for r := 0; r < m; r++ {
				copy(od[r*dout:(r+1)*dout], bias.data)
			}
			beta = 1
		}
		return gemm(false, true, m, dout, din, 1, xd, max(din, 1), wd, max(din, 1), beta, od, max(dout, 1))
	}}, nil
}

// convOp builds conv over 1 to 3 spatial dims: a 1x1 conv with unit strides and no padding is one sgemm
// per batch; anything else gathers patches (im2col) and does one sgemm per batch and group.
func convOp(c *compiler, op *mil.Op) (step, error) {
	x, w, bias, out, err := c.weightedArgs(op)
	if err != nil {
		return step{}, err
	}
	if len(x.shape) < 3 || len(w.shape) != len(x.shape) {
		return step{}, opErr(op, "x %v and weight %v: want [N, Cin, *spatial] and [Cout, Cin/groups, *kernel]", x.shape, w.shape)
	}
	p, err := mil.ConvParamsOf(c.consts, op, x.shape, w.shape)
	if err != nil {
		return step{}, opErr(op, "%v", err)
	}
	nsp := len(x.shape) - 2
	batch, cin, cout, g := x.shape[0], x.shape[1], w.shape[0], p.Groups
	if g < 1 || cin%g != 0 || cout%g != 0 || w.shape[1]*g != cin {
		return step{}, opErr(op, "weight %v does not fit x %v in %d groups", w.shape, x.shape, g)
	}
	want := []int{batch, cout}
	for s := 0; s < nsp; s++ {
		in := x.shape[s+2] + p.PadBegin[s] + p.PadEnd[s]
		span := p.Dilations[s]*(w.shape[s+2]-1) + 1
		if in < span {
			return step{}, opErr(op, "spatial dim %d: padded size %d is smaller than the dilated kernel %d", s, in, span)
		}
		want = append(want, (in-span)/p.Strides[s]+1)
	}
	if err := checkShape(op, "result", out.shape, want); err != nil {
		return step{}, err
	}
	if bias != nil && len(bias.data) != cout {
		return step{}, opErr(op, "bias has %d elements, weight has %d output channels", len(bias.data), cout)
	}
	inSp, outSp := numel(x.shape[2:]), numel(out.shape[2:])
	ksz := numel(w.shape[2:])
	cig, cog := cin/g, cout/g
	kdim := cig * ksz // rows of the patch matrix per group
	flops := 2 * float64(batch*cout*outSp*kdim)
	xd, wd, od := x.data, w.data, out.data
	gemm := c.gemmFor(w, x, false)
	addBias := func() {
		if bias == nil {
			return
		}
		for b := 0; b < batch; b++ {
			for co := 0; co < cout; co++ {
				row := od[(b*cout+co)*outSp : (b*cout+co+1)*outSp]
				v := bias.data[co]
				for i := range row {
					row[i] += v
				}
			}
		}
	}
	pointwise := ksz == 1 && g == 1
	for s := 0; s < nsp; s++ {
		pointwise = pointwise && p.Strides[s] == 1 && p.PadBegin[s] == 0 && p.PadEnd[s] == 0
	}
	if pointwise && batch == 1 && outSp == 1 && bias == nil && c.constT[w.name] == w && cout*cin <= oneColumnWeights {
		// One column (a token's, in generation): x^T W^T, its one row against W transposed once here,
		// which the cpu package runs as the fixed-order loop over B's rows (a gemv's dot products do
		// not vectorise in that order)
		wt := make([]float32, cin*cout)
		if err := transpose.Transpose(wt, cout, wd, cin, cout, cin); err != nil {
			return step{}, opErr(op, "weight %s: %v", w.name, err)
		}
		if c.opts.Numerics == FP16 && isFloat16(w.dtype) && isFloat16(x.dtype) && vec.HasRowsF16() {
			return oneColumnF16(out, xd[:cin], wt, cout, flops), nil
		}
		return step{outs: []*tensor{out}, flops: flops, run: func() error {
			return gemm(false, false, 1, cout, cin, 1, xd, max(cin, 1), wt, cout, 0, od, cout)
		}}, nil
	}
	if pointwise {
		return step{outs: []*tensor{out}, flops: flops, run: func() error {
			for b := 0; b < batch; b++ {
				if err := gemm(false, false, cout, outSp, cin, 1, wd, max(cin, 1), xd[b*cin*inSp:], max(inSp, 1), 0, od[b*cout*outSp:], max(outSp, 1)); err != nil {
					return err
				}
			}
			addBias()
			return nil
		}}, nil
	}
	// im2col: col[(ci*ksz + kk)*outSp + o] = x[ci at the input position of output o and kernel tap kk],
	// with an index table built once (-1 for padding).
	idx := convIndex(x.shape[2:], w.shape[2:], out.shape[2:], p)
	col := make([]float32, kdim*outSp)
	return step{outs: []*tensor{out}, flops: flops, run: func() error {
		for b := 0; b < batch; b++ {
			for gi := 0; gi < g; gi++ {
				xg := xd[(b*cin+gi*cig)*inSp:]
				for ci := 0; ci < cig; ci++ {
					src := xg[ci*inSp : (ci+1)*inSp]
					dst := col[ci*ksz*outSp : (ci+1)*ksz*outSp]
					for i, j := range idx {
						if j < 0 {
							dst[i] = 0
						} else {
							dst[i] = src[j]
						}
					}
				}
				if err := gemm(false, false, cog, outSp, kdim, 1, wd[gi*cog*kdim:], max(kdim, 1), col, max(outSp, 1), 0, od[(b*cout+gi*cog)*outSp:], max(outSp, 1)); err != nil {
					return err
				}
			}
		}
		addBias()
		return nil
	}}, nil
}

// oneColumnF16 is convOp's one-column product x^T W^T with x and W fp16 values (the ANE's numerics), on
// W transposed (t, cin x cout) kept as fp16 (exact: half the bytes to stream per token), each output the
// fixed-order sum over the input channels that the cpu package's few-row loop computes (vec.RowsAxpyF16
// gives its bits for fp16 operands), the last outputs past a multiple of eight in the same loop in Go.
func oneColumnF16(out *tensor, xd, t []float32, cout int, flops float64) step {
	wt := make([]uint16, len(t))
	if len(wt) > 0 { // the fp16 bits little-endian, as this amd64 code reads them (vec.HasRowsF16)
		half.EncodeF16To(unsafe.Slice((*byte)(unsafe.Pointer(&wt[0])), 2*len(wt)), t)
	}
	od := out.data[:cout]
	return step{outs: []*tensor{out}, flops: flops, run: func() error {
		for co := vec.RowsAxpyF16(od, xd, wt, cout); co < cout; co++ {
			var s float32
			for ci, x := range xd {
				s = s + float32(x*half.F16ToF32(wt[ci*cout+co]))
			}
			od[co] = s
		}
		return nil
	}}
}

// convIndex returns, for each kernel tap kk and output position o, the input position (row-major over the
// spatial dims) that tap reads, or -1 where it falls in the padding: entry kk*outSp + o.
func convIndex(in, kern, out []int, p *mil.ConvParams) []int32 {
	nsp := len(in)
	ksz, outSp := numel(kern), numel(out)
	idx := make([]int32, ksz*outSp)
	kpos := make([]int, nsp)
	opos := make([]int, nsp)
	for kk := 0; kk < ksz; kk++ {
		unravel(kk, kern, kpos)
		for o := 0; o < outSp; o++ {
			unravel(o, out, opos)
			lin, ok := 0, true
			for s := 0; s < nsp; s++ {
				ip := opos[s]*p.Strides[s] - p.PadBegin[s] + kpos[s]*p.Dilations[s]
				if ip < 0 || ip >= in[s] {
					ok = false
					break
				}
				lin = lin*in[s] + ip
			}
			if ok {
				idx[kk*outSp+o] = int32(lin)
			} else {
				idx[kk*outSp+o] = -1
			}
		}
	}
	return idx
}

// unravel writes the row-major multi-index of i over dims into pos.
func unravel(i int, dims, pos []int) {
	for k := len(dims) - 1; k >= 0; k-- {
		pos[k] = i % dims[k]
		i /= dims[k]
	}
}
