package builtins

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

func (s *session) milModule() *moduleDef {
	return &moduleDef{
		name: "mil",
		doc: "Builds MIL programs, the text that kernels are compiled from. `mil.program()` returns a builder; " +
			"each op is checked (argument types, shapes) when it is added, so a mistake is reported at the op " +
			"that makes it. Every op of the op table is a method of the builder, named after the op.",
		fns: []fnDef{
			{sig: "program()", doc: "A new, empty program builder with one function, main.", fn: s.milProgramNew},
			{sig: "parse(text, filename = \"program.mil\")", doc: "Parses and checks MIL text (weights must be inline consts), giving a program that can be compiled.", fn: s.milParse},
			{sig: "ops()", doc: "The names of the ops in the op table, sorted.", fn: milOps},
			{sig: "grad(p, wrt, save = [], cotangents = None, vars = [])", doc: "Reverse-mode differentiation of program p: a struct with forward and backward, two programs. " +
				"forward is p with the vars named in save added as outputs (p itself when save is empty). backward's inputs are every input of p (same names), " +
				"every saved var (same names) and d_O, of O's type, for each output O of p named in cotangents (default: every output; an output not named counts as zero); " +
				"its outputs are d_W for each input W named in wrt, of W's type, in wrt's order, then d_V for each op result V named in vars " +
				"(its cotangent: what the host needs to form a weight's gradient itself, e.g. the rows of a projection). What is not saved is recomputed inside the backward from the inputs. " +
				"The rules (one per op: " + strings.Join(mil.GradOps(), ", ") + ") emit only ops the ANE is known to run; any other op on the way from wrt to the " +
				"outputs is an error naming it and the script line that built it.", fn: milGrad},
		},
	}
}

// milProgram is a program under construction, or a parsed one.
type milProgram struct {
	b       *mil.Builder      // nil for a parsed program
	parsed  *mil.Program      // set by mil.parse
	inputs  []*milVar         // declared inputs
	outs    []*milVar         // declared outputs
	sealed  bool              // compiled: no more changes
	where   map[string]string // op result name -> the script position ("file:line:col") of the call that built it
	dry     bool              // built in a dry run: p.weight checks its tensor and writes zeros, not its values
	pack    bool              // compiles packed (the strict rules): text() shows the packed program
	label   string            // what made a program that has no builder: "parsed", "mil.grad forward", ...
	weights mil.Weights       // the weight files of a program that has no builder
}

// milVar is a named, typed value of one program.
type milVar struct {
	p *milProgram
	v *mil.Var
}

var (
	_ starlark.HasAttrs = (*milProgram)(nil)
	_ starlark.HasAttrs = (*milVar)(nil)
)

