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
// fp32, u [1,4,1,16] fp16. b and c share one input block; z and u one output band.
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

// TestPackLayout: the layout is computed from the declarations, and the packed program is eligible.
func TestPackLayout(t *testing.T) {
	p, w := packTestProgram(t)
	pp, _, l, err := ane.Pack(p, w)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.In.Type.String(); got != "tensor<fp32, [1, 8, 1, 64]>" {
		t.Errorf("packed input %s, want [1, 8, 1, 64] fp32 (a, then b over c in a 16-wide block)", got)
	}
	if got := l.Out.Type.String(); got != "tensor<fp32, [1, 12, 1, 32]>" {
		t.Errorf("packed output %s, want [1, 12, 1, 32] fp32 (y, then z beside u)", got)
	}
	want := map[string][2]int{"a": {0, 0}, "b": {0, 32}, "c": {4, 32}, "y": {0, 0}, "z": {8, 0}, "u": {8, 16}}
	for _, pt := range append(slices.Clone(l.In.Parts), l.Out.Parts...) {
		if at := [2]int{pt.Channel, pt.Column}; at != want[pt.Name] {
			t.Errorf("part %s at channel, column %v, want %v", pt.Name, at, want[pt.Name])
		}
	}
	for _, f := range ane.Eligible(pp).Findings {
		if f.Support != ane.Proven {
			t.Errorf("packed program: %s", f)
		}
	}
	if t.Failed() {
		t.Log(mil.Print(pp))
	}
}

// TestPackedRunsAsDeclared: the packed kernel, fed and read by part, gives the bits of the program run
// with its ports as declared (the emulator in relaxed mode), in each binding; a part's writes stay in
// its window.
func TestPackedRunsAsDeclared(t *testing.T) {
	p, w := packTestProgram(t)
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
		for _, name := range []string{"a", "b", "c"} {
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
		for _, name := range []string{"y", "z", "u"} {
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
	// A part's write touches its window alone.
	in := strict.Inputs()[0]
	before := make([]float32, in.Channels()*in.Spatial())
	if err := in.ReadChannels(0, in.Channels(), before); err != nil {
		t.Fatal(err)
	}
	c, _ := strict.Input("c")
	if err := c.Fill(7); err != nil {
		t.Fatal(err)
	}
	after := make([]float32, len(before))
	if err := in.ReadChannels(0, in.Channels(), after); err != nil {
		t.Fatal(err)
	}
	for ch := range in.Channels() {
		for col := range in.Spatial() {
			i := ch*in.Spatial() + col
			inC := ch >= 4 && ch < 8 && col >= 32 && col < 48
			if inC && after[i] != 7 || !inC && after[i] != before[i] {
				t.Fatalf("after filling part c: packed [%d, %d] = %g (was %g)", ch, col, after[i], before[i])
			}
		}
	}
	if _, err := strict.Input("nope"); err == nil || !strings.Contains(err.Error(), "a, b, c") {
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
