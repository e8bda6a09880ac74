package mil

import (
	"fmt"
	"math"
)

// Literal constructors used by the builder and by tests.

// ScalarValue returns a scalar literal of dtype dt, e.g. fp16(0.125) or int32(1).
func ScalarValue(dt DType, v float64) *Value {
	return &Value{Type: Scalar(dt), Nums: []float64{v}}
}

// BoolValue returns the literal bool(v).
func BoolValue(v bool) *Value {
	n := 0.0
	if v {
		n = 1
	}
	return &Value{Type: Scalar(Bool), Nums: []float64{n}}
}

// StringValue returns the literal string(s).
func StringValue(s string) *Value {
	return &Value{Type: Scalar(String), Strs: []string{s}}
}

// IntsValue returns the literal tensor<int32, [len(v)]>([v...]).
func IntsValue(v ...int) *Value {
	nums := make([]float64, len(v))
	for i, x := range v {
		nums[i] = float64(x)
	}
	return &Value{Type: Tensor(Int32, len(v)), Nums: nums}
}

// BoolsValue returns the literal tensor<bool, [len(v)]>([v...]).
func BoolsValue(v ...bool) *Value {
	nums := make([]float64, len(v))
	for i, x := range v {
		if x {
			nums[i] = 1
		}
	}
	return &Value{Type: Tensor(Bool, len(v)), Nums: nums}
}

// TensorValue returns a tensor literal of dtype dt and the given shape holding nums in row-major order.
// It does not check that len(nums) matches the shape; Check does.
func TensorValue(dt DType, shape []int, nums []float64) *Value {
	return &Value{Type: Tensor(dt, shape...), Nums: append([]float64(nil), nums...)}
}

// Accessors: the emulator and the op table read argument values through these.

// Arg returns op's argument called name, or nil when op has none (or op is nil).
func (op *Op) Arg(name string) *Arg {
	if op == nil {
		return nil
	}
	for _, a := range op.Args {
		if a != nil && a.Name == name {
			return a
		}
	}
	return nil
}

// Attr returns op's attribute called name, or nil.
func (op *Op) Attr(name string) *Attr {
	if op == nil {
		return nil
	}
	for _, a := range op.Attrs {
		if a != nil && a.Name == name {
			return a
		}
	}
	return nil
}

// ConstValue returns the val attribute of the const op whose result is called name, or nil when name is not
// the result of a const op of f.
func (f *Func) ConstValue(name string) *Value {
	if f == nil {
		return nil
	}
	for _, op := range f.Ops {
		if op == nil || op.Kind != "const" || len(op.Results) != 1 || op.Results[0] == nil {
			continue
		}
		if op.Results[0].Name == name {
			if a := op.Attr("val"); a != nil {
				return a.Value
			}
			return nil
		}
	}
	return nil
}

// ArgValue returns the constant value of op's single-operand argument name: the literal written in place, or
// the val of the const op it refers to. It returns nil when the argument is absent, is a tuple, or is not
// constant. It scans f's ops; a backend that reads the arguments of many ops uses a Consts table.
func (f *Func) ArgValue(op *Op, name string) *Value {
	return argValue(op, name, f.ConstValue)
}

// Consts indexes the values of a function's const ops by result name, for reading many ops'
// constant arguments in time linear in the program.
type Consts map[string]*Value

// Consts returns the table of f's const values. It reflects f as it is now.
func (f *Func) Consts() Consts {
	c := Consts{}
	if f == nil {
		return c
	}
	for _, op := range f.Ops {
		if op == nil || op.Kind != "const" || len(op.Results) != 1 || op.Results[0] == nil {
			continue
		}
		if _, dup := c[op.Results[0].Name]; dup {
			continue // the first definition, as ConstValue finds it
		}
		var v *Value
		if a := op.Attr("val"); a != nil {
			v = a.Value
		}
		c[op.Results[0].Name] = v
	}
	return c
}

// ArgValue is Func.ArgValue through the table.
func (c Consts) ArgValue(op *Op, name string) *Value {
	return argValue(op, name, func(n string) *Value { return c[n] })
}

