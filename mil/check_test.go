package mil

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func tref(name string) Operand { return Operand{Ref: &Ref{Name: name}} }

func targ(name string, ops ...Operand) *Arg { return &Arg{Name: name, Operands: ops} }

func tconst(line int, name string, v *Value) *Op {
	return &Op{Pos: Pos{line, 9}, Kind: "const",
		Attrs:   []*Attr{{Name: "name", Value: StringValue(name)}, {Name: "val", Value: v}},
		Results: []*Var{{Pos: Pos{line, 30}, Name: name, Type: v.Type}}}
}

func top(line int, kind, name string, t Type, args ...*Arg) *Op {
	return &Op{Pos: Pos{line, 9}, Kind: kind, Args: args,
		Attrs:   []*Attr{{Name: "name", Value: StringValue(name)}},
		Results: []*Var{{Pos: Pos{line, 30}, Name: name, Type: t}}}
}

// checkProgram is a small valid program: an RMS-style scale, a 1x1 conv and a softmax.
func checkProgram() *Program {
	x := Tensor(FP16, 1, 768, 1, 8)
	f := &Func{Pos: Pos{2, 5}, Name: "main", Opset: "ios18",
		Inputs: []*Var{{Pos: Pos{2, 40}, Name: "x", Type: x}},
		Ops: []*Op{
			top(3, "mul", "sq", x, targ("x", tref("x")), targ("y", tref("x"))),
			tconst(4, "rax", IntsValue(1)),
			tconst(5, "kd", BoolValue(true)),
			top(6, "reduce_sum", "ss", Tensor(FP16, 1, 1, 1, 8), targ("x", tref("sq")), targ("axes", tref("rax")), targ("keep_dims", tref("kd"))),
			tconst(7, "W", &Value{Type: Tensor(FP16, 512, 768, 1, 1), Blob: &BlobRef{Path: "@model_path/weights/w.bin", Offset: 64}}),
			tconst(8, "pt", StringValue("valid")),
			top(9, "conv", "cq", Tensor(FP16, 1, 512, 1, 8), targ("x", tref("x")), targ("weight", tref("W")), targ("pad_type", tref("pt"))),
			top(10, "softmax", "sm", Tensor(FP16, 1, 512, 1, 8), targ("x", tref("cq")), targ("axis", Operand{Lit: ScalarValue(Int32, -1)})),
		},
		Outputs: []Ref{{Pos: Pos{11, 10}, Name: "sm"}, {Pos: Pos{11, 14}, Name: "ss"}},
	}
	return &Program{Pos: Pos{1, 1}, Version: "1.3", Funcs: []*Func{f}}
}