var programType = &typeDef{
	name: "mil.program",
	doc: "A MIL program builder (from mil.program()) or a parsed program (from mil.parse). Besides the " +
		"methods below, every op of the op table is a method `p.KIND(name = \"\", **args)` taking the op's " +
		"arguments by name (listed under \"MIL ops\"). An argument may be a mil.var, a list of vars (a tuple " +
		"such as concat's values), a bool, an int, a float (a scalar of the dtype of the op's first float " +
		"argument), a string, or a list of ints or bools; non-var values become const ops. An op with one " +
		"result returns a var, one with several a tuple of vars.",
	members: []fnDef{
		{sig: "inputs", doc: "The declared inputs, a list of vars."},
		{sig: "outputs", doc: "The declared outputs, a list of vars."},
		{sig: "input(name, dtype, shape)", doc: "Declares an input of main: a tensor of dtype (\"fp16\", \"fp32\", ...) and shape, e.g. [1, 768, 1, 512].", fn: progInput},
		{sig: "const(value, dtype = \"fp16\", name = \"\")", doc: "A const op: a number (a scalar of dtype), a bool, a string, a list of ints (int32 tensor), or a tensor (an inline tensor literal of dtype).", fn: progConst},
		{sig: "weight(name, t, dtype = \"fp16\", shape = None, transpose = False)", doc: "A const whose data, tensor t converted to dtype (fp16, bf16 or fp32), lives in the weight file @model_path/weights/NAME.bin; shape defaults to t's. With transpose, t must be 2-D [r, c] and the data is its transpose [c, r] (the default shape), written without a transposed copy of t: what a backward kernel's W^T needs. In a dry run (process.dry_run) t's size and the dtype are checked but its values are not encoded, so checking a large model costs little.", fn: progWeight},
		{sig: "op(kind, name = \"\", **args)", doc: "Adds an op of any kind by name, as the op methods do.", fn: progOp},
		{sig: "output(*vars)", doc: "Adds vars to main's results, in order.", fn: progOutput},
		{sig: "text()", doc: "Checks the program and returns its MIL text: under the strict rules (no --relaxed) the program as it is compiled, its inputs and outputs packed into one each when it declares several.", fn: progText},
		{sig: "save(dir)", doc: "Checks the program and writes it with its weights as a model directory: DIR/model.mil and the weight files under DIR/weights/, the layout the ANE backend stages; `anestar mil run DIR` runs it outside a script. A dry run has no weight values to write: there it is an error.", fn: progSave},
	},
}

var varType = &typeDef{
	name: "mil.var",
	doc:  "A value of a program: an input or an op result.",
	members: []fnDef{
		{sig: "name", doc: "The MIL name."},
		{sig: "type", doc: "The MIL type as text, e.g. \"tensor<fp16, [1, 768, 1, 512]>\"."},
		{sig: "dtype", doc: "The element type, e.g. \"fp16\"."},
		{sig: "shape", doc: "The dims, a tuple of ints (empty for a scalar)."},
	},
}

var programMethods = newMethodSet(programType)

func (p *milProgram) String() string {
	if p.parsed != nil {
		return "mil.program(" + p.label + ")"
	}
	return "mil.program()"
}
func (p *milProgram) Type() string          { return "mil.program" }
func (p *milProgram) Freeze()               {}
func (p *milProgram) Truth() starlark.Bool  { return true }
func (p *milProgram) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: mil.program") }
func (p *milProgram) AttrNames() []string {
	names := append([]string(nil), programMethods.names...)
	for _, d := range mil.Ops() {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

func (p *milProgram) Attr(name string) (starlark.Value, error) {
	switch name {
	case "inputs":
		return varList(p.inputs), nil
	case "outputs":
		return varList(p.outs), nil
	}
	if m := programMethods.bind(p, name); m != nil {
		return m, nil
	}
	if _, ok := mil.LookupOp(name); ok {
		kind := name
		return starlark.NewBuiltin("mil.program."+name, func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return p.addOp(th, b.Name(), kind, args, kwargs)
		}), nil
	}
	return nil, nil
}

func varList(vs []*milVar) *starlark.List {
	l := make([]starlark.Value, len(vs))
	for i, v := range vs {
		l[i] = v
	}
	return starlark.NewList(l)
}

func (v *milVar) String() string        { return fmt.Sprintf("mil.var(%s %s)", v.v.Type, v.v.Name) }
func (v *milVar) Type() string          { return "mil.var" }
func (v *milVar) Freeze()               {}
func (v *milVar) Truth() starlark.Bool  { return true }
func (v *milVar) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: mil.var") }
func (v *milVar) AttrNames() []string   { return []string{"dtype", "name", "shape", "type"} }
func (v *milVar) Attr(name string) (starlark.Value, error) {
	switch name {
	case "name":
		return starlark.String(v.v.Name), nil
	case "type":
		return starlark.String(v.v.Type.String()), nil
	case "dtype":
		return starlark.String(v.v.Type.DType.String()), nil
	case "shape":
		s := make(starlark.Tuple, len(v.v.Type.Shape))
		for i, d := range v.v.Type.Shape {
			s[i] = starlark.MakeInt(d)
		}
		return s, nil
	}
	return nil, nil
}

func (s *session) milProgramNew(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return &milProgram{b: mil.NewBuilder(), dry: s.cfg.DryRun, pack: !s.cfg.Settings.Relaxed}, nil
}

func (s *session) milParse(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var text string
	filename := "program.mil"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "text", &text, "filename?", &filename); err != nil {
		return nil, err
	}
	prog, err := mil.Parse(filename, []byte(text))
	if err == nil {
		err = mil.Check(prog)
	}
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return builtProgram(prog, nil, "parsed", !s.cfg.Settings.Relaxed), nil
}

