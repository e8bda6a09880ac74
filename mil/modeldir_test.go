package mil

import (
	"os"
	"path/filepath"
	"testing"
)

// A model directory holds the printed program and its weight files at their @model_path places; weight
// paths that would leave the directory are refused.
func TestWriteModelDir(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", Tensor(FP16, 1, 2, 1, 32))
	w := b.Weight("w", FP16, []int{2, 2, 1, 1}, []float32{1, 2, 3, 4})
	b.Output(b.Conv("y", x, w, nil))
	p, weights, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "m")
	if err := WriteModelDir(dir, p, weights); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, ModelFile))
	if err != nil || string(text) != Print(p) {
		t.Fatalf("model.mil = %q, %v; want the printed program", text, err)
	}
	for key, data := range weights {
		rel, err := WeightFileRel(key)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || string(got) != string(data) {
			t.Errorf("%s: read %d bytes (%v), want the %d weight bytes", key, len(got), err, len(data))
		}
	}
	for _, bad := range []string{"weights/w.bin", "@model_path/../w.bin", "@model_path//etc/passwd", "@model_path/", "@model_path/a/../../b"} {
		if _, err := WeightFileRel(bad); err == nil {
			t.Errorf("WeightFileRel(%q) accepted a path outside the model directory", bad)
		}
	}
}
