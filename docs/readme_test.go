package docs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The README's embedding program compiles and runs as it stands, with nothing but `builtins` imported:
// BackendName "auto" finds the standard backends, and the script sees the parameter and the extra builtin.
func TestReadmeEmbeddingProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	src := firstBlock(t, "../README.md", "go")
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "embed")
	build := exec.Command("go", "build", "-o", bin, main)
	build.Dir = ".." // the repository's module resolves the imports
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the README program: %v\n%s", err, out)
	}
	script := `P = params(dim = 128)
p = mil.program()
x = p.input("x", "fp16", [1, 4, 1, 32])
p.output(p.conv(x = x, weight = p.const(tensor.ones(16).reshape([4, 4, 1, 1])), name = "y"))
k = ane.compile(p)
k.inputs[0].fill(1.0)
k.eval()
print(ane.backend(), P.dim, answer(), k.outputs[0].read().sum())
`
	if err := os.WriteFile(filepath.Join(dir, "train.star"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin)
	run.Dir = dir
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the README program: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "emulator 256 42 512.0"; got != want {
		t.Errorf("the README program printed %q, want %q", got, want)
	}
}
