package emulator

import "github.com/anestar/anestar/mil"

// Views read in place. A slice that takes a block of rows out of a wider buffer (the weights,
// activations and tables a kernel carves out of one packed input, the even or odd channels of a RoPE
// pair) holds rows of cols contiguous values, row i at ld*i with ld above cols. Products and
// elementwise binary ops can read it where it lies instead of from a gathered copy: a matmul as a
// matrix with leading dimension ld, a binary op through its broadcast walk, whose runs then stop at
// the rows' ends. The compiler does so for a slice whose every use is such a reader: the x or y of a
// matmul (directly, through a transpose folded into matmuls, or through reshapes, squeezes and
// expand_dims that keep it one matrix of the same rows and columns) or of a binary op that is not part
// of a fused chain (directly or through those aliases). The BLAS forms each element of a product as the same float32 sum of the same
// products whatever the leading dimensions, and a binary op computes each element alone, so the bits
// do not change (inplace_test.go compares with the gathered copies). A kernel compiled without fusions
// (or checking numerics) gathers every slice.

// aliasKinds are the ops whose result shares its input's buffer (aliasOp).
var aliasKinds = map[string]bool{"reshape": true, "expand_dims": true, "squeeze": true}

// binaryKinds are the elementwise binary ops (binaryOp).
var binaryKinds = map[string]bool{"add": true, "sub": true, "mul": true, "real_div": true, "pow": true, "maximum": true, "minimum": true}

// viewUse is one reader of a value read in place: the declared shape it reads the value as, and
// whether it is a matmul (else a binary op).
type viewUse struct {
	shape   []int
	product bool
}

