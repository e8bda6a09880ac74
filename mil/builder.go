package mil

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Builder builds a program op by op: each op's arguments are checked and its result types inferred with
// the op table when it is added, so a mistake is reported at the op that makes it.
//
// Op is the generic entry point: it returns an error and leaves the builder unchanged when the op is
// wrong. The typed helpers (Input, Const, Weight, Add, Conv, ...) return just the *Var; the first error
// they meet is kept, later helpers do nothing, and Err and Build report it. Build returns the Program and
// the weight files that its BLOBFILE consts name.
//
// The program is written in the reference dialect: program(1.3), func main<ios18>, every non-tensor
// argument a named const op.
type Builder struct {
	prog  *Program
	fn    *Func
	env   *funcEnv               // names defined so far, with types and const values
	files map[string]*BlobWriter // weight files by path
	auto  map[string]int         // counters for generated names
	err   error                  // first error of a typed helper
}

// Args are the arguments of one op, by name. A value may be:
//
//	*Var                       a value defined earlier (an input or an op result)
//	[]*Var                     a tuple, e.g. concat's values
//	*Value                     a literal, added as a const op
//	bool, int, float64, float32, string, []int, []bool
//	                           added as a const op: bool, int32, a float scalar, string, tensor<int32, [K]>,
//	                           tensor<bool, [K]>
//	nil                        leaves the argument out
//
// Generated consts are named RESULT_ARG. A float scalar takes the dtype of the op's first float-typed
// *Var argument (fp32 when there is none).
type Args map[string]any

// BuildInfo is the buildInfo attribute the builder puts on programs, as the reference sources write it.
var BuildInfo = [][2]string{
	{"coremlc-component-MIL", "3510.2.1"},
	{"coremlc-version", "3505.4.1"},
	{"coremltools-component-milinternal", ""},
	{"coremltools-version", "9.0"},
}

// buildInfoAttr returns a new buildInfo attribute holding BuildInfo.
func buildInfoAttr() *Attr {
	info := &Value{Type: Type{Kind: DictKind, Elems: []Type{Scalar(String), Scalar(String)}}}
	for _, kv := range BuildInfo {
		info.Elems = append(info.Elems, StringValue(kv[0]), StringValue(kv[1]))
	}
	return &Attr{Name: "buildInfo", Value: info}
}

// WithBuildInfo returns p when it has a buildInfo attribute, else a shallow copy of p (sharing its
// functions) with the reference buildInfo (BuildInfo) first among its attributes: what the ANE backend
// compiles, whether the program was built, parsed or put together by hand.
func WithBuildInfo(p *Program) *Program {
	if p == nil {
		return nil
	}
	for _, a := range p.Attrs {
		if a != nil && a.Name == "buildInfo" {
			return p
		}
	}
	q := *p
	q.Attrs = append([]*Attr{buildInfoAttr()}, p.Attrs...)
	return &q
}

// NewBuilder returns a builder for a program with one func, main, in opset ios18.
func NewBuilder() *Builder {
	fn := &Func{Name: "main", Opset: "ios18"}
	return &Builder{
		prog:  &Program{Version: "1.3", Attrs: []*Attr{buildInfoAttr()}, Funcs: []*Func{fn}},
		fn:    fn,
		env:   newFuncEnv(0),
		files: map[string]*BlobWriter{},
		auto:  map[string]int{},
	}
}

// Err returns the first error a typed helper met, or nil.
func (b *Builder) Err() error { return b.err }

// keep records err as the builder's error if it is the first.
func (b *Builder) keep(err error) {
	if b.err == nil {
		b.err = err
	}
}

