package nn

import (
	"math"
	"math/rand/v2"
	"runtime"
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

// TestGlobalNormChunks: the chunked norm matches a serial float64 sum and gives the same bits on one
// core as on all of them; an inf or a NaN anywhere makes it non-finite.
func TestGlobalNormChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float32, 3*normChunk+17), make([]float32, 1000)
	var ss float64
	for _, g := range [][]float32{a, b} {
		for i := range g {
			g[i] = float32(r.NormFloat64() * 1e3)
			ss += float64(g[i]) * float64(g[i])
		}
	}
	want := math.Sqrt(ss)
	got := GlobalNorm(a, b)
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("GlobalNorm = %v, serial float64 %v", got, want)
	}
	prev := runtime.GOMAXPROCS(1)
	one := GlobalNorm(a, b)
	runtime.GOMAXPROCS(prev)
	if math.Float64bits(one) != math.Float64bits(got) {
		t.Errorf("GlobalNorm on one core %v, on %d %v", one, prev, got)
	}
	for _, bad := range []float32{float32(math.Inf(-1)), float32(math.NaN())} {
		b[500] = bad
		if n := GlobalNorm(a, b); !math.IsInf(n, 0) && !math.IsNaN(n) {
			t.Errorf("a %v element: norm %v", bad, n)
		}
	}
}

// TestUnscaleClip checks the unscaled norm and the combined factor against float64, with and without
// clipping, and that a non-finite gradient changes nothing.
func TestUnscaleClip(t *testing.T) {
	base := []float32{3e4, -4e4, 1200, 0.5}
	var ss float64
	for _, v := range base {
		ss += float64(v) * float64(v)
	}
	for _, c := range []struct{ scale, clip float32 }{{1024, 0}, {1024, 1}, {1024, 1e6}, {1, 0}} {
		g := append([]float32(nil), base...)
		norm, err := UnscaleClip(c.scale, c.clip, g)
		if err != nil {
			t.Fatal(err)
		}
		want := math.Sqrt(ss) / float64(c.scale)
		if math.Abs(norm-want) > 1e-12*want {
			t.Errorf("scale %v: norm %v, want %v", c.scale, norm, want)
		}
		f := 1 / float64(c.scale)
		if c.clip > 0 && want > float64(c.clip) {
			f *= float64(c.clip) / want
		}
		for i, v := range g {
			if w := float64(base[i]) * f; math.Abs(float64(v)-w) > 1e-6*math.Abs(w) {
				t.Errorf("scale %v clip %v: g[%d] = %v, want %v", c.scale, c.clip, i, v, w)
			}
		}
	}
	g := append([]float32(nil), base...)
	g[2] = float32(math.Inf(1))
	if norm, err := UnscaleClip(1024, 1, g); err != nil || !math.IsInf(norm, 1) || g[0] != base[0] {
		t.Errorf("an inf gradient: norm %v, %v, g[0] %v", norm, err, g[0])
	}
	for _, c := range []struct{ scale, clip float32 }{{0, 1}, {float32(math.Inf(1)), 1}, {1, -1}} {
		if _, err := UnscaleClip(c.scale, c.clip, g); err == nil {
			t.Errorf("scale %v clip %v: no error", c.scale, c.clip)
		}
	}
}

// TestClipFactorIsUnscaleClips checks ClipFactor's norm and factor against float64 formulas, that
// they are the ones UnscaleClip applies (the gradients multiplied by the factor are UnscaleClip's, bit
// for bit), and that ClipFactor leaves the gradients unchanged; an inf gradient gives an inf norm; bad
// scales are errors.
func TestClipFactorIsUnscaleClips(t *testing.T) {
	base := []float32{3e4, -4e4, 1200, 0.5, 7}
	for _, c := range []struct{ scale, clip float32 }{{1024, 0}, {1024, 1}, {1024, 1e6}, {1, 0}, {3, 2}} {
		g := append([]float32(nil), base...)
		norm, f, err := ClipFactor(c.scale, c.clip, g)
		if err != nil {
			t.Fatal(err)
		}
		for i := range g {
			if g[i] != base[i] {
				t.Fatalf("ClipFactor changed g[%d]", i)
			}
		}
		var ss float64
		for _, v := range base {
			ss += float64(v) * float64(v)
		}
		wantNorm := math.Sqrt(ss) / float64(c.scale)
		wantF := 1 / float64(c.scale)
		if c.clip > 0 && wantNorm > float64(c.clip) {
			wantF *= float64(c.clip) / wantNorm
		}
		if math.Abs(norm-wantNorm) > 1e-12*wantNorm || math.Abs(float64(f)-wantF) > 1e-6*wantF {
			t.Errorf("scale %v clip %v: norm %v factor %v, want %v and %v", c.scale, c.clip, norm, f, wantNorm, wantF)
		}
		want, err := UnscaleClip(c.scale, c.clip, g)
		if err != nil || norm != want {
			t.Errorf("scale %v clip %v: norm %v, UnscaleClip's %v (%v)", c.scale, c.clip, norm, want, err)
		}
		for i, v := range base {
			if v*f != g[i] {
				t.Errorf("scale %v clip %v: g[%d] times the factor %v, UnscaleClip gives %v", c.scale, c.clip, i, v*f, g[i])
			}
		}
	}
	g := append([]float32(nil), base...)
	g[1] = float32(math.Inf(-1))
	if norm, _, err := ClipFactor(1024, 1, g); err != nil || !math.IsInf(norm, 1) {
		t.Errorf("an inf gradient: norm %v, %v", norm, err)
	}
	for _, c := range []struct{ scale, clip float32 }{{0, 1}, {float32(math.NaN()), 1}, {1, -1}} {
		if _, _, err := ClipFactor(c.scale, c.clip, g); err == nil {
			t.Errorf("scale %v clip %v: no error", c.scale, c.clip)
		}
	}
}
