package builtins

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
)

// An overflowing program (its op sq built at line 4): its eval fails under the emulator's numerics check.
const overflowProgram = `p = mil.program()
x = p.input("x", "fp16", [1, 1, 1, 32])
m = p.matmul(x = p.transpose(x = x, perm = [0, 1, 3, 2]), y = x, name = "gram")
sq = p.mul(x = m, y = m, name = "sq")
p.output(p.reshape(x = sq, shape = [1, 32, 1, 32], name = "out"))
k = ane.compile(p)
k.inputs[0].fill(100.0)
`

// A started eval's error comes from wait(), as eval() gives it (the op and the line that built it); one
// that no wait() took is waited for when the run ends and its error given as a warning.
func TestStartErrors(t *testing.T) {
	run := func(src string) (error, string) {
		var warn bytes.Buffer
		_, err := Run(context.Background(), Config{
			Script: "overflow.star", Source: []byte(src), Stdout: &bytes.Buffer{}, Warn: &warn,
			Backend: emulator.New(emulator.Options{CheckNumerics: true, Relaxed: true}),
		})
		return err, warn.String()
	}
	err, _ := run(overflowProgram + "k.start()\nk.wait()\n")
	var ne *ane.NumericsError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "kernel.wait: ") || !strings.Contains(err.Error(), `(op "sq" was built at overflow.star:4:`) {
		t.Errorf("wait: %v; want kernel.wait's numerics error naming op sq and its line", err)
	}
	err, warn := run(overflowProgram + "k.start()\n")
	if err != nil {
		t.Fatalf("a run that never waits: %v", err)
	}
	if !strings.Contains(warn, "anestar: warning: an eval started by start() failed and no wait() reported it: ") || !strings.Contains(warn, "+Inf") {
		t.Errorf("warnings %q: want the unwaited eval's error", warn)
	}
}
