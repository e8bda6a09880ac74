package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSnapshot: a script's folder (its .star files, lib/ included, testdata not) and a peer's file are
// copied, so that editing the tree after compare starts changes nothing its runs read.
func TestSnapshot(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("scripts/train_lm.star", `load("lib/lm.star", "x")`)
	write("scripts/lib/lm.star", "x = 1")
	write("scripts/testdata/big.star", "y = 2")
	write("scripts/notes.go", "package scripts")
	write("peers/torch_lm.py", "print(1)")
	c := config{script: filepath.Join(src, "scripts/train_lm.star"), peer: filepath.Join(src, "peers/torch_lm.py"),
		basePeer: filepath.Join(src, "peers/missing.py")}
	if err := snapshotAll(&c, dst); err != nil {
		t.Fatal(err)
	}
	write("scripts/lib/lm.star", "x = 3") // edited after the start: the copy keeps the old text
	for path, want := range map[string]string{c.script: `load("lib/lm.star", "x")`, filepath.Join(filepath.Dir(c.script), "lib/lm.star"): "x = 1", c.peer: "print(1)"} {
		b, err := os.ReadFile(path)
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", path, b, err, want)
		}
	}
	for _, gone := range []string{"testdata/big.star", "notes.go"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(c.script), gone)); err == nil {
			t.Errorf("%s was copied", gone)
		}
	}
	if c.basePeer != filepath.Join(src, "peers/missing.py") || c.baseScript != "" {
		t.Errorf("a missing peer or an empty script changed: %q, %q", c.basePeer, c.baseScript)
	}
	if _, err := snapshot(dst, filepath.Join(src, "scripts/none.star")); err == nil {
		t.Error("a missing script: no error")
	}
}
