package ane

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/anestar/anestar/mil"
)

// Eligible applies the hardware's known rules (Rules, HardwareOps) to p's func main and returns a
// finding for every input, output and op, then for the program as a whole. It expects a program that
// passes mil.Check; of one that does not it reports what it can, and it never panics.
//
// Every backend runs it before it compiles: the ANE backend refuses a program with a Refused finding
// (Verdict.Err) instead of sending it to the framework, and the emulator refuses it too unless it runs
// in relaxed mode, so that a script that runs on the emulator runs on the ANE. Unknown findings are
// warnings: nothing known says the hardware refuses them, and nothing says it runs them.
func Eligible(p *mil.Program) Verdict { return EligibleOn(p, DefaultChip()) }

// EligibleOn is Eligible under the limits of chip (ChipAll: every chip's at once; the zero Chip is
// DefaultChip).
func EligibleOn(p *mil.Program, chip Chip) Verdict {
	if chip.Name == "" {
		chip = DefaultChip()
	}
	v := Verdict{Chip: chip.Name}
	main := mainFunc(p)
	if main == nil {
		v.Findings = append(v.Findings, Finding{Support: Refused, Rule: RuleOpset, What: "program",
			Reason: "has no func main", Fix: "name the entry function main"})
		return v
	}
	c := newEligibility(main)
	c.chip, c.vals = chip, main.Consts()
	for _, in := range main.Inputs {
		if in != nil {
			v.Findings = append(v.Findings, c.io("input", in.Name, in.Type, in.Pos))
		}
	}
	for _, out := range main.Outputs {
		t, ok := c.types[out.Name]
		if !ok {
			v.Findings = append(v.Findings, Finding{Support: Refused, Rule: RuleIORank, What: "output `" + out.Name + "`",
				Pos: out.Pos, Reason: "is not defined", Fix: "return a value the function defines"})
			continue
		}
		v.Findings = append(v.Findings, c.io("output", out.Name, t, out.Pos))
	}
	for _, op := range main.Ops {
		if op != nil {
			v.Findings = append(v.Findings, c.op(op))
		}
	}
	v.Findings = append(v.Findings, c.program(p, main)...)
	return v
}

// mainFunc returns p's func main, or nil.
func mainFunc(p *mil.Program) *mil.Func {
	if p == nil {
		return nil
	}
	for _, f := range p.Funcs {
		if f != nil && f.Name == "main" {
			return f
		}
	}
	return nil
}

// eligibility is what the check knows of one function.
type eligibility struct {
	types map[string]mil.Type // every input and op result
	live  map[string]bool     // names an output depends on
	chip  Chip                // whose limits apply
	vals  mil.Consts          // the const ops' values, for the attributes
}

func newEligibility(f *mil.Func) *eligibility {
	n := len(f.Inputs) + len(f.Ops) // about the names the maps hold: sized once, not grown
	c := &eligibility{types: make(map[string]mil.Type, n), live: make(map[string]bool, n)}
	for _, in := range f.Inputs {
		if in != nil {
			c.types[in.Name] = in.Type
		}
	}
	producer := make(map[string]*mil.Op, len(f.Ops))
	for _, op := range f.Ops {
		if op == nil {
			continue
		}
		for _, r := range op.Results {
			if r != nil {
				c.types[r.Name] = r.Type
				producer[r.Name] = op
			}
		}
	}
	// Walk back from the outputs through the ops that produce what is used.
	var stack []string
	for _, out := range f.Outputs {
		stack = append(stack, out.Name)
	}
	for len(stack) > 0 {
		name := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.live[name] {
			continue
		}
		c.live[name] = true
		op := producer[name]
		if op == nil {
			continue
		}
		for _, r := range op.Results {
			if r != nil {
				c.live[r.Name] = true
			}
		}
		for _, a := range op.Args {
			if a == nil {
				continue
			}
			for _, o := range a.Operands {
				if o.Ref != nil && !c.live[o.Ref.Name] {
					stack = append(stack, o.Ref.Name)
				}
			}
		}
	}
	return c
}

