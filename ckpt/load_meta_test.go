package ckpt

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLoadMeta: the metadata comes from the header alone, equal to Load's; a file cut inside its
// header is a FormatError.
func TestLoadMeta(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.safetensors")
	f := &File{Tensors: map[string]Tensor{"w": {DType: F32, Shape: []int{2}, Data: make([]byte, 8)}}, Metadata: map[string]string{"lm/model": `{"dim": 64}`, "k": "v"}}
	if err := Save(path, f, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err := LoadMeta(path)
	if err != nil {
		t.Fatal(err)
	}
	full, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m["lm/model"] != `{"dim": 64}` || m["k"] != "v" {
		t.Errorf("metadata %v", m)
	}
	for k, v := range full.Metadata {
		if m[k] != v {
			t.Errorf("metadata %q: %q from the header, %q from Load", k, m[k], v)
		}
	}
	b, _ := os.ReadFile(path)
	cut := filepath.Join(dir, "cut.safetensors")
	os.WriteFile(cut, b[:12], 0o644)
	if _, err := LoadMeta(cut); err == nil {
		t.Errorf("a header cut short: no error")
	}
}

// FuzzLoadMeta: any bytes give metadata or an error, never a panic or a huge allocation.
func FuzzLoadMeta(f *testing.F) {
	f.Add([]byte("\x0e\x00\x00\x00\x00\x00\x00\x00{\"__metadata__\":{}}"))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xff\x7f{}"))
	f.Add([]byte("\x02\x00\x00\x00\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "f.safetensors")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		LoadMeta(path)
	})
}
