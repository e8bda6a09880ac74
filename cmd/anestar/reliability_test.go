package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/npy"
)

const reluMIL = `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 3]> x) {
        tensor<fp16, [1, 2, 1, 3]> y = relu(x = x)[name = string("y")];
    } -> (y);
}
`

// TestMilRunErrorsNamePlace: a compile error of `mil run` reads FILE:LINE:COL.
func TestMilRunErrorsNamePlace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.mil")
	os.WriteFile(path, []byte(strings.Replace(reluMIL, "relu(x = x)", "sin(x = x)", 1)), 0o644)
	code, _, stderr := runCkptCLI("mil", "run", path)
	if code != exitError || !strings.HasPrefix(stderr, path+":4:9: ") {
		t.Fatalf("exit %d, stderr %q; want %s:4:9: ...", code, stderr, path)
	}
}

// TestMilRunRefusesOtherShape: an input .npy of the input's size but another shape is refused; the
// shape without its dims of 1 is accepted.
func TestMilRunRefusesOtherShape(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.mil")
	os.WriteFile(prog, []byte(reluMIL), 0o644)
	x := filepath.Join(dir, "x.npy")
	npy.WriteFile(x, &npy.Array{DType: npy.F32, Shape: []int{3, 2}, Data: make([]float32, 6)})
	if code, _, stderr := runCkptCLI("mil", "run", "--relaxed", "--in", "x="+x, prog); code != exitError || !strings.Contains(stderr, "holds shape [3 2]") {
		t.Errorf("[3 2] for [1, 2, 1, 3]: exit %d, %s", code, stderr)
	}
	npy.WriteFile(x, &npy.Array{DType: npy.F32, Shape: []int{2, 3}, Data: make([]float32, 6)})
	if code, _, stderr := runCkptCLI("mil", "run", "--relaxed", "--in", "x="+x, prog); code != exitOK {
		t.Errorf("[2 3] for [1, 2, 1, 3]: exit %d, %s", code, stderr)
	}
}

// TestMilRunWeightLinkOutside: a weight file that is a link to a file outside the model folder is refused.
func TestMilRunWeightLinkOutside(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model")
	os.MkdirAll(filepath.Join(model, "weights"), 0o755)
	secret := filepath.Join(dir, "secret.bin")
	os.WriteFile(secret, make([]byte, 200), 0o644)
	if err := os.Symlink(secret, filepath.Join(model, "weights", "w.bin")); err != nil {
		t.Skip(err)
	}
	src := `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [2, 2, 1, 1]> W = const()[name = string("W"), val = tensor<fp16, [2, 2, 1, 1]>(BLOBFILE(path = string("@model_path/weights/w.bin"), offset = uint64(64)))];
        tensor<fp16, [1, 2, 1, 32]> y = conv(x = x, weight = W)[name = string("y")];
    } -> (y);
}
`
	os.WriteFile(filepath.Join(model, "model.mil"), []byte(src), 0o644)
	code, _, stderr := runCkptCLI("mil", "run", filepath.Join(model, "model.mil"))
	if code != exitError || !strings.Contains(stderr, "outside") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

// TestMilFmtWritesThroughLink: `mil fmt -w` on a symbolic link rewrites its target and keeps the link.
func TestMilFmtWritesThroughLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.mil")
	os.WriteFile(target, []byte(strings.ReplaceAll(reluMIL, "    ", "  ")), 0o644)
	link := filepath.Join(dir, "link.mil")
	if err := os.Symlink("real.mil", link); err != nil {
		t.Skip(err)
	}
	if code, _, stderr := runCkptCLI("mil", "fmt", "-w", link); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v", err)
	}
	got, _ := os.ReadFile(target)
	if !strings.Contains(string(got), "    func main") {
		t.Errorf("the target was not formatted:\n%s", got)
	}
}

// TestCkptDiffRefusesNegativeTol: --tol -1 is a usage error.
func TestCkptDiffRefusesNegativeTol(t *testing.T) {
	a := saveCkpt(t, "a.safetensors", nil, map[string]string{"k": "v"})
	for _, tol := range []string{"-1", "NaN", "+Inf"} {
		if code, _, stderr := runCkptCLI("ckpt", "diff", "--tol", tol, a, a); code != exitUsage || !strings.Contains(stderr, "--tol") {
			t.Errorf("--tol %s: exit %d, %s", tol, code, stderr)
		}
	}
}
