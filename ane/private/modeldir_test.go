package private

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelDir(t *testing.T) {
	dir, err := modelDir("/var/folders/x/T", "A1B2C3_d4")
	if err != nil || dir != filepath.Join("/var/folders/x/T", "A1B2C3_d4") {
		t.Errorf("modelDir = %q, %v", dir, err)
	}
	for _, hex := range []string{"", ".", "..", "a/b", "../a", "a\\b", "a\x00"} {
		if _, err := modelDir("/tmp", hex); err == nil || !strings.Contains(err.Error(), "not a plain file name") {
			t.Errorf("modelDir(%q): %v, want an error", hex, err)
		}
	}
	if _, err := modelDir("", "abc"); err == nil {
		t.Errorf("modelDir with no temporary directory succeeded")
	}
}

func TestStageModel(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "HEX")
	files := []weightFile{
		{key: "@model_path/weights/a.bin", rel: "weights/a.bin", data: []byte("aaaa")},
		{key: "@model_path/deep/er/b.bin", rel: "deep/er/b.bin", data: []byte{}},
	}
	if err := stageModel(dir, []byte("program(1.3)\n"), files); err != nil {
		t.Fatal(err)
	}
	// Staging twice (a second kernel of the same program) overwrites in place.
	files[0].data = []byte("AAAA")
	if err := stageModel(dir, []byte("program(1.3)\n"), files); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"model.mil":     "program(1.3)\n",
		"weights/a.bin": "AAAA",
		"deep/er/b.bin": "",
	}
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("staged files %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestStageModelReportsErrors(t *testing.T) {
	root := t.TempDir()
	// A file where the weights folder should be.
	blocker := filepath.Join(root, "HEX")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := stageModel(blocker, nil, nil); err == nil || !strings.Contains(err.Error(), "model directory") {
		t.Errorf("staging over a file: %v", err)
	}
	dir := filepath.Join(root, "OK")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []weightFile{{key: "@model_path/sub/x/w.bin", rel: "sub/x/w.bin", data: []byte{1}}}
	if err := stageModel(dir, nil, bad); err == nil || !strings.Contains(err.Error(), `weight file "@model_path/sub/x/w.bin"`) {
		t.Errorf("weight under a file: %v", err)
	}
}

func TestDirUsers(t *testing.T) {
	d := &dirUsers{n: map[string]int{}}
	dir := filepath.Join(t.TempDir(), "m")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d.acquire(dir)
	d.acquire(dir)
	if err := d.release(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("removed with a user left: %v", err)
	}
	if err := d.release(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("not removed after its last user: %v", err)
	}
	if err := d.release(dir); err == nil {
		t.Errorf("unbalanced release succeeded")
	}
}
