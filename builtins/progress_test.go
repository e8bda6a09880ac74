package builtins

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

// progressScript reports four steps a second apart (tick advances the test clock), with a print
// between the second and third.
const progressScript = `
p = process.progress(4, every = 2.0)
p.update(1, loss = 2.5)
tick()
p.update(2, loss = 2.0)
print("hello")
tick()
p.update(3, loss = 1.5, lr = 0.25)
tick()
p.update(4, loss = 1.0)
p.done()
`

// runProgress runs src with a clock that tick() advances by a second and returns its output.
func runProgress(t *testing.T, src string, terminal, quiet bool) (string, error) {
	t.Helper()
	now := time.Unix(1e9, 0)
	var out strings.Builder
	cfg := Config{
		Script:   "p.star",
		Source:   []byte(src),
		Stdout:   &out,
		Terminal: terminal,
		Quiet:    quiet,
		Builtins: starlark.StringDict{"tick": starlark.NewBuiltin("tick", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			now = now.Add(time.Second)
			return starlark.None, nil
		})},
		now: func() time.Time { return now },
	}
	_, err := Run(context.Background(), cfg)
	return out.String(), err
}

func TestProgressOutput(t *testing.T) {
	// Not a terminal: plain lines, the first, then at most one per 2 s, and the last; no control codes.
	plain := "step 1/4  loss 2.5\n" +
		"hello\n" +
		"step 3/4  loss 1.5  lr 0.25  1000.0 ms/step  eta 1s\n" +
		"step 4/4  loss 1  1000.0 ms/step  elapsed 3s\n"
	// A terminal: every update redraws the line (the time between them is over 100 ms); print ends
	// the line first; a shorter line is padded over the longer one; done ends the line.
	l3 := "step 3/4  loss 1.5  lr 0.25  1000.0 ms/step  eta 1s"
	l4 := "step 4/4  loss 1  1000.0 ms/step  elapsed 3s"
	term := "\rstep 1/4  loss 2.5" +
		"\rstep 2/4  loss 2  1000.0 ms/step  eta 2s" +
		"\nhello\n" +
		"\r" + l3 +
		"\r" + l4 + strings.Repeat(" ", len(l3)-len(l4)) +
		"\n"
	for _, c := range []struct {
		terminal, quiet bool
		want            string
	}{
		{false, false, plain},
		{true, false, term},
		{false, true, ""},
		{true, true, ""},
	} {
		got, err := runProgress(t, progressScript, c.terminal, c.quiet)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("terminal %v, quiet %v: output\n%q\nwant\n%q", c.terminal, c.quiet, got, c.want)
		}
	}
}

// TestProgressEndsLine: a run that fails while a progress line is on the terminal ends that line, so
// that the error starts a line of its own; one that fails on a pipe shows the update it held back.
func TestProgressEndsLine(t *testing.T) {
	src := "p = process.progress(10)\np.update(1)\ntick()\np.update(2)\nfail('boom')\n"
	got, err := runProgress(t, src, true, false)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("error %v, want boom", err)
	}
	if want := "\rstep 1/10\rstep 2/10  1000.0 ms/step  eta 8s\n"; got != want {
		t.Errorf("terminal output %q, want %q", got, want)
	}
	got, _ = runProgress(t, src, false, false)
	if want := "step 1/10\nstep 2/10  1000.0 ms/step  eta 8s\n"; got != want {
		t.Errorf("plain output %q, want %q", got, want)
	}
}
