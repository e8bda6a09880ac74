package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestReadFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	paths := []string{dir}
	if runtime.GOOS != "windows" {
		paths = append(paths, "/dev/zero", "/dev/urandom")
		fifo := filepath.Join(dir, "fifo")
		if err := syscall.Mkfifo(fifo, 0o644); err == nil {
			paths = append(paths, fifo)
		}
	}
	for _, p := range paths {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(p, 0); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s: err %v, want ErrNotRegular", p, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadFile hangs", p)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	if b, err := ReadFile(p, 10); err != nil || string(b) != "0123456789" {
		t.Fatalf("%q, %v", b, err)
	}
	if _, err := ReadFile(p, 9); err == nil || !strings.Contains(err.Error(), "10 bytes") {
		t.Fatalf("limit 9: %v", err)
	}
}

func TestWithin(t *testing.T) {
	dir := t.TempDir()
	w := filepath.Join(dir, "weights")
	os.Mkdir(w, 0o755)
	os.WriteFile(filepath.Join(w, "a.bin"), []byte("a"), 0o644)
	outside := filepath.Join(dir, "secret")
	os.WriteFile(outside, []byte("s"), 0o644)
	if err := os.Symlink(outside, filepath.Join(w, "link.bin")); err != nil {
		t.Skip(err)
	}
	os.Symlink("a.bin", filepath.Join(w, "inner.bin"))
	if _, err := Within(w, "a.bin"); err != nil {
		t.Error(err)
	}
	if _, err := Within(w, "inner.bin"); err != nil {
		t.Errorf("a link inside the folder: %v", err)
	}
	if _, err := Within(w, "link.bin"); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("a link outside: %v", err)
	}
	if _, err := Within(w, "../secret"); err == nil {
		t.Error("../secret accepted")
	}
}

func TestLimitReader(t *testing.T) {
	r := LimitReader(strings.NewReader("0123456789"), 4, "stream")
	if _, err := io.ReadAll(r); err == nil || !strings.Contains(err.Error(), "more than 4 bytes") {
		t.Fatalf("%v", err)
	}
	r = LimitReader(strings.NewReader("0123"), 4, "stream")
	if b, err := io.ReadAll(r); err != nil || string(b) != "0123" {
		t.Fatalf("a stream of exactly the limit: %q, %v", b, err)
	}
}

func TestSame(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.txt")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.txt")
	if err := os.Link(a, hard); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(dir, "d")
	if err := os.Symlink(dir, dirLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{a, a, true}, {a, link, true}, {a, hard, true}, {a, filepath.Join(dir, ".", "a.txt"), true},
		{filepath.Join(dir, "new.bin"), filepath.Join(dirLink, "new.bin"), true},
		{a, filepath.Join(dir, "b.txt"), false}, {filepath.Join(dir, "x"), filepath.Join(dir, "y"), false},
	} {
		if got := Same(tc.a, tc.b); got != tc.want {
			t.Errorf("Same(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
