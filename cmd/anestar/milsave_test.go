package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/mil"
	"github.com/anestar/anestar/npy"
	"go.starlark.net/starlark"
)

// The documented "outside a script" workflow: a kernel with a p.weight, saved with p.save(DIR) as a
// model directory, runs under `anestar mil run DIR` and gives the outputs the script's own eval gave.
func TestSavedProgramRuns(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "kernel")
	src := `
p = mil.program()
x = p.input("x", "fp16", [1, 4, 1, 32])
w = p.weight("w", tensor.from_list([0.5, -1.0, 0.25, 2.0] * 4).reshape([4, 4, 1, 1]))
p.output(p.conv(x = x, weight = w, name = "y"))
p.save(MODEL)
k = ane.compile(p)
k.inputs[0].write(tensor.from_list(XS))
k.eval()
got = k.outputs[0].read()
`
	xs := make([]float32, 4*32)
	for i := range xs {
		xs[i] = float32(i%7) / 4
	}
	in := filepath.Join(dir, "x.npy")
	if err := npy.WriteFile(in, &npy.Array{Shape: []int{1, 4, 1, 32}, Data: xs}); err != nil {
		t.Fatal(err)
	}
	xl := starlark.NewList(nil)
	for _, v := range xs {
		xl.Append(starlark.Float(v))
	}
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script:   "save.star",
		Source:   []byte(src),
		Backend:  emulator.New(emulator.Options{}),
		Stdout:   &bytes.Buffer{},
		Builtins: starlark.StringDict{"MODEL": starlark.String(model), "XS": xl},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(model, mil.ModelFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(model, "weights", "w.bin")); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	var out, errb bytes.Buffer
	if code := dispatch([]string{"mil", "run", model, "--in", "x=" + in, "--out", outDir, "--backend", "emulator"}, &out, &errb); code != exitOK {
		t.Fatalf("mil run DIR: exit %d: %s", code, errb.String())
	}
	a, err := npy.ReadFile(filepath.Join(outDir, "y.npy"))
	if err != nil {
		t.Fatal(err)
	}
	want := res.Globals["got"].(interface{ Data() []float32 }).Data()
	if len(a.Data) != len(want) {
		t.Fatalf("mil run wrote %d values, the script read %d", len(a.Data), len(want))
	}
	for i := range want {
		if a.Data[i] != want[i] {
			t.Fatalf("output %d: mil run %v, the script's eval %v", i, a.Data[i], want[i])
		}
	}
	if !strings.Contains(out.String(), "y") {
		t.Errorf("mil run printed no statistics for y:\n%s", out.String())
	}
}
