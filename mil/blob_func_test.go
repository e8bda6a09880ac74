package mil

import (
	"bytes"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// funcTestValues returns n values with NaNs of several payloads and signs, infinities, fp16 ties and
// subnormals mixed among normal values.
func funcTestValues(n int) []float32 {
	r := rand.New(rand.NewPCG(5, 6))
	special := []float32{
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00123), math.Float32frombits(0x7fffffff),
		float32(math.Inf(1)), float32(math.Inf(-1)), 1 + 1.0/2048, 1 + 3.0/2048, 6e-8, -3e-5, 70000, 0,
	}
	vals := make([]float32, n)
	for i := range vals {
		if r.IntN(7) == 0 {
			vals[i] = special[r.IntN(len(special))]
		} else {
			vals[i] = float32(r.NormFloat64())
		}
	}
	return vals
}

// AddFloat32Func gives the same file bytes as AddFloat32s of the same values, after another blob, for
// every float dtype, for sizes below, at and across chunk boundaries and for units that divide the
// chunk or not, or are larger than it; its fill calls cover [0, n) once, in chunks of whole units.
func TestAddFloat32Func(t *testing.T) {
	sizes := []int{0, 1, 7, funcChunk - 1, funcChunk, funcChunk + 1, 3*funcChunk + 17}
	units := []int{1, 3, 4800, funcChunk + 5}
	prefix := funcTestValues(5)
	for _, dt := range []DType{FP16, BF16, FP32} {
		for _, n := range sizes {
			vals := funcTestValues(n)
			want := NewBlobWriter()
			if _, err := want.AddFloat32s(dt, prefix); err != nil {
				t.Fatal(err)
			}
			wantOff, err := want.AddFloat32s(dt, vals)
			if err != nil {
				t.Fatal(err)
			}
			for _, unit := range units {
				chunk := max(1, funcChunk/unit) * unit
				var mu sync.Mutex
				var ranges [][2]int
				got := NewBlobWriter()
				if _, err := got.AddFloat32s(dt, prefix); err != nil {
					t.Fatal(err)
				}
				off, err := got.AddFloat32Func(dt, n, unit, func(lo, hi int, dst []float32) {
					if len(dst) != hi-lo {
						t.Errorf("%s n=%d unit=%d: fill [%d, %d) got %d values of room", dt, n, unit, lo, hi, len(dst))
						return
					}
					copy(dst, vals[lo:hi])
					mu.Lock()
					ranges = append(ranges, [2]int{lo, hi})
					mu.Unlock()
				})
				if err != nil {
					t.Fatalf("%s n=%d unit=%d: %v", dt, n, unit, err)
				}
				if off != wantOff || !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Fatalf("%s n=%d unit=%d: file (blob at %d) differs from AddFloat32s's (blob at %d)", dt, n, unit, off, wantOff)
				}
				slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
				next := 0
				for _, r := range ranges {
					if r[0] != next || r[1] <= r[0] || r[1]-r[0] > chunk || r[0]%unit != 0 || (r[1] != n && r[1]%unit != 0) {
						t.Fatalf("%s n=%d unit=%d: fill ranges %v are not consecutive chunks of whole units", dt, n, unit, ranges)
					}
					next = r[1]
				}
				if next != n {
					t.Fatalf("%s n=%d unit=%d: fill ranges %v do not end at n", dt, n, unit, ranges)
				}
			}
		}
	}
}

// AddFloat32Func rejects bad arguments and then leaves the file as it was.
func TestAddFloat32FuncErrors(t *testing.T) {
	fill := func(lo, hi int, dst []float32) {}
	tests := []struct {
		dt      DType
		n, unit int
		fill    func(lo, hi int, dst []float32)
		want    string
	}{
		{Int8, 4, 1, fill, "cannot store float data as int8"},
		{FP16, -1, 1, fill, "negative value count -1"},
		{FP16, 4, 0, fill, "chunk unit 0"},
		{FP32, 4, 1, nil, "no fill function"},
	}
	for _, tc := range tests {
		w := NewBlobWriter()
		before := slices.Clone(w.Bytes())
		_, err := w.AddFloat32Func(tc.dt, tc.n, tc.unit, tc.fill)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s n=%d unit=%d: error %v, want one containing %q", tc.dt, tc.n, tc.unit, err, tc.want)
		}
		if !bytes.Equal(w.Bytes(), before) || w.Count() != 0 {
			t.Errorf("%s n=%d unit=%d: the failed call changed the file", tc.dt, tc.n, tc.unit)
		}
	}
}

// Builder.WeightFunc gives the program text and weight file that Weight gives for the same values, and
// reports a bad shape or dtype as Weight does.
func TestBuilderWeightFunc(t *testing.T) {
	vals := funcTestValues(3 * 5 * 7)
	build := func(add func(b *Builder) *Var) (string, []byte) {
		t.Helper()
		b := NewBuilder()
		b.Output(b.Cast("c", add(b), "fp32"))
		prog, ws, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return Print(prog), ws[WeightPath("w")]
	}
	text1, file1 := build(func(b *Builder) *Var { return b.Weight("w", FP16, []int{3, 5, 7}, vals) })
	text2, file2 := build(func(b *Builder) *Var {
		return b.WeightFunc("w", FP16, []int{3, 5, 7}, 7, func(lo, hi int, dst []float32) { copy(dst, vals[lo:hi]) })
	})
	if text1 != text2 || !bytes.Equal(file1, file2) {
		t.Errorf("WeightFunc differs from Weight:\n%s\n%s", text1, text2)
	}
	fill := func(lo, hi int, dst []float32) {}
	for _, tc := range []struct {
		dt    DType
		shape []int
		want  string
	}{
		{FP16, []int{2, 0}, `op "w" (const): weight shape [2 0]: want positive dims`},
		{FP16, nil, `weight shape []: want positive dims`},
		{Int8, []int{2}, `op "w" (const): cannot store float data as int8`},
	} {
		b := NewBuilder()
		if v := b.WeightFunc("w", tc.dt, tc.shape, 1, fill); v != nil || b.Err() == nil || !strings.Contains(b.Err().Error(), tc.want) {
			t.Errorf("%s %v: %v, error %v, want one containing %q", tc.dt, tc.shape, v, b.Err(), tc.want)
		}
	}
}
