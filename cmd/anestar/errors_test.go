package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRunErrorMessages runs small bad scripts as a user would and checks that each message names the
// thing that is wrong, where, and the fix.
func TestRunErrorMessages(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string // substrings of stderr, in order
	}{
		{"load of a missing file", `load("lib/missing.star", "f")`, []string{
			"s.star:1:1: in <toplevel>",
			"cannot load lib/missing.star: no such file ", "lib/missing.star (a load path is relative to the folder of the file that loads it, ",
		}},
		{"a MIL shape mismatch in a helper", `def block(p, x):
    w = p.const(tensor.ones(3, 5), dtype = "fp16")
    return p.matmul(name = "mm", x = x, y = w)

p = mil.program()
y = block(p, p.input("x", "fp16", [1, 4, 1, 8]))
`, []string{
			"s.star:6:10: in <toplevel>\n", "s.star:3:20: in block\n",
			"Error in mil.program.matmul: op \"mm\" (matmul): x's inner dim is 8, y's is 3",
		}},
		{"a size that does not divide", `P = params(dim = 64, heads = 5)
if P.dim % P.heads:
    fail("dim %d is not a multiple of heads %d" % (P.dim, P.heads))
`, []string{"s.star:3:9: in <toplevel>\n", "Error in fail: dim 64 is not a multiple of heads 5\n"}},
		{"a missing checkpoint", `ckpt.read("no/such.ckpt")`, []string{"s.star:1:10: in <toplevel>", "no/such.ckpt", "no such file"}},
		{"a builtin name misspelt", `tensor.zeroes(3)`, []string{"s.star:1:7", "(did you mean .zeros?)"}},
		{"a syntax error", "x = = 1\n", []string{"anestar: ", "s.star:1:5: got '=', want primary expression"}},
	} {
		script := writeScript(t, c.src)
		var out, errb bytes.Buffer
		if code := runScript([]string{script}, &out, &errb); code != exitError {
			t.Errorf("%s: code %d, want %d; stderr %q", c.name, code, exitError, errb.String())
		}
		rest := errb.String()
		for _, w := range c.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: stderr\n%s\nlacks %q (in order)", c.name, errb.String(), w)
				break
			}
			rest = rest[i+len(w):]
		}
		if strings.Count(errb.String(), "\nError") > 1 || strings.Count(errb.String(), "\n") > len(c.want)+1 {
			t.Errorf("%s: stderr repeats itself:\n%s", c.name, errb.String())
		}
	}
}

// TestRunQuiet: --quiet silences print and progress lines, not errors.
func TestRunQuiet(t *testing.T) {
	script := writeScript(t, `print("hello")
p = process.progress(2)
p.update(1, loss = 1.5)
p.update(2, loss = 1.0)
p.done()
fail("stopped")
`)
	var out, errb bytes.Buffer
	if code := runScript([]string{script}, &out, &errb); code != exitError {
		t.Fatalf("code %d", code)
	}
	// Not a terminal (a buffer): plain lines.
	if want := "hello\nstep 1/2  loss 1.5\nstep 2/2  loss 1  "; !strings.HasPrefix(out.String(), want) || strings.Contains(out.String(), "\r") {
		t.Errorf("stdout %q, want it to start with %q and hold no carriage return", out.String(), want)
	}
	out.Reset()
	errb.Reset()
	if code := runScript([]string{script, "--quiet"}, &out, &errb); code != exitError {
		t.Fatalf("--quiet: code %d", code)
	}
	if out.Len() != 0 {
		t.Errorf("--quiet: stdout %q, want nothing", out.String())
	}
	if !strings.Contains(errb.String(), "Error in fail: stopped") {
		t.Errorf("--quiet: stderr %q, want the error", errb.String())
	}
}