// builtProgram wraps a program that has no builder (parsed, or made by mil.grad).
func builtProgram(prog *mil.Program, w mil.Weights, label string, pack bool) *milProgram {
	p := &milProgram{parsed: prog, weights: w, label: label, pack: pack}
	if f := prog.Main(); f != nil {
		for _, in := range f.Inputs {
			p.inputs = append(p.inputs, &milVar{p: p, v: in})
		}
		types := map[string]*mil.Var{}
		for _, op := range f.Ops {
			for _, r := range op.Results {
				types[r.Name] = r
			}
		}
		for _, o := range f.Outputs {
			if v := types[o.Name]; v != nil {
				p.outs = append(p.outs, &milVar{p: p, v: v})
			}
		}
	}
	return p
}

func milOps(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	var names []string
	for _, d := range mil.Ops() {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	l := make([]starlark.Value, len(names))
	for i, n := range names {
		l[i] = starlark.String(n)
	}
	return starlark.NewList(l), nil
}

// builder returns the program's builder, or an error when the program cannot change.
func (p *milProgram) builder(fn string) (*mil.Builder, error) {
	switch {
	case p.b == nil:
		return nil, nameErrf(fn, "a %s program cannot be changed", p.label)
	case p.sealed:
		return nil, nameErrf(fn, "the program was compiled and cannot be changed; start a new mil.program()")
	case p.b.Err() != nil:
		return nil, nameErrf(fn, "the program has an earlier error (%w)", p.b.Err())
	}
	return p.b, nil
}

// builderFor is builder plus the dtype named by a builtin's dtype argument.
func (p *milProgram) builderFor(fn, dtype string) (*mil.Builder, mil.DType, error) {
	bl, err := p.builder(fn)
	if err != nil {
		return nil, 0, err
	}
	dt, err := parseDType(fn, dtype)
	if err != nil {
		return nil, 0, err
	}
	return bl, dt, nil
}

// build checks the program and returns it with its weights.
func (p *milProgram) build(fn string) (*mil.Program, mil.Weights, error) {
	if p.parsed != nil {
		if p.weights == nil {
			return p.parsed, mil.Weights{}, nil
		}
		return p.parsed, p.weights, nil
	}
	prog, w, err := p.b.Build()
	if err != nil {
		return nil, nil, nameErr(fn, err)
	}
	return prog, w, nil
}

func recvProgram(b *starlark.Builtin) *milProgram { return b.Receiver().(*milProgram) }

func parseDType(fn, s string) (mil.DType, error) {
	d, ok := mil.ParseDType(s)
	if !ok {
		return 0, nameErrf(fn, "unknown dtype %q", s)
	}
	return d, nil
}

func progInput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	var name, dtype string
	var shape shapeArg
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "dtype", &dtype, "shape", &shape); err != nil {
		return nil, err
	}
	bl, dt, err := p.builderFor(b.Name(), dtype)
	if err != nil {
		return nil, err
	}
	v := bl.Input(name, mil.Tensor(dt, shape...))
	if v == nil {
		return nil, p.takeErr(b.Name())
	}
	mv := &milVar{p: p, v: v}
	p.inputs = append(p.inputs, mv)
	return mv, nil
}

