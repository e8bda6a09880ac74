package mil

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// milFiles returns the MIL programs of the parser corpus in testdata.
func milFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*.mil")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.mil files: %v", err)
	}
	return files
}

func parseFile(t *testing.T, name string) *Program {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(name, src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// uncheckable lists corpus files that parse but are meant to fail Check (dynamic shapes).
var uncheckable = map[string]bool{"testdata/apple_flexible.mil": true}

// TestCorpusRoundTrip parses every corpus program, prints it, parses the text again and prints once
// more: the reparsed program must be Equal to the first and the two texts identical. Every program
// except the flexible-shape one must also pass Check.
func TestCorpusRoundTrip(t *testing.T) {
	for _, name := range milFiles(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			p := parseFile(t, name)
			text := Print(p)
			q, err := Parse("printed", []byte(text))
			if err != nil {
				t.Fatalf("reparse of printed text: %v\n%s", err, text)
			}
			if !Equal(p, q) {
				t.Fatalf("parse(print(p)) differs from p; printed:\n%s", text)
			}
			if again := Print(q); again != text {
				t.Fatalf("printing is not stable:\nfirst:\n%s\nsecond:\n%s", text, again)
			}
			err = Check(p)
			if uncheckable[name] {
				if err == nil {
					t.Fatal("Check accepted a program with dynamic shapes")
				}
			} else if err != nil {
				t.Fatalf("Check: %v", err)
			}
		})
	}
}

// TestReferenceDialect checks the AST built from a kernel in the reference generators' dialect.
func TestReferenceDialect(t *testing.T) {
	p := parseFile(t, "testdata/sdpa_fwd.mil")
	if p.Version != "1.3" || p.Pos != (Pos{1, 1}) {
		t.Errorf("version %q at %v, want 1.3 at 1:1", p.Version, p.Pos)
	}
	if len(p.Attrs) != 1 || p.Attrs[0].Name != "buildInfo" {
		t.Fatalf("program attrs %v, want buildInfo", p.Attrs)
	}
	bi := p.Attrs[0].Value
	if want := (Type{Kind: DictKind, Elems: []Type{Scalar(String), Scalar(String)}}); !bi.Type.Equal(want) {
		t.Errorf("buildInfo type %s, want %s", bi.Type, want)
	}
	if len(bi.Elems) != 8 || bi.Elems[0].Strs[0] != "coremlc-component-MIL" || bi.Elems[1].Strs[0] != "3510.2.1" ||
		bi.Elems[5].Strs[0] != "" || bi.Elems[7].Strs[0] != "9.0" {
		t.Errorf("buildInfo entries wrong: %s", Print(p)[:200])
	}
	if len(p.Funcs) != 1 {
		t.Fatalf("%d funcs, want 1", len(p.Funcs))
	}
	f := p.Funcs[0]
	if f.Name != "main" || f.Opset != "ios18" || f.Pos != (Pos{4, 5}) {
		t.Errorf("func %s<%s> at %v, want main<ios18> at 4:5", f.Name, f.Opset, f.Pos)
	}
	if len(f.Inputs) != 1 || f.Inputs[0].Name != "x" || !f.Inputs[0].Type.Equal(Tensor(FP16, 1, 16, 1, 8)) ||
		f.Inputs[0].Pos != (Pos{4, 50}) {
		t.Errorf("inputs %+v", f.Inputs[0])
	}
	if len(f.Ops) != 50 {
		t.Errorf("%d ops, want 50", len(f.Ops))
	}
	if len(f.Outputs) != 1 || f.Outputs[0].Name != "out" {
		t.Errorf("outputs %v", f.Outputs)
	}

	sq := f.Ops[0]
	if sq.Kind != "mul" || sq.Pos != (Pos{5, 9}) || len(sq.Results) != 1 || sq.Results[0].Name != "sq" ||
		!sq.Results[0].Type.Equal(Tensor(FP16, 1, 16, 1, 8)) {
		t.Errorf("op 0: %+v", sq)
	}
	if len(sq.Args) != 2 || sq.Args[0].Name != "x" || sq.Args[0].Operands[0].Ref.Name != "x" ||
		sq.Args[1].Name != "y" || sq.Args[1].Pos != (Pos{5, 47}) || sq.Args[0].Tuple {
		t.Errorf("op 0 args wrong")
	}
	if a := sq.Attr("name"); a == nil || a.Value.Strs[0] != "sq" || a.Value.Style != ShortScalar ||
		!a.Value.Type.Equal(Scalar(String)) {
		t.Errorf("op 0 name attr wrong")
	}

	consts := map[string]*Value{}
	for _, o := range f.Ops {
		if o.Kind == "const" {
			consts[o.Results[0].Name] = o.Attr("val").Value
		}
	}
	checkNums := func(name string, typ Type, want ...float64) {
		t.Helper()
		v := consts[name]
		if v == nil || !v.Type.Equal(typ) || len(v.Nums) != len(want) {
			t.Errorf("const %s: got %+v, want type %s with %v", name, v, typ, want)
			return
		}
		for i := range want {
			if v.Nums[i] != want[i] {
				t.Errorf("const %s: element %d = %v, want %v", name, i, v.Nums[i], want[i])
			}
		}
	}
	checkNums("eps", Scalar(FP16), 0.00001)
	checkNums("invd", Scalar(FP16), 0.0625)
	checkNums("nhalf", Scalar(FP16), -0.5)
	checkNums("scv", Scalar(FP16), 0.353553)
	checkNums("kd", Scalar(Bool), 1)
	checkNums("tx", Scalar(Bool), 0)
	checkNums("sax", Scalar(Int32), -1)
	checkNums("qsh", Tensor(Int32, 4), 1, 2, 8, 8)
	checkNums("pm", Tensor(Int32, 4), 0, 1, 3, 2)
	if pt := consts["pt"]; pt == nil || len(pt.Strs) != 1 || pt.Strs[0] != "valid" {
		t.Errorf("const pt = %+v", pt)
	}
	rw := consts["rw"]
	if rw == nil || rw.Blob == nil || *rw.Blob != (BlobRef{Path: "@model_path/weights/rms1.bin", Offset: 64}) ||
		!rw.Type.Equal(Tensor(FP16, 1, 16, 1, 1)) || rw.Nums != nil {
		t.Errorf("const rw = %+v", rw)
	}

	cat := f.Ops[len(f.Ops)-1]
	vals := cat.Arg("values")
	if cat.Kind != "concat" || vals == nil || !vals.Tuple || len(vals.Operands) != 6 ||
		vals.Operands[0].Ref.Name != "oo" || vals.Operands[5].Ref.Name != "xn" {
		t.Errorf("concat values %+v", vals)
	}
}

