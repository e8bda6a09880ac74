package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
)

// TestDryRun runs testdata/dryrun.star as a dry run (TestScripts runs it as an ordinary one) and checks
// what ane.compile recorded.
func TestDryRun(t *testing.T) {
	_, res, err := runStar(t, Config{Script: "testdata/dryrun.star", DryRun: true})
	if err != nil {
		if ee, ok := err.(*starlark.EvalError); ok {
			t.Fatal(ee.Backtrace())
		}
		t.Fatal(err)
	}
	if len(res.Checked) != 2 {
		t.Fatalf("%d programs checked, want 2: %v", len(res.Checked), res.Checked)
	}
	want := []string{
		// One conv and six consts (the weight and five conv attributes); the weight file is a 64-byte
		// header, a 64-byte blob descriptor and the 3x2 fp16 values (12 bytes) padded to 64.
		"testdata/dryrun.star:14:16: (x tensor<fp16, [1, 2, 1, 4]>) -> (y tensor<fp16, [1, 3, 1, 4]>), 1 ops, 6 consts, 192 weight bytes",
		"testdata/dryrun.star:29:21: (x tensor<fp32, [1, 1, 1, 2]>) -> (z tensor<fp32, [1, 1, 1, 2]>), 1 ops, 1 consts, 0 weight bytes",
	}
	for i, c := range res.Checked {
		if got := c.String(); got != want[i] {
			t.Errorf("checked[%d] = %q, want %q", i, got, want[i])
		}
	}
}

// TestDryRunMemory runs testdata/memory.star as a dry run (TestScripts runs it as an ordinary one): the
// surfaces and scratch that ane.memory reports are known before anything compiles.
func TestDryRunMemory(t *testing.T) {
	if _, _, err := runStar(t, Config{Script: "testdata/memory.star", DryRun: true}); err != nil {
		t.Fatal(err)
	}
}

// TestDryRunErrors: a dry run reports a bad program at the script line that made it, and one that
// is not a program at all.
func TestDryRunErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`p = mil.program()
x = p.input("x", "fp16", [1, 4, 1, 8])
w = p.const(tensor.ones(3, 5), dtype = "fp16")
y = p.matmul(x = x, y = w)
ane.compile(p)`, "s.star:4:13: in <toplevel>\nError in mil.program.matmul"},
		{`p = mil.program()
p.input("x", "fp16", [1, 4, 1, 8])
ane.compile(p)`, "ane.compile: "},
		{`ane.compile(1)`, "ane.compile: for parameter program: got int, want mil.program"},
		// p.weight checks what it does not encode: the tensor's size against the shape, and the dtype.
		{`mil.program().weight("w", tensor.ones(3, 5), shape = [1, 16, 1, 1])`,
			`mil.program.weight: op "w" (const): weight tensor<fp16, [1, 16, 1, 1]> needs 16 values, got 15`},
		{`mil.program().weight("w", tensor.ones(3, 5), shape = [1, 16, 1, 1], transpose = True)`,
			"mil.program.weight: transpose: shape [1 16 1 1] holds 16 values, the transpose of [3, 5] has 15"},
		{`mil.program().weight("w", tensor.ones(3, 5), dtype = "int8")`, "cannot store float data as int8"},
		{`p = mil.program()
p.output(p.mul(x = p.input("x", "fp16", [1, 2, 1, 2]), y = p.weight("w", tensor.ones(1, 2, 1, 2))))
p.save("never")`, "mil.program.save: a dry run (anestar check) checks weights without writing their values"},
	} {
		_, res, err := runStar(t, Config{Script: "s.star", Source: []byte(c.src), DryRun: true})
		ee, ok := err.(*starlark.EvalError)
		if !ok {
			t.Errorf("%q: error %v, want an EvalError", c.src, err)
			continue
		}
		if bt := ee.Backtrace(); !strings.Contains(bt, c.want) {
			t.Errorf("%q: backtrace\n%s\nwant it to contain %q", c.src, bt, c.want)
		}
		if len(res.Checked) != 0 {
			t.Errorf("%q: checked %v, want nothing", c.src, res.Checked)
		}
	}
}

// TestDryRunWhere: a program compiled inside a function is named by that line and by the top-level
// line of the main script that led there, in the same file or another.
func TestDryRunWhere(t *testing.T) {
	dir := t.TempDir()
	lib := "def mk():\n    p = mil.program()\n    p.output(p.relu(x = p.input(\"x\", \"fp16\", [1, 2, 1, 2])))\n    return ane.compile(p)\n"
	main := "load(\"lib.star\", \"mk\")\ndef f():\n    return mk()\n\nf()\n"
	for name, src := range map[string]string{"lib.star": lib, "main.star": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, res, err := runStar(t, Config{Script: filepath.Join(dir, "main.star"), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "lib.star") + ":4:23 in mk from " + filepath.Join(dir, "main.star") + ":5:2"
	if len(res.Checked) != 1 || res.Checked[0].Where() != want {
		t.Fatalf("checked %v, want one at %s", res.Checked, want)
	}
	_, res, err = runStar(t, Config{Script: "s.star", Source: []byte(lib + "\nmk()\n"), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "s.star:4:23 in mk from line 6"; len(res.Checked) != 1 || res.Checked[0].Where() != want {
		t.Fatalf("checked %v, want one at %s", res.Checked, want)
	}
}
