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
func (r *rewriter) swapsLast(op *mil.Op) bool {
	if op.Kind != "transpose" || len(op.Results) != 1 || op.Results[0] == nil {
		return false
	}
	perm, ok, err := r.intsArg(op, "perm")
	rank := len(perm)
	if !ok || err != nil || rank < 2 || len(resultShape(op)) != rank {
		return false
	}
	for i, p := range perm {
		want := i
		switch i {
		case rank - 2:
			want = rank - 1
		case rank - 1:
			want = rank - 2
		}
		if p != want && p != want-rank {
			return false
		}
	}
	return true
}

// rankOf is the declared rank of value name, -1 when it is not a known tensor.
func (r *rewriter) rankOf(name string) int {
	if i, ok := r.g.producer[name]; ok {
		if s := resultShape(r.fn.Ops[i]); s != nil {
			return len(s)
		}
		return -1
	}
	for _, in := range r.fn.Inputs {
		if in != nil && in.Name == name && in.Type.Kind == mil.TensorKind {
			return len(in.Type.Shape)
		}
	}
	return -1
}

// foldTransposes is the transpose pass: a transpose that only matmuls read becomes a folded node,
// which its readers read through (rewriter.folded), and a matmul read only by a transpose becomes with
// it a fused node that computes the transposed product. Ops already in fused nodes are left alone.
func (r *rewriter) foldTransposes() {
	// Transposed operands: every use is the x or y of a matmul.
	mmUses := map[string]int{}
	for _, op := range r.fn.Ops {
		if op != nil && op.Kind == "matmul" {
			for _, arg := range []string{"x", "y"} {
				if name := ref(op, arg); name != "" {
					mmUses[name]++
				}
			}
		}
	}
	for i, op := range r.fn.Ops {
		if op == nil || r.nodes[i].kind != opNode || !r.swapsLast(op) {
			continue
		}
		name, src := op.Results[0].Name, ref(op, "x")
		if src == "" || r.g.uses[name] == 0 || r.g.uses[name] != mmUses[name] {
			continue
		}
		r.nodes[i] = node{kind: foldedNode, src: src}
	}
	// Transposed results: a matmul read once, by such a transpose.
	for i, op := range r.fn.Ops {
		if op == nil || r.nodes[i].kind != opNode || !r.swapsLast(op) {
			continue
		}
		mi, mm, ok := r.g.inner(ref(op, "x"), "matmul")
		if !ok || r.nodes[mi].kind != opNode || mm.Results[0].Type.DType != op.Results[0].Type.DType {
			continue
		}
		if r.rankOf(ref(mm, "x")) < 2 || r.rankOf(ref(mm, "y")) < 2 {
			continue
		}
		t := op
		r.fuse(&fusion{ops: []int{mi, i}, build: func(c *compiler) (step, error) {
			out, err := c.result(t, 0)
			if err != nil {
				return step{}, err
			}
			p, err := c.planMatmulT(mm, out.shape, true)
			if err != nil {
				return step{}, err
			}
			return matmulStep(c, p, out), nil
		}})
	}
}