func TestCheckValid(t *testing.T) {
	if err := Check(checkProgram()); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// TestCheckErrorsText checks the errors Check reports on the parsed programs of
// testdata/errors/check.mil, each one with its position.
func TestCheckErrorsText(t *testing.T) {
	for _, tc := range readChunks(t, "testdata/errors/check.mil") {
		p, err := Parse("", []byte(tc.src))
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		err = Check(p)
		var list ErrorList
		if !errors.As(err, &list) {
			t.Errorf("%s: Check gave %v, want an ErrorList", tc.name, err)
			continue
		}
		if got := list.Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// TestCheckErrors checks errors on programs built as ASTs, including what no text can hold.
func TestCheckErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *Program)
		want []string // each a full error line or a substring of one
	}{
		{"conv channels", func(p *Program) {
			p.Funcs[0].Ops[4].Attrs[1].Value.Type = Tensor(FP16, 512, 512, 1, 1)
			p.Funcs[0].Ops[4].Results[0].Type = Tensor(FP16, 512, 512, 1, 1)
		}, []string{`9:9: op "cq" (conv): weight has 512 input channels, x has 768`}},
		{"unknown op", func(p *Program) { p.Funcs[0].Ops[0].Kind = "mull" }, []string{`3:9: op "sq" (mull): unknown op`}},
		{"missing argument", func(p *Program) { p.Funcs[0].Ops[0].Args = p.Funcs[0].Ops[0].Args[:1] },
			[]string{`3:9: op "sq" (mul): missing argument "y"`}},
		{"unknown argument", func(p *Program) { p.Funcs[0].Ops[0].Args = append(p.Funcs[0].Ops[0].Args, targ("z", tref("x"))) },
			[]string{`3:9: op "sq" (mul): unknown argument "z"`}},
		{"argument twice", func(p *Program) { p.Funcs[0].Ops[0].Args[1].Name = "x" },
			[]string{`3:9: op "sq" (mul): argument "x" is given twice`}},
		{"wrong dtype", func(p *Program) {
			p.Funcs[0].Ops[1].Attrs[1].Value = &Value{Type: Tensor(FP16, 1), Nums: []float64{1}}
			p.Funcs[0].Ops[1].Results[0].Type = Tensor(FP16, 1)
		},
			[]string{`6:9: op "ss" (reduce_sum): argument "axes" has dtype fp16, want int32`}},
		{"not constant", func(p *Program) { p.Funcs[0].Ops[3].Args[1] = targ("axes", tref("x")) },
			[]string{`op "ss" (reduce_sum): argument "axes" has type tensor<fp16, [1, 768, 1, 8]>, want a rank-1 tensor`}},
		{"declared type", func(p *Program) { p.Funcs[0].Ops[3].Results[0].Type = Tensor(FP16, 1, 768, 1, 8) },
			[]string{`6:9: op "ss" (reduce_sum): result "ss" is declared tensor<fp16, [1, 768, 1, 8]>, the op gives tensor<fp16, [1, 1, 1, 8]>`}},
		{"undefined", func(p *Program) { p.Funcs[0].Ops[2], p.Funcs[0].Ops[3] = p.Funcs[0].Ops[3], p.Funcs[0].Ops[2] },
			[]string{`6:9: op "ss" (reduce_sum): argument "keep_dims": "kd" is not defined`}},
		{"redefined", func(p *Program) {
			p.Funcs[0].Ops[2].Results[0].Name = "rax"
			p.Funcs[0].Ops[2].Attrs[0].Value = StringValue("rax")
		},
			[]string{`5:9: op "rax" (const): "rax" is already defined at 4:30`, `"kd" is not defined`}},
		{"redefines input", func(p *Program) { p.Funcs[0].Ops[0].Results[0].Name = "x" },
			[]string{`3:9: op "x" (mul): "x" is already defined at 2:40`, `op "ss" (reduce_sum): argument "x": "sq" is not defined`}},
		{"output", func(p *Program) { p.Funcs[0].Outputs[1].Name = "zz" }, []string{`11:14: func "main": output "zz" is not defined`}},
		{"no outputs", func(p *Program) { p.Funcs[0].Outputs = nil }, []string{`func "main": no outputs`}},
		{"no main", func(p *Program) { p.Funcs[0].Name = "f" }, []string{`1:1: program has no func "main"`}},
		{"const without val", func(p *Program) { p.Funcs[0].Ops[1].Attrs = p.Funcs[0].Ops[1].Attrs[:1] },
			[]string{`4:9: op "rax" (const): const has no val attribute`}},
		{"bad literal", func(p *Program) { p.Funcs[0].Ops[1].Attrs[1].Value.Nums = nil },
			[]string{`4:9: op "rax" (const): val: tensor<int32, [1]> holds 0 values, want 1`}},
		{"result count", func(p *Program) {
			p.Funcs[0].Ops[0].Results = append(p.Funcs[0].Ops[0].Results, &Var{Name: "sq2", Type: Tensor(FP16, 1)})
		}, []string{`3:9: op "sq" (mul): declares 2 results, the op gives 1`}},
		{"tuple argument", func(p *Program) { p.Funcs[0].Ops[0].Args[1].Tuple = true },
			[]string{`op "sq" (mul): argument "y" is a tuple, want a single value`}},
		{"bad input type", func(p *Program) { p.Funcs[0].Inputs[0].Type = Tensor(FP16, 1, -768, 1, 8) },
			[]string{`2:40: func "main": input "x": type tensor<fp16, [1, `}},
		{"several", func(p *Program) { p.Funcs[0].Ops[0].Kind = "nope"; p.Funcs[0].Outputs[0].Name = "q" },
			[]string{`3:9: op "sq" (nope): unknown op`, `output "q" is not defined`}},
	}
	for _, tc := range tests {
		p := checkProgram()
		tc.edit(p)
		err := Check(p)
		if err == nil {
			t.Errorf("%s: Check succeeded", tc.name)
			continue
		}
		list, ok := err.(ErrorList)
		if !ok {
			t.Errorf("%s: error is a %T, want ErrorList", tc.name, err)
			continue
		}
		if len(list) != len(tc.want) {
			t.Errorf("%s: %d errors, want %d:\n%v", tc.name, len(list), len(tc.want), err)
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(list[i].Error(), w) {
				t.Errorf("%s: error %d is\n  %s\nwant it to contain\n  %s", tc.name, i, list[i], w)
			}
		}
	}
}

