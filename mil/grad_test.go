package mil_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/mil"
)

// The gradient rules are checked against central differences of the forward program, each program run
// on the emulator without fp16 rounding (relaxed: the test programs compute in fp32) and the differences
// taken in float64. A loss L = sum(y * r) with a fixed random r makes the cotangent of y r.

// evalProgram runs p on inputs (by name, in channel order) and returns its outputs by name.
func evalProgram(t testing.TB, be *emulator.Backend, p *mil.Program, w mil.Weights, in map[string][]float32) map[string][]float32 {
	t.Helper()
	k, err := be.Compile(p, w)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, mil.Print(p))
	}
	defer k.Close()
	for _, s := range k.Inputs() {
		v, ok := in[s.Name()]
		if !ok {
			t.Fatalf("no value for input %s", s.Name())
		}
		if err := s.WriteChannels(0, s.Channels(), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.Eval(context.Background()); err != nil {
		t.Fatalf("eval: %v", err)
	}
	out := map[string][]float32{}
	for _, s := range k.Outputs() {
		v := make([]float32, s.Channels()*s.Spatial())
		if err := s.ReadChannels(0, s.Channels(), v); err != nil {
			t.Fatal(err)
		}
		out[s.Name()] = v
	}
	return out
}

func fp32Backend() *emulator.Backend {
	return emulator.New(emulator.Options{Numerics: emulator.FP32, Relaxed: true})
}

func randVals(r *rand.Rand, n int, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*r.Float64())
	}
	return v
}

// gradCase is a forward program to check: build adds its ops given the inputs and returns the output.
type gradCase struct {
	name   string
	inputs map[string][]int // input shapes
	lo, hi float64          // input range (default -1, 1)
	build  func(b *mil.Builder, in map[string]*mil.Var) *mil.Var
	tol    float64 // relative to the largest gradient; default 2e-3
	kink   bool    // keep inputs 0.05 away from 0, where the derivative jumps
}

// checkGrad builds c's forward, derives the backward for every input and compares its gradients with
// central differences.
func checkGrad(t *testing.T, c gradCase, seed uint64) {
	t.Helper()
	b := mil.NewBuilder()
	in := map[string]*mil.Var{}
	var wrt []string
	for _, name := range sortedKeys(c.inputs) {
		in[name] = b.Input(name, mil.Tensor(mil.FP32, c.inputs[name]...))
		wrt = append(wrt, name)
	}
	y := c.build(b, in)
	if y == nil {
		t.Fatalf("%s: build: %v", c.name, b.Err())
	}
	b.Output(y)
	p, w, err := b.Build()
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	gr, err := mil.Grad(p, w, mil.GradSpec{Wrt: wrt})
	if err != nil {
		t.Fatalf("%s: Grad: %v\n%s", c.name, err, mil.Print(p))
	}
	r := rand.New(rand.NewPCG(seed, 7))
	lo, hi := c.lo, c.hi
	if lo == 0 && hi == 0 {
		lo, hi = -1, 1
	}
	vals := map[string][]float32{}
	for _, name := range wrt {
		vals[name] = randVals(r, mil.Tensor(mil.FP32, c.inputs[name]...).NumElements(), lo, hi)
		for i, v := range vals[name] {
			for c.kink && math.Abs(float64(v)) < 0.05 {
				v = float32(lo + (hi-lo)*r.Float64())
				vals[name][i] = v
			}
		}
	}
	cot := randVals(r, y.Type.NumElements(), -1, 1)
	be := fp32Backend()
	bin := map[string][]float32{"d_" + y.Name: cot}
	for k, v := range vals {
		bin[k] = v
	}
	got := evalProgram(t, be, gr.Backward, gr.BackwardWeights, bin)
	mag := 0.0 // sum |y r|: the loss's fp32 rounding is about 6e-8 of it
	loss := func() float64 {
		out := evalProgram(t, be, p, w, vals)[y.Name]
		s := 0.0
		mag = 0
		for i, v := range out {
			s += float64(v) * float64(cot[i])
			mag += math.Abs(float64(v) * float64(cot[i]))
		}
		return s
	}
	tol := c.tol
	if tol == 0 {
		tol = 2e-3
	}
	for _, name := range wrt {
		x := vals[name]
		want := make([]float64, len(x))
		for i := range x {
			x0 := x[i]
			diff := func(h float64) float64 {
				x[i] = x0 + float32(h)
				up := loss()
				x[i] = x0 - float32(h)
				down := loss()
				x[i] = x0
				return (up - down) / (float64(x0+float32(h)) - float64(x0-float32(h)))
			}
			// Richardson's extrapolation of two central differences: truncation error O(h^4).
			h := 1e-2 * max(1, math.Abs(float64(x0)))
			want[i] = (4*diff(h/2) - diff(h)) / 3
		}
		g := got["d_"+name]
		if len(g) != len(want) {
			t.Fatalf("%s: d_%s has %d values, want %d", c.name, name, len(g), len(want))
		}
		scale := 0.0
		for _, v := range want {
			scale = max(scale, math.Abs(v))
		}
		// The differences carry the fp32 rounding of the loss divided by h (three times over in the
		// extrapolation): allowed on top.
		noise := 3 * 3e-7 * mag / 5e-3
		for i := range want {
			if d := math.Abs(float64(g[i]) - want[i]); d > tol*scale+noise {
				t.Errorf("%s: d_%s[%d] = %g, central differences give %g (|diff| %.3g > %.1g of %.3g + %.2g)", c.name, name, i, g[i], want[i], d, tol, scale, noise)
				break
			}
		}
	}
}

