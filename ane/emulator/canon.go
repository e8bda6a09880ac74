package emulator

import (
	"fmt"
	"slices"

	"github.com/anestar/anestar/mil"
)

// The shipped kernels move data only in the forms a reference ran on hardware (ane's op-form rule):
// batched heads are taken apart by slices of columns joined on the channels (and put back by slices of
// channels joined on the width), RoPE's pairs are split and joined on the last axis between two
// transposes [0, 1, 3, 2]. The same values come out of fewer ops — a transpose [0, 2, 1, 3] between two
// reshapes; pairs sliced and joined on axis 2 — and those are the forms the fused paths (views,
// transposes folded into products) know. canonical rewrites the first forms into the second before a
// fused compile. Each rewrite moves the same values (no arithmetic changes), so results stay bit for
// bit those of the program as written, which the unfused compile runs (the tests compare the two).

// canonical returns fn with the rewrites done, or fn itself when none applies; fn is not changed.
func canonical(fn *mil.Func) *mil.Func {
	c := &canon{consts: fn.Consts(), def: map[string]*mil.Op{}, names: map[string]bool{}, inputs: map[string][]int{}}
	for _, in := range fn.Inputs {
		if in != nil {
			c.names[in.Name], c.inputs[in.Name] = true, in.Type.Shape
		}
	}
	for _, op := range fn.Ops {
		for _, r := range resultsOf(op) {
			c.names[r.Name] = true
		}
	}
	var ops []*mil.Op
	changed := false
	for _, op := range fn.Ops {
		repl := c.rewrite(op)
		if repl == nil {
			repl = []*mil.Op{op}
		} else {
			changed = true
		}
		for _, r := range repl {
			for _, v := range resultsOf(r) {
				c.def[v.Name] = r
			}
		}
		ops = append(ops, repl...)
	}
	if !changed {
		return fn
	}
	out := *fn
	out.Ops = dropOrphans(fn, ops)
	return &out
}

// canon is the state of one canonical pass: the ops seen so far by result name, and every name in use.
type canon struct {
	consts mil.Consts
	def    map[string]*mil.Op
	names  map[string]bool
	inputs map[string][]int // the function's inputs' shapes
}

// rewrite returns the ops that replace op (defining its result), or nil to keep it.
func (c *canon) rewrite(op *mil.Op) []*mil.Op {
	if op == nil || len(op.Results) != 1 || op.Results[0] == nil {
		return nil
	}
	switch op.Kind {
	case "concat":
		if r := c.columnBlocks(op); r != nil {
			return r
		}
		return c.channelBlocks(op)
	case "slice_by_size":
		return c.sliceOfSwap(op)
	case "transpose":
		return c.swapOfConcat(op)
	case "reshape":
		if x := c.defOf(op, "x"); x != nil && x.Kind == "reshape" && len(resultsOf(x)) == 1 {
			if src := refArg(x, "x"); src != "" {
				return []*mil.Op{c.newOp(op, "reshape", op.Results[0].Name, op.Results[0].Type, "x", src, "shape", mil.IntsValue(op.Results[0].Type.Shape...))}
			}
		}
	}
	return nil
}

