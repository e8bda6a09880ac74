package emulator

import (
	"math"

	"github.com/anestar/anestar/internal/fastexp"
	"github.com/anestar/anestar/internal/vec"
	"github.com/anestar/anestar/mil"
)

// Causal attention scores. The chain
//
//	s  = matmul(q, k)          per head, [..., M, N]
//	t  = mul(s, scale)         scale a constant scalar
//	u  = add(t, mask)          mask a constant [M, N] (leading dims 1): per row, a prefix of kept
//	                           entries, then entries at or below -32768 (-65504 or -inf)
//	p  = softmax(u, axis=-1)
//
// runs as one step per head: the product, then per row the mul, add (each rounded as its op rounds)
// and the softmax of the kept prefix only; the masked entries of p are written as 0. That is exact
// when every masked entry's exponential is exactly 0 in the separate softmax, which needs the row's
// largest masked u to lie more than 104 below the row's max: exp32 returns exactly 0 below -103.97, the
// sum is unchanged by zeros and 0 times the reciprocal is 0. The masked scores are never looked at:
// Cauchy–Schwarz bounds them, |s_ij| <= |q_i| |k_j| (times a slack for the float32 sum's error), so
// u_ij <= |q_i| max_{j masked} |k_j| |scale| + mask_ij up to rounding. A row where the bound does not
// prove it (huge scores, inf or NaN) is finished from the full product exactly as the separate ops do.

// maskedBelow is the mask value at or below which an entry counts as masked.
const maskedBelow = -32768

// expZeroMargin is how far below the row max a masked entry must provably lie: exp32 is exactly 0 for
// arguments below -103.97208.
const expZeroMargin = 104

// causalAttn is the compiled chain.
type causalAttn struct {
	p                    *mmPlan
	out                  []float32 // softmax result; each head's product is computed into it
	scale                float32
	mask                 []float32 // [M, N]
	keep                 []int     // per row, the kept prefix length
	maskMax              []float64 // per row, the largest masked mask value (-inf when none is masked)
	rMM, rMul, rAdd, rSm bool      // whether each op rounds its result to fp16
	nq, nk               []float64 // per batch, the norms of op(q)'s rows and the suffix maxima of op(k)'s column norms
	width                []int     // per block of attnRowBlock rows, the columns of the product computed per head
	errs                 []error
	headFn, rowsFn       func(lo, hi int) // a.head and a.rows0, made once so that Eval allocates nothing
}

// attnRowBlock is the rows of one per-head product block: each block computes only the columns up to its
// rows' longest kept prefix, which for a causal mask skips most of the masked half.
var attnRowBlock = 128

// matchCausalAttention matches the chain ending at softmax op sm (index d).
func (r *rewriter) matchCausalAttention(d int, sm *mil.Op) *fusion {
	g := r.g
	shape := resultShape(sm)
	if len(shape) < 2 {
		return nil
	}
	if ax, err := r.intArg(sm, "axis", -1); err != nil || (ax != -1 && ax != len(shape)-1) {
		return nil
	}
	ci, add, ok := g.inner(ref(sm, "x"), "add")
	if !ok || !sameShape(resultShape(add), shape) {
		return nil
	}
	bi, mul, maskV, ok := r.constOperand(add, "mul")
	if !ok || !sameShape(resultShape(mul), shape) {
		return nil
	}
	ai, mm, scaleV, ok := r.constOperand(mul, "matmul")
	if !ok || !sameShape(resultShape(mm), shape) {
		return nil
	}
	scale, err := constTensor("scale", scaleV, r.w)
	if err != nil || len(scale.data) != 1 || len(scale.shape) > len(shape) {
		return nil
	}
	mask, err := constTensor("mask", maskV, r.w)
	if err != nil {
		return nil
	}
	m, n := shape[len(shape)-2], shape[len(shape)-1]
	ms := mask.shape
	if len(ms) < 2 || len(ms) > len(shape) || ms[len(ms)-2] != m || ms[len(ms)-1] != n || numel(ms) != m*n {
		return nil
	}
	keep := make([]int, m)
	maskMax := make([]float64, m)
	for i := range m {
		row := mask.data[i*n : (i+1)*n]
		keep[i] = n
		for keep[i] > 0 && row[keep[i]-1] <= maskedBelow {
			keep[i]--
		}
		maskMax[i] = math.Inf(-1)
		for j, v := range row {
			if j < keep[i] && (v <= maskedBelow || v != v) {
				return nil // a masked entry inside the prefix, or NaN: not a prefix mask
			}
			if j >= keep[i] {
				maskMax[i] = max(maskMax[i], float64(v))
			}
		}
		if keep[i] == 0 {
			return nil
		}
	}
	return &fusion{ops: []int{ai, bi, ci, d}, build: func(c *compiler) (step, error) {
		out, err := c.result(sm, 0)
		if err != nil {
			return step{}, err
		}
		p, err := c.planMatmul(mm, out.shape)
		if err != nil {
			return step{}, err
		}
		nb := p.batches()
		a := &causalAttn{p: p, out: out.data, scale: scale.data[0], mask: mask.data, keep: keep, maskMax: maskMax,
			rMM: c.roundsOp(mm), rMul: c.roundsOp(mul), rAdd: c.roundsOp(add), rSm: c.roundsOp(sm),
			nq: make([]float64, nb*p.m), nk: make([]float64, nb*(p.n+1)), errs: make([]error, nb)}
		for r0 := 0; r0 < p.m; r0 += attnRowBlock {
			w := 0
			for _, l := range keep[r0:min(r0+attnRowBlock, p.m)] {
				w = max(w, l)
			}
			a.width = append(a.width, w)
		}
		a.headFn, a.rowsFn = a.head, a.rows0
		flops := p.flops() + 8*float64(len(out.data))
		return step{outs: []*tensor{out}, flops: flops, fused: true, run: a.run}, nil
	}}
}

