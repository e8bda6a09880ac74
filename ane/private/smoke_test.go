package private

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/mil"
)

func TestSmokeOnEmulator(t *testing.T) {
	runSmoke(t, emulator.New(emulator.Options{}))
}

// smokeShape is the tensor type of the smoke programs: 16 channels of 32 fp16 values, 64-byte rows.
var smokeShape = mil.Tensor(mil.FP16, 1, 16, 1, 32)

// anchored appends to f's ops y = conv(identity, r) of type t, a 1x1 conv with an identity weight and every
// optional argument spelled out as the reference writes it, and makes y the output. The ANE may refuse a
// purely elementwise program at load; the conv anchors it and changes no value (each output is one fp16
// value times 1, accumulated in fp32 and rounded once).
func anchored(f *mil.Func, r string, t mil.Type) {
	c := t.Shape[1]
	eye := make([]float64, c*c)
	for i := range c {
		eye[i*c+i] = 1
	}
	wt := mil.Tensor(mil.FP16, c, c, 1, 1)
	consts := []struct {
		name string
		val  *mil.Value
	}{
		{"pt", mil.StringValue("valid")},
		{"st", mil.IntsValue(1, 1)},
		{"pd", mil.IntsValue(0, 0, 0, 0)},
		{"dl", mil.IntsValue(1, 1)},
		{"gr", mil.ScalarValue(mil.Int32, 1)},
		{"eye", mil.TensorValue(mil.FP16, wt.Shape, eye)},
	}
	conv := &mil.Op{Kind: "conv", Attrs: []*mil.Attr{nameAttr("y")}, Results: []*mil.Var{{Name: "y", Type: t}}}
	for _, k := range consts {
		f.Ops = append(f.Ops, &mil.Op{Kind: "const", Attrs: []*mil.Attr{nameAttr(k.name), {Name: "val", Value: k.val}},
			Results: []*mil.Var{{Name: k.name, Type: k.val.Type}}})
	}
	for _, a := range [][2]string{{"dilations", "dl"}, {"groups", "gr"}, {"pad", "pd"}, {"pad_type", "pt"}, {"strides", "st"}, {"weight", "eye"}, {"x", r}} {
		conv.Args = append(conv.Args, &mil.Arg{Name: a[0], Operands: []mil.Operand{ref(a[1])}})
	}
	f.Ops = append(f.Ops, conv)
	f.Outputs = []mil.Ref{{Name: "y"}}
}

// doubleProgram is main(x) -> y = x * 2, with the 2 a scalar const, anchored by a conv.
func doubleProgram() *mil.Program {
	two := &mil.Op{
		Kind:    "const",
		Attrs:   []*mil.Attr{nameAttr("two"), {Name: "val", Value: &mil.Value{Type: mil.Scalar(mil.FP16), Nums: []float64{2}}}},
		Results: []*mil.Var{{Name: "two", Type: mil.Scalar(mil.FP16)}},
	}
	mul := &mil.Op{
		Kind:    "mul",
		Args:    []*mil.Arg{{Name: "x", Operands: []mil.Operand{ref("x")}}, {Name: "y", Operands: []mil.Operand{ref("two")}}},
		Attrs:   []*mil.Attr{nameAttr("r")},
		Results: []*mil.Var{{Name: "r", Type: smokeShape}},
	}
	f := &mil.Func{
		Name: "main", Opset: "ios18",
		Inputs: []*mil.Var{{Name: "x", Type: smokeShape}},
		Ops:    []*mil.Op{two, mul},
	}
	anchored(f, "r", smokeShape)
	return &mil.Program{Version: "1.3", Funcs: []*mil.Func{f}}
}