// columnBlocks: concat on axis 1 of reshape(slice_by_size(X)) where the slices are X's consecutive
// blocks of w columns (X [1, C, 1, n*w]) and each is reshaped to [1, a, b, w] is
// reshape(transpose(reshape(X, [1, C, n, w]), [0, 2, 1, 3]), [1, n*a, b, w]).
func (c *canon) columnBlocks(op *mil.Op) []*mil.Op {
	vals, ok := c.concatValues(op, 1)
	if !ok {
		return nil
	}
	var x string
	var xs, vs []int
	for b, v := range vals {
		rs := c.def[v]
		if rs == nil || rs.Kind != "reshape" {
			return nil
		}
		sl := c.defOf(rs, "x")
		if sl == nil || sl.Kind != "slice_by_size" {
			return nil
		}
		src := refArg(sl, "x")
		if b == 0 {
			x, xs, vs = src, c.shape(src), rs.Results[0].Type.Shape
		}
		if src != x || len(xs) != 4 || xs[0] != 1 || xs[2] != 1 || !slices.Equal(rs.Results[0].Type.Shape, vs) || len(vs) != 4 {
			return nil
		}
		w := vs[3]
		if !slices.Equal(c.ints(sl, "begin"), []int{0, 0, 0, b * w}) || !slices.Equal(c.ints(sl, "size"), []int{1, xs[1], 1, w}) {
			return nil
		}
	}
	n, w := len(vals), vs[3]
	if n*w != xs[3] || !slices.Equal(op.Results[0].Type.Shape, []int{1, n * vs[1], vs[2], w}) {
		return nil
	}
	return c.regroup(op, x, []int{1, xs[1], n, w})
}

// channelBlocks: concat on axis 3 of reshape(slice_by_size(T)) (or the slices themselves) where the
// slices are T's consecutive blocks of m channels (T [1, n*m, A, B]) and each is [1, P, 1, Q] is
// reshape(transpose(reshape(T, [1, n, P, Q]), [0, 2, 1, 3]), [1, P, 1, n*Q]).
func (c *canon) channelBlocks(op *mil.Op) []*mil.Op {
	vals, ok := c.concatValues(op, 3)
	if !ok {
		return nil
	}
	var t string
	var ts, vs []int
	for b, v := range vals {
		sl := c.def[v]
		if sl != nil && sl.Kind == "reshape" {
			sl = c.defOf(sl, "x")
		}
		if sl == nil || sl.Kind != "slice_by_size" {
			return nil
		}
		src, shape := refArg(sl, "x"), c.shape(v)
		if b == 0 {
			t, ts, vs = src, c.shape(src), shape
		}
		if src != t || len(ts) != 4 || ts[0] != 1 || !slices.Equal(shape, vs) || len(vs) != 4 || vs[0] != 1 || vs[2] != 1 {
			return nil
		}
		m := ts[1] / len(vals)
		if !slices.Equal(c.ints(sl, "begin"), []int{0, b * m, 0, 0}) || !slices.Equal(c.ints(sl, "size"), []int{1, m, ts[2], ts[3]}) {
			return nil
		}
	}
	n := len(vals)
	if ts[1]%n != 0 || vs[1]*vs[3] != ts[1]/n*ts[2]*ts[3] || !slices.Equal(op.Results[0].Type.Shape, []int{1, vs[1], 1, n * vs[3]}) {
		return nil
	}
	return c.regroup(op, t, []int{1, n, vs[1], vs[3]})
}

// regroup returns reshape(transpose(reshape(x, mid), [0, 2, 1, 3]), op's result shape) defining op's result.
func (c *canon) regroup(op *mil.Op, x string, mid []int) []*mil.Op {
	res := op.Results[0]
	dt := res.Type.DType
	r, t := c.fresh(res.Name+"_grouped"), c.fresh(res.Name+"_swapped")
	return []*mil.Op{
		c.newOp(op, "reshape", r, mil.Tensor(dt, mid...), "x", x, "shape", mil.IntsValue(mid...)),
		c.newOp(op, "transpose", t, mil.Tensor(dt, mid[0], mid[2], mid[1], mid[3]), "x", r, "perm", mil.IntsValue(0, 2, 1, 3)),
		c.newOp(op, "reshape", res.Name, res.Type, "x", t, "shape", mil.IntsValue(res.Type.Shape...)),
	}
}