// TestAppleDialect checks the AST built from text in the style of Apple's compiler output.
func TestAppleDialect(t *testing.T) {
	p := parseFile(t, "testdata/apple_ios16.mil")
	if p.Version != "1.0" {
		t.Errorf("version %q", p.Version)
	}
	bi := p.Attrs[0].Value
	if want := (Type{Kind: DictKind, Elems: []Type{Tensor(String), Tensor(String)}}); !bi.Type.Equal(want) {
		t.Errorf("buildInfo type %s, want %s", bi.Type, want)
	}
	if k := bi.Elems[0]; !k.Type.Equal(Scalar(String)) || k.Style != TensorScalar || k.Strs[0] != "coremlc-component-MIL" {
		t.Errorf("first buildInfo key %+v", k)
	}
	f := p.Funcs[0]
	ops := map[string]*Op{}
	for _, o := range f.Ops {
		ops[o.Results[0].Name] = o
	}
	pt := ops["pt"]
	if !pt.Results[0].Type.Equal(Tensor(String)) {
		t.Errorf("declared type of pt is %s, want tensor<string, []>", pt.Results[0].Type)
	}
	if v := pt.Attr("val").Value; !v.Type.Equal(Scalar(String)) || v.Style != TensorScalar || v.Strs[0] != "valid" {
		t.Errorf("pt val %+v", v)
	}
	if v := pt.Attr("name").Value; v.Style != TensorScalar || v.Strs[0] != "pt" {
		t.Errorf("pt name %+v", v)
	}
	if v := ops["gr"].Attr("val").Value; !v.Type.Equal(Scalar(Int32)) || v.Style != TensorScalar || v.Nums[0] != 1 {
		t.Errorf("gr val %+v", v)
	}
	if v := ops["eps"].Attr("val").Value; v.Nums[0] != 1.3125*math.Pow(2, -17) {
		t.Errorf("0x1.5p-17 read as %v", v.Nums[0])
	}
	if b := ops["b"].Attr("val").Value.Blob; b == nil || b.Offset != 4224 || b.Path != "@model_path/weights/weight.bin" {
		t.Errorf("blob of b: %+v", b)
	}
	lit := func(o *Op, arg string) *Value {
		t.Helper()
		a := o.Arg(arg)
		if a == nil || len(a.Operands) != 1 || a.Operands[0].Lit == nil || a.Operands[0].Ref != nil {
			t.Fatalf("op %s argument %s is not a literal", o.Results[0].Name, arg)
		}
		return a.Operands[0].Lit
	}
	if v := lit(ops["y1"], "y"); v.Nums[0] != 1 || v.Style != TensorScalar || v.Pos != (Pos{13, 62}) {
		t.Errorf("y1 literal argument %+v", v)
	}
	if v := lit(ops["y1b"], "y"); !math.IsInf(v.Nums[0], -1) {
		t.Errorf("-inf read as %v", v.Nums[0])
	}
	if v := lit(ops["y2"], "y"); !math.IsInf(v.Nums[0], 1) {
		t.Errorf("inf read as %v", v.Nums[0])
	}
	if v := lit(ops["out"], "y"); v.Nums[0] != 0.5 || v.Style != ShortScalar || !v.Type.Equal(Scalar(FP16)) {
		t.Errorf("fp16(0.5) argument %+v", v)
	}
	for _, name := range []string{"lo", "lo2"} {
		o := ops[name]
		if o.Kind != "split" || len(o.Results) != 2 || o.Results[1].Name != strings.Replace(name, "lo", "hi", 1) {
			t.Errorf("split %s results %+v", name, o.Results)
		}
	}
	m := ops["m"].Attr("val").Value
	if !m.Type.Equal(Tensor(FP32, 2, 2)) || len(m.Nums) != 4 || m.Nums[0] != 3 || m.Nums[1] != -0.25 ||
		!math.IsNaN(m.Nums[2]) || m.Nums[3] != 1e-08 {
		t.Errorf("nested fp32 literal %+v", m)
	}
	if v := ops["il"].Attr("val").Value; v.Nums[0] != 0 || !v.Type.Equal(Scalar(Bool)) {
		t.Errorf("bool literal %+v", v)
	}
}

