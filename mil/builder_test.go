package mil

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestBuilderProgram builds an RMSNorm, a conv with a weight, a softmax and a split, and checks the
// program, the generated names and the weight data.
func TestBuilderProgram(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP16, 1, 8, 1, 4))
	sq := b.Mul("sq", x, x)
	ss := b.ReduceSum("ss", sq, []int{1}, true)
	inv := b.Scalar("invd", FP16, 1.0/8)
	ms := b.Mul("ms", ss, inv)
	rr := b.Pow("rr", b.Add("ms_eps", ms, 1e-5), -0.5)
	xn := b.Mul("xn", x, rr)
	wdata := make([]float32, 6*8)
	for i := range wdata {
		wdata[i] = float32(i) / 16
	}
	w := b.WeightIn("@model_path/weights/all.bin", "W", FP16, []int{6, 8, 1, 1}, wdata)
	g := b.WeightIn("@model_path/weights/all.bin", "G", FP32, []int{1, 6, 1, 1}, []float32{1, 2, 3, 4, 5, 6})
	y := b.Conv("", xn, w, Args{"pad_type": "valid", "groups": 1})
	yg := b.Mul("yg", y, b.Cast("gc", g, "fp16"))
	sm := b.Softmax("sm", yg, -1)
	parts := b.Split("parts", sm, 1, []int{2, 4})
	b.Output(parts...)
	p, ws, err := b.Build()
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if err := Check(p); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := CheckWeights(p, ws); err != nil {
		t.Fatalf("CheckWeights: %v", err)
	}
	f := p.Funcs[0]
	if f.Name != "main" || f.Opset != "ios18" || p.Version != "1.3" || len(p.Attrs) != 1 || p.Attrs[0].Name != "buildInfo" {
		t.Errorf("program header: %q %q %q %v", f.Name, f.Opset, p.Version, p.Attrs)
	}
	if len(ws) != 1 {
		t.Fatalf("%d weight files, want 1", len(ws))
	}
	if n, _ := BlobFileCount(ws["@model_path/weights/all.bin"]); n != 2 {
		t.Errorf("shared file holds %d blobs, want 2", n)
	}
	got, err := f.ConstValue("W").Float32s(ws)
	if err != nil {
		t.Fatal(err)
	}
	for i := range wdata {
		if got[i] != wdata[i] { // multiples of 1/16 below 3 are exact in fp16
			t.Fatalf("W[%d] = %v, want %v", i, got[i], wdata[i])
		}
	}
	// Generated names: the float literal became an fp16 const named after the op and argument.
	eps := f.ConstValue("ms_eps_y")
	if eps == nil || eps.Type.DType != FP16 || eps.Nums[0] != 1e-5 {
		t.Errorf("ms_eps_y = %+v, want fp16(1e-5)", eps)
	}
	if v := f.ConstValue("ss_axes"); v == nil || !v.Type.Equal(Tensor(Int32, 1)) {
		t.Errorf("ss_axes = %+v", v)
	}
	if len(parts) != 2 || parts[0].Name != "parts_0" || !parts[1].Type.Equal(Tensor(FP16, 1, 4, 1, 4)) {
		t.Errorf("split results %v %v", parts[0], parts[1])
	}
	if y.Name != "conv_1" || !y.Type.Equal(Tensor(FP16, 1, 6, 1, 4)) {
		t.Errorf("conv result %q %s", y.Name, y.Type)
	}
	if a := f.Ops[len(f.Ops)-1].Attr("name"); a == nil || a.Value.Strs[0] != "parts" {
		t.Errorf("split op name attribute %+v", a)
	}
	// Arguments are written in name order, consts referenced by name; conv's optional arguments are
	// always spelled out, as the reference writes them.
	var conv *Op
	for _, op := range f.Ops {
		if op.Kind == "conv" {
			conv = op
		}
	}
	var names []string
	for _, a := range conv.Args {
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "dilations,groups,pad,pad_type,strides,weight,x" {
		t.Errorf("conv args %v", names)
	}
	if v := f.ArgValue(conv, "pad_type"); v == nil || v.Strs[0] != "valid" {
		t.Errorf("ArgValue(pad_type) = %+v", v)
	}
	for arg, want := range map[string][]int{"strides": {1, 1}, "dilations": {1, 1}, "pad": {0, 0, 0, 0}} {
		if v := f.ArgValue(conv, arg); v == nil || !slices.Equal(mustInts(t, v), want) {
			t.Errorf("ArgValue(%s) = %+v, want %v", arg, v, want)
		}
	}
}

