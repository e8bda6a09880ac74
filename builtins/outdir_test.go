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
	if _, err := run(true, `process.outputs(checkpoint = "elsewhere/deeper/ckpt.safetensors")`); err != nil {
		t.Errorf("dry run of a new folder outside out_dir: %v", err)
	} else if _, err := os.Stat("elsewhere"); err == nil {
		t.Errorf("a dry run created elsewhere/")
	}
	if _, err := run(false, `process.outputs(checkpoint = "elsewhere/deeper/ckpt.safetensors")`); err != nil {
		t.Errorf("a new folder outside out_dir: %v", err)
	} else if st, err := os.Stat("elsewhere/deeper"); err != nil || !st.IsDir() {
		t.Errorf("elsewhere/deeper was not created: %v", err)
	}
	if err := os.WriteFile("afile", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		if _, err := run(dry, `process.outputs(checkpoint = "afile/sub/ckpt.safetensors")`); err == nil || !strings.Contains(err.Error(), "afile") {
			t.Errorf("dry %v: a folder under a file: err %v, want an error naming afile", dry, err)
		}
	}
}
