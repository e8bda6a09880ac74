package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

// runMilCLI runs anestar with args and returns the exit code, stdout and stderr.
func runMilCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

const milSDPAFile = "../../mil/testdata/sdpa_fwd.mil"

// writeMilTemp writes text to a file in a fresh temporary folder and returns its path.
func writeMilTemp(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMilUsage(t *testing.T) {
	code, out, errs := runMilCLI("mil")
	if code != exitUsage || out != "" || !strings.Contains(errs, "check [flags] FILE.mil...") || !strings.Contains(errs, "fmt [-w | -l]") {
		t.Errorf("anestar mil: code %d, stdout %q, stderr %q", code, out, errs)
	}
	for _, args := range [][]string{{"mil", "--help"}, {"mil", "-h"}, {"mil", "help"}, {"help", "mil"}} {
		code, out, _ := runMilCLI(args...)
		if code != exitOK || !strings.Contains(out, "Subcommands:") || !strings.Contains(out, "check") {
			t.Errorf("%v: code %d, stdout %q", args, code, out)
		}
	}
	for _, args := range [][]string{{"mil", "check", "--help"}, {"mil", "help", "check"}} {
		code, out, _ := runMilCLI(args...)
		if code != exitOK || !strings.HasPrefix(out, "Usage: anestar mil check") {
			t.Errorf("%v: code %d, stdout %q", args, code, out)
		}
	}
	if code, out, _ := runMilCLI("mil", "fmt", "-h"); code != exitOK || !strings.Contains(out, "--write") {
		t.Errorf("mil fmt -h: code %d, stdout %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mil", "lint"}, `anestar mil: unknown subcommand "lint"`},
		{[]string{"mil", "check"}, "anestar mil check: no MIL file given"},
		{[]string{"mil", "fmt", "--frob", "x.mil"}, "anestar mil fmt: unknown flag: --frob"},
	} {
		code, _, errs := runMilCLI(tc.args...)
		if code != exitUsage || !strings.HasPrefix(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %q, want %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestMilCheck(t *testing.T) {
	code, out, errs := runMilCLI("mil", "check", milSDPAFile)
	want := milSDPAFile + ": program(1.3)\n" +
		"  main<ios18>(tensor<fp16, [1, 16, 1, 8]> x) -> (tensor<fp16, [1, 96, 1, 8]> out): 50 ops\n"
	if code != exitOK || out != want || errs != "" {
		t.Errorf("check: code %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, errs)
	}
	if code, out, _ := runMilCLI("mil", "check", "-q", milSDPAFile); code != exitOK || out != "" {
		t.Errorf("check -q: code %d, stdout %q", code, out)
	}

	syntax := writeMilTemp(t, "syntax.mil", "program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 2, 1, 2]> x) {\n        tensor<fp16, [1, 2, 1, 2]> y = relu(x=x)\n    } -> (y);\n}\n")
	undefined := writeMilTemp(t, "undefined.mil", "program(1.3)\n{\n    func main<ios18>(tensor<fp16, [1, 2, 1, 2]> x) {\n        tensor<fp16, [1, 2, 1, 2]> y = relu(x=z)[name=string(\"y\")];\n    } -> (y);\n}\n")
	code, out, errs = runMilCLI("mil", "check", syntax, milSDPAFile, undefined, filepath.Join(t.TempDir(), "none.mil"))
	if code != exitError {
		t.Errorf("check with bad files: code %d", code)
	}
	if !strings.Contains(out, "50 ops") {
		t.Errorf("the valid file among bad ones was not reported: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(errs, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want 3 error lines, got %q", errs)
	}
	if want := syntax + `:5:5: expected ";" at the end of the op, found "}"`; lines[0] != want {
		t.Errorf("syntax error line %q, want %q", lines[0], want)
	}
	if !strings.HasPrefix(lines[1], undefined+":4:") || !strings.Contains(lines[1], `"z"`) {
		t.Errorf("check error line %q does not name the file, the place and the undefined name", lines[1])
	}
	if !strings.Contains(lines[2], "none.mil") || !strings.Contains(lines[2], "no such file") {
		t.Errorf("missing file line %q", lines[2])
	}
}

func TestMilFmt(t *testing.T) {
	src, err := os.ReadFile(milSDPAFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := mil.Parse(milSDPAFile, src)
	if err != nil {
		t.Fatal(err)
	}
	canonical := mil.Print(p)
	if canonical == string(src) {
		t.Fatal("the reference text is already canonical; the test needs one that is not")
	}

	code, out, errs := runMilCLI("mil", "fmt", milSDPAFile)
	if code != exitOK || out != canonical || errs != "" {
		t.Errorf("fmt: code %d, stderr %q, stdout differs from mil.Print: %v", code, errs, out != canonical)
	}

	file := writeMilTemp(t, "k.mil", string(src))
	if code, out, _ := runMilCLI("mil", "fmt", "-l", file); code != exitOK || out != file+"\n" {
		t.Errorf("fmt -l on a non-canonical file: code %d, stdout %q", code, out)
	}
	if code, out, errs := runMilCLI("mil", "fmt", "-w", file); code != exitOK || out != "" || errs != "" {
		t.Errorf("fmt -w: code %d, stdout %q, stderr %q", code, out, errs)
	}
	got, err := os.ReadFile(file)
	if err != nil || string(got) != canonical {
		t.Errorf("fmt -w left %q (%v)", got, err)
	}
	if code, out, _ := runMilCLI("mil", "fmt", "--list", file); code != exitOK || out != "" {
		t.Errorf("fmt -l after -w: code %d, stdout %q", code, out)
	}
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("fmt -w left temporary files: %v", entries)
	}

	bad := writeMilTemp(t, "bad.mil", "program(1.3) {\n  func\n")
	code, out, errs = runMilCLI("mil", "fmt", "-w", bad)
	if want := bad + ":3:1: expected function name, found end of file\n"; code != exitError || out != "" || errs != want {
		t.Errorf("fmt of a broken file: code %d, stdout %q, stderr %q, want %q", code, out, errs, want)
	}
	if got, _ := os.ReadFile(bad); string(got) != "program(1.3) {\n  func\n" {
		t.Errorf("fmt -w changed a file that does not parse: %q", got)
	}
}

// TestMilCheckANE checks `mil check --ane`: every file's verdict, refusals as errors and unknowns as
// warnings, the next file judged after a refused one, and exit 1 when any is refused.
func TestMilCheckANE(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.mil")
	bad := filepath.Join(dir, "bad.mil")
	os.WriteFile(good, []byte(`program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 32]> x) {
        tensor<fp16, [2, 2, 1, 1]> w = const()[name=string("w"), val=tensor<fp16, [2, 2, 1, 1]>([1, 0, 0, 1])];
        tensor<fp16, [1, 2, 1, 32]> y = conv(weight=w, x=x)[name=string("y")];
        tensor<fp16, [1, 2, 1, 32]> z = maximum(x=y, y=x)[name=string("z")];
    } -> (z);
}
`), 0o644)
	os.WriteFile(bad, []byte(`program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 24]> x) {
        tensor<fp16, [1, 2, 1, 24]> y = exp(x=x)[name=string("y")];
    } -> (y);
}
`), 0o644)
	var out, errb bytes.Buffer
	code := dispatch([]string{"mil", "check", "--ane", bad, good}, &out, &errb)
	if code != exitError {
		t.Errorf("exit %d, want %d", code, exitError)
	}
	for _, want := range []string{
		"bad.mil: program(1.3)", "ane: refused (4 refusals, 0 warnings)",
		"refused [io-width]: input `x` (3:50) has width 24: the ANE needs at least 32",
		"refused [op]: op `y` (exp) (4:9) is refused by the ANE: standalone exp is refused (no transcendentals)",
		"refused [anchor]: program (1:1) holds no conv or matmul",
		"good.mil: program(1.3)", "ane: eligible, with 1 warning",
		"warning [op]: op `z` (maximum) (6:9) is not known to run on the ANE",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := dispatch([]string{"mil", "check", "--ane", good}, &out, &errb); code != exitOK {
		t.Errorf("eligible file: exit %d", code)
	}
	// Without --ane only the type check runs.
	if code := dispatch([]string{"mil", "check", bad}, &out, &errb); code != exitOK {
		t.Errorf("mil check without --ane: exit %d", code)
	}
}

// TestMilCheckChip: an input 20480 wide is refused with --chip m1 (naming 16384) and under all (the
// default off a Mac), taken with --chip m4; fp32 I/O is a warning (io-fp16), never proven; an unknown
// chip is a usage error; backends --chip prints a profile with its sources.
func TestMilCheckChip(t *testing.T) {
	wide := writeMilTemp(t, "wide.mil", `program(1.3)
{
    func main<ios18>(tensor<fp16, [1, 2, 1, 20480]> x) {
        tensor<fp16, [2, 2, 1, 1]> w = const()[name=string("w"), val=tensor<fp16, [2, 2, 1, 1]>([1, 0, 0, 1])];
        tensor<fp16, [1, 2, 1, 20480]> y = conv(weight=w, x=x)[name=string("y")];
    } -> (y);
}
`)
	for _, c := range []struct {
		chip string
		code int
		want string
	}{
		{"m1", exitError, "refused [axis-cap]: input `x` (3:53) has 20480 on axis 3 (an axis other than the channels): chip m1 (A13) takes at most 16384"},
		{"all", exitError, "chip all (A13-A16) takes at most 16384"},
		{"m4", exitOK, "ane: eligible (every op and I/O proven on hardware)"},
	} {
		code, out, _ := runMilCLI("mil", "check", "--ane", "--chip", c.chip, wide)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("--chip %s: exit %d, want %d; stdout lacks %q:\n%s", c.chip, code, c.code, c.want, out)
		}
	}
	fp32 := writeMilTemp(t, "fp32.mil", `program(1.3)
{
    func main<ios18>(tensor<fp32, [1, 2, 1, 32]> x) {
        tensor<fp16, [1, 2, 1, 32]> h = cast(x=x, dtype=string("fp16"))[name=string("h")];
        tensor<fp16, [2, 2, 1, 1]> w = const()[name=string("w"), val=tensor<fp16, [2, 2, 1, 1]>([1, 0, 0, 1])];
        tensor<fp16, [1, 2, 1, 32]> y = conv(weight=w, x=h)[name=string("y")];
    } -> (y);
}
`)
	if code, out, _ := runMilCLI("mil", "check", "--ane", fp32); code != exitOK || !strings.Contains(out, "warning [io-fp16]: input `x`") {
		t.Errorf("fp32 input: exit %d, want a warning [io-fp16]:\n%s", code, out)
	}
	if code, _, errOut := runMilCLI("mil", "check", "--ane", "--chip", "m9", wide); code != exitUsage || !strings.Contains(errOut, "m1, m2, m3, m4, m5, all") {
		t.Errorf("--chip m9: exit %d: %s", code, errOut)
	}
	code, out, _ := runMilCLI("backends", "--chip", "m3")
	if code != exitOK || !strings.Contains(out, "chip m3: family A15; at most 16384") || !strings.Contains(out, "M3 Pro") || !strings.Contains(out, "source: maderix/ANE") {
		t.Errorf("backends --chip m3: exit %d:\n%s", code, out)
	}
}
