package mil

import (
	"fmt"
	"math"
	"sort"
)

// OpDef describes one op of the op table: its arguments and how its result types follow from theirs.
// Semantics follow the coremltools MIL op definitions (opset iOS15 and later); where the table chose
// among readings, the op's Doc and the comments in its file say which.
type OpDef struct {
	Name  string   // op kind as written in MIL, e.g. "conv"
	Args  []ArgDef // arguments in documentation order
	Doc   string   // one-line summary for listings
	infer func(a *opArgs) ([]Type, error)
}

// ArgShape constrains the rank of an argument's operands.
type ArgShape uint8

// The argument shapes.
const (
	AnyRank   ArgShape = iota // any rank, scalars included
	ScalarArg                 // rank 0: a scalar (fp16, int32, bool, string) or a rank-0 tensor
	VectorArg                 // rank 1: tensor<T, [K]>
)

// ArgDef describes one argument of an op.
type ArgDef struct {
	Name     string   // argument name, e.g. "x", "weight"
	Required bool     // the op is invalid without it
	Const    bool     // its value must be known when the program is built (a const op or a literal)
	Tuple    bool     // a tuple of one or more tensors, written "(a, b)"
	Shape    ArgShape // rank constraint on each operand
	DTypes   []DType  // allowed element types; nil allows any
	SameAs   string   // the dtype must equal that of this other argument
	Default  *Value   // the value an absent optional scalar argument has (float defaults in x's dtype), or nil
	Doc      string   // meaning and default
}

// ArgInfo is what type inference knows about one operand: its type and, when the operand is a constant,
// its value.
type ArgInfo struct {
	Type  Type   // the operand's type
	Value *Value // its constant value, or nil
}

var opTable = map[string]*OpDef{}

func register(d *OpDef) { opTable[d.Name] = d }

// LookupOp returns the definition of op kind.
func LookupOp(kind string) (*OpDef, bool) {
	d, ok := opTable[kind]
	return d, ok
}

// Ops returns every op definition, sorted by name.
func Ops() []*OpDef {
	out := make([]*OpDef, 0, len(opTable))
	for _, d := range opTable {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Arg returns the definition of argument name, or nil.
func (d *OpDef) Arg(name string) *ArgDef {
	for i := range d.Args {
		if d.Args[i].Name == name {
			return &d.Args[i]
		}
	}
	return nil
}

// Infer checks the operands of one use of the op and returns the types of its results. args maps argument
// names to their operands (one, or the members of a tuple). The const op takes no arguments; its result
// type is the type of its val attribute, which Check and the Builder handle.
func (d *OpDef) Infer(args map[string][]ArgInfo) ([]Type, error) {
	a := &opArgs{def: d, vals: args}
	if err := a.validate(); err != nil {
		return nil, err
	}
	if d.infer == nil {
		return nil, fmt.Errorf("op %s has no type rule", d.Name)
	}
	types, err := d.infer(a)
	if err != nil {
		return nil, err
	}
	for i, t := range types {
		if err := checkSize(t); err != nil {
			return nil, fmt.Errorf("result %d: %w", i, err)
		}
	}
	return types, nil
}

// MaxElements bounds the elements of one tensor (the largest dimension the parser accepts, and the
// reach of the ANE's 32-bit strides): a shape rule that gives more reports it rather than let a
// backend try to allocate it.
const MaxElements = 1<<31 - 1

// checkSize refuses a tensor type (or a tuple of them) whose dims or element count pass the limits.
func checkSize(t Type) error {
	for _, e := range t.Elems {
		if err := checkSize(e); err != nil {
			return err
		}
	}
	if t.Kind != TensorKind {
		return nil
	}
	n := uint64(1)
	for _, d := range t.Shape {
		if d > maxDim {
			return fmt.Errorf("shape %s has a dimension past %d", shapeString(t.Shape), maxDim)
		}
		if d > 0 {
			n *= uint64(d)
			if n > MaxElements {
				return fmt.Errorf("shape %s has more than %d elements (%d bytes as %s)", shapeString(t.Shape), int64(MaxElements), bytesOf(t), t.DType)
			}
		}
	}
	return nil
}

// bytesOf returns the bytes of a tensor type's data, saturating at the largest uint64.
func bytesOf(t Type) uint64 {
	n := uint64(1)
	for _, d := range t.Shape {
		if d <= 0 {
			return 0
		}
		if n > math.MaxUint64/64/uint64(d) {
			return math.MaxUint64
		}
		n *= uint64(d)
	}
	return (n*uint64(t.DType.Bits()) + 7) / 8
}

// Common dtype sets.
var (
	floatTypes   = []DType{FP16, FP32}
	numericTypes = []DType{FP16, FP32, Int32}
	dataTypes    = []DType{FP16, FP32, Int32, Bool}
	int32Type    = []DType{Int32}
	boolType     = []DType{Bool}
	stringType   = []DType{String}
)

// Argument definition shorthands.

func argX(types []DType) ArgDef {
	return ArgDef{Name: "x", Required: true, DTypes: types, Doc: "input tensor"}
}

func constInt(name string, required bool, doc string) ArgDef {
	return ArgDef{Name: name, Required: required, Const: true, Shape: ScalarArg, DTypes: int32Type, Doc: doc}
}

// withDefault returns d with its Default set.
func withDefault(d ArgDef, v *Value) ArgDef {
	d.Default = v
	return d
}

func constInts(name string, required bool, doc string) ArgDef {
	return ArgDef{Name: name, Required: required, Const: true, Shape: VectorArg, DTypes: int32Type, Doc: doc}
}

func constBool(name, doc string) ArgDef {
	return ArgDef{Name: name, Const: true, Shape: ScalarArg, DTypes: boolType, Default: BoolValue(false), Doc: doc}
}

func constBools(name, doc string) ArgDef {
	return ArgDef{Name: name, Const: true, Shape: VectorArg, DTypes: boolType, Doc: doc}
}

func constString(name string, required bool, doc string) ArgDef {
	return ArgDef{Name: name, Required: required, Const: true, Shape: ScalarArg, DTypes: stringType, Doc: doc}
}
