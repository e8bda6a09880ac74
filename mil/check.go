package mil

import (
	"errors"
	"fmt"
)

// Check type-checks p with the op table: every op must be known, take its arguments with the right types
// and shapes, and declare the result types the table infers; every name must be defined once before use;
// every output must exist; the program must have a func "main" and no two funcs of one name. It reports every problem it finds as an
// ErrorList, and never panics, whatever the AST holds.
func Check(p *Program) error {
	var errs ErrorList
	if p == nil {
		return ErrorList{{Msg: "no program"}}
	}
	funcs := map[string]Pos{}
	for i, f := range p.Funcs {
		if f == nil {
			errs = append(errs, &Error{Msg: fmt.Sprintf("func %d is missing", i)})
			continue
		}
		if first, dup := funcs[f.Name]; dup {
			errs = append(errs, &Error{Pos: f.Pos, Msg: fmt.Sprintf("func %q is defined twice (first at %s)", f.Name, first)})
		} else {
			funcs[f.Name] = f.Pos
		}
		errs = append(errs, checkFunc(f)...)
	}
	if p.Main() == nil {
		errs = append(errs, &Error{Pos: p.Pos, Msg: `program has no func "main"`})
	}
	return errs.Err()
}

// funcEnv is what checking knows about the names of one function.
type funcEnv struct {
	types  map[string]Type   // every defined name
	consts map[string]*Value // names defined by const ops
	where  map[string]Pos    // where each name was defined
	bad    map[string]bool   // names whose definition was reported wrong: uses of them are not reported again

	// inferOp's argument map and operand infos, reused op after op (OpDef.Infer keeps neither)
	args  map[string][]ArgInfo
	infos []ArgInfo
}

// errReported marks an operand whose definition already has an error.
var errReported = errors.New("already reported")

func checkFunc(f *Func) ErrorList {
	var errs ErrorList
	env := newFuncEnv(len(f.Inputs) + len(f.Ops))
	fail := func(pos Pos, format string, args ...any) {
		errs = append(errs, &Error{Pos: pos, Msg: fmt.Sprintf("func %q: ", f.Name) + fmt.Sprintf(format, args...)})
	}
	for i, in := range f.Inputs {
		if in == nil || in.Name == "" {
			fail(f.Pos, "input %d has no name", i)
			continue
		}
		if pos, dup := env.where[in.Name]; dup {
			fail(in.Pos, "input %q is defined twice (first at %s)", in.Name, pos)
			continue
		}
		env.define(in.Name, in.Type, in.Pos)
		if in.Type.Kind != TensorKind && in.Type.Kind != ScalarKind {
			fail(in.Pos, "input %q has type %s, want a tensor", in.Name, in.Type)
			env.bad[in.Name] = true
		} else if err := checkShape(in.Type); err != nil {
			fail(in.Pos, "input %q: %v", in.Name, err)
			env.bad[in.Name] = true
		}
	}
	names := make(map[string]Pos, len(f.Ops)) // the ops' name attributes
	for i, op := range f.Ops {
		if op == nil {
			fail(f.Pos, "op %d is missing", i)
			continue
		}
		opErrs := env.checkOp(op)
		errs = append(errs, opErrs...)
		if a := op.Attr("name"); a != nil && a.Value != nil && len(opErrs) == 0 {
			if n, err := a.Value.Str(); err == nil {
				if first, dup := names[n]; dup {
					fail(op.Pos, "op name %q is used twice (first at %s)", n, first)
				} else {
					names[n] = op.Pos
				}
			}
		}
	}
	if len(f.Outputs) == 0 {
		fail(f.Pos, "no outputs")
	}
	listed := map[string]Pos{}
	for _, r := range f.Outputs {
		if _, ok := env.types[r.Name]; !ok {
			fail(r.Pos, "output %q is not defined", r.Name)
		}
		if first, dup := listed[r.Name]; dup {
			fail(r.Pos, "output %q is listed twice (first at %s): each output is a surface of its own", r.Name, first)
		}
		listed[r.Name] = r.Pos
	}
	return errs
}