// takeErr reports the builder's kept error. The builder stops at its first error, so a program that
// failed cannot be used further; scripts treat these errors as fatal.
func (p *milProgram) takeErr(fn string) error {
	if err := p.b.Err(); err != nil {
		return nameErr(fn, err)
	}
	return nameErrf(fn, "failed")
}

func progConst(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	var value starlark.Value
	dtype, name := "fp16", ""
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &value, "dtype?", &dtype, "name?", &name); err != nil {
		return nil, err
	}
	bl, dt, err := p.builderFor(b.Name(), dtype)
	if err != nil {
		return nil, err
	}
	var val *mil.Value
	switch x := value.(type) {
	case starlark.Bool:
		val = mil.BoolValue(bool(x))
	case starlark.String:
		val = mil.StringValue(string(x))
	case starlark.Int, starlark.Float:
		f, _ := starlark.AsFloat(x)
		val = mil.ScalarValue(dt, f)
	case *Tensor:
		if err := x.readable(b.Name()); err != nil {
			return nil, err
		}
		nums := make([]float64, len(x.data))
		for i, f := range x.data {
			nums[i] = float64(f)
		}
		val = mil.TensorValue(dt, x.shape, nums)
	case *starlark.List, starlark.Tuple:
		var ints shapeArg
		if err := ints.Unpack(x); err != nil {
			return nil, nameErr(b.Name(), err)
		}
		val = mil.IntsValue(ints...)
	default:
		return nil, nameErrf(b.Name(), "for parameter value: got %s, want number, bool, string, list of ints or tensor", value.Type())
	}
	v := bl.Const(name, val)
	if v == nil {
		return nil, p.takeErr(b.Name())
	}
	return &milVar{p: p, v: v}, nil
}

func progWeight(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	var name string
	var t *Tensor
	dtype := "fp16"
	var shape shapeArg
	transpose := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name, "t", &t, "dtype?", &dtype, "shape?", &shape, "transpose?", &transpose); err != nil {
		return nil, err
	}
	bl, dt, err := p.builderFor(b.Name(), dtype)
	if err != nil {
		return nil, err
	}
	if transpose && len(t.shape) != 2 {
		return nil, nameErrf(b.Name(), "transpose: %s is not 2-D", t)
	}
	if shape == nil {
		shape = t.shape
		if transpose {
			shape = shapeArg{t.shape[1], t.shape[0]}
		}
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	var v *mil.Var
	switch {
	case transpose:
		if v, err = weightTransposed(bl, name, dt, shape, t.data, t.shape[0], t.shape[1], p.dry); err != nil {
			return nil, nameErr(b.Name(), err)
		}
	case p.dry:
		// A dry run checks programs and never runs them: the values are not encoded (at large sizes that
		// was most of a dry run's time and memory).
		v = bl.WeightZeros(name, dt, shape, len(t.data))
	default:
		v = bl.Weight(name, dt, shape, t.data)
	}
	if v == nil {
		return nil, p.takeErr(b.Name())
	}
	return &milVar{p: p, v: v}, nil
}

func progOp(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	if len(args) < 1 {
		return nil, nameErrf(b.Name(), "missing the op kind")
	}
	kind, ok := starlark.AsString(args[0])
	if !ok {
		return nil, nameErrf(b.Name(), "for parameter kind: got %s, want string", args[0].Type())
	}
	if _, ok := mil.LookupOp(kind); !ok {
		return nil, nameErrf(b.Name(), "unknown op %q (mil.ops() lists them)", kind)
	}
	return p.addOp(th, b.Name()+"("+kind+")", kind, args[1:], kwargs)
}

