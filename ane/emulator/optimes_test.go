package emulator

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// opTimesSrc is a matmul, a relu and two outputs: steps of their own, and the transfers.
const opTimesSrc = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 1, 32, 32]> x, tensor<fp16, [1, 1, 32, 32]> w) {
        bool f = const()[name=string("f"), val=bool(false)];
        tensor<fp16, [1, 1, 32, 32]> m = matmul(transpose_x=f, transpose_y=f, x=x, y=w)[name=string("m")];
        tensor<fp16, [1, 1, 32, 32]> r = relu(x=m)[name=string("r")];
    } -> (m, r);
}
`

// TestOpTimes: a kernel compiled with OpTimes clocks every eval of each step and of its transfers, its
// own and its bindings' in one set of rows named by its outputs; a kernel compiled without clocks
// nothing.
func TestOpTimes(t *testing.T) {
	ot := &OpTimes{}
	k := compileText(t, Options{OpTimes: ot}, opTimesSrc)
	b, err := k.Bind()
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float32, 32*32)
	for i := range in {
		in[i] = float32(i%7) / 8
	}
	for range 3 {
		run(t, k, in, in)
		run(t, b, in, in)
	}
	plain := compileText(t, Options{}, opTimesSrc)
	run(t, plain, in, in)

	var out bytes.Buffer
	if _, err := ot.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.HasPrefix(lines[0], "total ms") {
		t.Fatalf("no header:\n%s", out.String())
	}
	seen := map[string]bool{}
	var share float64
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) < 7 {
			t.Fatalf("row %q", l)
		}
		if f[4] != "m,r" {
			t.Errorf("row %q: kernel %q, want its outputs m,r", l, f[4])
		}
		if f[2] != "6" {
			t.Errorf("row %q: %s evals, want 6 (3 of the kernel, 3 of its binding)", l, f[2])
		}
		if ms, err := strconv.ParseFloat(f[0], 64); err != nil || ms <= 0 {
			t.Errorf("row %q: total %q ms", l, f[0])
		}
		s, _ := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		share += s
		seen[f[6]] = true
	}
	for _, op := range []string{"inputs", "matmul", "relu", "outputs"} {
		if !seen[op] {
			t.Errorf("no row for %s:\n%s", op, out.String())
		}
	}
	if share < 99 || share > 101 {
		t.Errorf("shares add up to %.1f%%:\n%s", share, out.String())
	}
	if plain.times != nil {
		t.Error("a kernel compiled without OpTimes has rows")
	}
}
