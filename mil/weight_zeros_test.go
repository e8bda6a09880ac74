package mil

import (
	"bytes"
	"strings"
	"testing"
)

// TestWeightZeros checks that WeightZeros builds the program Weight builds, with weight files of the same
// size and metadata whose data is zero, and reports the errors Weight reports.
func TestWeightZeros(t *testing.T) {
	build := func(zeros bool) (string, Weights) {
		b := NewBuilder()
		x := b.Input("x", Tensor(FP16, 1, 3, 1, 2))
		vals := []float32{1, 2, 3, 4, 5, 6}
		var w1, w2 *Var
		if zeros {
			w1 = b.WeightZeros("w1", FP16, []int{1, 3, 1, 2}, len(vals))
			w2 = b.WeightZeros("w2", FP32, []int{1, 3, 1, 2}, len(vals))
		} else {
			w1 = b.Weight("w1", FP16, []int{1, 3, 1, 2}, vals)
			w2 = b.Weight("w2", FP32, []int{1, 3, 1, 2}, vals)
		}
		b.Output(b.Add("s", b.Mul("m", x, w1), b.Cast("c", w2, "fp16")))
		p, w, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckWeights(p, w); err != nil {
			t.Fatalf("CheckWeights: %v", err)
		}
		return Print(p), w
	}
	text, full := build(false)
	ztext, zero := build(true)
	if text != ztext {
		t.Errorf("program text differs:\n%s\nwant\n%s", ztext, text)
	}
	for path, f := range full {
		z := zero[path]
		if len(z) != len(f) {
			t.Fatalf("%s: %d bytes, want %d", path, len(z), len(f))
		}
		dt, data, err := ReadBlob(z, blobAlign)
		if err != nil {
			t.Fatal(err)
		}
		if _, fdata, _ := ReadBlob(f, blobAlign); dt == Invalid || len(data) != len(fdata) {
			t.Errorf("%s: blob %s of %d bytes, want %d", path, dt, len(data), len(fdata))
		}
		if !bytes.Equal(data, make([]byte, len(data))) {
			t.Errorf("%s: data not zero", path)
		}
		// Outside the data, the file is Weight's byte for byte.
		if start := 2 * blobAlign; !bytes.Equal(z[:start], f[:start]) || !bytes.Equal(z[start+len(data):], f[start+len(data):]) {
			t.Errorf("%s: header or padding differs from Weight's", path)
		}
	}
	for _, tc := range []struct {
		name  string
		dt    DType
		shape []int
		n     int
		want  string
	}{
		{"size", FP16, []int{2, 2}, 3, `op "W" (const): weight tensor<fp16, [2, 2]> needs 4 values, got 3`},
		{"dtype", Int8, []int{2}, 2, `cannot store float data as int8`},
		{"shape", FP16, []int{0, 2}, 0, `weight shape [0 2]: want positive dims`},
	} {
		b := NewBuilder()
		if v := b.WeightZeros("W", tc.dt, tc.shape, tc.n); v != nil || b.Err() == nil || !strings.Contains(b.Err().Error(), tc.want) {
			t.Errorf("%s: %v, error %v, want one containing %q", tc.name, v, b.Err(), tc.want)
		}
	}
}

// TestCheckWeightsDecodesNothing checks that CheckWeights reads metadata only: checking a program with a
// large weight allocates nothing.
func TestCheckWeightsDecodesNothing(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP16, 1, 512, 1, 512))
	b.Output(b.Mul("m", x, b.WeightZeros("w", FP16, []int{1, 512, 1, 512}, 512*512)))
	p, w, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(5, func() {
		if err := CheckWeights(p, w); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("CheckWeights made %v allocations, want 0", n)
	}
}