func sortedKeys(m map[string][]int) []string { return slices.Sorted(maps.Keys(m)) }

// TestGradRules checks each rule alone (with broadcasting where the op has it) against central
// differences.
func TestGradRules(t *testing.T) {
	sq := map[string][]int{"x": {1, 4, 1, 8}}
	two := map[string][]int{"x": {1, 4, 1, 8}, "y": {1, 4, 1, 8}}
	bcast := map[string][]int{"x": {1, 4, 1, 8}, "y": {1, 1, 1, 8}}
	cases := []gradCase{
		{name: "add", inputs: two, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Add("y2", in["x"], in["y"]) }},
		{name: "add broadcast", inputs: bcast, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Add("z", in["x"], in["y"]) }},
		{name: "sub broadcast", inputs: bcast, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Sub("z", in["y"], in["x"]) }},
		{name: "mul", inputs: two, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Mul("z", in["x"], in["y"]) }},
		{name: "mul broadcast", inputs: bcast, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Mul("z", in["x"], in["y"]) }},
		{name: "mul self", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Mul("z", in["x"], in["x"]) }},
		{name: "mul const", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Mul("z", in["x"], 3.0) }},
		{name: "real_div", inputs: bcast, lo: 0.5, hi: 2, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.RealDiv("z", in["x"], in["y"]) }},
		{name: "pow 2", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Pow("z", in["x"], 2.0) }},
		{name: "pow 3", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Pow("z", in["x"], 3.0) }},
		{name: "pow -0.5", inputs: sq, lo: 0.5, hi: 2, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Pow("z", in["x"], -0.5) }},
		{name: "pow 1", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Pow("z", in["x"], 1.0) }},
		{name: "sigmoid", inputs: sq, lo: -3, hi: 3, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Sigmoid("z", in["x"]) }},
		{name: "tanh", inputs: sq, lo: -2, hi: 2, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Tanh("z", in["x"]) }},
		{name: "relu", inputs: sq, kink: true, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Relu("z", in["x"]) }},
		{name: "softmax last", inputs: sq, lo: -2, hi: 2, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Softmax("z", in["x"], -1) }},
		{name: "softmax channels", inputs: sq, lo: -2, hi: 2, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Softmax("z", in["x"], 1) }},
		{name: "reduce_sum keep", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			return b.ReduceSum("z", in["x"], []int{3}, true)
		}},
		{name: "reduce_sum drop", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			return b.Mul("z", b.ReduceSum("s", in["x"], []int{1}, false), b.ReduceSum("s2", in["x"], []int{1, 3}, false))
		}},
		{name: "reshape", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			return b.Mul("z", b.Reshape("r", in["x"], []int{1, 2, 2, 8}), b.Reshape("r2", in["x"], []int{1, 2, 2, 8}))
		}},
		{name: "transpose", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			tr := b.Transpose("t", in["x"], []int{0, 3, 2, 1})
			return b.Mul("z", tr, b.Transpose("t2", b.Mul("xx", in["x"], in["x"]), []int{0, 3, 2, 1}))
		}},
		{name: "slice_by_size", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			s := b.SliceBySize("s", in["x"], []int{0, 1, 0, 2}, []int{1, 2, 1, 5})
			return b.Mul("z", s, s)
		}},
		{name: "concat", inputs: two, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			c := b.Concat("c", 3, false, in["x"], b.Mul("yy", in["y"], in["y"]), in["x"])
			return b.Mul("z", c, c)
		}},
		{name: "slices that tile", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			h := b.Mul("h", in["x"], in["x"])
			top := b.SliceBySize("top", h, []int{0, 0, 0, 0}, []int{1, 1, 1, 8})
			rest := b.SliceBySize("rest", h, []int{0, 1, 0, 0}, []int{1, 3, 1, 8})
			return b.Concat("z", 1, false, b.Sigmoid("st", top), b.Mul("rr", rest, rest))
		}},
		{name: "slices that overlap", inputs: sq, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			h := b.Mul("h", in["x"], in["x"])
			lo := b.SliceBySize("lo", h, []int{0, 0, 0, 0}, []int{1, 3, 1, 8})
			hi := b.SliceBySize("hi", h, []int{0, 1, 0, 0}, []int{1, 3, 1, 8})
			return b.Mul("z", b.Sigmoid("sl", lo), hi)
		}},
		{name: "cast", inputs: sq, tol: 2e-2, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			h := b.Cast("h", in["x"], "fp16")
			return b.Cast("z", b.Mul("hh", h, h), "fp32")
		}},
	}
	for mm := range 4 {
		tx, ty := mm&1 != 0, mm&2 != 0
		xs, ys := []int{1, 2, 3, 5}, []int{1, 2, 5, 4}
		if tx {
			xs = []int{1, 2, 5, 3}
		}
		if ty {
			ys = []int{1, 2, 4, 5}
		}
		cases = append(cases, gradCase{name: fmt.Sprintf("matmul tx=%v ty=%v", tx, ty), inputs: map[string][]int{"x": xs, "y": ys},
			build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var { return b.Matmul("z", in["x"], in["y"], tx, ty) }})
	}
	cases = append(cases,
		gradCase{name: "conv 1x1 const weight", inputs: map[string][]int{"x": {1, 3, 1, 8}}, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			r := rand.New(rand.NewPCG(3, 3))
			w := b.Weight("w", mil.FP32, []int{5, 3, 1, 1}, randVals(r, 15, -1, 1))
			return b.Conv("z", in["x"], w, nil)
		}},
		gradCase{name: "conv 1x1 weight input", inputs: map[string][]int{"x": {1, 3, 1, 8}, "w": {5, 3, 1, 1}}, build: func(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
			return b.Conv("z", in["x"], in["w"], nil)
		}},
	)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkGrad(t, c, uint64(i+1)) })
	}
}

