package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkScriptSrc builds one kernel whose sizes are parameters and stops in a dry run before the
// training loop.
const checkScriptSrc = `P = params(
    dim = 8,     # width
    hidden = 16, # FFN width
    seq = 32,
)
if P.hidden % P.dim:
    fail("hidden %d is not a multiple of dim %d; set hidden to a multiple" % (P.hidden, P.dim))

def ffn():
    p = mil.program()
    x = p.input("x", "fp16", [1, P.dim, 1, P.seq])
    w = p.weight("w", tensor.ones(P.hidden, P.dim), shape = [P.hidden, P.dim, 1, 1])
    h = p.conv(name = "h", x = x, weight = w, strides = [1, 1], pad_type = "valid", pad = [0, 0, 0, 0], dilations = [1, 1], groups = 1)
    p.output(p.relu(name = "y", x = h))
    return ane.compile(p)

k = ffn()
k.inputs[0].fill(1)
print("built")
if process.dry_run:
    print("dry run: stopping")
else:
    k.eval()
    print("trained")
`

func TestCheck(t *testing.T) {
	script := writeScript(t, checkScriptSrc)
	var out, errb bytes.Buffer
	if code := checkScript([]string{script}, &out, &errb); code != exitOK {
		t.Fatalf("code %d: %s", code, errb.String())
	}
	// The script's prints, then each program checked (16x8 fp16 weights: 64 + 64 header bytes and
	// 256 data bytes), then ok with the time.
	want := regexp.MustCompile(`^chip \S+: [^\n]+
built
dry run: stopping
checked \S+s\.star:15:23 in ffn from line 17: 2 ops, 6 consts, weights 384 B
  in  x tensor<fp16, \[1, 8, 1, 32\]>
  out y tensor<fp16, \[1, 16, 1, 32\]>
  ane: eligible \(every op and I/O proven on hardware\)
ok: 1 program checked in \d+ms
$`)
	if !want.MatchString(out.String()) {
		t.Errorf("stdout:\n%s\nwant to match\n%s", out.String(), want)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr %q", errb.String())
	}

	// --quiet leaves only what was checked (and the chip it was checked for); --set changes the sizes.
	out.Reset()
	if code := checkScript([]string{script, "--quiet", "--set", "dim=4", "--set", "seq=64"}, &out, &errb); code != exitOK {
		t.Fatalf("--set: code %d: %s", code, errb.String())
	}
	if s := out.String(); !strings.HasPrefix(s, "chip ") || !strings.Contains(s, "\nchecked ") || !strings.Contains(s, "in  x tensor<fp16, [1, 4, 1, 64]>") {
		t.Errorf("--quiet --set: stdout %q", s)
	}
	// A width the ANE refuses: the verdict names the I/O, the rule and the fix, and check exits 1.
	out.Reset()
	errb.Reset()
	if code := checkScript([]string{script, "--quiet", "--set", "seq=24"}, &out, &errb); code != exitError {
		t.Errorf("seq=24: code %d, want %d", code, exitError)
	}
	for _, want := range []string{"ane: refused (2 refusals, 0 warnings)",
		"refused [io-width]: input `x` has width 24: the ANE needs at least 32 (narrower I/O compiles, then fails at dispatch); pad it to 32",
		"refused [io-width]: output `y` has width 24"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("seq=24: stdout %q lacks %q", out.String(), want)
		}
	}
	if want := "check failed: the ANE refuses 1 program of 1"; !strings.Contains(errb.String(), want) {
		t.Errorf("seq=24: stderr %q lacks %q", errb.String(), want)
	}
	errb.Reset()
	// The same script runs for real.
	out.Reset()
	if code := runScript([]string{script, "--backend", "emulator"}, &out, &errb); code != exitOK || out.String() != "built\ntrained\n" {
		t.Errorf("run: code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

func TestCheckFailures(t *testing.T) {
	script := writeScript(t, checkScriptSrc)
	noStop := writeScript(t, strings.Replace(checkScriptSrc, "if process.dry_run:", "if False:", 1))
	noKernels := writeScript(t, "print(1)\n")
	for _, c := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{script, "--set", "hidden=12"}, exitError, "",
			"Error in fail: hidden 12 is not a multiple of dim 8; set hidden to a multiple\ncheck failed after "},
		{[]string{noStop}, exitError, "checked ",
			"Error in kernel.eval: dry run: the kernel compiled at " + noStop + ":15:23 was only checked; stop before evaluating kernels when process.dry_run is True"},
		{[]string{noKernels}, exitOK, "ok: 0 programs checked", ""},
		{[]string{noKernels}, exitOK, "does it build its kernels when process.dry_run is True?", ""},
		{[]string{script, "--set", "dimm=3"}, exitUsage, "", "anestar check: --set dimm: " + script + " has no parameter dimm; did you mean dim?"},
		{[]string{script, "--set", "dim=8.5"}, exitUsage, "", "dim is an int (default 8), got a float"},
		{[]string{script, "--backend", "gpu"}, exitUsage, "", `anestar check: unknown backend "gpu"`},
		{[]string{script, "--fp32", "--check-numerics", "--relaxed", "--seed", "3"}, exitOK, "ok: 1 program checked", ""},
		{[]string{script, "--cpuprofile", "x"}, exitUsage, "", "unknown flag: --cpuprofile"},
		{[]string{}, exitUsage, "", "anestar check: missing SCRIPT.star"},
		{[]string{"nope.star"}, exitUsage, "", "anestar check: nope.star: no such script"},
		{[]string{"--help", script}, exitOK, "  dim = 8      width\n  hidden = 16  FFN width\n", ""},
	} {
		var out, errb bytes.Buffer
		code := checkScript(c.args, &out, &errb)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errb.String(), c.err) {
			t.Errorf("check %q: code %d, stdout %q, stderr %q; want code %d, stdout with %q, stderr with %q",
				c.args, code, out.String(), errb.String(), c.code, c.out, c.err)
		}
	}
	// dispatch knows the command.
	var out, errb bytes.Buffer
	if code := dispatch([]string{"check", script, "--quiet"}, &out, &errb); code != exitOK {
		t.Errorf("dispatch check: code %d, %s", code, errb.String())
	}
}

func TestCheckFormats(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{{300 * time.Microsecond, "0ms"}, {25 * time.Millisecond, "25ms"}, {999 * time.Millisecond, "999ms"}, {1534 * time.Millisecond, "1.53s"}} {
		if got := formatElapsed(c.d); got != c.want {
			t.Errorf("formatElapsed(%v) = %q, want %q", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {3 << 20, "3.0 MiB"}} {
		if got := formatBytes(c.n); got != c.want {
			t.Errorf("formatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	if plural(1, "op") != "1 op" || plural(0, "op") != "0 ops" || plural(2, "const") != "2 consts" {
		t.Error("plural")
	}
}
