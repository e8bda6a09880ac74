package ane_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/mil"
)

// packTestProgram has three inputs of two widths and dtypes and three outputs of two widths, channel
// counts and dtypes: a [1,8,1,32] fp32, b and c [1,4,1,16] (fp32, fp16); y [1,8,1,32] fp32, z [1,4,1,16]
// fp32, u [1,4,1,16] fp16. The smallest packed input has 4 channels, a flattened into 64 columns of
// them; z and u share one output band.
func packTestProgram(t *testing.T) (*mil.Program, mil.Weights) {
	b := mil.NewBuilder()
	a := b.Cast("ah", b.Input("a", mil.Tensor(mil.FP32, 1, 8, 1, 32)), "fp16")
	bb := b.Cast("bh", b.Input("b", mil.Tensor(mil.FP32, 1, 4, 1, 16)), "fp16")
	c := b.Input("c", mil.Tensor(mil.FP16, 1, 4, 1, 16))
	w := make([]float32, 8*8)
	for i := range w {
		w[i] = float32(i%9) / 8
	}
	y := b.Conv("yc", a, b.Weight("w", mil.FP16, []int{8, 8, 1, 1}, w), nil)
	z := b.Mul("zm", bb, c)
	u := b.Add("u", b.Sigmoid("sg", bb), c)
	b.Output(b.Cast("y", y, "fp32"), b.Cast("z", z, "fp32"), u)
	p, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p, ws
}

// stackTestProgram has x [1,8,1,32] and k, v [1,4,1,32] (fp16), which pack into 8 channels with k over v
// in one block (as small as flattening x into 4 channels, and flattening nothing), and outputs x*x and
// k*v.
func stackTestProgram(t *testing.T) (*mil.Program, mil.Weights) {
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP16, 1, 8, 1, 32))
	k := b.Input("k", mil.Tensor(mil.FP16, 1, 4, 1, 32))
	v := b.Input("v", mil.Tensor(mil.FP16, 1, 4, 1, 32))
	w := make([]float32, 64)
	for i := range 8 {
		w[i*9] = 1
	}
	b.Output(b.Conv("xx", b.Mul("x2", x, x), b.Weight("w", mil.FP16, []int{8, 8, 1, 1}, w), nil), b.Mul("kv", k, v))
	p, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p, ws
}

// TestPackLayout: the layout is computed from the declarations, and the packed program is eligible.
func TestPackLayout(t *testing.T) {
	for _, c := range []struct {
		build    func(*testing.T) (*mil.Program, mil.Weights)
		in, out  string
		at, flat map[string][2]int
	}{
		{packTestProgram, "tensor<fp32, [1, 4, 1, 96]>", "tensor<fp32, [1, 12, 1, 32]>",
			map[string][2]int{"a": {0, 0}, "b": {0, 64}, "c": {0, 80}, "y": {0, 0}, "z": {8, 0}, "u": {8, 16}}, map[string][2]int{"a": {64}}},
		{stackTestProgram, "tensor<fp16, [1, 8, 1, 64]>", "tensor<fp16, [1, 12, 1, 32]>",
			map[string][2]int{"x": {0, 0}, "k": {0, 32}, "v": {4, 32}, "xx": {0, 0}, "kv": {8, 0}}, nil},
	} {
		p, w := c.build(t)
		pp, _, l, err := ane.Pack(p, w)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.In.Type.String(); got != c.in {
			t.Errorf("packed input %s, want %s", got, c.in)
		}
		if got := l.Out.Type.String(); got != c.out {
			t.Errorf("packed output %s, want %s", got, c.out)
		}
		for _, pt := range append(slices.Clone(l.In.Parts), l.Out.Parts...) {
			if at := [2]int{pt.Channel, pt.Column}; at != c.at[pt.Name] {
				t.Errorf("part %s at channel, column %v, want %v", pt.Name, at, c.at[pt.Name])
			}
			if pt.Flat != c.flat[pt.Name][0] {
				t.Errorf("part %s flattened into %d columns, want %d", pt.Name, pt.Flat, c.flat[pt.Name][0])
			}
		}
		for _, f := range ane.Eligible(pp).Findings {
			fp32IO := f.Rule == ane.RuleIOFP16 && f.Support == ane.Unknown && strings.Contains(c.in, "fp32") // fp32 ports: known only as unknown
			if f.Support != ane.Proven && !fp32IO {
				t.Errorf("packed program: %s", f)
			}
		}
		if t.Failed() {
			t.Fatal(mil.Print(pp))
		}
	}
}