func TestBuilderOwnFiles(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP32, 2, 3))
	w1 := b.Weight("w1", FP16, []int{2, 3}, make([]float32, 6))
	w2 := b.Weight("w2", FP32, []int{2, 3}, make([]float32, 6))
	b.Output(b.Add("s", b.Cast("c", w1, "fp32"), b.Mul("m", x, w2)))
	_, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"@model_path/weights/w1.bin", "@model_path/weights/w2.bin"} {
		if n, err := BlobFileCount(ws[path]); n != 1 || err != nil {
			t.Errorf("%s: %d blobs, %v", path, n, err)
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	in := Tensor(FP16, 1, 768, 1, 4)
	tests := []struct {
		name string
		run  func(b *Builder, x *Var) error
		want string
	}{
		{"conv channels", func(b *Builder, x *Var) error {
			w := b.Weight("W", FP16, []int{8, 512, 1, 1}, make([]float32, 8*512))
			_, err := b.Op("conv", "cq", Args{"x": x, "weight": w})
			return err
		}, `op "cq" (conv): weight has 512 input channels, x has 768`},
		{"unknown op", func(b *Builder, x *Var) error { _, err := b.Op("frob", "f", Args{"x": x}); return err },
			`op "f" (frob): unknown op`},
		{"unknown argument", func(b *Builder, x *Var) error { _, err := b.Op("relu", "r", Args{"x": x, "alpha": 1.0}); return err },
			`op "r" (relu): unknown argument "alpha"`},
		{"missing argument", func(b *Builder, x *Var) error { _, err := b.Op("add", "a", Args{"x": x}); return err },
			`op "a" (add): missing argument "y"`},
		{"wrong literal", func(b *Builder, x *Var) error { _, err := b.Op("mul", "m", Args{"x": x, "y": 2}); return err },
			`op "m" (mul): argument "y" has dtype int32, x has fp16`},
		{"bad Go value", func(b *Builder, x *Var) error { _, err := b.Op("mul", "m", Args{"x": x, "y": struct{}{}}); return err },
			`op "m" (mul): argument "y": cannot use a struct {} as an operand`},
		{"duplicate name", func(b *Builder, x *Var) error { _, err := b.Op("relu", "x", Args{"x": x}); return err },
			`op "x" (relu): name "x" is already defined`},
		{"bad name", func(b *Builder, x *Var) error { _, err := b.Op("relu", "1r", Args{"x": x}); return err },
			`name "1r" is not a MIL identifier`},
		{"foreign var", func(b *Builder, x *Var) error {
			_, err := b.Op("relu", "r", Args{"x": &Var{Name: "elsewhere", Type: in}})
			return err
		}, `op "r" (relu): argument "x": "elsewhere" is not defined in this program`},
		{"nil var", func(b *Builder, x *Var) error { _, err := b.Op("relu", "r", Args{"x": (*Var)(nil)}); return err },
			`argument "x": nil value`},
		{"weight size", func(b *Builder, x *Var) error { b.Weight("W", FP16, []int{2, 2}, make([]float32, 3)); return b.Err() },
			`op "W" (const): weight tensor<fp16, [2, 2]> needs 4 values, got 3`},
		{"weight dtype", func(b *Builder, x *Var) error { b.Weight("W", Int8, []int{2}, make([]float32, 2)); return b.Err() },
			`cannot store float data as int8`},
		{"sticky", func(b *Builder, x *Var) error {
			r := b.Reshape("r", x, []int{5, -1})
			s := b.Relu("s", r) // does nothing after the error
			if r != nil || s != nil {
				return errors.New("helpers returned values after an error")
			}
			_, _, err := b.Build()
			return err
		}, `op "r" (reshape): shape [5 -1]: cannot infer -1 for 3072 elements`},
		{"no outputs", func(b *Builder, x *Var) error { _, _, err := b.Build(); return err }, `func "main": no outputs`},
		{"split needs Op", func(b *Builder, x *Var) error {
			b.Op1("split", "s", Args{"x": x, "axis": 1, "num_splits": 2})
			return b.Err()
		},
			`op "s" (split): gives 2 results, want 1`},
	}
	for _, tc := range tests {
		b := NewBuilder()
		x := b.Input("x", in)
		err := tc.run(b, x)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestBuilderOpUnchangedOnError checks that a failed Op adds neither the op nor its generated consts.
func TestBuilderOpUnchangedOnError(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP16, 2, 3))
	n := len(b.fn.Ops)
	if _, err := b.Op("reduce_sum", "r", Args{"x": x, "axes": []int{5}, "keep_dims": true}); err == nil {
		t.Fatal("reduce over axis 5 of a rank-2 tensor succeeded")
	}
	if len(b.fn.Ops) != n || b.defined("r") || b.defined("r_axes") {
		t.Errorf("failed op left %d ops (want %d)", len(b.fn.Ops), n)
	}
	r, err := b.Op("reduce_sum", "r", Args{"x": x, "axes": []int{1}, "keep_dims": true})
	if err != nil || !r[0].Type.Equal(Tensor(FP16, 2, 1)) {
		t.Errorf("retry: %v %v", r, err)
	}
}

func TestBuilderSetOpName(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP16, 4))
	q := b.Relu("q4", x)
	b.SetOpName(q, "rq")
	b.Output(q)
	p, _, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	op := p.Funcs[0].Ops[0]
	if op.Results[0].Name != "q4" || op.Attr("name").Value.Strs[0] != "rq" {
		t.Errorf("op %q named %q", op.Results[0].Name, op.Attr("name").Value.Strs[0])
	}
}

