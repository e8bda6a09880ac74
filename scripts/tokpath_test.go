package scripts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/ckpt"
)

// A checkpoint records its tokenizer relative to its own folder, so that sampling from it works from
// any working directory (it was recorded relative to where training ran).
func TestCheckpointTokenizerFoundFromAnyFolder(t *testing.T) {
	dir := t.TempDir()
	corpus, err := os.ReadFile(filepath.Join("..", "data", "Isaac.Newton-Opticks.txt"))
	if err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "text.txt")
	os.WriteFile(text, corpus[:30000], 0o644)
	os.Mkdir(filepath.Join(dir, "e"), 0o755)
	c := filepath.Join(dir, "e", "c.safetensors")
	p := lmSmall(dir, "data", quote(text), "vocab", "300", "steps", "2", "eval_every", "0", "ckpt", quote(c))
	delete(p, "metrics")
	mustRunLM(t, p, false)
	f, err := ckpt.Load(c)
	if err != nil {
		t.Fatal(err)
	}
	if rec := f.Metadata["lm/tokenizer"]; strings.Contains(rec, dir) || rec != `"c.tokenizer.bin"` {
		t.Errorf("the checkpoint records its tokenizer as %s, want a path relative to its folder", rec)
	}
	script, err := filepath.Abs("sample.star")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	var out, errb strings.Builder
	if _, err := builtins.Run(context.Background(), builtins.Config{
		Script: script, Backend: emulator.New(emulator.Options{}), Stdout: &out, Stderr: &errb,
		Params: map[string]string{"model": quote(c), "steps": "4", "temperature": "0"},
	}); err != nil {
		t.Fatalf("sample.star from another folder: %v\n%s", err, errb.String())
	}
	if out.Len() == 0 {
		t.Error("sample.star printed no text")
	}
}
