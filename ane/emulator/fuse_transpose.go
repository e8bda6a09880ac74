package emulator

import (
	"github.com/anestar/anestar/mil"
)

// Transposes around products. A transpose that swaps the last two dims and is read only as the x or y
// of matmuls is not materialised: each matmul reads the transpose's input with its transpose flag
// flipped. A matmul whose result is read only by such a transpose computes the transposed result
// directly, C^T = op(y)^T op(x)^T, with its operands swapped. The BLAS forms each element as the same
// float32 sum of the same products in the same order whatever the flags, so the bits do not change
// (fuse_transpose_test.go compares with the separate ops).

// swapsLast reports whether op is a transpose of a rank >= 2 value that swaps its last two dims only.
func (c *compiler) swapsLast(op *mil.Op) bool {
	if op.Kind != "transpose" || len(op.Results) != 1 || op.Results[0] == nil {
		return false
	}
	perm, ok, err := c.intsArg(op, "perm")
	r := len(perm)
	if !ok || err != nil || r < 2 || len(resultShape(op)) != r {
		return false
	}
	for i, p := range perm {
		want := i
		switch i {
		case r - 2:
			want = r - 1
		case r - 1:
			want = r - 2
		}
		if p != want && p != want-r {
			return false
		}
	}
	return true
}

// rankOf is the declared rank of value name, -1 when it is not a known tensor.
func (c *compiler) rankOf(g *graph, name string) int {
	if i, ok := g.producer[name]; ok {
		if s := resultShape(c.fn.Ops[i]); s != nil {
			return len(s)
		}
		return -1
	}
	for _, in := range c.fn.Inputs {
		if in != nil && in.Name == name && in.Type.Kind == mil.TensorKind {
			return len(in.Type.Shape)
		}
	}
	return -1
}

// foldTransposes finds the transposes to fold into products: it adds the matmul-then-transpose chains
// to at and skip, and records in c.viaT the transposes that matmuls read through.
func (c *compiler) foldTransposes(g *graph, at map[int]*fusion, skip map[int]bool) {
	c.viaT = map[string]string{}
	// Transposed operands: every use is the x or y of a matmul.
	mmUses := map[string]int{}
	for _, op := range c.fn.Ops {
		if op != nil && op.Kind == "matmul" {
			for _, arg := range []string{"x", "y"} {
				if r := ref(op, arg); r != "" {
					mmUses[r]++
				}
			}
		}
	}
	elided := map[int]bool{}
	for i, op := range c.fn.Ops {
		if op == nil || skip[i] || at[i] != nil || !c.swapsLast(op) {
			continue
		}
		name, src := op.Results[0].Name, ref(op, "x")
		if src == "" || g.uses[name] == 0 || g.uses[name] != mmUses[name] {
			continue
		}
		c.viaT[name] = src
		elided[i] = true
	}
	// Transposed results: a matmul read once, by such a transpose.
	for i, op := range c.fn.Ops {
		if op == nil || !c.swapsLast(op) || elided[i] || skip[i] || at[i] != nil {
			continue
		}
		mi, mm, ok := g.inner(ref(op, "x"), "matmul")
		if !ok || skip[mi] || at[mi] != nil || mm.Results[0].Type.DType != op.Results[0].Type.DType {
			continue
		}
		if c.rankOf(g, ref(mm, "x")) < 2 || c.rankOf(g, ref(mm, "y")) < 2 {
			continue
		}
		t := op
		at[i] = &fusion{ops: []int{mi, i}, build: func(c *compiler) (step, error) {
			out, err := c.result(t, 0)
			if err != nil {
				return step{}, err
			}
			p, err := c.planMatmulT(mm, out.shape, true)
			if err != nil {
				return step{}, err
			}
			return matmulStep(c, p, out), nil
		}}
		skip[mi] = true
		for _, a := range mm.Args {
			if a == nil {
				continue
			}
			for _, o := range a.Operands {
				if o.Ref != nil && c.plan.lastUse[o.Ref.Name] < i {
					c.plan.lastUse[o.Ref.Name] = i
				}
			}
		}
	}
	// A folded transpose's input lives as long as its result would have.
	for i := range elided {
		skip[i] = true
		op := c.fn.Ops[i]
		name, src := op.Results[0].Name, ref(op, "x")
		if c.plan.lastUse[src] < c.plan.lastUse[name] {
			c.plan.lastUse[src] = c.plan.lastUse[name]
		}
	}
}