// TestPackedRunsAsDeclared: the packed kernel, fed and read by part, gives the bits of the program run
// with its ports as declared (the emulator in relaxed mode), in each binding; a part's writes stay in
// its window.
func TestPackedRunsAsDeclared(t *testing.T) {
	packedRunsAsDeclared(t, stackTestProgram, []string{"x", "k", "v"}, []string{"xx", "kv"})
	packedRunsAsDeclared(t, packTestProgram, []string{"a", "b", "c"}, []string{"y", "z", "u"})
	packedRunsAsDeclared(t, wideTestProgram, []string{"p", "q", "r"}, []string{"pq", "qr"}) // packed within the width cap
}

// wideTestProgram has three inputs [1, 8, 1, 8192], too wide side by side (24576 columns) for the
// 16384 columns an M1 to M3 takes: packed for every chip they stack into more channels.
func wideTestProgram(t *testing.T) (*mil.Program, mil.Weights) {
	b := mil.NewBuilder()
	var in []*mil.Var
	for _, n := range []string{"p", "q", "r"} {
		in = append(in, b.Input(n, mil.Tensor(mil.FP16, 1, 8, 1, 8192)))
	}
	w := make([]float32, 64)
	for i := range 8 {
		w[i*9] = 0.5
	}
	b.Output(b.Conv("pq", b.Mul("m", in[0], in[1]), b.Weight("w", mil.FP16, []int{8, 8, 1, 1}, w), nil), b.Add("qr", in[1], in[2]))
	p, ws, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return p, ws
}

// TestPackWithinChipCaps: the wide program's input takes more channels (its parts stacked) under every
// chip's caps and 8 (its parts side by side) on an M4; an input no layout fits is an error naming the parts and the rule.
func TestPackWithinChipCaps(t *testing.T) {
	p, w := wideTestProgram(t)
	m4, _ := ane.ParseChip("m4")
	for _, c := range []struct {
		chip       ane.Chip
		ch, maxCol int
	}{{ane.ChipAll, 16, 16384}, {m4, 8, 24576}} {
		pp, _, l, err := ane.PackOn(p, w, c.chip)
		if err != nil {
			t.Fatal(err)
		}
		if sh := l.In.Type.Shape; sh[1] < c.ch || sh[3] > c.maxCol || c.chip.Name == "m4" && sh[1] != c.ch {
			t.Errorf("chip %s: packed input %v, want %d channels (at least, under all) and at most %d columns", c.chip.Name, sh, c.ch, c.maxCol)
		}
		if err := ane.EligibleOn(pp, c.chip).Err(); err != nil {
			t.Errorf("chip %s: %v", c.chip.Name, err)
		}
	}
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP16, 1, 3, 1, 40000)) // 3 channels: no flattening fills whole rows within the cap
	y := b.Input("y", mil.Tensor(mil.FP16, 1, 3, 1, 32))
	b.Output(b.Add("s", b.SliceBySize("xs", x, []int{0, 0, 0, 0}, []int{1, 3, 1, 32}), y))
	bad, bw, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ane.PackOn(bad, bw, ane.ChipAll); err == nil || !strings.Contains(err.Error(), "the inputs x, y fit no packed surface within chip all's caps") {
		t.Errorf("an input too wide for any layout: %v", err)
	}
}