// TestGradComposite is the example forward: x [1, 8, 1, 32] and w [1, 1, 8, 8] through matmul,
// slice, sigmoid, mul, softmax, reduce_sum, add and pow, differentiated for both inputs.
func TestGradComposite(t *testing.T) {
	checkGrad(t, gradCase{name: "composite", inputs: map[string][]int{"x": {1, 1, 8, 32}, "w": {1, 1, 8, 8}},
		build: compositeForward}, 11)
}

func compositeForward(b *mil.Builder, in map[string]*mil.Var) *mil.Var {
	h := b.Matmul("h", in["w"], in["x"], false, false)                // [1,1,8,32]
	s := b.SliceBySize("s", h, []int{0, 0, 0, 0}, []int{1, 1, 4, 32}) // [1,1,4,32]
	g := b.Mul("g", s, b.Sigmoid("sg", s))
	p := b.Softmax("p", g, -1)
	r := b.ReduceSum("r", b.Mul("pp", p, s), []int{2}, true)                 // [1,1,1,32]
	a := b.Add("a", r, b.Pow("q", b.Add("h2", b.Mul("hh", h, h), 1.0), 0.5)) // [1,1,8,32]
	return b.Pow("y", b.Add("a1", a, 2.0), 2.0)
}

// TestGradSaveAndCotangents: saved vars become forward outputs and backward inputs, and give the same
// gradients; outputs not named in cotangents count as zero.
func TestGradSaveAndCotangents(t *testing.T) {
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP32, 1, 4, 1, 8))
	s := b.Sigmoid("s", x)
	y := b.Mul("y", s, x)
	z := b.Mul("z", x, 2.0)
	b.Output(y, z)
	p, w, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	plain, err := mil.Grad(p, w, mil.GradSpec{Wrt: []string{"x"}, Cotangents: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	saved, err := mil.Grad(p, w, mil.GradSpec{Wrt: []string{"x"}, Save: []string{"s"}, Cotangents: []string{"y"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := refNames(saved.Forward.Main().Outputs); got != "y z s" {
		t.Errorf("forward outputs %q, want y z s", got)
	}
	if plain.Forward != p {
		t.Errorf("with save empty the forward is not the program itself")
	}
	if got := strings.Join(inputNames(saved.Backward), " "); got != "x s d_y" {
		t.Errorf("backward inputs %q, want x s d_y", got)
	}
	// A saved reshape of a value stands in for it: the value is not recomputed.
	flat, err := mil.Grad(p2(t), nil, mil.GradSpec{Wrt: []string{"x"}, Save: []string{"sf"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(mil.Print(flat.Backward), "softmax(") {
		t.Errorf("the backward recomputes the softmax whose reshape was saved:\n%s", mil.Print(flat.Backward))
	}
	if strings.Contains(mil.Print(saved.Backward), "sigmoid(") {
		t.Errorf("the backward recomputes the saved sigmoid:\n%s", mil.Print(saved.Backward))
	}
	if !strings.Contains(mil.Print(plain.Backward), "sigmoid(") {
		t.Errorf("the backward without save does not recompute the sigmoid")
	}
	r := rand.New(rand.NewPCG(5, 5))
	xv, dy := randVals(r, 32, -2, 2), randVals(r, 32, -1, 1)
	be := fp32Backend()
	fw := evalProgram(t, be, saved.Forward, saved.ForwardWeights, map[string][]float32{"x": xv})
	a := evalProgram(t, be, plain.Backward, plain.BackwardWeights, map[string][]float32{"x": xv, "d_y": dy})["d_x"]
	c := evalProgram(t, be, saved.Backward, saved.BackwardWeights, map[string][]float32{"x": xv, "s": fw["s"], "d_y": dy})["d_x"]
	for i := range a {
		sg := 1 / (1 + math.Exp(-float64(xv[i])))
		want := float64(dy[i]) * (sg + float64(xv[i])*sg*(1-sg))
		if math.Abs(float64(a[i])-want) > 1e-5 || math.Abs(float64(c[i])-want) > 1e-5 {
			t.Fatalf("d_x[%d]: recomputed %g, saved %g, want %g (z's cotangent must count as zero)", i, a[i], c[i], want)
		}
	}
}

func refNames(rs []mil.Ref) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.Name)
	}
	return strings.Join(s, " ")
}

func inputNames(p *mil.Program) []string {
	var s []string
	for _, in := range p.Main().Inputs {
		s = append(s, in.Name)
	}
	return s
}

// TestGradErrors: every bad request names what is wrong.
func TestGradErrors(t *testing.T) {
	build := func(f func(b *mil.Builder, x *mil.Var) *mil.Var) (*mil.Program, mil.Weights) {
		b := mil.NewBuilder()
		x := b.Input("x", mil.Tensor(mil.FP32, 1, 4, 1, 8))
		b.Input("u", mil.Tensor(mil.FP32, 1, 4, 1, 8))
		b.Output(f(b, x))
		p, w, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return p, w
	}
	simple := func(b *mil.Builder, x *mil.Var) *mil.Var { return b.Mul("y", x, x) }
	cases := []struct {
		name string
		f    func(b *mil.Builder, x *mil.Var) *mil.Var
		spec mil.GradSpec
		want string
	}{
		{"wrt not an input", simple, mil.GradSpec{Wrt: []string{"q"}}, `wrt names "q", which is not an input`},
		{"wrt empty", simple, mil.GradSpec{}, "wrt is empty"},
		{"wrt twice", simple, mil.GradSpec{Wrt: []string{"x", "x"}}, `wrt names "x" twice`},
		{"save not a var", simple, mil.GradSpec{Wrt: []string{"x"}, Save: []string{"nope"}}, `save names "nope", which is not a var`},
		{"save an input", simple, mil.GradSpec{Wrt: []string{"x"}, Save: []string{"x"}}, "an input"},
		{"cotangent not an output", simple, mil.GradSpec{Wrt: []string{"x"}, Cotangents: []string{"x"}}, `cotangents names "x", which is not an output`},
		{"unreached", simple, mil.GradSpec{Wrt: []string{"u"}}, "u does not reach any output"},
		{"no rule", func(b *mil.Builder, x *mil.Var) *mil.Var { return b.Exp("e", x) }, mil.GradSpec{Wrt: []string{"x"}}, `op "e" (exp): mil.grad: no gradient rule for exp`},
		{"name taken", func(b *mil.Builder, x *mil.Var) *mil.Var { return b.Mul("y", b.Mul("d_x", x, x), x) }, mil.GradSpec{Wrt: []string{"x"}}, "d_x that the backward needs is taken"},
		{"variable exponent", func(b *mil.Builder, x *mil.Var) *mil.Var { return b.Pow("y", b.Mul("t", x, 0.5), x) }, mil.GradSpec{Wrt: []string{"x"}}, "only a constant exponent"},
	}
	for _, c := range cases {
		p, w := build(c.f)
		_, err := mil.Grad(p, w, c.spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestGradEligible: the backward of an ANE-style forward (fp32 I/O cast to fp16 at once, proven ops),
// packed as compiling packs it, uses proven ops only and leaves no result unused.
func TestGradEligible(t *testing.T) {
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP32, 1, 8, 1, 32))
	w := b.Input("w", mil.Tensor(mil.FP32, 1, 8, 1, 32))
	xh, wh := b.Cast("xh", x, "fp16"), b.Cast("wh", w, "fp16")
	in := map[string]*mil.Var{
		"x": b.Reshape("xm", xh, []int{1, 1, 8, 32}),
		"w": b.Reshape("wm", b.SliceBySize("wsl", wh, []int{0, 0, 0, 0}, []int{1, 8, 1, 8}), []int{1, 1, 8, 8}),
	}
	y := compositeForward(b, in)
	b.Output(b.Cast("y32", b.Reshape("yr", y, []int{1, 8, 1, 32}), "fp32"))
	p, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// A bare product: each operand's cotangent needs only the other, and replaying the one not needed
	// would leave dead code.
	b = mil.NewBuilder()
	x = b.Input("x", mil.Tensor(mil.FP32, 1, 32, 1, 32))
	w = b.Input("w", mil.Tensor(mil.FP32, 1, 32, 1, 32))
	xm := b.Reshape("xm", b.Cast("xh", x, "fp16"), []int{1, 1, 32, 32})
	wm := b.Reshape("wm", b.Cast("wh", w, "fp16"), []int{1, 1, 32, 32})
	b.Output(b.Cast("y32", b.Reshape("yr", b.Matmul("h", wm, xm, true, false), []int{1, 32, 1, 32}), "fp32"))
	bare, bw, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	// With one of the operands left out of wrt, nothing is computed for it (dead code is a finding).
	for i, wrt := range [][]string{{"x", "w"}, {"x"}, {"w"}, {"x"}, {"w"}} {
		p, ws := p, ws
		if i >= 3 {
			p, ws = bare, bw
		}
		gr, err := mil.Grad(p, ws, mil.GradSpec{Wrt: wrt})
		if err != nil {
			t.Fatal(err)
		}
		packed, _, _, err := ane.Pack(gr.Backward, gr.BackwardWeights)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ane.Eligible(packed).Findings {
			// fp32 I/O, as the forward declares it, is only ever unknown (rule io-fp16); so is the concat on
			// axis 2 that pads the gradient of this forward's slice of rows (rule op-form): the rest is proven.
			if f.Support != ane.Proven && !(f.Support == ane.Unknown && (f.Rule == ane.RuleIOFP16 || f.Rule == ane.RuleForm)) {
				t.Errorf("wrt %v: backward: %s (%s)", wrt, f, f.Rule)
			}
		}
		if t.Failed() {
			t.Fatalf("%s", mil.Print(gr.Backward))
		}
	}
}

// TestGradVars: the backward outputs the cotangents of named intermediates too, and joins the
// cotangents of slices that tile a var with one concat (no adds).
func TestGradVars(t *testing.T) {
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP32, 1, 6, 1, 8))
	w := b.Input("w", mil.Tensor(mil.FP32, 1, 1, 6, 6))
	qkv := b.Reshape("qkv", b.Matmul("qm", w, b.Reshape("xm", x, []int{1, 1, 6, 8}), false, false), []int{1, 6, 1, 8})
	q := b.SliceBySize("q", qkv, []int{0, 0, 0, 0}, []int{1, 2, 1, 8})
	k := b.SliceBySize("k", qkv, []int{0, 2, 0, 0}, []int{1, 2, 1, 8})
	v := b.SliceBySize("v", qkv, []int{0, 4, 0, 0}, []int{1, 2, 1, 8})
	b.Output(b.Mul("y", b.Sigmoid("s", b.Mul("qk", q, k)), v))
	p, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	gr, err := mil.Grad(p, ws, mil.GradSpec{Wrt: []string{"x"}, Vars: []string{"qkv"}})
	if err != nil {
		t.Fatal(err)
	}
	text := mil.Print(gr.Backward)
	if got := strings.Join(outputNames(gr.Backward), " "); got != "d_x d_qkv" {
		t.Errorf("outputs %q, want d_x d_qkv", got)
	}
	if n := strings.Count(text, " = concat("); n != 1 || strings.Contains(text, " = add(") {
		t.Errorf("the three slices' cotangents are not joined by one concat (%d concats):\n%s", n, text)
	}
	r := rand.New(rand.NewPCG(9, 9))
	xv, wv, dy := randVals(r, 48, -1, 1), randVals(r, 36, -1, 1), randVals(r, 16, -1, 1)
	out := evalProgram(t, fp32Backend(), gr.Backward, gr.BackwardWeights, map[string][]float32{"x": xv, "w": wv, "d_y": dy})
	// The host's d_qkv from the forward's values.
	fw := make([]float64, 48)
	for i := range 6 {
		for j := range 8 {
			for c := range 6 {
				fw[i*8+j] += float64(wv[i*6+c]) * float64(xv[c*8+j])
			}
		}
	}
	for j := range 8 {
		qv, kv, vv := fw[j], fw[16+j], fw[32+j]
		s := 1 / (1 + math.Exp(-qv*kv))
		g := float64(dy[j])
		ds := g * vv * s * (1 - s)
		for i, want := range []float64{ds * kv, ds * qv, g * s} {
			if got := float64(out["d_qkv"][2*8*i+j]); math.Abs(got-want) > 1e-5 {
				t.Errorf("d_qkv row %d col %d = %g, want %g", 2*i, j, got, want)
			}
		}
	}
	if _, err := mil.Grad(p, ws, mil.GradSpec{Wrt: []string{"x"}, Vars: []string{"w"}}); err == nil || !strings.Contains(err.Error(), "not an op result") {
		t.Errorf("an input in vars: %v", err)
	}
}

func outputNames(p *mil.Program) []string {
	var s []string
	for _, o := range p.Main().Outputs {
		s = append(s, o.Name)
	}
	return s
}

// p2 is x [1, 2, 4, 8] -> softmax over the last axis, reshaped to [1, 8, 1, 8] (sf), times x reshaped.
func p2(t *testing.T) *mil.Program {
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP32, 1, 2, 4, 8))
	sf := b.Reshape("sf", b.Softmax("sm", x, -1), []int{1, 8, 1, 8})
	b.Output(b.Mul("y", sf, b.Reshape("xr", x, []int{1, 8, 1, 8})))
	p, _, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