// findViews is the views pass: it sets the views of each node whose result only matmuls and binary
// ops read (directly or through aliasKinds ops; matmuls also through folded transposes) to those uses.
// Ops in fused nodes do not count as binary readers.
func (r *rewriter) findViews() {
	uses := readers(r.fn)
	// Readers come after their operands: walk the ops backwards so that an alias's result is settled
	// before its input.
	for i := len(r.fn.Ops) - 1; i >= 0; i-- {
		op := r.fn.Ops[i]
		if op == nil || len(op.Results) != 1 || op.Results[0] == nil {
			continue
		}
		name := op.Results[0].Name
		us := uses[name]
		if len(us) == 0 || len(us) != r.g.uses[name] { // unread, or an output
			continue
		}
		var vs []viewUse
		ok := true
		for _, u := range us {
			rd, s := r.fn.Ops[u], resultShape(op)
			switch {
			case rd.Kind == "matmul":
				ok = len(s) >= 2 && refsIn(rd, name, "x", "y")
				vs = append(vs, viewUse{s, true})
			case r.nodes[u].kind == foldedNode && r.nodes[u].src == name:
				// A folded transpose (fuse_transpose.go): its matmuls read name itself.
				ok = len(s) >= 2
				vs = append(vs, viewUse{s, true})
			case aliasKinds[rd.Kind] && ref(rd, "x") == name && r.nodes[u].views != nil:
				vs = append(vs, r.nodes[u].views...)
			case binaryKinds[rd.Kind] && r.nodes[u].kind == opNode:
				ok = s != nil && refsIn(rd, name, "x", "y")
				vs = append(vs, viewUse{s, false})
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			r.nodes[i].views = vs
		}
	}
}

// refsIn reports whether name is the single operand of one of op's arguments args, and of no other.
func refsIn(op *mil.Op, name string, args ...string) bool {
	in := false
	for _, a := range op.Args {
		if a == nil {
			continue
		}
		for _, o := range a.Operands {
			if o.Ref == nil || o.Ref.Name != name {
				continue
			}
			found := false
			for _, arg := range args {
				found = found || (op.Arg(arg) == a && !a.Tuple && len(a.Operands) == 1)
			}
			if !found {
				return false
			}
			in = true
		}
	}
	return in
}

// layout is how a view read in place lies in its data: rows of cols contiguous values, ld > cols
// apart, or, for a view that only products read, a batch of matrices of rows ld apart, matrix i at
// boff[i].
type layout struct {
	ld, cols int
	boff     []int // nil for rows from data[0] on
}

// matrices rewrites offs, the first elements of a product's batch of matrices of size mat when dense,
// to where they lie in the view, and returns the matrices' leading dimension.
func (l *layout) matrices(offs []int, mat int) int {
	if l.boff != nil {
		for i, o := range offs {
			offs[i] = l.boff[o/mat]
		}
	}
	return l.ld
}

// inPlace returns the data and layout of the view (dims of out, collapsed to g's) of src when it can
// be read in place, and a nil layout when it cannot. Every matmul that reads out (its node's views) reads a
// value of shape [1, ..., rows, cols], every binary op one whose last dims hold cols > 1 values, with
// the rows ld apart; a view that only products read may also be any batch of matrices of rows ld
// apart and contiguous columns, all read as the same [..., rows, cols].
func (c *compiler) inPlace(out *tensor, g *gather, src []float32) ([]float32, *layout) {
	n := c.rw.nodeOf(out.name)
	if n == nil || len(n.views) == 0 {
		return nil, nil
	}
	uses := n.views
	var rows, cols, ld int
	switch {
	case len(g.dims) == 2 && g.str[1] == 1 && g.str[0] > g.dims[1]:
		rows, cols, ld = g.dims[0], g.dims[1], g.str[0]
	case len(g.dims) == 1 && g.str[0] > 1:
		rows, cols, ld = g.dims[0], 1, g.str[0]
	default:
		return c.batchInPlace(uses, g, src)
	}
	for _, u := range uses {
		s, r := u.shape, len(u.shape)
		switch {
		case u.product && (r < 2 || s[r-2] != rows || s[r-1] != cols || numel(s[:r-2]) != 1):
			return c.batchInPlace(uses, g, src)
		case !u.product && (cols < 2 || rowSplit(s, cols) < 0):
			return nil, nil
		}
	}
	return src[g.off : g.off+(rows-1)*ld+cols], &layout{ld: ld, cols: cols}
}

// batchInPlace is inPlace for a view that only products read, all as [..., rows, cols]: it checks,
// element by element, that the view is a batch of such matrices with one leading dimension and
// contiguous columns.
func (c *compiler) batchInPlace(uses []viewUse, g *gather, src []float32) ([]float32, *layout) {
	s := uses[0].shape
	r := len(s)
	for _, u := range uses {
		if !u.product || len(u.shape) < 2 || u.shape[len(u.shape)-2] != s[r-2] || u.shape[len(u.shape)-1] != s[r-1] {
			return nil, nil
		}
	}
	rows, cols := s[r-2], s[r-1]
	mat := rows * cols
	if mat == 0 || g.n%mat != 0 {
		return nil, nil
	}
	at := g.offsets()
	ld := cols
	if rows > 1 {
		ld = at[cols] - at[0]
	}
	if ld < max(cols, 1) {
		return nil, nil
	}
	boff := make([]int, g.n/mat)
	for b := range boff {
		boff[b] = at[b*mat]
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				if at[b*mat+i*cols+j] != boff[b]+i*ld+j {
					return nil, nil
				}
			}
		}
	}
	return src, &layout{ld: ld, cols: cols, boff: boff}
}

// rowSplit is the largest j for which shape[j:] holds cols elements, -1 when there is none.
func rowSplit(shape []int, cols int) int {
	n := 1
	for j := len(shape); j >= 0; j-- {
		if n == cols {
			return j
		}
		if j == 0 || n > cols {
			break
		}
		n *= shape[j-1]
	}
	return -1
}

// viewStrides returns the element strides of t over its dims when it is read in place (as rows, the
// layouts binary ops read), nil when it is dense.
func viewStrides(t *tensor) []int {
	if t.lay == nil {
		return nil
	}
	j := rowSplit(t.shape, t.lay.cols)
	st := stridesOf(t.shape)
	n := t.lay.ld
	for k := j - 1; k >= 0; k-- {
		st[k] = n
		n *= t.shape[k]
	}
	return st
}
