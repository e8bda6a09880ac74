package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Write replaces the file whole with the permissions asked for and leaves no temporary file; a write
// into a folder that does not exist fails and creates nothing.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(name, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(name, []byte("new"), 0o640); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v; want \"new\"", got, err)
	}
	if st, _ := os.Stat(name); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the folder, want only the file", len(ents))
	}
	if err := Write(filepath.Join(dir, "no", "f"), []byte("x"), 0o644); err == nil {
		t.Error("Write into a missing folder succeeded")
	}
}