func packedRunsAsDeclared(t *testing.T, build func(*testing.T) (*mil.Program, mil.Weights), ins, outs []string) {
	p, w := build(t)
	strict, err := emulator.New(emulator.Options{}).Compile(p, w)
	if err != nil {
		t.Fatal(err)
	}
	defer strict.Close()
	declared, err := emulator.New(emulator.Options{Relaxed: true}).Compile(p, w)
	if err != nil {
		t.Fatal(err)
	}
	defer declared.Close()
	if len(strict.Inputs()) != 1 || len(strict.Outputs()) != 1 {
		t.Fatalf("strict kernel has %d inputs, %d outputs; want one each", len(strict.Inputs()), len(strict.Outputs()))
	}
	other, err := strict.Bind()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, bd := range []ane.Binding{strict, other} {
		for _, name := range ins {
			ps, err := bd.Input(name)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := declared.Input(name)
			if err != nil {
				t.Fatal(err)
			}
			if ps.Channels() != ds.Channels() || ps.Spatial() != ds.Spatial() {
				t.Fatalf("part %s is %dx%d, declared %dx%d", name, ps.Channels(), ps.Spatial(), ds.Channels(), ds.Spatial())
			}
			v := make([]float32, ps.Channels()*ps.Spatial())
			for i := range v {
				v[i] = float32(r.NormFloat64())
			}
			if err := ps.WriteChannels(0, ps.Channels(), v); err != nil {
				t.Fatal(err)
			}
			if err := ds.WriteChannels(0, ds.Channels(), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := bd.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := declared.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, name := range outs {
			ps, _ := bd.Output(name)
			ds, _ := declared.Output(name)
			got, want := make([]float32, ps.Channels()*ps.Spatial()), make([]float32, ds.Channels()*ds.Spatial())
			if err := ps.ReadChannels(0, ps.Channels(), got); err != nil {
				t.Fatal(err)
			}
			if err := ds.ReadChannels(0, ds.Channels(), want); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("output %s differs from the program run as declared", name)
			}
		}
	}
	// A part's write touches its window alone: the other parts read what they did.
	last := ins[len(ins)-1]
	before := map[string][]float32{}
	read := func(name string) []float32 {
		ps, _ := strict.Input(name)
		v := make([]float32, ps.Channels()*ps.Spatial())
		if err := ps.ReadChannels(0, ps.Channels(), v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, n := range ins {
		before[n] = read(n)
	}
	lp, _ := strict.Input(last)
	if err := lp.Fill(7); err != nil {
		t.Fatal(err)
	}
	for _, n := range ins {
		got := read(n)
		if n == last {
			if slices.ContainsFunc(got, func(x float32) bool { return x != 7 }) {
				t.Errorf("part %s after Fill(7): %v", n, got)
			}
		} else if !slices.Equal(got, before[n]) {
			t.Errorf("filling part %s changed part %s", last, n)
		}
	}
	if _, err := strict.Input("nope"); err == nil || !strings.Contains(err.Error(), strings.Join(ins, ", ")) {
		t.Errorf("unknown part: %v", err)
	}
	if _, err := strict.Output("a"); err == nil {
		t.Errorf("an input asked for as an output: no error")
	}
}

// TestPackErrors: a part the layout cannot take names itself and the rule.
func TestPackErrors(t *testing.T) {
	b := mil.NewBuilder()
	x := b.Input("x", mil.Tensor(mil.FP16, 1, 4, 32))
	y := b.Input("y", mil.Tensor(mil.FP16, 1, 4, 32))
	b.Output(b.Add("s", x, y))
	p, w, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ane.Pack(p, w); err == nil || !strings.Contains(err.Error(), "input x") || !strings.Contains(err.Error(), ane.RuleIORank) {
		t.Errorf("rank-3 part: %v", err)
	}
}
