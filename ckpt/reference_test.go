package ckpt

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceFile reads the file the safetensors Python library wrote (testdata/reference.py)
// and checks that Encode writes the same content to the very same bytes.
func TestReferenceFile(t *testing.T) {
	data, err := os.ReadFile("testdata/reference.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleFile(t)
	sameFile(t, f, want)
	if ours := encode(t, want); !bytes.Equal(ours, data) {
		t.Errorf("Encode differs from the reference writer:\n ours %q\n theirs %q", ours, data)
	}
}

// python returns the command for testdata/reference.py, or skips the test when /usr/bin/python3
// cannot import safetensors and torch (set PYTHONPATH to a build of it; see testdata/README.md).
func python(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	const py = "/usr/bin/python3"
	if out, err := exec.Command(py, "-c", "import safetensors.torch").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import safetensors.torch, so the reference library is not checked here (%v: %s); testdata/reference.safetensors still is", py, err, lastLine(out))
	}
	return exec.Command(py, append([]string{"testdata/reference.py"}, args...)...)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// TestPythonWritesWeRead has the reference library write the sample now and decodes it.
func TestPythonWritesWeRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "py.safetensors")
	cmd := python(t, "write", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reference.py write: %v\n%s", err, out)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, f, sampleFile(t))
}

// TestPythonReadsWeWrite saves the sample with Save and has the reference library and PyTorch
// load it and compare every value.
func TestPythonReadsWeWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "go.safetensors")
	if err := Save(path, sampleFile(t), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := python(t, "check", path).CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ok 12 tensors") {
		t.Fatalf("reference.py check: %v\n%s", err, out)
	}
}
