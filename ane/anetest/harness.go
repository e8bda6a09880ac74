package anetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// Run runs the whole conformance suite against b.
func Run(t *testing.T, b ane.Backend) {
	t.Run("Ops", func(t *testing.T) { testOps(t, b) })
	t.Run("Surfaces", func(t *testing.T) { testSurfaces(t, b) })
	t.Run("Failures", func(t *testing.T) { testFailures(t, b) })
	t.Run("Kernels", func(t *testing.T) { testKernels(t, b) })
	t.Run("Refusals", func(t *testing.T) { testRefusals(t, b) })
	t.Run("Bindings", func(t *testing.T) { testBindings(t, b) })
}

// tin is one input of a test program.
type tin struct {
	name  string
	dtype mil.DType
	shape []int
}

// milType spells a tensor type.
func milType(d mil.DType, shape []int) string {
	return mil.Tensor(d, shape...).String()
}

// program returns the MIL text of a one-function program with the given inputs, body lines and outputs.
func program(ins []tin, body string, outs ...string) string {
	var b strings.Builder
	b.WriteString("program(1.3)\n{\n    func main<ios18>(")
	for i, in := range ins {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", milType(in.dtype, in.shape), in.name)
	}
	b.WriteString(") {\n")
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		b.WriteString("        " + strings.TrimSpace(line) + "\n")
	}
	fmt.Fprintf(&b, "    } -> (%s);\n}\n", strings.Join(outs, ", "))
	return b.String()
}

// compile parses src and compiles it on b (see compileCase).
func compile(t testing.TB, b ane.Backend, src string, w mil.Weights) ane.Kernel {
	t.Helper()
	p, err := mil.Parse("test.mil", []byte(src))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return compileCase(t, b, p, w)
}

// compileCase compiles one case's program on b. A program the ANE refuses (ane.Eligible) belongs to
// the emulator-only part of the suite: on a backend that is not relaxed, compileCase checks that Compile
// refuses it with the eligibility error, then skips the rest of the case; on a relaxed emulator the case
// runs. Every other program is in the hardware-eligible part and must compile on every backend.
func compileCase(t testing.TB, b ane.Backend, p *mil.Program, w mil.Weights) ane.Kernel {
	t.Helper()
	if v := ane.Eligible(p); v.Support() == ane.Refused && !relaxed(b) {
		_, err := b.Compile(p, w)
		var ie *ane.IneligibleError
		if !errors.As(err, &ie) {
			t.Fatalf("compile of a program the ANE refuses: got %v, want an *ane.IneligibleError\n%s", err, mil.Print(p))
		}
		t.Skipf("emulator-only (refused as the ANE refuses it: %s); a relaxed emulator runs it", v.With(ane.Refused)[0])
	}
	k, err := b.Compile(p, w)
	if err != nil {
		t.Fatalf("compile: %v\n%s", err, mil.Print(p))
	}
	t.Cleanup(func() { k.Close() })
	return k
}

// writeAll fills surface s with data (len must match) and returns the values it holds afterwards, which
// are the values the program sees (fp16 surfaces round).
func writeAll(t testing.TB, s *ane.Surface, data []float32) []float64 {
	t.Helper()
	if err := s.WriteChannels(0, s.Channels(), data); err != nil {
		t.Fatal(err)
	}
	back := make([]float32, len(data))
	if err := s.ReadChannels(0, s.Channels(), back); err != nil {
		t.Fatal(err)
	}
	return f64s(back)
}

// readAll returns the values of surface s.
func readAll(t testing.TB, s *ane.Surface) []float32 {
	t.Helper()
	out := make([]float32, s.Channels()*s.Spatial())
	if err := s.ReadChannels(0, s.Channels(), out); err != nil {
		t.Fatal(err)
	}
	return out
}

// evalOnce runs k once with a background context.
func evalOnce(t testing.TB, k ane.Binding) {
	t.Helper()
	if err := k.Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func f64s(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// uniform returns n values uniform in [lo, hi), rounded to fp16 so that literals and surfaces hold them
// exactly.
func uniform(rng *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = half.RoundF16(float32(lo + (hi-lo)*rng.Float64()))
	}
	return out
}

// uniform32 returns n float32 values uniform in [lo, hi).
func uniform32(rng *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return out
}

// literal spells a tensor literal of dtype d with the given values.
func literal(d mil.DType, shape []int, vals []float32) string {
	var b strings.Builder
	b.WriteString(milType(d, shape))
	b.WriteString("([")
	for i, v := range vals {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%v", v)
	}
	b.WriteString("])")
	return b.String()
}

// tolerance says how close a result must be: |got - want| <= abs + rel*|want|.
type tolerance struct{ abs, rel float64 }

// fp16Tol is the tolerance of one fp16 rounding of the result (2 ulp, to allow for approximations of
// transcendental functions), with a small absolute floor.
var fp16Tol = tolerance{abs: 1e-4, rel: 1.0 / 1024}

// near reports the elements of got that are not within tol of want (inf must match inf).
func near(t testing.TB, what string, got []float32, want []float64, tol tolerance) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %d values, want %d", what, len(got), len(want))
		return
	}
	bad := 0
	for i := range got {
		g, w := float64(got[i]), want[i]
		ok := math.Abs(g-w) <= tol.abs+tol.rel*math.Abs(w)
		if math.IsInf(w, 0) || math.IsNaN(w) {
			ok = g == w || (math.IsNaN(g) && math.IsNaN(w))
		}
		if !ok {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v (tolerance %g + %g*|want|)", what, i, g, w, tol.abs, tol.rel)
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d of %d elements out of tolerance", what, bad, len(got))
	}
}