// addWeightsProgram is main(x) -> y = x + w, with w read from the weight file w.bin, anchored by a conv.
func addWeightsProgram() (*mil.Program, mil.Weights, []int) {
	w := make([]int, smokeShape.NumElements())
	bits := make([]uint16, len(w))
	for i := range w {
		w[i] = (7 * i) % 500
		bits[i] = fp16Int(w[i])
	}
	wc := &mil.Op{
		Kind: "const",
		Attrs: []*mil.Attr{nameAttr("w"), {Name: "val", Value: &mil.Value{
			Type: smokeShape, Blob: &mil.BlobRef{Path: "@model_path/weights/w.bin", Offset: 64}}}},
		Results: []*mil.Var{{Name: "w", Type: smokeShape}},
	}
	add := &mil.Op{
		Kind:    "add",
		Args:    []*mil.Arg{{Name: "x", Operands: []mil.Operand{ref("x")}}, {Name: "y", Operands: []mil.Operand{ref("w")}}},
		Attrs:   []*mil.Attr{nameAttr("r")},
		Results: []*mil.Var{{Name: "r", Type: smokeShape}},
	}
	f := &mil.Func{
		Name: "main", Opset: "ios18",
		Inputs: []*mil.Var{{Name: "x", Type: smokeShape}},
		Ops:    []*mil.Op{wc, add},
	}
	anchored(f, "r", smokeShape)
	p := &mil.Program{Version: "1.3", Funcs: []*mil.Func{f}}
	return p, mil.Weights{"@model_path/weights/w.bin": testBlob(bits)}, w
}

// writeInts stores small integers as fp16 in s.
func writeInts(t *testing.T, s *ane.Surface, vals []int) {
	t.Helper()
	m := s.Memory()
	if err := m.Lock(false); err != nil {
		t.Fatal(err)
	}
	for i, v := range vals {
		binary.LittleEndian.PutUint16(m.Bytes()[2*i:], fp16Int(v))
	}
	if err := m.Unlock(false); err != nil {
		t.Fatal(err)
	}
}

// checkInts compares the fp16 values of s with small integers, exactly.
func checkInts(t *testing.T, s *ane.Surface, want []int) {
	t.Helper()
	m := s.Memory()
	if err := m.Lock(true); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(true)
	bad := 0
	for i, v := range want {
		if got := binary.LittleEndian.Uint16(m.Bytes()[2*i:]); got != fp16Int(v) {
			if bad < 5 {
				t.Errorf("element %d: fp16 bits %#04x, want %#04x (%d)", i, got, fp16Int(v), v)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements wrong", bad, len(want))
	}
}

// runSmoke compiles and runs the two smoke programs on b and checks their results exactly. It runs on
// the ANE in private_darwin_test.go and on the emulator everywhere, which checks the expectations.
func runSmoke(t *testing.T, b ane.Backend) {
	x := make([]int, smokeShape.NumElements())
	for i := range x {
		x[i] = i % 512
	}

	t.Run("double", func(t *testing.T) {
		before := b.Compiles()
		k, err := b.Compile(doubleProgram(), nil)
		if err != nil {
			t.Fatalf("compile: %v\nMIL:\n%s", err, mil.Print(doubleProgram()))
		}
		if got := b.Compiles() - before; got != 1 {
			t.Errorf("Compiles rose by %d, want 1", got)
		}
		writeInts(t, k.Inputs()[0], x)
		if err := k.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := make([]int, len(x))
		for i, v := range x {
			want[i] = 2 * v
		}
		checkInts(t, k.Outputs()[0], want)
		logEvalTime(t, k)
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		if err := k.Eval(context.Background()); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("Eval after Close: %v", err)
		}
	})

	t.Run("weights", func(t *testing.T) {
		p, w, wv := addWeightsProgram()
		k, err := b.Compile(p, w)
		if err != nil {
			t.Fatalf("compile: %v\nMIL:\n%s", err, mil.Print(p))
		}
		defer k.Close()
		writeInts(t, k.Inputs()[0], x)
		if err := k.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := make([]int, len(x))
		for i := range x {
			want[i] = x[i] + wv[i]
		}
		checkInts(t, k.Outputs()[0], want)
	})
	t.Logf("compiles in this process: %d", b.Compiles())
}

// logEvalTime reports the mean time of 100 evals; it is information for the report, never a check.
func logEvalTime(t *testing.T, k ane.Kernel) {
	const n = 100
	start := time.Now()
	for range n {
		if err := k.Eval(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("mean Eval time over %d evals: %v", n, time.Since(start)/n)
}
