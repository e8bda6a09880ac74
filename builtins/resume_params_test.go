package builtins

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"go.starlark.net/starlark"
)

// On resume every parameter the checkpoint recorded is compared with the run's: a structural one that
// differs is refused, naming both values; the others that differ are named in a note.
func TestResumeComparesParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.safetensors")
	src := `P = params(dim = 4, lr = 0.5, steps = 10)
W = {"w": tensor.ones(4)}
opt = optim.adam(W)
if SAVE:
    ckpt.save_state(PATH, W, optim = opt, step = 3, structural = ["dim"])
else:
    st = ckpt.load_state(PATH, W, optim = opt)
    print("resumed at", st.step)
`
	run := func(save bool, params map[string]string) (string, error) {
		var out bytes.Buffer
		_, err := Run(context.Background(), Config{
			Script: "resume.star", Source: []byte(src), Params: params, Stdout: &out,
			Backend:  emulator.New(emulator.Options{}),
			Builtins: starlark.StringDict{"SAVE": starlark.Bool(save), "PATH": starlark.String(path)},
		})
		return out.String(), err
	}
	if _, err := run(true, nil); err != nil {
		t.Fatal(err)
	}
	out, err := run(false, nil)
	if err != nil || strings.Contains(out, "changed") || !strings.Contains(out, "resumed at 3") {
		t.Fatalf("same parameters: %v\n%s", err, out)
	}
	out, err = run(false, map[string]string{"lr": "0.25", "steps": "20"})
	if err != nil || !strings.Contains(out, "lr 0.5 → 0.25") || !strings.Contains(out, "steps 10 → 20") {
		t.Errorf("lr and steps changed: err %v, output %q; want a note naming both", err, out)
	}
	_, err = run(false, map[string]string{"dim": "8"})
	if err == nil || !strings.Contains(err.Error(), "dim = 4, this run has dim = 8") || !strings.Contains(err.Error(), "--set dim=4") {
		t.Errorf("structural dim changed: err %v; want a refusal naming both values and the fix", err)
	}
}
