package emulator

import "github.com/anestar/anestar/mil"

// Nodes. The rewrite passes (passes.go) do not compile anything: they decide, for each op of main,
// what the plan does there, and record it in the op's node. An op compiles on its own (opNode); a
// chain of ops runs as one fused node at its last op (fusedNode), its other ops inside it
// (innerNode); a transpose folded into the products that read it has no step (foldedNode): they read
// its input with their transpose flag flipped. A node whose result its readers can all read where it
// lies (inplace.go) lists them (views). The liveness pass reads the nodes, and the build pass
// compiles them into steps.

// nodeKind is what the plan does at one op of main.
type nodeKind uint8

const (
	opNode     nodeKind = iota // the op compiles on its own (opTable)
	fusedNode                  // a fused chain ends here: one step computes the chain's last value
	innerNode                  // the op runs inside a later fused node: no step of its own
	foldedNode                 // a transpose that the matmuls reading it read through: no step
)

// node is the plan's entry for one op of main, as the rewrite passes leave it.
type node struct {
	kind  nodeKind
	fused *fusion   // fusedNode: the chain and how its step is compiled
	in    int       // innerNode: the index of the fused node it runs in
	src   string    // foldedNode: the transpose's input, which its readers read instead
	views []viewUse // the readers of the op's result when every one can read it in place; nil otherwise
}

// rewriter is the state of the rewrite passes: the function, the graph of its values, and the
// nodes, one per op of main by index.
type rewriter struct {
	*source
	g     *graph // nil when nothing is rewritten
	nodes []node
}

// newRewriter returns the nodes of src's function before any rewrite: every op on its own.
func newRewriter(src *source) *rewriter {
	return &rewriter{source: src, nodes: make([]node, len(src.fn.Ops))}
}

// fuse makes f's chain one fused node at its last op, unless one of its ops is in a node already;
// it reports whether it did.
func (r *rewriter) fuse(f *fusion) bool {
	for _, j := range f.ops {
		if r.nodes[j].kind != opNode {
			return false
		}
	}
	last := f.ops[len(f.ops)-1]
	r.nodes[last] = node{kind: fusedNode, fused: f}
	for _, j := range f.ops[:len(f.ops)-1] {
		r.nodes[j] = node{kind: innerNode, in: last}
	}
	return true
}

// nodeOf returns the node of the op that makes value name, nil for an input or when nothing was
// rewritten.
func (r *rewriter) nodeOf(name string) *node {
	if r.g == nil {
		return nil
	}
	i, ok := r.g.producer[name]
	if !ok {
		return nil
	}
	return &r.nodes[i]
}

// folded returns the input of the transpose that makes value name when it is folded into the
// products that read it (fuse_transpose.go).
func (r *rewriter) folded(name string) (string, bool) {
	if n := r.nodeOf(name); n != nil && n.kind == foldedNode {
		return n.src, true
	}
	return "", false
}

// liveness returns the index in fn's ops of the last node that reads each value: where an op
// compiled on its own or a fused node runs (an inner op's operands are read by its fused node), and
// forever for outputs and the operands of an op that makes an output, or a value an output cast
// reads, which may be written to the output's surface directly. A folded transpose's input lives as
// long as the transpose's result would have: its readers read the input.
func liveness(fn *mil.Func, nodes []node) map[string]int {
	lastUse := map[string]int{}
	outs := map[string]bool{}
	for _, r := range fn.Outputs {
		outs[r.Name] = true
		lastUse[r.Name] = forever
	}
	direct := map[string]bool{}
	for name := range outs {
		direct[name] = true
	}
	for _, op := range fn.Ops {
		if op == nil || op.Kind != "cast" || len(op.Results) != 1 || op.Results[0] == nil || !outs[op.Results[0].Name] {
			continue
		}
		if x := op.Arg("x"); x != nil && len(x.Operands) == 1 && x.Operands[0].Ref != nil {
			direct[x.Operands[0].Ref.Name] = true
		}
	}
	for i, op := range fn.Ops {
		if op == nil {
			continue
		}
		at := i
		if nodes[i].kind == innerNode {
			at = nodes[i].in
		}
		keep := false
		for _, r := range op.Results {
			keep = keep || (r != nil && direct[r.Name])
		}
		for _, a := range op.Args {
			if a == nil {
				continue
			}
			for _, o := range a.Operands {
				if o.Ref == nil {
					continue
				}
				if keep {
					lastUse[o.Ref.Name] = forever
				} else if lastUse[o.Ref.Name] < at {
					lastUse[o.Ref.Name] = at
				}
			}
		}
	}
	for i, n := range nodes {
		if n.kind == foldedNode {
			if name := fn.Ops[i].Results[0].Name; lastUse[n.src] < lastUse[name] {
				lastUse[n.src] = lastUse[name]
			}
		}
	}
	return lastUse
}
