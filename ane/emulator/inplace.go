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

// findViews fills c.views: for each value that only matmuls and binary ops read (directly or through
// aliasKinds ops; matmuls also through folded transposes), its uses. Ops of the fused chains at and
// skip (findFusions) do not count as binary readers.
func (c *compiler) findViews(g *graph, at map[int]*fusion, skip map[int]bool) {
	c.views = map[string][]viewUse{}
	uses := map[string][]int{} // value name -> indices of the ops reading it, once per operand
	for i, op := range c.fn.Ops {
		if op == nil {
			continue
		}
		for _, a := range op.Args {
			if a == nil {
				continue
			}
			for _, o := range a.Operands {
				if o.Ref != nil {
					uses[o.Ref.Name] = append(uses[o.Ref.Name], i)
				}
			}
		}
	}
	// Readers come after their operands: walk the ops backwards so that an alias's result is settled
	// before its input.
	for i := len(c.fn.Ops) - 1; i >= 0; i-- {
		op := c.fn.Ops[i]
		if op == nil || len(op.Results) != 1 || op.Results[0] == nil {
			continue
		}
		name := op.Results[0].Name
		us := uses[name]
		if len(us) == 0 || len(us) != g.uses[name] { // unread, or an output
			continue
		}
		var vs []viewUse
		ok := true
		for _, u := range us {
			r, s := c.fn.Ops[u], resultShape(op)
			switch {
			case r.Kind == "matmul":
				ok = len(s) >= 2 && refsIn(r, name, "x", "y")
				vs = append(vs, viewUse{s, true})
			case r.Kind == "transpose" && len(r.Results) == 1 && c.viaT[r.Results[0].Name] == name:
				// A folded transpose (fuse_transpose.go): its matmuls read name itself.
				ok = len(s) >= 2
				vs = append(vs, viewUse{s, true})
			case aliasKinds[r.Kind] && ref(r, "x") == name && c.views[r.Results[0].Name] != nil:
				vs = append(vs, c.views[r.Results[0].Name]...)
			case binaryKinds[r.Kind] && !skip[u] && at[u] == nil:
				ok = s != nil && refsIn(r, name, "x", "y")
				vs = append(vs, viewUse{s, false})
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			c.views[name] = vs
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

// inPlace reports whether the view (dims of out, collapsed to g's) can be read in place as rows of
// cols values ld > cols apart, and those sizes: every matmul that reads out (c.views) reads a value
// of shape [1, ..., rows, cols]; every binary op reads a value whose last dims hold cols > 1 values.
func (c *compiler) inPlace(out *tensor, g *gather) (rows, cols, ld int, ok bool) {
	uses := c.views[out.name]
	if len(uses) == 0 {
		return 0, 0, 0, false
	}
	switch {
	case len(g.dims) == 2 && g.str[1] == 1 && g.str[0] > g.dims[1]:
		rows, cols, ld = g.dims[0], g.dims[1], g.str[0]
	case len(g.dims) == 1 && g.str[0] > 1:
		rows, cols, ld = g.dims[0], 1, g.str[0]
	default:
		return 0, 0, 0, false
	}
	for _, u := range uses {
		s, r := u.shape, len(u.shape)
		switch {
		case u.product && (r < 2 || s[r-2] != rows || s[r-1] != cols || numel(s[:r-2]) != 1):
			return 0, 0, 0, false
		case !u.product && (cols < 2 || rowSplit(s, cols) < 0):
			return 0, 0, 0, false
		}
	}
	return rows, cols, ld, true
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

// viewStrides returns the element strides of t over its dims when it is read in place (t.ld > 0),
// nil when it is dense.
func viewStrides(t *tensor) []int {
	if t.ld == 0 {
		return nil
	}
	j := rowSplit(t.shape, t.cols)
	st := stridesOf(t.shape)
	n := t.ld
	for k := j - 1; k >= 0; k-- {
		st[k] = n
		n *= t.shape[k]
	}
	return st
}