// TestFlexibleShapes checks unknown dims and the nested tuple, dict and list literal of a function attribute.
func TestFlexibleShapes(t *testing.T) {
	f := parseFile(t, "testdata/apple_flexible.mil").Funcs[0]
	if got := f.Inputs[0].Type; !got.Equal(Tensor(FP32, 1, -1, 8)) || got.String() != "tensor<fp32, [1, ?, 8]>" {
		t.Errorf("input type %s", got)
	}
	if len(f.Attrs) != 1 || f.Attrs[0].Name != "FlexibleShapeInformation" {
		t.Fatalf("func attrs %+v", f.Attrs)
	}
	v := f.Attrs[0].Value
	if v.Type.Kind != TupleKind || len(v.Elems) != 2 {
		t.Fatalf("attr value %+v", v)
	}
	def, rng := v.Elems[0], v.Elems[1]
	if def.Elems[0].Strs[0] != "DefaultShapes" || rng.Elems[0].Strs[0] != "RangeDims" {
		t.Errorf("tuple keys %q %q", def.Elems[0].Strs, rng.Elems[0].Strs)
	}
	shape := def.Elems[1].Elems[1] // the dict's first value
	if !shape.Type.Equal(Tensor(Int32, 3)) || len(shape.Nums) != 3 || shape.Nums[2] != 8 {
		t.Errorf("default shape %+v: an unknown dim takes the literal's length", shape)
	}
	ranges := rng.Elems[1].Elems[1]
	if ranges.Type.Kind != ListKind || ranges.Type.Len != -1 || len(ranges.Elems) != 3 ||
		ranges.Elems[1].Nums[1] != 64 || !ranges.Elems[1].Type.Equal(Tensor(Int32, 2)) {
		t.Errorf("range dims %+v", ranges)
	}
}

// TestMinimalForms covers spellings the corpus files do not: no attributes, no opset, no inputs, a flat
// literal for a rank-2 tensor, an empty tuple literal, comments, and an output list of two.
func TestMinimalForms(t *testing.T) {
	src := `program(1.3){func f(){ // comment
		tensor<int32,[2,2]> a=const()[val=tensor<int32,[2,2]>([1,2,3,4])];
		tensor<bool,[2]> b=const()[val=tensor<bool,[2]>([true,false]), info=tuple<tuple<string>>()];
		tensor<string,[2]> c=const()[val=tensor<string,[2]>(["x\"y\\", "\x41\n"])];
		fp32 d=const()[val=fp32(-0x1.fffffep+127)];
		list<int32, 2> e=const()[val=list<int32, 2>([7, 8])];
	}->(a,b);}`
	p, err := Parse("min.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	f := p.Funcs[0]
	if f.Opset != "" || len(f.Inputs) != 0 || len(f.Outputs) != 2 || f.Outputs[1].Name != "b" || f.Outputs[1].Pos.Line != 7 {
		t.Errorf("func %+v", f)
	}
	a := f.Ops[0].Attr("val").Value
	if !a.Type.Equal(Tensor(Int32, 2, 2)) || len(a.Nums) != 4 || a.Nums[3] != 4 {
		t.Errorf("flat rank-2 literal %+v", a)
	}
	if info := f.Ops[1].Attr("info").Value; info.Type.Kind != TupleKind || len(info.Elems) != 0 {
		t.Errorf("empty tuple %+v", info)
	}
	if c := f.Ops[2].Attr("val").Value; len(c.Strs) != 2 || c.Strs[0] != `x"y\` || c.Strs[1] != "A\n" {
		t.Errorf("strings %q", c.Strs)
	}
	if d := f.Ops[3].Attr("val").Value; d.Nums[0] != -math.MaxFloat32 {
		t.Errorf("hex float %v", d.Nums[0])
	}
	if e := f.Ops[4].Attr("val").Value; len(e.Elems) != 2 || e.Elems[1].Nums[0] != 8 {
		t.Errorf("list %+v", e)
	}
	text := Print(p)
	want := `        tensor<int32, [2, 2]> a = const()[val=tensor<int32, [2, 2]>([[1,2],[3,4]])];`
	if !strings.Contains(text, want+"\n") {
		t.Errorf("printed text lacks %q:\n%s", want, text)
	}
	q, err := Parse("printed", []byte(text))
	if err != nil || !Equal(p, q) || Print(q) != text {
		t.Fatalf("round trip failed (%v):\n%s", err, text)
	}
}