// io judges one input or output of type t.
func (c *eligibility) io(role, name string, t mil.Type, pos mil.Pos) Finding {
	f := Finding{Support: Proven, Rule: RuleIOWidth, What: role + " `" + name + "`", Pos: pos}
	refuse := func(rule, reason, fix string) Finding {
		f.Support, f.Rule, f.Reason, f.Fix = Refused, rule, reason, fix
		return f
	}
	switch {
	case t.Kind != mil.TensorKind && t.Kind != mil.ScalarKind:
		return refuse(RuleIORank, "has type "+t.String()+": the ANE's I/O are rank-4 tensors", "declare it tensor<fp16, [1, C, 1, W]>")
	case t.Rank() == 0:
		return refuse(RuleIORank, "is a scalar ("+t.String()+"): the ANE's I/O are rank-4 [N, C, H, W] tensors",
			"declare it [1, 1, 1, 32] and use its first element")
	case t.Rank() != 4:
		return refuse(RuleIORank, fmt.Sprintf("has rank %d (%s): the ANE's I/O are rank-4 [N, C, H, W] tensors", t.Rank(), t),
			"declare it [1, C, 1, W] and reshape it inside the program")
	case slices.Contains(t.Shape, -1):
		return refuse(RuleStatic, "has a dynamic dim ("+t.String()+"): the ANE needs static shapes", "give every dim a size")
	case t.DType != mil.FP16 && t.DType != mil.FP32:
		return refuse(RuleIODType, "is "+t.DType.String()+": the ANE's surfaces hold fp16 or fp32", "declare it fp16 (or fp32 and cast it at once)")
	}
	if cf := c.caps(t); cf.Support == Refused {
		cf.What, cf.Pos = f.What, pos
		return cf
	}
	w := t.Shape[3]
	pad := fmt.Sprintf("pad it to %d", max(WidthAlign, (w+WidthAlign-1)/WidthAlign*WidthAlign))
	switch {
	case w < WidthAlign:
		return refuse(RuleIOWidth, fmt.Sprintf("has width %d: the ANE needs at least %d (narrower I/O compiles, then fails at dispatch)", w, WidthAlign), pad)
	case w%WidthAlign != 0:
		return refuse(RuleIOWidth, fmt.Sprintf("has width %d: the ANE needs a multiple of %d (else it returns rows laid out at the next multiple)", w, WidthAlign), pad)
	case t.DType == mil.FP32:
		f.Support, f.Rule = Unknown, RuleIOFP16
		f.Reason = "is fp32: the hardware-tested pipelines use fp16 I/O; fp32 I/O failed on M1 Pro, M1 Max and M4 Pro and costs about 37 %"
		f.Fix = "declare it fp16 (the host converts on the way in and out)"
	}
	return f
}

// op judges one op: its kind, its arithmetic dtype, its op-specific rules and whether it is used.
// The worst of what it finds decides; among equals, the first.
func (c *eligibility) op(op *mil.Op) Finding {
	name := ""
	if len(op.Results) > 0 && op.Results[0] != nil {
		name = op.Results[0].Name
	}
	best := Finding{Support: Proven, Rule: RuleOp, What: fmt.Sprintf("op `%s` (%s)", name, op.Kind), Pos: op.Pos}
	consider := func(s Support, rule, reason, fix string) {
		if s > best.Support {
			best.Support, best.Rule, best.Reason, best.Fix = s, rule, reason, fix
		}
	}
	sup, known := HardwareOps[op.Kind]
	switch {
	case !known:
		consider(Unknown, RuleOp, "is not known to run on the ANE: no reference source ran "+op.Kind,
			"build it from the proven ops ("+strings.Join(ProvenOps(), ", ")+") or compute it on the host")
	case sup.Support == Refused:
		consider(Refused, RuleOp, "is refused by the ANE: "+sup.Note, "build it from the proven ops or compute it on the host")
	}
	if op.Kind != "const" && op.Kind != "cast" {
		if dt, ok := c.nonFP16(op); ok {
			consider(Refused, RuleFP16, "computes in "+dt.String()+": the ANE computes in fp16 only",
				"cast fp32 inputs to fp16 at once, and results to fp32 only at the end")
		}
	}
	for _, r := range op.Results {
		if r != nil && slices.Contains(r.Type.Shape, -1) {
			consider(Refused, RuleStatic, "has a dynamic dim ("+r.Type.String()+"): the ANE needs static shapes", "give every dim a size")
		}
	}
	switch op.Kind {
	case "matmul":
		x, y := c.argType(op, "x"), c.argType(op, "y")
		if x.Rank() >= 2 && y.Rank() >= 2 && !slices.Equal(x.Shape[:x.Rank()-2], y.Shape[:y.Rank()-2]) {
			consider(Refused, RuleMatmulBatch, fmt.Sprintf("broadcasts batch dims %v against %v: the ANE does not lower a batch-broadcast matmul",
				x.Shape[:x.Rank()-2], y.Shape[:y.Rank()-2]), "reshape or tile the operands to equal batch dims")
		}
	case "conv":
		if w := c.argType(op, "weight"); w.Rank() >= 3 && w.Shape[w.Rank()-1] > min(MaxConvKernelWidth, c.chip.ConvWidth) {
			most := min(MaxConvKernelWidth, c.chip.ConvWidth)
			consider(Refused, RuleConvWidth, fmt.Sprintf("has a kernel %d wide: the ANE compiles at most %d (chip %s)", w.Shape[w.Rank()-1], most, c.chip.Name),
				fmt.Sprintf("split the kernel into convs at most %d wide and add their results", most))
		}
	}
	for _, r := range op.Results {
		if r != nil {
			if cf := c.caps(r.Type); cf.Support == Refused {
				consider(Refused, cf.Rule, cf.Reason, cf.Fix)
			}
		}
	}
	if reason, fix, ok := c.attrs(op); !ok {
		consider(Unknown, RuleForm, reason, fix)
	}
	if op.Kind != "const" && !c.used(op) {
		narrow := false
		for _, r := range op.Results {
			if r != nil && (r.Type.Rank() == 0 || r.Type.Shape[r.Type.Rank()-1] == 1) {
				narrow = true
			}
		}
		if narrow {
			consider(Refused, RuleDeadCode, "is dead (no output depends on it) and reduces to width 1: the ANE refuses such a program", "remove it")
		} else {
			consider(Unknown, RuleDeadCode, "is dead (no output depends on it): the ANE refuses dead code that reduces to width 1; other dead code is not known either way", "remove it")
		}
	}
	return best
}

