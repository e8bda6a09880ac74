package cpu

import (
	"math"
	"testing"
)

func TestClip(t *testing.T) {
	g := []float32{-3, -0.5, 0, 2, 5, float32(math.NaN())}
	if err := ClipByValue(g, 1); err != nil {
		t.Fatal(err)
	}
	want := []float32{-1, -0.5, 0, 1, 1}
	for i, w := range want {
		if g[i] != w {
			t.Fatalf("ClipByValue: %v, want %v", g, want)
		}
	}
	if !math.IsNaN(float64(g[5])) {
		t.Error("ClipByValue changed a NaN")
	}
	if ClipByValue(g, -1) == nil {
		t.Error("negative limit: no error")
	}

	a, b := []float32{3, 0}, []float32{0, 4} // global norm 5
	norm, err := ClipByGlobalNorm(10, a, b)
	if err != nil || norm != 5 || a[0] != 3 || b[1] != 4 {
		t.Fatalf("under the limit: norm %g, %v %v, err %v", norm, a, b, err)
	}
	norm, err = ClipByGlobalNorm(1, a, b)
	if err != nil || norm != 5 || math.Abs(float64(a[0])-0.6) > 1e-7 || math.Abs(float64(b[1])-0.8) > 1e-7 {
		t.Fatalf("over the limit: norm %g, %v %v, err %v", norm, a, b, err)
	}
	if n := GlobalNorm(a, b); math.Abs(n-1) > 1e-6 {
		t.Errorf("norm after clipping %g, want 1", n)
	}
	if _, err := ClipByGlobalNorm(-1, a); err == nil {
		t.Error("negative maxNorm: no error")
	}
}

func TestBiasGrad(t *testing.T) {
	dy := []float32{1, 2, 3, 4, 5, 6} // [2, 3]
	db := []float32{10, 0, 0}
	if err := BiasGrad(db, dy, 2, 3); err != nil {
		t.Fatal(err)
	}
	if db[0] != 15 || db[1] != 7 || db[2] != 9 {
		t.Errorf("BiasGrad = %v, want [15 7 9]", db)
	}
	dc := []float32{1, 0}
	if err := BiasGradChannels(dc, dy, 2, 3); err != nil {
		t.Fatal(err)
	}
	if dc[0] != 7 || dc[1] != 15 {
		t.Errorf("BiasGradChannels = %v, want [7 15]", dc)
	}
	if BiasGrad(db[:2], dy, 2, 3) == nil || BiasGradChannels(dc, dy[:5], 2, 3) == nil {
		t.Error("short slices: no error")
	}
}

func TestRegularization(t *testing.T) {
	w := []float32{-2, 0, 0.5, 3}
	w64 := to64(w)
	const lambda = 0.1
	g := make([]float32, 4)
	if err := AddL2Grad(g, w, lambda); err != nil {
		t.Fatal(err)
	}
	l2 := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v * v
		}
		return lambda / 2 * s
	}
	closeTo(t, "L2 grad", g, numGrad(l2, w64), 1e-6, 1e-7)
	if got := L2Penalty(w, lambda); math.Abs(got-l2(w64)) > 1e-7 {
		t.Errorf("L2Penalty = %g, want %g", got, l2(w64))
	}

	clear(g)
	if err := AddL1Grad(g, w, lambda); err != nil {
		t.Fatal(err)
	}
	l1 := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += math.Abs(v)
		}
		return lambda * s
	}
	fd := numGrad(l1, w64)
	fd[1] = 0 // the subgradient chosen at 0
	closeTo(t, "L1 grad", g, fd, 1e-6, 1e-7)
	if got := L1Penalty(w, lambda); math.Abs(got-l1(w64)) > 1e-7 {
		t.Errorf("L1Penalty = %g, want %g", got, l1(w64))
	}
	if AddL1Grad(g[:1], w, lambda) == nil || AddL2Grad(g[:1], w, lambda) == nil {
		t.Error("short g: no error")
	}
}