func opError(name, kind, format string, args ...any) error {
	return &Error{Op: name, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// IsIdent reports whether s is a MIL identifier: a letter or underscore, then letters, digits, underscores.
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// newName checks a given name, or makes one from prefix when name is "".
func (b *Builder) newName(name, prefix string) (string, error) {
	if name == "" {
		for {
			b.auto[prefix]++
			n := prefix + "_" + strconv.Itoa(b.auto[prefix])
			if _, used := b.env.types[n]; !used {
				return n, nil
			}
		}
	}
	if !IsIdent(name) {
		return "", fmt.Errorf("name %q is not a MIL identifier", name)
	}
	if _, used := b.env.types[name]; used {
		return "", fmt.Errorf("name %q is already defined", name)
	}
	return name, nil
}

// Input adds a parameter of main.
func (b *Builder) Input(name string, t Type) *Var {
	if b.err != nil {
		return nil
	}
	if !IsIdent(name) {
		b.keep(&Error{Msg: fmt.Sprintf("input name %q is not a MIL identifier", name)})
		return nil
	}
	if _, used := b.env.types[name]; used {
		b.keep(&Error{Msg: fmt.Sprintf("input %q is already defined", name)})
		return nil
	}
	if t.Kind != TensorKind {
		b.keep(&Error{Msg: fmt.Sprintf("input %q has type %s, want a tensor", name, t)})
		return nil
	}
	if err := checkShape(t); err != nil {
		b.keep(&Error{Msg: fmt.Sprintf("input %q: %v", name, err)})
		return nil
	}
	v := &Var{Name: name, Type: t}
	b.fn.Inputs = append(b.fn.Inputs, v)
	b.env.define(name, t, Pos{})
	return v
}

// Output adds values to main's results.
func (b *Builder) Output(vs ...*Var) {
	if b.err != nil {
		return
	}
	for _, v := range vs {
		if err := b.own(v); err != nil {
			b.keep(&Error{Msg: "output: " + err.Error()})
			return
		}
		b.fn.Outputs = append(b.fn.Outputs, Ref{Name: v.Name})
	}
}

// own checks that v was defined by this builder.
func (b *Builder) own(v *Var) error {
	if v == nil {
		return fmt.Errorf("nil value (an earlier error?)")
	}
	if _, ok := b.env.types[v.Name]; !ok {
		return fmt.Errorf("%q is not defined in this program", v.Name)
	}
	return nil
}

// Build checks the whole program and returns it with its weight files. The files are not copies: a
// weight added later copies its file before changing it, so the returned bytes never change, but they
// must not be modified.
func (b *Builder) Build() (*Program, Weights, error) {
	if b.err != nil {
		return nil, nil, b.err
	}
	if err := Check(b.prog); err != nil {
		return nil, nil, err
	}
	w := Weights{}
	for path, bw := range b.files {
		w[path] = bw.take() // not copied: a later weight copies the file before it appends
	}
	return b.prog, w, nil
}

// Const adds a const op whose val is v.
func (b *Builder) Const(name string, v *Value) *Var {
	if b.err != nil {
		return nil
	}
	r, err := b.addConst(name, v)
	b.keep(err)
	return r
}

func (b *Builder) addConst(name string, v *Value) (*Var, error) {
	n, err := b.newName(name, "const")
	if err != nil {
		return nil, opError(name, "const", "%v", err)
	}
	op, err := constOp(n, v)
	if err != nil {
		return nil, err
	}
	b.commitConst(op)
	return op.Results[0], nil
}

func constOp(name string, v *Value) (*Op, error) {
	if v == nil {
		return nil, opError(name, "const", "no value")
	}
	if v.Type.Kind != ScalarKind && v.Type.Kind != TensorKind {
		return nil, opError(name, "const", "value of type %s, want a tensor or scalar", v.Type)
	}
	if err := checkValue(v); err != nil {
		return nil, opError(name, "const", "%v", err)
	}
	return &Op{
		Kind:    "const",
		Attrs:   []*Attr{{Name: "name", Value: StringValue(name)}, {Name: "val", Value: v}},
		Results: []*Var{{Name: name, Type: v.Type}},
	}, nil
}

func (b *Builder) commitConst(op *Op) {
	r := op.Results[0]
	b.fn.Ops = append(b.fn.Ops, op)
	b.env.define(r.Name, r.Type, Pos{})
	b.env.consts[r.Name] = op.Attrs[1].Value
}

// Scalar adds a scalar const of dtype dt, e.g. fp16 scv = const()[..., val=fp16(0.125)].
func (b *Builder) Scalar(name string, dt DType, v float64) *Var {
	return b.Const(name, ScalarValue(dt, v))
}

// Int adds an int32 scalar const.
func (b *Builder) Int(name string, v int) *Var { return b.Const(name, ScalarValue(Int32, float64(v))) }

// Ints adds a tensor<int32, [len(v)]> const.
func (b *Builder) Ints(name string, v ...int) *Var { return b.Const(name, IntsValue(v...)) }

// Bool adds a bool scalar const.
func (b *Builder) Bool(name string, v bool) *Var { return b.Const(name, BoolValue(v)) }

// String adds a string scalar const.
func (b *Builder) String(name, s string) *Var { return b.Const(name, StringValue(s)) }

// WeightPath is the weight file a weight called name gets of its own: "@model_path/weights/NAME.bin".
func WeightPath(name string) string { return "@model_path/weights/" + name + ".bin" }

// Weight adds a const tensor of dtype dt (fp16, bf16 or fp32) and the given shape whose data, given as
// float32 in row-major order, lives in its own weight file, WeightPath(name).
func (b *Builder) Weight(name string, dt DType, shape []int, data []float32) *Var {
	return b.WeightIn(WeightPath(name), name, dt, shape, data)
}

// WeightIn is Weight with the data appended to the weight file at path, which several weights may share.
func (b *Builder) WeightIn(path, name string, dt DType, shape []int, data []float32) *Var {
	return b.addWeight(path, name, dt, shape, len(data), func(w *BlobWriter) (uint64, error) {
		return w.AddFloat32s(dt, data)
	})
}

// WeightFunc is Weight with the values produced by fill in chunks of whole units of unit values,
// encoded straight into the weight file: see BlobWriter.AddFloat32Func, which says how fill is called
// (from several goroutines at once, on disjoint chunks).
func (b *Builder) WeightFunc(name string, dt DType, shape []int, unit int, fill func(lo, hi int, dst []float32)) *Var {
	return b.addWeight(WeightPath(name), name, dt, shape, -1, func(w *BlobWriter) (uint64, error) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return w.AddFloat32Func(dt, n, unit, fill)
	})
}

// WeightBytes is Weight with the values given as encoded data of dtype dt (a blob's bytes, copied as
// they are: no conversion).
func (b *Builder) WeightBytes(name string, dt DType, shape []int, data []byte) *Var {
	n := -1
	if size := dt.Bits() / 8; size > 0 && len(data)%size == 0 {
		n = len(data) / size
	}
	if n < 0 {
		b.keep(opError(name, "const", "%d bytes of %s data: not whole values", len(data), dt))
		return nil
	}
	return b.addWeight(WeightPath(name), name, dt, shape, n, func(w *BlobWriter) (uint64, error) {
		return w.Add(dt, data)
	})
}

// WeightZeros is Weight for a caller that has nvals values but only needs the program checked (a dry
// run): the const, its type and its weight file's layout are Weight's, checked alike, and the data is
// left zero instead of encoded.
func (b *Builder) WeightZeros(name string, dt DType, shape []int, nvals int) *Var {
	return b.addWeight(WeightPath(name), name, dt, shape, nvals, func(w *BlobWriter) (uint64, error) {
		if floatEncodingSize(dt) == 0 {
			return 0, fmt.Errorf("cannot store float data as %s (want fp16, bf16 or fp32)", dt)
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		return w.AddZeros(dt, n)
	})
}

// addWeight adds a weight const of dtype dt and the given shape whose blob add appends to the weight file
// at path; nvals is the number of values given, checked against the shape, or -1 when add produces them.
func (b *Builder) addWeight(path, name string, dt DType, shape []int, nvals int, add func(w *BlobWriter) (uint64, error)) *Var {
	if b.err != nil {
		return nil
	}
	n, err := b.newName(name, "weight")
	if err != nil {
		b.keep(opError(name, "const", "%v", err))
		return nil
	}
	t := Tensor(dt, shape...)
	if err := checkShape(t); err != nil || len(shape) == 0 {
		b.keep(opError(n, "const", "weight shape %v: want positive dims", shape))
		return nil
	}
	if want := t.NumElements(); nvals >= 0 && nvals != want {
		b.keep(opError(n, "const", "weight %s needs %d values, got %d", t, want, nvals))
		return nil
	}
	if !strings.HasPrefix(path, "@model_path/") {
		b.keep(opError(n, "const", "weight path %q does not start with @model_path/", path))
		return nil
	}
	w := b.files[path]
	if w == nil {
		w = NewBlobWriter()
	}
	off, err := add(w)
	if err != nil {
		b.keep(opError(n, "const", "%v", err))
		return nil
	}
	b.files[path] = w
	op, err := constOp(n, &Value{Type: t, Blob: &BlobRef{Path: path, Offset: off}})
	if err != nil {
		b.keep(err)
		return nil
	}
	b.commitConst(op)
	return op.Results[0]
}

// SetOpName sets the name attribute of the op that defines v, for programs whose op names differ from
// their result names (as in parts of the reference sources).
func (b *Builder) SetOpName(v *Var, opName string) {
	if b.err != nil {
		return
	}
	if v == nil || !IsIdent(opName) {
		b.keep(&Error{Msg: fmt.Sprintf("SetOpName: bad value or name %q", opName)})
		return
	}
	for _, op := range b.fn.Ops {
		for _, r := range op.Results {
			if r == v {
				if a := op.Attr("name"); a != nil {
					a.Value = StringValue(opName)
					return
				}
			}
		}
	}
	b.keep(&Error{Msg: fmt.Sprintf("SetOpName: %q is not an op result", v.Name)})
}

// Op adds an op of the given kind. name is the result name ("" generates one); an op with several results
// (split) names them NAME_0, NAME_1, .... On error the builder is unchanged; the error is an *Error that
// names the op and, where one is at fault, the argument.
func (b *Builder) Op(kind, name string, args Args) ([]*Var, error) {
	def, ok := LookupOp(kind)
	if !ok {
		return nil, opError(name, kind, "unknown op")
	}
	if kind == "const" {
		return nil, opError(name, kind, "use Const to add consts")
	}
	n, err := b.newName(name, kind)
	if err != nil {
		return nil, opError(name, kind, "%v", err)
	}
	if kind == "conv" {
		args = b.convDefaults(args)
	}
	var argNames []string
	for _, an := range slices.Sorted(maps.Keys(args)) {
		if args[an] != nil { // an untyped nil leaves an optional argument out
			argNames = append(argNames, an)
		}
	}
	for _, an := range argNames {
		if def.Arg(an) == nil {
			return nil, opError(n, kind, "unknown argument %q", an)
		}
	}
	floatDT := b.literalFloatType(def, args)
	var pending []*Op
	taken := map[string]bool{}
	op := &Op{Kind: kind, Attrs: []*Attr{{Name: "name", Value: StringValue(n)}}}
	infos := map[string][]ArgInfo{}
	for _, an := range argNames {
		arg := &Arg{Name: an}
		switch v := args[an].(type) {
		case *Var:
			if err := b.own(v); err != nil {
				return nil, opError(n, kind, "argument %q: %v", an, err)
			}
			arg.Operands = []Operand{{Ref: &Ref{Name: v.Name}}}
			infos[an] = []ArgInfo{{Type: b.env.types[v.Name], Value: b.env.consts[v.Name]}}
		case []*Var:
			arg.Tuple = true
			for i, m := range v {
				if err := b.own(m); err != nil {
					return nil, opError(n, kind, "argument %q, member %d: %v", an, i, err)
				}
				arg.Operands = append(arg.Operands, Operand{Ref: &Ref{Name: m.Name}})
				infos[an] = append(infos[an], ArgInfo{Type: b.env.types[m.Name], Value: b.env.consts[m.Name]})
			}
			if len(v) == 0 {
				infos[an] = []ArgInfo{}
			}
		default:
			val, err := literal(args[an], floatDT)
			if err != nil {
				return nil, opError(n, kind, "argument %q: %v", an, err)
			}
			cn := n + "_" + an
			for i := 2; taken[cn] || b.defined(cn); i++ {
				cn = n + "_" + an + strconv.Itoa(i)
			}
			taken[cn] = true
			c, err := constOp(cn, val)
			if err != nil {
				return nil, opError(n, kind, "argument %q: %v", an, err)
			}
			pending = append(pending, c)
			arg.Operands = []Operand{{Ref: &Ref{Name: cn}}}
			infos[an] = []ArgInfo{{Type: val.Type, Value: val}}
		}
		op.Args = append(op.Args, arg)
	}
	types, err := def.Infer(infos)
	if err != nil {
		return nil, opError(n, kind, "%v", err)
	}
	for _, c := range pending {
		b.commitConst(c)
	}
	for i, t := range types {
		rn := n
		if len(types) > 1 {
			rn = n + "_" + strconv.Itoa(i)
			for b.defined(rn) {
				b.auto[rn]++
				rn = n + "_" + strconv.Itoa(i) + "_" + strconv.Itoa(b.auto[rn])
			}
		}
		r := &Var{Name: rn, Type: t}
		op.Results = append(op.Results, r)
		b.env.define(rn, t, Pos{})
	}
	b.fn.Ops = append(b.fn.Ops, op)
	return op.Results, nil
}

// convDefaults returns conv's args with every optional argument the reference always spells out that args
// leaves out set to its default: strides and dilations 1, pad_type "valid", pad 0 and groups 1 (as maderix/ANE
// training/stories_mil.h writes every conv). It needs x's rank; without a *Var x it returns args as they are.
func (b *Builder) convDefaults(args Args) Args {
	x, ok := args["x"].(*Var)
	if !ok || b.env.types[x.Name].Rank() < 3 {
		return args
	}
	k := b.env.types[x.Name].Rank() - 2
	ones := slices.Repeat([]int{1}, k)
	out := Args{}
	maps.Copy(out, args)
	for name, def := range map[string]any{
		"strides": ones, "dilations": ones, "pad_type": "valid", "pad": make([]int, 2*k), "groups": 1,
	} {
		if out[name] == nil {
			out[name] = def
		}
	}
	return out
}

func (b *Builder) defined(name string) bool {
	_, ok := b.env.types[name]
	return ok
}

// Op1 is Op for ops with one result, in the typed helpers' style: it returns the result, or nil after
// keeping the error.
func (b *Builder) Op1(kind, name string, args Args) *Var {
	if b.err != nil {
		return nil
	}
	rs, err := b.Op(kind, name, args)
	if err != nil {
		b.keep(err)
		return nil
	}
	if len(rs) != 1 {
		b.keep(opError(name, kind, "gives %d results, want 1", len(rs)))
		return nil
	}
	return rs[0]
}

// literalFloatType is the dtype float literals of one op get.
func (b *Builder) literalFloatType(def *OpDef, args Args) DType {
	for _, ad := range def.Args {
		if v, ok := args[ad.Name].(*Var); ok && v != nil {
			if t, ok := b.env.types[v.Name]; ok && t.DType.IsFloat() {
				return t.DType
			}
		}
	}
	return FP32
}

// literal turns a Go value into a MIL literal.
func literal(x any, floatDT DType) (*Value, error) {
	switch v := x.(type) {
	case *Value:
		if v == nil {
			return nil, fmt.Errorf("nil value")
		}
		return v, nil
	case bool:
		return BoolValue(v), nil
	case int:
		return ScalarValue(Int32, float64(v)), nil
	case float64:
		return ScalarValue(floatDT, v), nil
	case float32:
		return ScalarValue(floatDT, float64(v)), nil
	case string:
		return StringValue(v), nil
	case []int:
		return IntsValue(v...), nil
	case []bool:
		return BoolsValue(v...), nil
	case nil:
		return nil, fmt.Errorf("no value")
	}
	return nil, fmt.Errorf("cannot use a %T as an operand", x)
}