func TestCheckWeights(t *testing.T) {
	p := checkProgram()
	w := NewBlobWriter()
	w.AddFloat32s(FP16, make([]float32, 512*768))
	if err := CheckWeights(p, Weights{"@model_path/weights/w.bin": w.Bytes()}); err != nil {
		t.Errorf("CheckWeights: %v", err)
	}
	err := CheckWeights(p, Weights{})
	if err == nil || !strings.Contains(err.Error(), `7:9: op "W" (const): weight file "@model_path/weights/w.bin" not found`) {
		t.Errorf("missing file: %v", err)
	}
	short := NewBlobWriter()
	short.AddFloat32s(FP16, make([]float32, 10))
	err = CheckWeights(p, Weights{"@model_path/weights/w.bin": short.Bytes()})
	if err == nil || !strings.Contains(err.Error(), "blob has 20 bytes, tensor<fp16, [512, 768, 1, 1]> needs 786432") {
		t.Errorf("short blob: %v", err)
	}
}

// TestCheckGarbage feeds Check damaged and random ASTs: it must report errors and never panic.
func TestCheckGarbage(t *testing.T) {
	if Check(nil) == nil {
		t.Error("Check(nil) succeeded")
	}
	if Check(&Program{Funcs: []*Func{nil}}) == nil {
		t.Error("Check with a nil func succeeded")
	}
	r := rand.New(rand.NewPCG(3, 4))
	kinds := append([]string{"", "bogus"}, func() []string {
		var s []string
		for _, d := range Ops() {
			s = append(s, d.Name)
		}
		return s
	}()...)
	names := []string{"x", "sq", "rax", "kd", "ss", "W", "pt", "cq", "sm", "", "zz"}
	randType := func() Type {
		t := Type{Kind: Kind(r.IntN(6)), DType: DType(r.IntN(24)), Len: r.IntN(3) - 1}
		for range r.IntN(5) {
			t.Shape = append(t.Shape, r.IntN(6)-1)
		}
		if r.IntN(4) == 0 {
			t.Elems = []Type{{Kind: Kind(r.IntN(6))}}
		}
		return t
	}
	randValue := func() *Value {
		switch r.IntN(6) {
		case 0:
			return nil
		case 1:
			return &Value{Type: randType(), Blob: &BlobRef{Path: "p"}}
		case 2:
			return &Value{Type: randType(), Strs: []string{"valid"}}
		}
		v := &Value{Type: randType()}
		for range r.IntN(5) {
			v.Nums = append(v.Nums, float64(r.IntN(9)-4)/float64(1+r.IntN(2)))
		}
		return v
	}
	for range 3000 {
		p := checkProgram()
		f := p.Funcs[0]
		for range 1 + r.IntN(4) {
			i := r.IntN(len(f.Ops))
			op := f.Ops[i]
			if op == nil {
				continue
			}
			switch r.IntN(12) {
			case 0:
				f.Ops[i] = nil
			case 1:
				op.Kind = kinds[r.IntN(len(kinds))]
			case 2:
				op.Args = append(op.Args, nil)
			case 3:
				if len(op.Args) == 0 {
					break
				}
				if a := op.Args[r.IntN(len(op.Args))]; a != nil {
					a.Operands = append(a.Operands, Operand{}, Operand{Lit: randValue()}, Operand{Ref: &Ref{Name: names[r.IntN(len(names))]}})
					a.Tuple = r.IntN(2) == 0
				}
			case 4:
				if len(op.Args) > 0 && op.Args[0] != nil {
					op.Args[0].Operands = []Operand{{Lit: randValue()}}
				}
			case 5:
				op.Results = append(op.Results, nil, &Var{Name: names[r.IntN(len(names))], Type: randType()})
			case 6:
				if len(op.Results) > 0 && op.Results[0] != nil {
					op.Results[0].Type = randType()
				}
			case 7:
				op.Attrs = append(op.Attrs, nil, &Attr{Name: "val", Value: randValue()}, &Attr{Name: "name"})
			case 8:
				if a := op.Attr("val"); a != nil {
					a.Value = randValue()
				}
			case 9:
				f.Inputs = append(f.Inputs, nil, &Var{Name: names[r.IntN(len(names))], Type: randType()})
			case 10:
				op.Results = nil
			case 11:
				f.Outputs = append(f.Outputs, Ref{Name: names[r.IntN(len(names))]})
			}
		}
		_ = Check(p) // must not panic
	}
}