// constOperand matches a binary op whose operands are a constant and a value made by an op of kind
// that nothing else reads; it returns that op, its index and the constant.
func (r *rewriter) constOperand(op *mil.Op, kind string) (int, *mil.Op, *mil.Value, bool) {
	for _, arg := range [2][2]string{{"x", "y"}, {"y", "x"}} {
		v := r.consts.ArgValue(op, arg[1])
		if v == nil {
			continue
		}
		if i, in, ok := r.g.inner(ref(op, arg[0]), kind); ok {
			return i, in, v, true
		}
	}
	return 0, nil, nil, false
}

// run evaluates the chain: heads in parallel, or one product split by the BLAS and rows in parallel.
func (a *causalAttn) run() error {
	p := a.p
	if p.batches() > 1 {
		parallel(p.batches(), p.batchGrain(), a.headFn)
		return firstErr(a.errs)
	}
	if err := p.product(0, a.out, false); err != nil {
		return err
	}
	a.norms(0)
	parallel(p.m, rowsGrain(p.n), a.rowsFn)
	return nil
}

// rows0 finishes rows [lo, hi) of the single batch, whose product is complete.
func (a *causalAttn) rows0(lo, hi int) { a.rows(0, lo, hi, false) }

// head evaluates batches [lo, hi): per block of rows, the product's columns up to the block's width.
func (a *causalAttn) head(lo, hi int) {
	p := a.p
	for b := lo; b < hi; b++ {
		for blk, w := range a.width {
			r0 := blk * attnRowBlock
			if a.errs[b] = a.block(b, r0, min(r0+attnRowBlock, p.m), 0, w); a.errs[b] != nil {
				break
			}
		}
		if a.errs[b] != nil {
			continue
		}
		a.norms(b)
		a.rows(b, 0, p.m, true)
	}
}

// block computes rows [r0, r1) and columns [c0, c1) of batch b's product into place, single-threaded.
func (a *causalAttn) block(b, r0, r1, c0, c1 int) error {
	p := a.p
	xo, yo := r0*p.xc, c0 // rows r0.. of op(x), columns c0.. of op(y)
	if p.tx {
		xo = r0
	}
	if p.ty {
		yo = c0 * p.yc
	}
	x, y := p.x.data[p.xoff[b]+xo:], p.y.data[p.yoff[b]+yo:]
	return p.gemmSerial(p.tx, p.ty, r1-r0, c1-c0, p.k, 1, x, p.xc, y, p.yc, 0, a.out[(b*p.m+r0)*p.n+c0:], p.n)
}

// norms computes batch b's row norms of op(q) and the suffix maxima of op(k)'s column norms, in float64;
// NaN counts as +inf, which fails every bound.
func (a *causalAttn) norms(b int) {
	p := a.p
	x, y := p.x.data[p.xoff[b]:], p.y.data[p.yoff[b]:]
	nq := a.nq[b*p.m : (b+1)*p.m]
	nk := a.nk[b*(p.n+1) : (b+1)*(p.n+1)]
	sumSquares(nq, x, p.xc, p.k, p.tx)
	sumSquares(nk[:p.n], y, p.yc, p.k, !p.ty)
	for i, s := range nq {
		nq[i] = notNaN(math.Sqrt(s))
	}
	for j, s := range nk[:p.n] {
		nk[j] = notNaN(math.Sqrt(s))
	}
	nk[p.n] = 0
	for j := p.n - 1; j >= 0; j-- {
		nk[j] = max(nk[j], nk[j+1])
	}
}

