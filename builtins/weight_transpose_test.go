package builtins

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
	"go.starlark.net/starlark"
)

// execGlobals runs src in a fresh session and returns its globals.
func execGlobals(t *testing.T, src string) (starlark.StringDict, error) {
	t.Helper()
	s := &session{cfg: &Config{BackendName: "emulator"}, ctx: context.Background(), rng: newRNG(1), loads: map[string]*loadEntry{}}
	s.out = &lineWriter{w: io.Discard}
	s.predeclared = s.makePredeclared()
	return starlark.ExecFileOptions(FileOptions, s.newThread("test"), "test.star", src, s.predeclared)
}

// p.weight(transpose = True) gives the same program text and weight file bytes as p.weight of
// t.transpose(), in every dtype, and rejects a tensor that is not 2-D.
func TestWeightTransposed(t *testing.T) {
	g, err := execGlobals(t, `
ps = {}
for r, c in [(37, 21), (300, 301), (129, 1000)]:
    t = tensor.normal([r, c])
    for dt in ["fp16", "bf16", "fp32"]:
        p1 = mil.program()
        p1.output(p1.weight("w", t.transpose(), dtype = dt, shape = [c, r, 1, 1]))
        p2 = mil.program()
        p2.output(p2.weight("w", t, dtype = dt, shape = [c, r, 1, 1], transpose = True))
        ps["%s %dx%d" % (dt, r, c)] = (p1, p2)
t = tensor.normal([37, 21])
p3 = mil.program()
shape = p3.weight("w", t, transpose = True).shape
`)
	if err != nil {
		t.Fatal(err)
	}
	if got := g["shape"].String(); got != "(21, 37)" {
		t.Errorf("default shape %s, want (21, 37)", got)
	}
	for _, item := range g["ps"].(*starlark.Dict).Items() {
		pair := item[1].(starlark.Tuple)
		var texts [2]string
		var files [2][]byte
		for i := range 2 {
			prog, w, err := pair[i].(*milProgram).build("test")
			if err != nil {
				t.Fatal(err)
			}
			texts[i], files[i] = mil.Print(prog), w[mil.WeightPath("w")]
		}
		if texts[0] != texts[1] || !bytes.Equal(files[0], files[1]) || len(files[0]) < 37*21*2 {
			t.Errorf("%s: transpose = True differs from t.transpose():\n%s\n%s", item[0], texts[0], texts[1])
		}
	}
	_, err = execGlobals(t, `mil.program().weight("w", tensor.zeros(2, 3, 4), transpose = True)`)
	if err == nil || !strings.Contains(err.Error(), "not 2-D") {
		t.Errorf("3-D transpose: %v, want an error saying it is not 2-D", err)
	}
	_, err = execGlobals(t, `mil.program().weight("w", tensor.zeros(2, 3), shape = [7], transpose = True)`)
	if err == nil || !strings.Contains(err.Error(), "holds 7 values") {
		t.Errorf("transpose into a shape of the wrong size: %v, want an error naming its size", err)
	}
	_, err = execGlobals(t, `mil.program().weight("w", tensor.zeros(2, 3), shape = [0, 6], transpose = True)`)
	if err == nil || !strings.Contains(err.Error(), "want positive dims") {
		t.Errorf("transpose into a shape with a zero dim: %v, want the builder's shape error", err)
	}
}