// sliceOfSwap: a slice of width 1 of transpose(R, [0, 1, 3, 2]) is the same slice of R (its axes 2 and
// 3 swapped), reshaped: [a, b, 1, c] and [a, b, c, 1] lie alike in memory.
func (c *canon) sliceOfSwap(op *mil.Op) []*mil.Op {
	tr := c.defOf(op, "x")
	if tr == nil || tr.Kind != "transpose" || !slices.Equal(c.ints(tr, "perm"), []int{0, 1, 3, 2}) {
		return nil
	}
	begin, size, src := c.ints(op, "begin"), c.ints(op, "size"), refArg(tr, "x")
	if len(begin) != 4 || len(size) != 4 || size[3] != 1 || src == "" || slices.Min(size) < 1 || slices.Min(begin) < 0 {
		return nil
	}
	res := op.Results[0]
	s := c.fresh(res.Name + "_unswapped")
	sz := []int{size[0], size[1], 1, size[2]}
	return []*mil.Op{
		c.newOp(op, "slice_by_size", s, mil.Tensor(res.Type.DType, sz...), "x", src,
			"begin", mil.IntsValue(begin[0], begin[1], begin[3], begin[2]), "size", mil.IntsValue(sz...)),
		c.newOp(op, "reshape", res.Name, res.Type, "x", s, "shape", mil.IntsValue(res.Type.Shape...)),
	}
}

// swapOfConcat: transpose([0, 1, 3, 2]) of a concat on axis 3 of values [a, b, c, 1] is the concat on
// axis 2 of the values reshaped to [a, b, 1, c].
func (c *canon) swapOfConcat(op *mil.Op) []*mil.Op {
	if !slices.Equal(c.ints(op, "perm"), []int{0, 1, 3, 2}) {
		return nil
	}
	cat := c.defOf(op, "x")
	if cat == nil || cat.Kind != "concat" || len(resultsOf(cat)) != 1 {
		return nil
	}
	vals, ok := c.concatValues(cat, 3)
	if !ok {
		return nil
	}
	res := op.Results[0]
	var out []*mil.Op
	var flat []string
	for _, v := range vals {
		s := c.shape(v)
		if len(s) != 4 || s[3] != 1 {
			return nil
		}
		f := c.fresh(v + "_flat")
		out = append(out, c.newOp(op, "reshape", f, mil.Tensor(res.Type.DType, s[0], s[1], 1, s[2]), "x", v, "shape", mil.IntsValue(s[0], s[1], 1, s[2])))
		flat = append(flat, f)
	}
	return append(out, c.newOp(op, "concat", res.Name, res.Type, "values", flat, "axis", mil.ScalarValue(mil.Int32, 2), "interleave", mil.BoolValue(false)))
}

// concatValues returns the value names of op, a concat on the given axis of rank-4 values without
// interleaving, of at least two values; ok is false for any other op.
func (c *canon) concatValues(op *mil.Op, axis int) ([]string, bool) {
	if op.Kind != "concat" || len(op.Results) != 1 || op.Results[0].Type.Rank() != 4 {
		return nil, false
	}
	ax := c.ints(op, "axis")
	if len(ax) != 1 || (ax[0] != axis && ax[0] != axis-4) {
		return nil, false
	}
	if il := c.consts.ArgValue(op, "interleave"); il != nil && (len(il.Nums) != 1 || il.Nums[0] != 0) {
		return nil, false
	}
	a := op.Arg("values")
	if a == nil || len(a.Operands) < 2 {
		return nil, false
	}
	var names []string
	for _, o := range a.Operands {
		if o.Ref == nil || c.def[o.Ref.Name] == nil {
			return nil, false
		}
		names = append(names, o.Ref.Name)
	}
	return names, true
}

// ints returns op's constant integer argument name, or nil.
func (c *canon) ints(op *mil.Op, name string) []int {
	v := c.consts.ArgValue(op, name)
	if v == nil {
		return nil
	}
	n, err := v.Ints()
	if err != nil {
		return nil
	}
	return n
}

// defOf returns the op defining op's (single-reference) argument name, or nil.
func (c *canon) defOf(op *mil.Op, name string) *mil.Op {
	if n := refArg(op, name); n != "" {
		return c.def[n]
	}
	return nil
}