// addOp converts the Starlark arguments and adds an op of the given kind, remembering the script line of
// the call for errors that name the op later (a numerics check names its result).
func (p *milProgram) addOp(th *starlark.Thread, fn, kind string, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) > 0 {
		return nil, nameErrf(fn, "pass the op's arguments by name, e.g. x = v")
	}
	bl, err := p.builder(fn)
	if err != nil {
		return nil, err
	}
	name := ""
	margs := mil.Args{}
	for _, kv := range kwargs {
		k := string(kv[0].(starlark.String))
		if k == "name" {
			s, ok := starlark.AsString(kv[1])
			if !ok {
				return nil, nameErrf(fn, "name: got %s, want string", kv[1].Type())
			}
			name = s
			continue
		}
		a, err := p.opArg(kv[1])
		if err != nil {
			return nil, nameErrf(fn, "argument %s: %w", k, err)
		}
		margs[k] = a
	}
	vs, err := bl.Op(kind, name, margs)
	if err != nil {
		return nil, nameErr(fn, err)
	}
	if th != nil && th.CallStackDepth() > 1 {
		if p.where == nil {
			p.where = map[string]string{}
		}
		for _, v := range vs {
			p.where[v.Name] = th.CallFrame(1).Pos.String()
		}
	}
	if len(vs) == 1 {
		return &milVar{p: p, v: vs[0]}, nil
	}
	t := make(starlark.Tuple, len(vs))
	for i, v := range vs {
		t[i] = &milVar{p: p, v: v}
	}
	return t, nil
}

// opArg converts one op argument to the builder's Args form.
func (p *milProgram) opArg(v starlark.Value) (any, error) {
	switch x := v.(type) {
	case *milVar:
		if x.p != p {
			return nil, fmt.Errorf("%s belongs to another program", x)
		}
		return x.v, nil
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		var i int
		if err := starlark.AsInt(x, &i); err != nil {
			return nil, err
		}
		return i, nil
	case starlark.Float:
		return float64(x), nil
	case starlark.String:
		return string(x), nil
	case *starlark.List, starlark.Tuple:
		seq := x.(starlark.Indexable)
		if seq.Len() == 0 {
			return []int{}, nil
		}
		switch seq.Index(0).(type) {
		case *milVar:
			vs := make([]*mil.Var, seq.Len())
			for i := range vs {
				mv, ok := seq.Index(i).(*milVar)
				if !ok || mv.p != p {
					return nil, fmt.Errorf("element %d: want a var of this program, got %s", i, seq.Index(i).Type())
				}
				vs[i] = mv.v
			}
			return vs, nil
		case starlark.Bool:
			bs := make([]bool, seq.Len())
			for i := range bs {
				bv, ok := seq.Index(i).(starlark.Bool)
				if !ok {
					return nil, fmt.Errorf("element %d: got %s, want bool", i, seq.Index(i).Type())
				}
				bs[i] = bool(bv)
			}
			return bs, nil
		default:
			var ints shapeArg
			if err := ints.Unpack(x); err != nil {
				return nil, err
			}
			return []int(ints), nil
		}
	}
	return nil, fmt.Errorf("got %s, want a mil.var, a list of vars, a number, a bool, a string or a list of ints", v.Type())
}

func progOutput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	if len(kwargs) > 0 {
		return nil, nameErrf(b.Name(), "unexpected keyword arguments")
	}
	bl, err := p.builder(b.Name())
	if err != nil {
		return nil, err
	}
	var vs []*mil.Var
	for i, a := range args {
		mv, ok := a.(*milVar)
		if !ok || mv.p != p {
			return nil, nameErrf(b.Name(), "argument %d: want a var of this program, got %s", i+1, a.Type())
		}
		vs = append(vs, mv.v)
		p.outs = append(p.outs, mv)
	}
	bl.Output(vs...)
	if bl.Err() != nil {
		return nil, p.takeErr(b.Name())
	}
	return starlark.None, nil
}

func progText(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	prog, w, err := p.build(b.Name())
	if err != nil {
		return nil, err
	}
	if p.pack {
		if prog, _, _, err = ane.Pack(prog, w); err != nil {
			return nil, nameErr(b.Name(), err)
		}
	}
	return starlark.String(mil.Print(prog)), nil
}