// newFuncEnv returns an empty environment with room for about n names (sized up front: growing the
// maps of a program of thousands of ops was a large part of checking it).
func newFuncEnv(n int) *funcEnv {
	return &funcEnv{types: make(map[string]Type, n), consts: make(map[string]*Value, n/2), where: make(map[string]Pos, n), bad: map[string]bool{}}
}

func (env *funcEnv) define(name string, t Type, pos Pos) {
	env.types[name] = t
	env.where[name] = pos
}

// checkOp checks one op and defines its results (with their declared types, even when the op is wrong, so
// that one mistake is reported once).
func (env *funcEnv) checkOp(op *Op) ErrorList {
	var errs ErrorList
	name := ""
	if len(op.Results) > 0 && op.Results[0] != nil {
		name = op.Results[0].Name
	}
	fail := func(format string, args ...any) {
		errs = append(errs, &Error{Pos: op.Pos, Op: name, Kind: op.Kind, Msg: fmt.Sprintf(format, args...)})
	}
	inferred, ok := env.inferOp(op, fail)
	quiet := false
	if !ok && len(errs) == 0 {
		quiet = true // an operand's definition was wrong and has been reported
	}
	if ok && len(inferred) != len(op.Results) {
		fail("declares %d results, the op gives %d", len(op.Results), len(inferred))
		ok = false
	}
	for i, r := range op.Results {
		if r == nil || r.Name == "" {
			fail("result %d has no name", i)
			continue
		}
		if ok && !sameType(r.Type, inferred[i]) {
			fail("result %q is declared %s, the op gives %s", r.Name, r.Type, inferred[i])
		}
		if pos, dup := env.where[r.Name]; dup {
			if pos.IsValid() {
				fail("%q is already defined at %s", r.Name, pos)
			} else {
				fail("%q is already defined", r.Name)
			}
			continue
		}
		env.define(r.Name, r.Type, r.Pos)
		if !ok && (quiet || op.Kind == "const" || checkShape(r.Type) != nil ||
			(r.Type.Kind != TensorKind && r.Type.Kind != ScalarKind)) {
			env.bad[r.Name] = true
		}
	}
	if op.Kind == "const" && len(op.Results) == 1 && op.Results[0] != nil && ok {
		if a := op.Attr("val"); a != nil {
			env.consts[op.Results[0].Name] = a.Value
		}
	}
	return errs
}

// inferOp resolves op's operands and returns the result types the op table gives.
func (env *funcEnv) inferOp(op *Op, fail func(string, ...any)) ([]Type, bool) {
	def, ok := LookupOp(op.Kind)
	if !ok {
		fail("unknown op")
		return nil, false
	}
	for _, at := range op.Attrs {
		if at == nil || at.Value == nil {
			fail("attribute without a value")
			return nil, false
		}
		if at.Name == "name" {
			if _, err := at.Value.Str(); err != nil {
				fail("attribute name: %v", err)
				return nil, false
			}
		}
	}
	if op.Kind == "const" {
		return inferConst(op, fail)
	}
	if env.args == nil {
		env.args = make(map[string][]ArgInfo, 8)
	}
	args := env.args
	clear(args)
	env.infos = env.infos[:0]
	good, quiet := true, false
	for _, a := range op.Args {
		if a == nil {
			fail("argument without a name")
			good = false
			continue
		}
		if _, dup := args[a.Name]; dup {
			fail("argument %q is given twice", a.Name)
			good = false
			continue
		}
		start := len(env.infos)
		for _, o := range a.Operands {
			info, err := env.operand(o)
			if err == errReported {
				quiet = true
				continue
			}
			if err != nil {
				fail("argument %q: %v", a.Name, err)
				good = false
				continue
			}
			env.infos = append(env.infos, info)
		}
		args[a.Name] = env.infos[start:len(env.infos):len(env.infos)]
		if d := def.Arg(a.Name); d != nil && !d.Tuple && a.Tuple && len(a.Operands) == 1 {
			fail("argument %q is a tuple, want a single value", a.Name)
			good = false
		}
	}
	if !good || quiet {
		return nil, false
	}
	types, err := def.Infer(args)
	if err != nil {
		fail("%v", err)
		return nil, false
	}
	return types, true
}

