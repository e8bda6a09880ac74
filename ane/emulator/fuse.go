package emulator

import (
	"github.com/anestar/anestar/mil"
)

// Fusion. Before compiling, the compiler looks for op chains it can run as one step that gives the
// same bits as the separate ops (fuse_attention.go, fuse_softmax_grad.go). A chain qualifies only when
// each of its intermediate values is read by the next op of the chain alone and is not an output: the
// fused step then defines only the chain's last value, at the position of the chain's last op, and the
// other ops are skipped. The chain's inputs stay live (planner) until that position.

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
	g := &graph{fn: fn, producer: map[string]int{}, uses: map[string]int{}}
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
	if name == "" || g.uses[name] != 1 {
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

// roundsOp reports whether the result of op is rounded to fp16 under c's numerics.
func (c *compiler) roundsOp(op *mil.Op) bool {
	return c.opts.Numerics == FP16 && isFloat16(op.Results[0].Type.DType)
}

// findFusions returns the chains of fn that fuse, keyed by the index of their last op, and the set of
// the other ops of those chains. It extends the life of the chains' inputs to the fused step.
func (c *compiler) findFusions() (at map[int]*fusion, skip map[int]bool) {
	at, skip = map[int]*fusion{}, map[int]bool{}
	if c.opts.CheckNumerics || c.noFuse {
		// A numerics check names the first op whose result is not finite: keep every op.
		return at, skip
	}
	g := newGraph(c.fn)
	for i, op := range c.fn.Ops {
		if op == nil {
			continue
		}
		var f *fusion
		switch op.Kind {
		case "softmax":
			f = c.matchCausalAttention(g, i, op)
		case "mul":
			f = c.matchSoftmaxGrad(g, i, op)
		}
		if f == nil {
			continue
		}
		conflict := false
		for _, j := range f.ops {
			conflict = conflict || skip[j] || at[j] != nil
		}
		if conflict {
			continue
		}
		last := f.ops[len(f.ops)-1]
		at[last] = f
		for _, j := range f.ops[:len(f.ops)-1] {
			skip[j] = true
			for _, a := range c.fn.Ops[j].Args {
				if a == nil {
					continue
				}
				for _, o := range a.Operands {
					if o.Ref != nil && c.plan.lastUse[o.Ref.Name] < last {
						c.plan.lastUse[o.Ref.Name] = last
					}
				}
			}
		}
	}
	c.foldTransposes(g, at, skip)
	c.findViews(g, at, skip)
	return at, skip
}
