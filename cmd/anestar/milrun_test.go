package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
	"github.com/anestar/anestar/npy"
)

const milRunSrc = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 3]> x, tensor<fp32, [1, 1, 1, 3]> y) {
        tensor<fp16, [1, 2, 1, 1]> g = const()[name=string("g"), val=tensor<fp16, [1, 2, 1, 1]>(BLOBFILE(path=string("@model_path/weights/g.bin"), offset=uint64(64)))];
        tensor<fp16, [1, 2, 1, 3]> out = mul(x=x, y=g)[name=string("out")];
        tensor<fp32, [1, 1, 1, 3]> y2 = add(x=y, y=y)[name=string("y2")];
    } -> (out, y2);
}
`

func writeMilRunFiles(t *testing.T) (dir, file string) {
	dir = t.TempDir()
	file = filepath.Join(dir, "p.mil")
	if err := os.WriteFile(file, []byte(milRunSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	bw := mil.NewBlobWriter()
	if _, err := bw.AddFloat32s(mil.FP16, []float32{2, -1}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "weights"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "weights", "g.bin"), bw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, file
}

func TestMilRun(t *testing.T) {
	dir, file := writeMilRunFiles(t)
	in := filepath.Join(dir, "x.npy")
	if err := npy.WriteFile(in, &npy.Array{Shape: []int{2, 3}, DType: npy.F32, Data: []float32{1, 2, 3, 4, 5, 70000}}); err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "out")
	var out, errb bytes.Buffer
	code := dispatch([]string{"mil", "run", file, "--in", "x=" + in, "--out", outDir, "--evals", "3", "--backend", "emulator", "--seed", "5", "--relaxed"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	// x*g: [2 4 6], [-4 -5 -inf] (70000 is inf in fp16).
	for _, want := range []string{"backend: emulator", "out tensor<fp16, [1, 2, 1, 3]>: min -5 max 6 mean 0.6 inf/NaN 1", "y2 tensor<fp32, [1, 1, 1, 3]>", "time per eval:", "(3 evals)"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	a, err := npy.ReadFile(filepath.Join(outDir, "out.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if a.DType != npy.F16 || len(a.Shape) != 4 || a.Data[0] != 2 || a.Data[4] != -5 {
		t.Errorf("out.npy: %+v", a)
	}
	y1, err := npy.ReadFile(filepath.Join(outDir, "y2.npy"))
	if err != nil {
		t.Fatal(err)
	}
	// Seeded random inputs repeat.
	out.Reset()
	if code := dispatch([]string{"mil", "run", file, "--out", outDir, "--seed", "5", "--backend", "emulator", "--relaxed"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	y2, err := npy.ReadFile(filepath.Join(outDir, "y2.npy"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range y1.Data {
		if y1.Data[i] != y2.Data[i] || y1.Data[i] == 0 {
			t.Errorf("seeded inputs differ or are zero: %v vs %v", y1.Data, y2.Data)
		}
	}
}

func TestMilRunErrors(t *testing.T) {
	dir, file := writeMilRunFiles(t)
	bad := filepath.Join(dir, "bad.mil")
	os.WriteFile(bad, []byte("program(1.3)\n{\n  func main<ios18>( {\n"), 0o644)
	short := filepath.Join(dir, "short.npy")
	npy.WriteFile(short, &npy.Array{Shape: []int{2}, Data: []float32{1, 2}})
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{bad}, exitError, "bad.mil:3:"},
		{[]string{filepath.Join(dir, "missing.mil")}, exitError, "missing.mil"},
		{[]string{file, "--weights", t.TempDir()}, exitError, "g.bin"},
		{[]string{file, "--relaxed", "--in", "z=" + short}, exitError, `no input called "z"`},
		{[]string{file, "--relaxed", "--in", "x=" + short}, exitError, "holds shape [2]"},
		{[]string{file, "--relaxed", "--in", "x"}, exitError, "NAME=FILE.npy"},
		// The program is emulator-only (widths of 3, fp32 arithmetic, no conv): refused without --relaxed.
		{[]string{file, "--backend", "emulator"}, exitError, "p.mil:   op `y2` (add) (6:9) computes in fp32: the ANE computes in fp16 only"},
		{[]string{file, "--backend", "emulator", "--relaxed"}, exitOK, "relaxed mode: the emulator runs programs the ANE refuses"},
		{[]string{file, "--backend", "nope"}, exitError, `unknown backend "nope"`},
		{[]string{file, "--evals", "0"}, exitUsage, "--evals 0"},
		{[]string{}, exitUsage, "no MIL file"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(append([]string{"mil", "run"}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("mil run %v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}