func TestValueAccessors(t *testing.T) {
	if v, err := IntsValue(1, -2).Ints(); err != nil || v[0] != 1 || v[1] != -2 {
		t.Errorf("Ints: %v %v", v, err)
	}
	if _, err := ScalarValue(FP16, 0.5).Ints(); err == nil {
		t.Error("Ints of 0.5 succeeded")
	}
	if _, err := StringValue("a").Ints(); err == nil {
		t.Error("Ints of a string succeeded")
	}
	if v, err := BoolValue(true).Bool(); err != nil || !v {
		t.Errorf("Bool: %v %v", v, err)
	}
	if _, err := ScalarValue(Int32, 1).Bool(); err == nil {
		t.Error("Bool of an int succeeded")
	}
	if s, err := StringValue("fp16").Str(); err != nil || s != "fp16" {
		t.Errorf("Str: %q %v", s, err)
	}
	if _, err := (*Value)(nil).Str(); err == nil {
		t.Error("Str of nil succeeded")
	}
	blob := &Value{Type: Tensor(FP32, 2), Blob: &BlobRef{Path: "@model_path/weights/a.bin", Offset: 64}}
	if _, err := blob.Float32s(Weights{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("Float32s without the file: %v", err)
	}
	w := NewBlobWriter()
	w.AddFloat32s(FP16, []float32{1, 2})
	if _, err := blob.Float32s(Weights{"@model_path/weights/a.bin": w.Bytes()}); err == nil || !strings.Contains(err.Error(), "blob holds fp16") {
		t.Errorf("Float32s with the wrong dtype: %v", err)
	}
	if v, err := TensorValue(FP16, []int{2}, []float64{0.5, -1}).Float32s(nil); err != nil || v[0] != 0.5 || v[1] != -1 {
		t.Errorf("Float32s of a literal: %v %v", v, err)
	}
	var op *Op
	if op.Arg("x") != nil || (*Func)(nil).ConstValue("x") != nil {
		t.Error("nil receivers gave values")
	}
}

func TestWithBuildInfo(t *testing.T) {
	p, err := Parse("t.mil", []byte("program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 2]> x) {\n    } -> (x);\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	q := WithBuildInfo(p)
	if len(p.Attrs) != 0 || len(q.Attrs) != 1 || q.Attrs[0].Name != "buildInfo" || q.Funcs[0] != p.Funcs[0] {
		t.Fatalf("WithBuildInfo: %+v", q)
	}
	want := `[buildInfo = dict<string, string>({{"coremlc-component-MIL", "3510.2.1"}, {"coremlc-version", "3505.4.1"}, {"coremltools-component-milinternal", ""}, {"coremltools-version", "9.0"}})]`
	if got := strings.Split(Print(q), "\n")[1]; got != want {
		t.Errorf("buildInfo line\n got %s\nwant %s", got, want)
	}
	if WithBuildInfo(q) != q {
		t.Error("a program with buildInfo was copied")
	}
}

func mustInts(t *testing.T, v *Value) []int {
	t.Helper()
	n, err := v.Ints()
	if err != nil {
		t.Fatal(err)
	}
	return n
}