func (env *funcEnv) operand(o Operand) (ArgInfo, error) {
	switch {
	case o.Ref != nil && o.Lit != nil:
		return ArgInfo{}, fmt.Errorf("operand is both a name and a literal")
	case o.Ref != nil:
		t, ok := env.types[o.Ref.Name]
		if env.bad[o.Ref.Name] {
			return ArgInfo{}, errReported
		}
		if !ok {
			return ArgInfo{}, fmt.Errorf("%q is not defined", o.Ref.Name)
		}
		return ArgInfo{Type: t, Value: env.consts[o.Ref.Name]}, nil
	case o.Lit != nil:
		if err := checkValue(o.Lit); err != nil {
			return ArgInfo{}, err
		}
		return ArgInfo{Type: o.Lit.Type, Value: o.Lit}, nil
	}
	return ArgInfo{}, fmt.Errorf("empty operand")
}

func inferConst(op *Op, fail func(string, ...any)) ([]Type, bool) {
	if len(op.Args) != 0 {
		fail("const takes no arguments")
		return nil, false
	}
	a := op.Attr("val")
	if a == nil {
		fail("const has no val attribute")
		return nil, false
	}
	if err := checkValue(a.Value); err != nil {
		fail("val: %v", err)
		return nil, false
	}
	return []Type{a.Value.Type}, true
}

// checkValue checks that a literal's data fits its type.
func checkValue(v *Value) error {
	t := v.Type
	switch t.Kind {
	case ScalarKind, TensorKind:
	case TupleKind, DictKind, ListKind:
		return nil // only attributes such as buildInfo use these; no op takes them
	default:
		return fmt.Errorf("value has an unknown kind of type")
	}
	if err := checkShape(t); err != nil {
		return err
	}
	n, _ := shapeElements(t.Shape)
	switch {
	case v.Blob != nil:
		if t.Rank() == 0 {
			return fmt.Errorf("a scalar cannot live in a weight file")
		}
		if _, ok := BlobCode(t.DType); !ok {
			return fmt.Errorf("weight files cannot hold %s", t.DType)
		}
	case t.DType == String:
		if len(v.Strs) != n {
			return fmt.Errorf("%s holds %d strings, want %d", t, len(v.Strs), n)
		}
	case t.DType == Invalid || t.DType.Bits() == 0:
		return fmt.Errorf("value has dtype %s", t.DType)
	default:
		if len(v.Nums) != n {
			return fmt.Errorf("%s holds %d values, want %d", t, len(v.Nums), n)
		}
	}
	return nil
}

// sameType compares a declared type with an inferred one; a scalar and a rank-0 tensor of one dtype are
// the same.
func sameType(declared, inferred Type) bool {
	if declared.Rank() == 0 && inferred.Rank() == 0 &&
		(declared.Kind == ScalarKind || declared.Kind == TensorKind) &&
		(inferred.Kind == ScalarKind || inferred.Kind == TensorKind) {
		return declared.DType == inferred.DType
	}
	return declared.Equal(inferred)
}

// CheckWeights checks that every BLOBFILE const of p can be read from w with the dtype and size its type
// says. It reads the blobs' metadata and decodes no data, so checking a program costs nothing like the
// size of its weights.
func CheckWeights(p *Program, w Weights) error {
	var errs ErrorList
	if p == nil {
		return nil
	}
	for _, f := range p.Funcs {
		if f == nil {
			continue
		}
		for _, op := range f.Ops {
			if op == nil || op.Kind != "const" {
				continue
			}
			a := op.Attr("val")
			if a == nil || a.Value == nil || a.Value.Blob == nil {
				continue
			}
			if _, _, err := a.Value.blobData(w); err != nil {
				name := ""
				if len(op.Results) > 0 && op.Results[0] != nil {
					name = op.Results[0].Name
				}
				errs = append(errs, &Error{Pos: op.Pos, Op: name, Kind: op.Kind, Msg: err.Error()})
			}
		}
	}
	return errs.Err()
}
