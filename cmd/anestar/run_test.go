package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeScript writes a script into a temporary folder and returns its path.
func writeScript(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.star")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const paramScript = `P = params(
    steps = 3,  # how many steps
    lr = 0.5,
    name = "adam",
)
for i in range(P.steps):
    print("step", i, P.lr, P.name)
`

func TestRunExitCodes(t *testing.T) {
	script := writeScript(t, paramScript)
	failing := writeScript(t, "def f():\n    fail(\"boom\")\nf()\n")
	for _, c := range []struct {
		args     []string
		code     int
		out, err string // substrings of stdout and stderr
	}{
		{[]string{script, "--backend", "emulator"}, exitOK, "step 2 0.5 adam", ""},
		{[]string{script, "--set", "steps=1", "--set", "lr=2", "--set", "name=sgd"}, exitOK, "step 0 2.0 sgd", ""},
		{[]string{script, "--quiet"}, exitOK, "", ""},
		{[]string{script, "--set", "stpes=1"}, exitUsage, "", "--set stpes: " + script + " has no parameter stpes; did you mean steps? (its parameters: steps, lr, name)"},
		{[]string{script, "--set", "xyz=1"}, exitUsage, "", "--set xyz: " + script + " has no parameter xyz (its parameters: steps, lr, name)"},
		{[]string{script, "--set", "steps=x"}, exitUsage, "", "--set steps=x: not a Starlark value (steps is an int, default 3)"},
		{[]string{script, "--set", "steps=1.5"}, exitUsage, "", "steps is an int (default 3), got a float"},
		{[]string{script, "--set", "steps"}, exitUsage, "", "want KEY=VALUE"},
		{[]string{script, "--nosuchflag"}, exitUsage, "", "unknown flag: --nosuchflag"},
		{[]string{script, "--backend", "gpu"}, exitUsage, "", `unknown backend "gpu"`},
		{[]string{filepath.Join(t.TempDir(), "missing.star")}, exitUsage, "", "missing.star: no such script"},
		{[]string{}, exitUsage, "", "missing SCRIPT.star"},
		{[]string{failing}, exitError, "", "Error in fail: boom\n"},
		{[]string{failing, "--set", "b=1", "--set", "a=2"}, exitUsage, "", "--set a: " + failing + " declares no parameters (it calls params() nowhere)"},
		{[]string{t.TempDir()}, exitUsage, "", "is a folder; want a .star script"},
		{[]string{script, "--cpuprofile", "/no/such/folder/cpu.prof"}, exitUsage, "", "anestar run: --cpuprofile /no/such/folder/cpu.prof: the folder /no/such/folder does not exist"},
	} {
		var out, errb bytes.Buffer
		code := runScript(c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("run %q: code %d, stdout %q, stderr %q; want code %d, stdout with %q, stderr with %q",
				c.args, code, out.String(), errb.String(), c.code, c.out, c.err)
		}
	}
	// The backtrace names the script line.
	var out, errb bytes.Buffer
	runScript([]string{failing}, &out, &errb)
	if !strings.Contains(errb.String(), "s.star:3:2: in <toplevel>") {
		t.Errorf("no backtrace in %q", errb.String())
	}
	// dispatch sends a .star first argument to run.
	if code := dispatch([]string{script, "--quiet"}, &out, &errb); code != exitOK {
		t.Errorf("dispatch: code %d", code)
	}
}

func TestRunHelpListsParams(t *testing.T) {
	script := writeScript(t, paramScript+"fail('must not run')\n")
	var out, errb bytes.Buffer
	if code := runScript([]string{script, "--help"}, &out, &errb); code != exitOK {
		t.Fatalf("code %d, stderr %q", code, errb.String())
	}
	for _, want := range []string{"--backend", "--set", "steps = 3", "how many steps", "lr = 0.5", `name = "adam"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunExec(t *testing.T) {
	script := writeScript(t, "if not process.resume:\n    process.exec([\"--resume\"])\nprint(\"resumed\")\n")
	var got []string
	old := execProgram
	execProgram = func(argv []string) error { got = argv; return nil }
	defer func() { execProgram = old }()
	var out, errb bytes.Buffer
	if code := runScript([]string{script, "--seed", "3"}, &out, &errb); code != exitOK {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	want := []string{"run", script, "--seed", "3", "--resume"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("exec argv %q, want %q", got, want)
	}
	// The restarted command line runs to the end.
	out.Reset()
	if code := dispatch(got, &out, &errb); code != exitOK || out.String() != "resumed\n" {
		t.Errorf("restart: code %d, out %q, err %q", code, out.String(), errb.String())
	}
}

// TestRunRelaxed checks relaxed mode from the command line: a kernel the ANE refuses is an error by
// default, runs with --relaxed (also before the script: anestar --relaxed SCRIPT.star), and the run says
// that relaxed mode is on.
func TestRunRelaxed(t *testing.T) {
	script := writeScript(t, `p = mil.program()
x = p.input("x", "fp16", [1, 2, 1, 3])
p.output(p.exp(name = "y", x = x))
k = ane.compile(p)
print("compiled")
`)
	var out, errb bytes.Buffer
	if code := dispatch([]string{script, "--backend", "emulator"}, &out, &errb); code != exitError ||
		!strings.Contains(errb.String(), "op `y` (exp) is refused by the ANE") {
		t.Errorf("without --relaxed: code %d, stderr %q", code, errb.String())
	}
	for _, args := range [][]string{{"--relaxed", script, "--backend", "emulator"}, {script, "--relaxed"}, {"run", "--relaxed", script}} {
		out.Reset()
		errb.Reset()
		if code := dispatch(args, &out, &errb); code != exitOK || out.String() != "compiled\n" ||
			!strings.Contains(errb.String(), "anestar: relaxed mode: the emulator runs programs the ANE refuses") {
			t.Errorf("%q: code %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
}