// sumSquares sets s[i] to the sum over kk < k of the squares (in float64) of vector i: row i of m
// (leading dimension ld) or, when cols, its column i. A column's sums run row by row of m, all of them
// at once, so that m is read in its order, not a stride at a time; a row's in four interleaved partial
// sums, so that the additions do not wait on each other. The order does not matter: the sums feed a
// bound that carries a slack of 1% (rows).
func sumSquares(s []float64, m []float32, ld, k int, cols bool) {
	clear(s)
	if cols {
		for kk := range k {
			for i, v := range m[kk*ld : kk*ld+len(s)] {
				s[i] += float64(v) * float64(v)
			}
		}
		return
	}
	for i := range s {
		r := m[i*ld : i*ld+k]
		var t0, t1, t2, t3 float64
		j := 0
		for ; j+4 <= len(r); j += 4 {
			v0, v1, v2, v3 := float64(r[j]), float64(r[j+1]), float64(r[j+2]), float64(r[j+3])
			t0 += v0 * v0
			t1 += v1 * v1
			t2 += v2 * v2
			t3 += v3 * v3
		}
		for ; j < len(r); j++ {
			t0 += float64(r[j]) * float64(r[j])
		}
		s[i] = (t0 + t1) + (t2 + t3)
	}
}

// notNaN maps NaN to +inf.
func notNaN(x float64) float64 {
	if x != x {
		return math.Inf(1)
	}
	return x
}

// rows finishes rows [lo, hi) of batch b, whose product is in place: in full, or when blocked up to
// the width of each row's block.
func (a *causalAttn) rows(b, lo, hi int, blocked bool) {
	p := a.p
	n := p.n
	out := a.out[b*p.m*n:]
	nq := a.nq[b*p.m:]
	nk := a.nk[b*(n+1):]
	// |computed s| <= (1 + k 2^-23) |q_i| |k_j|, and each rounding of the chain moves a value by at most
	// 2^-11 of it: a slack of 1% and an absolute 1 cover both.
	slack := (1 + float64(p.k)*0x1p-22) * math.Abs(float64(a.scale)) * 1.01
	var group [rowGroup][]float32 // rows of exponentials waiting for their sums
	g := 0
	for i := lo; i < hi; i++ {
		row := out[i*n : (i+1)*n]
		L := a.keep[i]
		vmax, nan := a.scores(row[:L], a.mask[i*n:i*n+L])
		ok := !nan && vmax <= math.MaxFloat32
		if ok && L < n {
			ub := nq[i]*nk[L]*slack + 1 + a.maskMax[i]
			// A negative value rounds up by at most 2^-10 of it (fp16; float32 far less).
			ok = ub < 0 && ub*(1-0x1p-9)-float64(vmax) < -expZeroMargin
		}
		if !ok {
			if w := a.width[i/attnRowBlock]; blocked && w < n {
				if a.errs[b] = a.block(b, i, i+1, w, n); a.errs[b] != nil {
					return
				}
			}
			a.scores(row[L:], a.mask[i*n+L:(i+1)*n])
			softmaxRow(row, row)
			if a.rSm {
				roundSlice(row)
			}
			continue
		}
		kept := row[:L]
		fastexp.Shifted(kept, kept, vmax, false)
		clear(row[L:])
		group[g] = kept
		if g++; g == rowGroup {
			a.normalizeGroup(&group, g)
			g = 0
		}
	}
	a.normalizeGroup(&group, g)
}

// normalizeGroup scales each of the first g rows of exponentials by the reciprocal of its sum
// (normalize's, side by side: addRows), rounding them when the softmax rounds.
func (a *causalAttn) normalizeGroup(rows *[rowGroup][]float32, g int) {
	var sum [rowGroup]float32
	addRows(sum[:g], rows[:g])
	for i, r := range rows[:g] {
		scaleBy(r, 1/sum[i])
		if a.rSm {
			roundSlice(r)
		}
	}
}

// scores turns products s into u = s*scale + mask in place, each op rounded as it rounds, and returns
// their max and whether any is NaN. The row stays in L1 between the passes, each op and its rounding
// one vector pass.
// Where nothing rounds, one pass does it all.
func (a *causalAttn) scores(row, mask []float32) (vmax float32, nan bool) {
	mask = mask[:len(row)]
	vmax = float32(math.Inf(-1))
	if !a.rMM && !a.rMul && !a.rAdd { // nothing rounds (FP32): one pass
		scale := a.scale
		for j, s := range row {
			u := float32(s*scale) + mask[j]
			row[j] = u
			if u > vmax {
				vmax = u
			}
			nan = nan || u != u
		}
		return vmax, nan
	}
	if a.rMM {
		roundSlice(row)
	}
	scale := [1]float32{a.scale}
	binRunRound(opMul, a.rMul, row, row, 1, scale[:], 0)
	binRunRound(opAdd, a.rAdd, row, row, 1, mask, 1)
	for _, u := range row {
		if u != u {
			return vmax, true
		}
	}
	return vec.Max(row), false
}