// TestRunCPUProfile: --cpuprofile writes a gzip-compressed profile.
func TestRunCPUProfile(t *testing.T) {
	script := writeScript(t, "x = 0\nfor i in range(1000):\n    x += i\nprint(x)\n")
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	var out, errb bytes.Buffer
	if code := runScript([]string{script, "--cpuprofile", prof}, &out, &errb); code != exitOK {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	if out.String() != "499500\n" {
		t.Errorf("stdout %q", out.String())
	}
	f, err := os.Open(prof)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("profile is not gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil || len(b) == 0 {
		t.Errorf("profile: %d bytes, %v", len(b), err)
	}
}

// TestScriptHelp: `anestar SCRIPT.star --help` lists the parameters with defaults and descriptions,
// aligned, without running the script; a script that does not parse says so.
func TestScriptHelp(t *testing.T) {
	script := writeScript(t, `P = params(
    dim = 768,        # model width
    lr = 3e-4,        # peak learning rate
    name = "adam",
)
fail("must not run")
`)
	var out, errb bytes.Buffer
	if code := dispatch([]string{script, "--help"}, &out, &errb); code != exitOK {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	want := "Parameters of " + script + " (--set NAME=VALUE):\n" +
		"  dim = 768      model width\n" +
		"  lr = 3e-4      peak learning rate\n" +
		"  name = \"adam\"\n"
	if !strings.HasSuffix(out.String(), want) {
		t.Errorf("help:\n%s\nwant it to end with\n%s", out.String(), want)
	}
	if strings.Contains(out.String(), "[=true|false]") {
		t.Errorf("help shows pflag's bool syntax:\n%s", out.String())
	}
	bad := writeScript(t, "P = params(x = 1\n")
	out.Reset()
	if code := dispatch([]string{bad, "--help"}, &out, &errb); code != exitError || !strings.Contains(out.String(), "Cannot list the parameters of "+bad+": "+bad+":2:1:") {
		t.Errorf("help of a bad script: code %d, out %q", code, out.String())
	}
}

func TestNearest(t *testing.T) {
	names := []string{"dim", "hidden", "steps", "lr", "seq"}
	for _, c := range []struct{ in, want string }{
		{"dmi", "dim"}, {"stesp", "steps"}, {"step", "steps"}, {"hiden", "hidden"}, {"LR", "lr"},
		{"xyz", ""}, {"learning_rate", ""}, {"s", ""},
	} {
		if got := nearest(c.in, names); got != c.want {
			t.Errorf("nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if d := editDistance("kitten", "sitting"); d != 3 {
		t.Errorf("editDistance(kitten, sitting) = %d, want 3", d)
	}
}

// TestRunOpProfile: --op-profile writes the emulator's time per op of each kernel when the run ends,
// and a path that cannot be written fails before the run.
func TestRunOpProfile(t *testing.T) {
	script := writeScript(t, `p = mil.program()
x = p.input("x", "fp16", [1, 64, 1, 32])
p.output(p.relu(name = "y", x = p.mul(name = "sq", x = x, y = x)))
k = ane.compile(p)
for _ in range(3):
    k.eval()
print("done")
`)
	prof := filepath.Join(t.TempDir(), "ops.txt")
	var out, errb bytes.Buffer
	if code := runScript([]string{script, "--backend", "emulator", "--relaxed", "--op-profile", prof}, &out, &errb); code != exitOK {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"# the emulator's time per op", "total ms", " inputs", " outputs"} {
		if !strings.Contains(text, want) {
			t.Errorf("profile has no %q:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`(?m)^\S+\s+\S+%\s+3\s+\S+\s+y\s+\d+\s+(chain of 2 from mul|mul|relu)\s`).MatchString(text) {
		t.Errorf("profile has no row of kernel y's op with 3 evals:\n%s", text)
	}
	errb.Reset()
	bad := filepath.Join(t.TempDir(), "no", "such", "ops.txt")
	if code := runScript([]string{script, "--backend", "emulator", "--relaxed", "--op-profile", bad}, &out, &errb); code != exitUsage {
		t.Fatalf("unwritable --op-profile: code %d, want %d (%s)", code, exitUsage, errb.String())
	}
	if !strings.Contains(errb.String(), "--op-profile") {
		t.Errorf("stderr %q names no flag", errb.String())
	}
}