func argValue(op *Op, name string, lookup func(string) *Value) *Value {
	a := op.Arg(name)
	if a == nil || len(a.Operands) != 1 {
		return nil
	}
	o := a.Operands[0]
	if o.Lit != nil {
		return o.Lit
	}
	if o.Ref != nil {
		return lookup(o.Ref.Name)
	}
	return nil
}

// Float32s returns the elements of v as float32 in row-major order. Data in a weight file (BLOBFILE) is
// read from w and decoded; the blob's dtype must be v's dtype and its size must match v's type.
func (v *Value) Float32s(w Weights) ([]float32, error) {
	if v == nil {
		return nil, fmt.Errorf("no value")
	}
	if v.Blob != nil {
		return v.blobFloat32s(w)
	}
	if v.Type.DType == String || len(v.Strs) > 0 {
		return nil, fmt.Errorf("value of type %s is not numeric", v.Type)
	}
	out := make([]float32, len(v.Nums))
	for i, x := range v.Nums {
		out[i] = float32(x)
	}
	return out, nil
}

func (v *Value) blobFloat32s(w Weights) ([]float32, error) {
	dt, data, err := v.blobData(w)
	if err != nil {
		return nil, err
	}
	return decodeFloat32s(dt, data)
}

// blobData finds v's blob in w and checks it against v's type (dtype and size, a dtype that decodes
// to float32), without decoding it: the data's dtype and bytes.
func (v *Value) blobData(w Weights) (DType, []byte, error) {
	b := v.Blob
	file, ok := w[b.Path]
	if !ok {
		return Invalid, nil, fmt.Errorf("weight file %q not found", b.Path)
	}
	dt, data, err := ReadBlob(file, b.Offset)
	if err != nil {
		return Invalid, nil, fmt.Errorf("weight file %q: %w", b.Path, err)
	}
	if dt != v.Type.DType {
		return Invalid, nil, fmt.Errorf("weight file %q offset %d: blob holds %s, the value is %s", b.Path, b.Offset, dt, v.Type)
	}
	if dt.Bits() == 0 || dt.Bits()%8 != 0 {
		return Invalid, nil, fmt.Errorf("weight file %q offset %d: cannot decode %s data", b.Path, b.Offset, dt)
	}
	n, ok := shapeElements(v.Type.Shape)
	if !ok {
		return Invalid, nil, fmt.Errorf("type %s: bad shape", v.Type)
	}
	if want := uint64(n) * uint64(dt.Bits()/8); uint64(len(data)) != want {
		return Invalid, nil, fmt.Errorf("weight file %q offset %d: blob has %d bytes, %s needs %d", b.Path, b.Offset, len(data), v.Type, want)
	}
	return dt, data, nil
}

// Ints returns the elements of v as ints; every element must be a whole number. A scalar gives one element.
func (v *Value) Ints() ([]int, error) {
	if v == nil {
		return nil, fmt.Errorf("no value")
	}
	if v.Blob != nil {
		return nil, fmt.Errorf("value %s is in a weight file", v.Type)
	}
	if v.Type.DType == String || len(v.Strs) > 0 {
		return nil, fmt.Errorf("value of type %s is not numeric", v.Type)
	}
	out := make([]int, len(v.Nums))
	for i, x := range v.Nums {
		if x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return nil, fmt.Errorf("element %d (%v) is not an integer", i, x)
		}
		out[i] = int(x)
	}
	return out, nil
}

// Bool returns the value of a bool scalar (or a one-element bool tensor).
func (v *Value) Bool() (bool, error) {
	if v == nil {
		return false, fmt.Errorf("no value")
	}
	if v.Type.DType != Bool || len(v.Nums) != 1 || v.Type.Kind == TupleKind {
		return false, fmt.Errorf("value of type %s is not a bool", v.Type)
	}
	return v.Nums[0] != 0, nil
}

// Str returns the value of a string scalar.
func (v *Value) Str() (string, error) {
	if v == nil {
		return "", fmt.Errorf("no value")
	}
	if v.Type.DType != String || len(v.Strs) != 1 || v.Type.Kind == TupleKind {
		return "", fmt.Errorf("value of type %s is not a string", v.Type)
	}
	return v.Strs[0], nil
}

// shapeElements is the product of dims, or false when a dim is negative or the product passes MaxElements.
func shapeElements(shape []int) (int, bool) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, false
		}
		if d != 0 && n > MaxElements/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}
