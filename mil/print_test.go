package mil

import (
	"bytes"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// builtProgram is a small program made without the parser, as a builder would make it.
func builtProgram() *Program {
	x := &Var{Name: "x", Type: Tensor(FP16, 1, 4, 1, 2)}
	ref := func(n string) Operand { return Operand{Ref: &Ref{Name: n}} }
	arg := func(n string, o ...Operand) *Arg { return &Arg{Name: n, Operands: o} }
	name := func(n string) *Attr { return &Attr{Name: "name", Value: StringValue(n)} }
	return &Program{
		Version: "1.3",
		Attrs: []*Attr{{Name: "buildInfo", Value: &Value{
			Type:  Type{Kind: DictKind, Elems: []Type{Scalar(String), Scalar(String)}},
			Elems: []*Value{StringValue("coremlc-version"), StringValue("3505.4.1")},
		}}},
		Funcs: []*Func{{
			Name: "main", Opset: "ios18", Inputs: []*Var{x},
			Ops: []*Op{
				{Kind: "const", Results: []*Var{{Name: "h", Type: Scalar(FP16)}},
					Attrs: []*Attr{name("h"), {Name: "val", Value: ScalarValue(FP16, 0.5)}}},
				{Kind: "mul", Results: []*Var{{Name: "y", Type: x.Type}},
					Args: []*Arg{arg("x", ref("x")), arg("y", ref("h"))}, Attrs: []*Attr{name("y")}},
				{Kind: "add", Results: []*Var{{Name: "z", Type: x.Type}},
					Args:  []*Arg{arg("x", ref("y")), arg("y", Operand{Lit: &Value{Type: Scalar(FP16), Nums: []float64{1}, Style: TensorScalar}})},
					Attrs: []*Attr{name("z")}},
				{Kind: "const", Results: []*Var{{Name: "w", Type: Tensor(FP16, 2, 3)}},
					Attrs: []*Attr{name("w"), {Name: "val", Value: &Value{Type: Tensor(FP16, 2, 3),
						Blob: &BlobRef{Path: "@model_path/weights/w.bin", Offset: 64}}}}},
				{Kind: "const", Results: []*Var{{Name: "m", Type: Tensor(FP32, 2, 3)}},
					Attrs: []*Attr{name("m"), {Name: "val", Value: TensorValue(FP32, []int{2, 3},
						[]float64{1, -0.25, math.Inf(1), math.Inf(-1), math.NaN(), 1e-8})}}},
				{Kind: "const", Results: []*Var{{Name: "ax", Type: Scalar(Int32)}},
					Attrs: []*Attr{name("ax"), {Name: "val", Value: ScalarValue(Int32, 1)}}},
				{Kind: "const", Results: []*Var{{Name: "b", Type: Tensor(Bool, 2)}},
					Attrs: []*Attr{name("b"), {Name: "val", Value: BoolsValue(true, false)}}},
				{Kind: "concat", Results: []*Var{{Name: "out", Type: Tensor(FP16, 1, 8, 1, 2)}},
					Args: []*Arg{arg("axis", ref("ax")), arg("interleave", Operand{Lit: BoolValue(false)}),
						{Name: "values", Tuple: true, Operands: []Operand{ref("y"), ref("z")}}},
					Attrs: []*Attr{name("out")}},
				{Kind: "split", Results: []*Var{{Name: "p", Type: Tensor(FP16, 1, 4, 1, 2)}, {Name: "q", Type: Tensor(FP16, 1, 4, 1, 2)}},
					Args: []*Arg{arg("x", ref("out")), arg("num_splits", Operand{Lit: ScalarValue(Int32, 2)}), arg("axis", ref("ax"))}},
			},
			Outputs: []Ref{{Name: "out"}, {Name: "p"}},
		}},
	}
}

// builtText is what Print must write for builtProgram: the reference dialect exactly.
const builtText = `program(1.3)
[buildInfo = dict<string, string>({{"coremlc-version", "3505.4.1"}})]
{
    func main<ios18>(tensor<fp16, [1, 4, 1, 2]> x) {
        fp16 h = const()[name=string("h"), val=fp16(0.5)];
        tensor<fp16, [1, 4, 1, 2]> y = mul(x=x,y=h)[name=string("y")];
        tensor<fp16, [1, 4, 1, 2]> z = add(x=y,y=tensor<fp16, []>(1.0))[name=string("z")];
        tensor<fp16, [2, 3]> w = const()[name=string("w"), val=tensor<fp16, [2, 3]>(BLOBFILE(path=string("@model_path/weights/w.bin"), offset=uint64(64)))];
        tensor<fp32, [2, 3]> m = const()[name=string("m"), val=tensor<fp32, [2, 3]>([[1.0,-0.25,inf],[-inf,nan,0.00000001]])];
        int32 ax = const()[name=string("ax"), val=int32(1)];
        tensor<bool, [2]> b = const()[name=string("b"), val=tensor<bool, [2]>([true,false])];
        tensor<fp16, [1, 8, 1, 2]> out = concat(axis=ax,interleave=bool(false),values=(y,z))[name=string("out")];
        tensor<fp16, [1, 4, 1, 2]> p, tensor<fp16, [1, 4, 1, 2]> q = split(x=out,num_splits=int32(2),axis=ax);
    } -> (out, p);
}
`

func TestPrintBuilt(t *testing.T) {
	p := builtProgram()
	got := Print(p)
	if got != builtText {
		t.Fatalf("Print:\n%s\nwant:\n%s", got, builtText)
	}
	var buf bytes.Buffer
	if err := Fprint(&buf, p); err != nil || buf.String() != builtText {
		t.Fatalf("Fprint wrote %q, %v", buf.String(), err)
	}
	q, err := Parse("built.mil", []byte(got))
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(p, q) {
		t.Fatal("parse(print(p)) is not Equal to p")
	}
	if err := Check(q); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

// TestPrintNil checks that nil nodes print as markers instead of panicking.
func TestPrintNil(t *testing.T) {
	if got := Print(nil); got != "<nil>\n" {
		t.Errorf("Print(nil) = %q", got)
	}
	p := &Program{Version: "1.3", Funcs: []*Func{nil, {Name: "main", Ops: []*Op{nil,
		{Kind: "add", Results: []*Var{nil}, Args: []*Arg{nil, {Name: "x"}}, Attrs: []*Attr{nil, {Name: "v"}}}}}}}
	want := "program(1.3)\n{\n    <nil>\n    func main() {\n        <nil>;\n" +
		"        <nil> = add(<nil>,x=())[<nil>, v=<nil>];\n    } -> ();\n}\n"
	if got := Print(p); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// fp16ToFloat64 decodes IEEE binary16 bits, written from the format's definition.
func fp16ToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	frac := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * frac * math.Pow(2, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * (1 + frac/1024) * math.Pow(2, float64(exp-15))
}

// TestFloatRoundTrip checks that every fp16 value, random float32 and float64 values and the special
// values print to text that parses back to the same bits.
func TestFloatRoundTrip(t *testing.T) {
	check := func(x float64) {
		s := formatFloat(x)
		y, msg := parseNumber(s)
		if msg != "" || !sameFloat(x, y) {
			t.Fatalf("%v (bits %016x) printed as %q, read back as %v (%s)", x, math.Float64bits(x), s, y, msg)
		}
		if !strings.ContainsAny(s, ".en") {
			t.Fatalf("%v printed as %q, without a point or exponent", x, s)
		}
	}
	for h := 0; h < 1<<16; h++ {
		check(fp16ToFloat64(uint16(h)))
	}
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 20000; i++ {
		check(float64(math.Float32frombits(r.Uint32())))
		check(math.Float64frombits(r.Uint64()))
	}
	for _, tc := range []struct {
		x    float64
		want string
	}{
		{1, "1.0"}, {0.5, "0.5"}, {-0.5, "-0.5"}, {0.00001, "0.00001"}, {1e-8, "0.00000001"}, {1e-45, "1e-45"}, {3.4028234663852886e38, "3.4028234663852886e+38"}, {65504, "65504.0"}, {math.Copysign(0, -1), "-0.0"},
		{0, "0.0"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {1e21, "1000000000000000000000.0"},
		{0.353553, "0.353553"}, {float64(float32(0.1)), "0.10000000149011612"},
	} {
		if got := formatFloat(tc.x); got != tc.want {
			t.Errorf("formatFloat(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
	for _, tc := range []struct {
		x    float64
		d    DType
		want string
	}{
		{64, UInt64, "64"}, {-1, Int32, "-1"}, {1.5, Int32, "1.5"}, {1 << 60, Int64, "1152921504606846976"}, {2, FP16, "2.0"},
	} {
		if got := formatNumber(tc.x, tc.d); got != tc.want {
			t.Errorf("formatNumber(%v, %s) = %q, want %q", tc.x, tc.d, got, tc.want)
		}
	}
}

// TestParseNumber checks the number spellings of both dialects against hand-computed values.
func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		text string
		want float64
	}{
		{"1", 1}, {"-1", -1}, {"+2", 2}, {"0.000010", 1e-5}, {"1e-05", 1e-5}, {"1E3", 1000}, {".5", 0.5},
		{"0x1.5p-17", 1.3125 / 131072}, {"-0x1p+0", -1}, {"0x1P4", 16}, {"0xff", 255}, {"0X10", 16},
		{"18446744073709551615", 18446744073709551615}, {"-0", math.Copysign(0, -1)},
		{"inf", math.Inf(1)}, {"-inf", math.Inf(-1)}, {"+inf", math.Inf(1)},
	} {
		got, msg := parseNumber(tc.text)
		if msg != "" || !sameFloat(got, tc.want) {
			t.Errorf("parseNumber(%q) = %v, %q; want %v", tc.text, got, msg, tc.want)
		}
	}
	if got, msg := parseNumber("nan"); msg != "" || !math.IsNaN(got) {
		t.Errorf("parseNumber(nan) = %v, %q", got, msg)
	}
	for _, bad := range []string{"1.2.3", "0x1.5", "1e", "0xg", "12abc", "1e999", "0x1p99999"} {
		if _, msg := parseNumber(bad); msg == "" {
			t.Errorf("parseNumber(%q) succeeded", bad)
		}
	}
}

// TestQuoteString checks that strings of any bytes survive quoting and lexing.
func TestQuoteString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"valid", `"valid"`}, {`a"b\c`, `"a\"b\\c"`}, {"l1\nl2\t\r", `"l1\nl2\t\r"`},
		{"\x00\x1f\x7f", `"\x00\x1f\x7f"`}, {"héllo", `"héllo"`}, {"\xff\xfe", `"\xff\xfe"`}, {"", `""`},
	} {
		q := quoteString(tc.in)
		if q != tc.want {
			t.Errorf("quoteString(%q) = %s, want %s", tc.in, q, tc.want)
		}
		tok := newLexer([]byte(q)).next()
		if tok.kind != tokString || tok.text != tc.in {
			t.Errorf("lexing %s gave %v %q, want %q", q, tok.kind, tok.text, tc.in)
		}
	}
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		b := make([]byte, r.Intn(12))
		r.Read(b)
		q := quoteString(string(b))
		if tok := newLexer([]byte(q)).next(); tok.kind != tokString || tok.text != string(b) {
			t.Fatalf("%q quoted as %s lexed back as %q", b, q, tok.text)
		}
	}
}

// TestPrintEmptyTensor checks that an empty tensor prints as [] whatever its shape, quickly.
func TestPrintEmptyTensor(t *testing.T) {
	src := "program(1.3){func main(){tensor<int32, [2147483647, 0]> a=const()[val=tensor<int32, [2147483647, 0]>([])];" +
		"tensor<int32, [2, 0]> b=const()[val=tensor<int32, [2, 0]>([[], []])];}->(a, b);}"
	p, err := Parse("empty.mil", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	text := Print(p)
	for _, want := range []string{"val=tensor<int32, [2147483647, 0]>([])]", "val=tensor<int32, [2, 0]>([])]"} {
		if !strings.Contains(text, want) {
			t.Errorf("printed text lacks %s:\n%s", want, text)
		}
	}
	if q, err := Parse("printed", []byte(text)); err != nil || !Equal(p, q) {
		t.Errorf("round trip failed: %v", err)
	}
}
