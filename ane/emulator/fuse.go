package emulator

import (
	"github.com/anestar/anestar/mil"
)

// Fusion. Before compiling, the fusion pass looks for op chains it can run as one step that gives the
// same bits as the separate ops (fuse_attention.go, fuse_softmax_grad.go). A chain qualifies only when
// each of its intermediate values is read by the next op of the chain alone and is not an output: the
// chain becomes one fused node (nodes.go) that defines only the chain's last value, at the position
// of the chain's last op, and its other ops become inner nodes, which compile to nothing. The liveness
// pass keeps the chain's inputs live until the fused node.

// fusion is one chain found before compiling.
type fusion struct {
	ops   []int                           // indices in main's ops; the last is where the step goes
	build func(c *compiler) (step, error) // compiles the fused step
}

// graph indexes main's values for chain matching.
type graph struct {
	fn       *mil.Func
	producer map[string]int // value name -> index of the op that makes it
	uses     map[string]int // value name -> operand references (outputs count as many)
}

func newGraph(fn *mil.Func) *graph {
	g := &graph{fn: fn, producer: make(map[string]int, len(fn.Ops)), uses: make(map[string]int, len(fn.Ops))}
	for i, op := range fn.Ops {
		if op == nil {
			continue
		}
		for _, r := range op.Results {
			if r != nil {
				g.producer[r.Name] = i
			}
		}
		for _, a := range op.Args {
			if a == nil {
				continue
			}
			for _, o := range a.Operands {
				if o.Ref != nil {
					g.uses[o.Ref.Name]++
				}
			}
		}
	}
	for _, r := range fn.Outputs {
		g.uses[r.Name] += 1 << 20
	}
	return g
}

// ref returns the value name op's single-operand argument arg refers to, or "".
func ref(op *mil.Op, arg string) string {
	a := op.Arg(arg)
	if a == nil || a.Tuple || len(a.Operands) != 1 || a.Operands[0].Ref == nil {
		return ""
	}
	return a.Operands[0].Ref.Name
}

// inner returns the op of kind that makes the value name when that value is read once (by the op being
// matched) and is not an output; ok is false otherwise.
func (g *graph) inner(name, kind string) (idx int, op *mil.Op, ok bool) {
	return g.innerRead(name, kind, 1)
}

// innerRead is inner for a value read by exactly reads operand references, all of them the chain's.
func (g *graph) innerRead(name, kind string, reads int) (idx int, op *mil.Op, ok bool) {
	if name == "" || g.uses[name] != reads {
		return 0, nil, false
	}
	i, found := g.producer[name]
	if !found || g.fn.Ops[i].Kind != kind || len(g.fn.Ops[i].Results) != 1 {
		return 0, nil, false
	}
	return i, g.fn.Ops[i], true
}

// resultShape is the declared shape of op's single result, nil when it has none.
func resultShape(op *mil.Op) []int {
	if len(op.Results) != 1 || op.Results[0] == nil || op.Results[0].Type.Kind != mil.TensorKind {
		return nil
	}
	return op.Results[0].Type.Shape
}

// roundsOp reports whether the result of op is rounded to fp16 under src's numerics.
func (src *source) roundsOp(op *mil.Op) bool {
	return src.opts.Numerics == FP16 && isFloat16(op.Results[0].Type.DType)
}

// fuseChains is the fusion pass: each chain of the function that fuses becomes a fused node at its
// last op, and its other ops inner nodes; a chain that shares an op with one found before it stays as
// it is.
func (r *rewriter) fuseChains() {
	for i, op := range r.fn.Ops {
		if op == nil {
			continue
		}
		var f *fusion
		switch op.Kind {
		case "softmax":
			f = r.matchCausalAttention(i, op)
		case "mul":
			f = r.matchSoftmaxGrad(i, op)
		}
		if f != nil {
			r.fuse(f)
		}
	}
}
