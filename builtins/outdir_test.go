package builtins

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
)

// A run's own output folder is out/SCRIPT in the working directory: process.outputs creates it when a
// declared path lies inside it (a dry run creates nothing and still passes), and still refuses any
// other missing folder.
func TestOutDirCreated(t *testing.T) {
	t.Chdir(t.TempDir())
	src := `print(process.out_dir)
process.outputs(checkpoint = process.out_dir + "/ckpt.safetensors", metrics = process.out_dir + "/logs/m.jsonl")
`
	run := func(dry bool, src string) (string, error) {
		var out bytes.Buffer
		_, err := Run(context.Background(), Config{Script: filepath.Join("scripts", "train_thing.star"), Source: []byte(src),
			Stdout: &out, DryRun: dry, Backend: emulator.New(emulator.Options{})})
		return out.String(), err
	}
	out, err := run(true, src)
	if err != nil || strings.TrimSpace(out) != filepath.Join("out", "train_thing") {
		t.Fatalf("dry run: %v, printed %q; want out/train_thing", err, out)
	}
	if _, err := os.Stat("out"); err == nil {
		t.Fatal("a dry run created out/")
	}
	if _, err := run(false, src); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"out/train_thing", "out/train_thing/logs"} {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Errorf("%s was not created: %v", d, err)
		}
	}
	if _, err := run(false, `process.outputs(checkpoint = "elsewhere/ckpt.safetensors")`); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("a missing folder outside out_dir: err %v, want a does-not-exist error", err)
	}
}
