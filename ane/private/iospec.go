package private

import (
	"fmt"

	"github.com/anestar/anestar/mil"
)

// ioSpec is one input or output of a program's main function: the surface the kernel gives it.
type ioSpec struct {
	name  string   // the MIL name
	typ   mil.Type // its declared type
	bytes int      // exact surface size
}

// ioSpecs returns the inputs of p's main function in declaration order and its outputs in return order,
// with their declared types. Every one must be an fp16 or fp32 tensor (or scalar) of at least one element.
func ioSpecs(p *mil.Program) (inputs, outputs []ioSpec, err error) {
	main := p.Main()
	if main == nil {
		return nil, nil, fmt.Errorf("program has no func main")
	}
	types := map[string]mil.Type{}
	for _, v := range main.Inputs {
		spec, err := newIOSpec("input", v.Name, v.Type, v.Pos)
		if err != nil {
			return nil, nil, err
		}
		inputs = append(inputs, spec)
		types[v.Name] = v.Type
	}
	for _, op := range main.Ops {
		for _, r := range op.Results {
			types[r.Name] = r.Type
		}
	}
	if len(main.Outputs) == 0 {
		return nil, nil, fmt.Errorf("func main%s returns nothing", at(main.Pos))
	}
	for _, ref := range main.Outputs {
		t, ok := types[ref.Name]
		if !ok {
			return nil, nil, fmt.Errorf("func main output %q%s is not defined", ref.Name, at(ref.Pos))
		}
		spec, err := newIOSpec("output", ref.Name, t, ref.Pos)
		if err != nil {
			return nil, nil, err
		}
		outputs = append(outputs, spec)
	}
	return inputs, outputs, nil
}

// newIOSpec checks that t can live in a surface and sizes it.
func newIOSpec(role, name string, t mil.Type, pos mil.Pos) (ioSpec, error) {
	if t.Kind != mil.TensorKind && t.Kind != mil.ScalarKind {
		return ioSpec{}, fmt.Errorf("func main %s %q%s: type %s is not a tensor", role, name, at(pos), t)
	}
	if t.DType != mil.FP16 && t.DType != mil.FP32 {
		return ioSpec{}, fmt.Errorf("func main %s %q%s: dtype %s: the ANE's surfaces hold fp16 or fp32",
			role, name, at(pos), t.DType)
	}
	n := 1
	for _, d := range t.Shape {
		if d <= 0 {
			return ioSpec{}, fmt.Errorf("func main %s %q%s: type %s has a dim below 1", role, name, at(pos), t)
		}
		if n > maxSurfaceBytes/d {
			return ioSpec{}, fmt.Errorf("func main %s %q%s: type %s is too large for a surface", role, name, at(pos), t)
		}
		n *= d
	}
	size := t.DType.Bits() / 8
	if n > maxSurfaceBytes/size {
		return ioSpec{}, fmt.Errorf("func main %s %q%s: type %s is too large for a surface", role, name, at(pos), t)
	}
	return ioSpec{name: name, typ: t, bytes: n * size}, nil
}

// maxSurfaceBytes bounds one surface (1 GiB) so that sizes cannot overflow and a typo in a shape fails
// with a message instead of exhausting memory.
const maxSurfaceBytes = 1 << 30