// caps judges a tensor's extents against the chip's caps: a Refused finding naming the axis, the
// cap and the chip, else a Proven one.
func (c *eligibility) caps(t mil.Type) Finding {
	for i, d := range t.Shape {
		limit, what := c.chip.SpatialCap, "an axis other than the channels"
		if t.Rank() == 4 && i == 1 {
			limit, what = c.chip.ChannelCap, "the channel axis"
		}
		if limit > 0 && d > limit {
			return Finding{Support: Refused, Rule: RuleAxisCap,
				Reason: fmt.Sprintf("has %d on axis %d (%s): chip %s (%s) takes at most %d there", d, i, what, c.chip.Name, c.chip.Family, limit),
				Fix:    fmt.Sprintf("split it into pieces of at most %d (or check for a chip that takes more: --chip)", limit)}
		}
	}
	return Finding{Support: Proven}
}

// used reports whether an output depends on a result of op.
func (c *eligibility) used(op *mil.Op) bool {
	for _, r := range op.Results {
		if r != nil && c.live[r.Name] {
			return true
		}
	}
	return false
}

// nonFP16 returns the first float dtype other than fp16 among op's operands and results.
func (c *eligibility) nonFP16(op *mil.Op) (mil.DType, bool) {
	bad := func(t mil.Type) bool { return t.DType.IsFloat() && t.DType != mil.FP16 }
	for _, a := range op.Args {
		if a == nil {
			continue
		}
		for _, o := range a.Operands {
			if t, ok := c.operandType(o); ok && bad(t) {
				return t.DType, true
			}
		}
	}
	for _, r := range op.Results {
		if r != nil && bad(r.Type) {
			return r.Type.DType, true
		}
	}
	return 0, false
}

func (c *eligibility) operandType(o mil.Operand) (mil.Type, bool) {
	switch {
	case o.Ref != nil:
		t, ok := c.types[o.Ref.Name]
		return t, ok
	case o.Lit != nil:
		return o.Lit.Type, true
	}
	return mil.Type{}, false
}

// argType is the type of op's argument name (its first operand), or the zero Type.
func (c *eligibility) argType(op *mil.Op, name string) mil.Type {
	a := op.Arg(name)
	if a == nil || len(a.Operands) == 0 {
		return mil.Type{}
	}
	t, _ := c.operandType(a.Operands[0])
	return t
}

// program judges what belongs to the whole program: its anchor, its number of ports and its dialect.
func (c *eligibility) program(p *mil.Program, main *mil.Func) []Finding {
	var out []Finding
	anchor := Finding{Support: Proven, Rule: RuleAnchor, What: "program", Pos: p.Pos}
	if !slices.ContainsFunc(main.Ops, func(op *mil.Op) bool { return op != nil && (op.Kind == "conv" || op.Kind == "matmul") }) {
		anchor.Support = Refused
		anchor.Reason = "holds no conv or matmul: the ANE may leave a purely elementwise program on the CPU and refuse it at load"
		anchor.Fix = "anchor it with a conv or a matmul (a 1x1 conv with an identity weight changes nothing)"
	}
	out = append(out, anchor)
	ports := Finding{Support: Proven, Rule: RuleSingleIO, What: "program", Pos: main.Pos}
	switch {
	case len(main.Inputs) > 1:
		ports.Support = Unknown
		ports.Reason = fmt.Sprintf("has %d inputs: every reference kernel has one, and several are not known to bind (maderix saw error 0x1d)", len(main.Inputs))
		ports.Fix = "pack them along the spatial axis of one input and slice them apart inside"
	case len(main.Outputs) > 1:
		ports.Support = Unknown
		ports.Reason = fmt.Sprintf("has %d outputs: every reference kernel has one", len(main.Outputs))
		ports.Fix = "concatenate the results on channels into one output"
	}
	out = append(out, ports)
	dialect := Finding{Support: Proven, Rule: RuleOpset, What: "program", Pos: p.Pos}
	if p.Version != "1.3" || main.Opset != "ios18" {
		dialect.Support = Unknown
		dialect.Reason = fmt.Sprintf("is program(%s) with func main<%s>: the references compile program(1.3) with ios18", p.Version, main.Opset)
		dialect.Fix = "write program(1.3) and func main<ios18>"
	}
	out = append(out, dialect)
	return out
}

// ProvenOps returns the op kinds the reference sources ran on hardware, sorted.
func ProvenOps() []string {
	var kinds []string
	for k, s := range HardwareOps {
		if s.Support == Proven {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	return kinds
}
