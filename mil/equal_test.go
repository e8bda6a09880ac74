package mil

import (
	"math"
	"testing"
)

// TestEqual checks that Equal sees each single change to a program and ignores positions and scalar
// spelling.
func TestEqual(t *testing.T) {
	fresh := func() *Program {
		p, err := Parse("built.mil", []byte(builtText))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if !Equal(fresh(), builtProgram()) || !Equal(nil, nil) || Equal(fresh(), nil) || Equal(nil, fresh()) {
		t.Fatal("Equal is wrong on equal programs or nil")
	}
	val := func(p *Program, op int) *Value { return p.Funcs[0].Ops[op].Attr("val").Value }
	same := []struct {
		name   string
		change func(p *Program)
	}{
		{"positions", func(p *Program) { p.Pos = Pos{9, 9}; p.Funcs[0].Ops[1].Args[0].Pos = Pos{7, 7} }},
		{"scalar spelling", func(p *Program) { val(p, 0).Style = TensorScalar }},
		{"rank-0 tensor literal", func(p *Program) { val(p, 0).Type = Tensor(FP16) }},
		{"nil and empty", func(p *Program) { p.Funcs[0].Ops[0].Args = []*Arg{} }},
		{"other NaN", func(p *Program) { val(p, 4).Nums[4] = math.Float64frombits(0x7ff8000000000123) }},
	}
	for _, tc := range same {
		p := fresh()
		tc.change(p)
		if !Equal(p, builtProgram()) {
			t.Errorf("%s: Equal reports a difference", tc.name)
		}
	}
	differ := []struct {
		name   string
		change func(p *Program)
	}{
		{"version", func(p *Program) { p.Version = "1.0" }},
		{"program attr", func(p *Program) { p.Attrs[0].Value.Elems[1].Strs[0] = "x" }},
		{"no program attrs", func(p *Program) { p.Attrs = nil }},
		{"func name", func(p *Program) { p.Funcs[0].Name = "f" }},
		{"opset", func(p *Program) { p.Funcs[0].Opset = "ios17" }},
		{"func attr", func(p *Program) { p.Funcs[0].Attrs = []*Attr{{Name: "a", Value: BoolValue(true)}} }},
		{"input type", func(p *Program) { p.Funcs[0].Inputs[0].Type = Tensor(FP32, 1, 4, 1, 2) }},
		{"input name", func(p *Program) { p.Funcs[0].Inputs[0].Name = "in" }},
		{"output", func(p *Program) { p.Funcs[0].Outputs[1].Name = "q" }},
		{"op removed", func(p *Program) { p.Funcs[0].Ops = p.Funcs[0].Ops[1:] }},
		{"op kind", func(p *Program) { p.Funcs[0].Ops[1].Kind = "add" }},
		{"result name", func(p *Program) { p.Funcs[0].Ops[8].Results[1].Name = "r" }},
		{"arg name", func(p *Program) { p.Funcs[0].Ops[1].Args[1].Name = "z" }},
		{"arg ref", func(p *Program) { p.Funcs[0].Ops[1].Args[1].Operands[0].Ref.Name = "x" }},
		{"arg tuple", func(p *Program) { p.Funcs[0].Ops[1].Args[1].Tuple = true }},
		{"ref for literal", func(p *Program) {
			p.Funcs[0].Ops[2].Args[1].Operands[0] = Operand{Ref: &Ref{Name: "h"}}
		}},
		{"literal value", func(p *Program) { p.Funcs[0].Ops[2].Args[1].Operands[0].Lit.Nums[0] = 2 }},
		{"attr name", func(p *Program) { p.Funcs[0].Ops[0].Attrs[0].Name = "nom" }},
		{"scalar dtype", func(p *Program) { val(p, 0).Type = Scalar(FP32) }},
		{"NaN for number", func(p *Program) { val(p, 4).Nums[0] = math.NaN() }},
		{"blob offset", func(p *Program) { val(p, 3).Blob.Offset = 128 }},
		{"blob path", func(p *Program) { val(p, 3).Blob.Path = "w2.bin" }},
		{"blob removed", func(p *Program) { val(p, 3).Blob = nil }},
		{"tensor shape", func(p *Program) { val(p, 4).Type = Tensor(FP32, 3, 2) }},
		{"string", func(p *Program) { p.Funcs[0].Ops[0].Attrs[0].Value.Strs[0] = "g" }},
		{"bool", func(p *Program) { val(p, 6).Nums[1] = 1 }},
	}
	for _, tc := range differ {
		p := fresh()
		tc.change(p)
		if Equal(p, builtProgram()) || Equal(builtProgram(), p) {
			t.Errorf("%s: Equal misses the change", tc.name)
		}
	}
}

func TestSameFloat(t *testing.T) {
	negZero := math.Copysign(0, -1)
	if sameFloat(0, negZero) || !sameFloat(negZero, negZero) || !sameFloat(math.NaN(), -math.NaN()) ||
		sameFloat(math.NaN(), 1) || sameFloat(1, math.NaN()) || !sameFloat(1.5, 1.5) {
		t.Error("sameFloat is wrong")
	}
}
