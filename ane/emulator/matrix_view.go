package emulator

import "github.com/anestar/anestar/mil"

// Matrices read in place. A slice that takes a block of rows and columns out of a wider matrix (the
// weights and activations a kernel carves out of one packed input) is a matrix with a leading
// dimension above its width: a product can read it where it lies, with that leading dimension, instead
// of from a gathered copy. The compiler does so for a slice whose every use is the x or y of a matmul,
// directly, through a transpose folded into matmuls, or through reshapes, squeezes and expand_dims
// that keep it one matrix of the same rows and columns. The BLAS forms each element of a product as the
// same float32 sum of the same products whatever the leading dimensions, so the bits do not change
// (matrix_view_test.go compares with the gathered copy). A kernel compiled without fusions (or checking
// numerics) gathers every slice.

// aliasKinds are the ops whose result shares its input's buffer (aliasOp).
var aliasKinds = map[string]bool{"reshape": true, "expand_dims": true, "squeeze": true}

// findMatrixViews fills c.matViews: for each value that only matmuls read (directly or through
// aliasKinds ops), the declared shapes of the values those matmuls read.
func (c *compiler) findMatrixViews(g *graph) {
	c.matViews = map[string][][]int{}
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
		var shapes [][]int
		ok := true
		for _, u := range us {
			r := c.fn.Ops[u]
			switch {
			case r.Kind == "matmul":
				s := resultShape(op)
				ok = len(s) >= 2 && refsIn(r, name, "x", "y")
				shapes = append(shapes, s)
			case r.Kind == "transpose" && len(r.Results) == 1 && c.viaT[r.Results[0].Name] == name:
				// A folded transpose (fuse_transpose.go): its matmuls read name itself.
				s := resultShape(op)
				ok = len(s) >= 2
				shapes = append(shapes, s)
			case aliasKinds[r.Kind] && ref(r, "x") == name && c.matViews[r.Results[0].Name] != nil:
				shapes = append(shapes, c.matViews[r.Results[0].Name]...)
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			c.matViews[name] = shapes
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

// matrixView reports whether the view (dims of out, collapsed to g's) can be read in place as one
// rows x cols matrix with leading dimension ld > cols, and those sizes: every matmul that reads out (c.matViews) reads a
// value of shape [1, ..., rows, cols].
func (c *compiler) matrixView(out *tensor, g *gather) (rows, cols, ld int, ok bool) {
	shapes := c.matViews[out.name]
	if len(shapes) == 0 {
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
	for _, s := range shapes {
		r := len(s)
		if r < 2 || s[r-2] != rows || s[r-1] != cols || numel(s[:r-2]) != 1 {
			return 0, 0, 0, false
		}
	}
	return rows, cols, ld, true
}