// shape returns the shape of the input or op result called name (nil for an unknown name).
func (c *canon) shape(name string) []int {
	if s, ok := c.inputs[name]; ok {
		return s
	}
	for _, r := range resultsOf(c.def[name]) {
		if r.Name == name {
			return r.Type.Shape
		}
	}
	return nil
}

// fresh returns a name not yet in use, based on base.
func (c *canon) fresh(base string) string {
	n := base
	for i := 1; c.names[n]; i++ {
		n = fmt.Sprintf("%s_%d", base, i)
	}
	c.names[n] = true
	return n
}

// newOp returns an op of kind with one result, at like's position (errors name the op rewritten);
// args alternate names and values: a var name, a list of var names (a tuple), or a literal.
func (c *canon) newOp(like *mil.Op, kind, name string, t mil.Type, args ...any) *mil.Op {
	op := &mil.Op{Pos: like.Pos, Kind: kind, Attrs: []*mil.Attr{{Pos: like.Pos, Name: "name", Value: mil.StringValue(name)}},
		Results: []*mil.Var{{Pos: like.Results[0].Pos, Name: name, Type: t}}}
	for i := 0; i < len(args); i += 2 {
		a := &mil.Arg{Pos: like.Pos, Name: args[i].(string)}
		switch v := args[i+1].(type) {
		case string:
			a.Operands = []mil.Operand{{Ref: &mil.Ref{Pos: like.Pos, Name: v}}}
		case []string:
			a.Tuple = true
			for _, n := range v {
				a.Operands = append(a.Operands, mil.Operand{Ref: &mil.Ref{Pos: like.Pos, Name: n}})
			}
		case *mil.Value:
			a.Operands = []mil.Operand{{Lit: v}}
		}
		op.Args = append(op.Args, a)
	}
	return op
}

// refArg returns the var name of op's argument name when it is a single reference, else "".
func refArg(op *mil.Op, name string) string {
	a := op.Arg(name)
	if a == nil || len(a.Operands) != 1 || a.Operands[0].Ref == nil {
		return ""
	}
	return a.Operands[0].Ref.Name
}

// argOperands returns a's operands (none for a nil argument).
func argOperands(a *mil.Arg) []mil.Operand {
	if a == nil {
		return nil
	}
	return a.Operands
}

// resultsOf returns op's non-nil results (none for a nil op).
func resultsOf(op *mil.Op) []*mil.Var {
	if op == nil {
		return nil
	}
	var rs []*mil.Var
	for _, r := range op.Results {
		if r != nil {
			rs = append(rs, r)
		}
	}
	return rs
}

// dropOrphans returns ops without those the rewrites left unread: an op whose results nothing reads
// now although something read one of them in orig (ops that were unread as written stay, to be
// compiled, and to fail, as they were).
func dropOrphans(orig *mil.Func, ops []*mil.Op) []*mil.Op {
	before := readCounts(orig)
	now := readCounts(&mil.Func{Ops: ops, Outputs: orig.Outputs})
	for _, ref := range orig.Outputs {
		before[ref.Name]++
		now[ref.Name]++
	}
	keep := make([]bool, len(ops))
	for i := len(ops) - 1; i >= 0; i-- {
		op, orphan := ops[i], false
		for _, r := range resultsOf(op) {
			if now[r.Name] > 0 {
				orphan = false
				break
			}
			if before[r.Name] > 0 {
				orphan = true
			}
		}
		if keep[i] = !orphan; orphan {
			for _, a := range op.Args {
				for _, o := range argOperands(a) {
					if o.Ref != nil {
						now[o.Ref.Name]--
					}
				}
			}
		}
	}
	var out []*mil.Op
	for i, op := range ops {
		if keep[i] {
			out = append(out, op)
		}
	}
	return out
}
