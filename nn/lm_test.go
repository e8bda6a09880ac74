package nn

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

func TestSoftmaxCrossEntropyFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rows, cols := 5, 7
	z := randNorm(rng, rows*cols, 2)
	targets := []int{0, 6, 3, 3, 1}
	loss := func(x []float64) float64 {
		var s float64
		for r := range rows {
			row := x[r*cols : (r+1)*cols]
			var e float64
			for _, v := range row {
				e += math.Exp(v)
			}
			s += math.Log(e) - row[targets[r]]
		}
		return s
	}
	want := loss(to64(z))
	const scale = 0.25
	grad := make([]float32, len(z))
	got, err := SoftmaxCrossEntropy(grad, z, targets, rows, cols, scale)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Fatalf("loss %g, want %g", got, want)
	}
	num := numGrad(loss, to64(z))
	for i := range num {
		num[i] *= scale
	}
	closeTo(t, "grad", grad, num, 1e-5, 1e-7)
	// In place: the logits become their gradient, the loss is the same.
	zc := append([]float32(nil), z...)
	got2, err := SoftmaxCrossEntropy(zc, zc, targets, rows, cols, scale)
	if err != nil || got2 != got {
		t.Fatalf("in place: loss %g (%v), want %g", got2, err, got)
	}
	for i := range zc {
		if zc[i] != grad[i] {
			t.Fatalf("in place grad[%d] = %g, want %g", i, zc[i], grad[i])
		}
	}
	// Huge logits stay finite (log-sum-exp).
	big := []float32{1e4, -1e4, 0}
	if l, err := SoftmaxCrossEntropy(nil, big, []int{1}, 1, 3, 1); err != nil || math.Abs(l-2e4) > 1e-6 {
		t.Fatalf("huge logits: %g, %v; want 2e4", l, err)
	}
}

func TestSoftmaxCrossEntropyErrors(t *testing.T) {
	z := make([]float32, 6)
	for _, c := range []struct {
		name    string
		targets []int
		rows    int
	}{{"count", []int{0}, 2}, {"range", []int{0, 3}, 2}, {"negative", []int{-1, 0}, 2}, {"rows", nil, 0}} {
		if _, err := SoftmaxCrossEntropy(nil, z, c.targets, c.rows, 3, 1); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
	if _, err := SoftmaxCrossEntropy(make([]float32, 2), z, []int{0, 0}, 2, 3, 1); err == nil {
		t.Error("short grad: no error")
	}
}

func TestEmbeddingAndBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vocab, dim := 6, 4
	table := randNorm(rng, vocab*dim, 1)
	ids := []int{5, 0, 5, 2}
	T := len(ids)
	out := make([]float32, dim*T)
	if err := Embedding(out, table, ids, vocab, dim); err != nil {
		t.Fatal(err)
	}
	for c := range dim {
		for i, id := range ids {
			if out[c*T+i] != table[id*dim+c] {
				t.Fatalf("out[%d, %d] = %g, want table[%d, %d] = %g", c, i, out[c*T+i], id, c, table[id*dim+c])
			}
		}
	}
	// The backward of f(table) = sum(w * embedding(table)) by finite differences.
	w := randNorm(rng, dim*T, 1)
	f := func(x []float64) float64 {
		var s float64
		for c := range dim {
			for i, id := range ids {
				s += float64(w[c*T+i]) * x[id*dim+c]
			}
		}
		return s
	}
	dt := make([]float32, vocab*dim)
	dt[0] = 1 // accumulated into
	if err := EmbeddingBackward(dt, w, ids, vocab, dim); err != nil {
		t.Fatal(err)
	}
	num := numGrad(f, to64(table))
	num[0]++
	closeTo(t, "dtable", dt, num, 1e-6, 1e-6)
	if err := Embedding(out, table, []int{6}, vocab, dim); err == nil {
		t.Error("id 6 of 6: no error")
	}
	if err := EmbeddingBackward(dt, w[:3], ids, vocab, dim); err == nil {
		t.Error("short dy: no error")
	}
	if err := Embedding(out, table, nil, vocab, dim); err == nil {
		t.Error("no ids: no error")
	}
}

// TestRoPETables rotates each adjacent pair as a complex number x[2i] + i x[2i+1] times
// exp(i t theta^(-2i/head_dim)) and compares with the tables' rotation.
func TestRoPETables(t *testing.T) {
	headDim, heads, seq := 8, 3, 5
	tab := make([]float32, heads*headDim*seq)
	if err := RoPETables(tab, headDim, heads, seq, 10000); err != nil {
		t.Fatal(err)
	}
	half := heads * headDim / 2
	rng := rand.New(rand.NewPCG(5, 6))
	for h := range heads {
		for i := range headDim / 2 {
			for p := range seq {
				x := complex(rng.NormFloat64(), rng.NormFloat64())
				want := x * cmplx.Exp(complex(0, float64(p)/math.Pow(10000, float64(2*i)/float64(headDim))))
				r := h*headDim/2 + i
				c, s := float64(tab[r*seq+p]), float64(tab[(half+r)*seq+p])
				re, im := real(x)*c-imag(x)*s, real(x)*s+imag(x)*c
				if cmplx.Abs(complex(re, im)-want) > 1e-6*cmplx.Abs(want) {
					t.Fatalf("head %d pair %d pos %d: %v, want %v", h, i, p, complex(re, im), want)
				}
			}
		}
	}
	if err := RoPETables(tab, 7, 1, 2, 10000); err == nil {
		t.Error("odd head_dim: no error")
	}
	if err := RoPETables(tab[:3], headDim, heads, seq, 10000); err == nil {
		t.Error("short out: no error")
	}
	if err := RoPETables(tab, headDim, heads, seq, 0); err == nil {
		t.Error("theta 0: no error")
	}
}

func TestAllFinite(t *testing.T) {
	if !AllFinite([]float32{1, -2, 0}, nil, []float32{math.MaxFloat32}) {
		t.Error("finite values: false")
	}
	for _, v := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		if AllFinite([]float32{1}, []float32{0, v}) {
			t.Errorf("%g: true", v)
		}
	}
}