func progSave(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	p := recvProgram(b)
	var dir string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dir", &dir); err != nil {
		return nil, err
	}
	if p.dry {
		return nil, nameErrf(b.Name(), "a dry run (anestar check) checks weights without writing their values, so it saves no program; skip the save when process.dry_run is True")
	}
	prog, w, err := p.build(b.Name())
	if err != nil {
		return nil, err
	}
	if err := mil.WriteModelDir(dir, prog, w); err != nil {
		return nil, nameErrf(b.Name(), "%s: %w", dir, err)
	}
	return starlark.None, nil
}

// opsReference writes the op table for the reference page.
func opsReference(sb *strings.Builder) {
	sb.WriteString("\n## MIL ops\n\nThe ops a program builder offers as methods, from the op table (`mil.ops()`). ")
	sb.WriteString("Arguments marked * are required; (const) ones must be known when the program is built.\n\n")
	sb.WriteString("| op | arguments | description |\n| --- | --- | --- |\n")
	defs := append([]*mil.OpDef(nil), mil.Ops()...)
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	for _, d := range defs {
		var as []string
		for _, a := range d.Args {
			s := a.Name
			if a.Required {
				s += "*"
			}
			if a.Const {
				s += " (const)"
			}
			as = append(as, s)
		}
		fmt.Fprintf(sb, "| `%s` | %s | %s |\n", d.Name, strings.Join(as, ", "), strings.ReplaceAll(d.Doc, "|", `\|`))
	}
}

func milGrad(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var p *milProgram
	var wrt, save *starlark.List
	var cot starlark.Value = starlark.None
	var vars *starlark.List
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "p", &p, "wrt", &wrt, "save?", &save, "cotangents?", &cot, "vars?", &vars); err != nil {
		return nil, err
	}
	strs := func(what string, v starlark.Value) ([]string, error) {
		if v == nil || v == starlark.None {
			return nil, nil
		}
		it, ok := v.(starlark.Iterable)
		if !ok {
			return nil, nameErrf(b.Name(), "%s: got %s, want a list of names", what, v.Type())
		}
		out := []string{}
		var x starlark.Value
		iter := it.Iterate()
		defer iter.Done()
		for iter.Next(&x) {
			n, ok := starlark.AsString(x)
			if !ok {
				return nil, nameErrf(b.Name(), "%s: got %s, want a name (a string)", what, x.Type())
			}
			out = append(out, n)
		}
		return out, nil
	}
	var spec mil.GradSpec
	var err error
	if spec.Wrt, err = strs("wrt", wrt); err != nil {
		return nil, err
	}
	if save != nil {
		if spec.Save, err = strs("save", save); err != nil {
			return nil, err
		}
	}
	if spec.Cotangents, err = strs("cotangents", cot); err != nil {
		return nil, err
	}
	if vars != nil {
		if spec.Vars, err = strs("vars", vars); err != nil {
			return nil, err
		}
	}
	prog, w, err := p.build(b.Name())
	if err != nil {
		return nil, err
	}
	g, err := mil.Grad(prog, w, spec)
	if err != nil {
		var me *mil.Error
		if errors.As(err, &me) && me.Op != "" && p.where[me.Op] != "" {
			return nil, nameErrf(b.Name(), "%w (op %q was built at %s)", err, me.Op, p.where[me.Op])
		}
		return nil, nameErr(b.Name(), err)
	}
	fwd := starlark.Value(p)
	if g.Forward != prog {
		fp := builtProgram(g.Forward, g.ForwardWeights, "mil.grad forward", p.pack)
		fp.where, fp.dry = p.where, p.dry
		fwd = fp
	}
	bp := builtProgram(g.Backward, g.BackwardWeights, "mil.grad backward", p.pack)
	bp.where, bp.dry = p.where, p.dry
	return starlarkstruct.FromStringDict(starlark.String("grad"), starlark.StringDict{"forward": fwd, "backward": bp}), nil
}
