package builtins

import (
	"errors"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"go.starlark.net/starlark"
)

// eligibleScript builds a kernel the ANE refuses (I/O 48 wide) and one it accepts, and reports
// ane.eligible's verdict on each.
const eligibleScript = `load("assert.star", "assert")
def prog(width):
    p = mil.program()
    x = p.input("x", "fp16", [1, 4, 1, width])
    w = p.const(tensor.ones(4, 4, 1, 1))
    p.output(p.conv(name = "y", x = x, weight = w))
    return p
bad, good = prog(48), prog(32)
vb, vg = ane.eligible(bad), ane.eligible(good)
assert.eq(vb.support, "refused")
assert.eq(vg.support, "proven")
assert.eq(vg.ops, ["const", "conv"])
refused = [f for f in vb.findings if f.support == "refused"]
assert.eq([f.rule for f in refused], ["io-width", "io-width"])
assert.eq(refused[1].what, "output ` + "`y`" + `")
assert.true("pad it to 64" in refused[1].text)
k = ane.compile(good)
`

func TestEligibleBuiltin(t *testing.T) {
	if _, _, err := runStar(t, Config{Script: "eligible.star", Source: []byte(eligibleScript), BackendName: "emulator"}); err != nil {
		t.Fatal(err)
	}
	// ane.compile refuses the ineligible program on a strict emulator, with the check's message and type.
	src := eligibleScript + "ane.compile(bad)\n"
	_, _, err := runStar(t, Config{Script: "eligible.star", Source: []byte(src), BackendName: "emulator"})
	var ee *starlark.EvalError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "output `y` has width 48: the ANE needs a multiple of 32") {
		t.Fatalf("compile of the refused program: %v", err)
	}
	// In relaxed mode it compiles.
	_, _, err = runStar(t, Config{Script: "eligible.star", Source: []byte(src), BackendName: "emulator", Settings: ane.Settings{Relaxed: true}})
	if err != nil {
		t.Fatalf("relaxed: %v", err)
	}
	// A dry run records the verdict and goes on.
	_, res, err := runStar(t, Config{Script: "eligible.star", Source: []byte(src), BackendName: "emulator", DryRun: true})
	if err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if len(res.Checked) != 2 || res.Checked[0].Verdict.Support() != ane.Proven || res.Checked[1].Verdict.Support() != ane.Refused {
		t.Errorf("dry run checked %d programs: %+v", len(res.Checked), res.Checked)
	}
}
