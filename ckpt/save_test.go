package ckpt

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// generation returns checkpoint number g: a few hundred kilobytes whose every byte depends on g.
func generation(g int) *File {
	r := rand.New(rand.NewPCG(uint64(g), 99))
	return &File{
		Tensors: map[string]Tensor{
			"param/w":   randomTensor(r, F32, []int{256, 256}),
			"optim/w/m": randomTensor(r, F32, []int{256, 256}),
			"optim/w/v": randomTensor(r, F32, []int{256, 256}),
			"rng/data":  randomTensor(r, U8, []int{1 + g%97}),
		},
		Metadata: map[string]string{"gen": strconv.Itoa(g)},
	}
}

// loadGeneration loads path and checks that it is exactly some generation; it returns which.
func loadGeneration(t *testing.T, path string) int {
	t.Helper()
	f, err := Load(path)
	if err != nil {
		t.Fatalf("checkpoint does not load: %v", err)
	}
	g, err := strconv.Atoi(f.Metadata["gen"])
	if err != nil {
		t.Fatalf("%s: bad gen %q", path, f.Metadata["gen"])
	}
	sameFile(t, f, generation(g))
	return g
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	f := sampleFile(t)
	if err := Save(path, f, SaveOptions{Perm: 0o600}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	sameFile(t, got, f)
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode())
	}
	onDisk, _ := os.ReadFile(path)
	sealed, err := withChecksums(f)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, encode(t, sealed)) {
		t.Error("saved bytes differ from Encode's of the file with its checksums")
	}
	if _, err := Load(filepath.Join(dir, "missing.safetensors")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	os.WriteFile(path, onDisk[:len(onDisk)-1], 0o644)
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": byte ") {
		t.Errorf("truncated file: got %v, want an error naming the path and offset", err)
	}
	// A tensor that fails validation leaves the previous file alone and no temporary behind.
	os.WriteFile(path, onDisk, 0o644)
	bad := &File{Tensors: map[string]Tensor{"x": {DType: F32, Shape: []int{2}}}}
	if err := Save(path, bad, SaveOptions{}); err == nil {
		t.Error("Save of an invalid tensor succeeded")
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, onDisk) {
		t.Error("a failed Save changed the file")
	}
	assertNoTemps(t, dir)
}

func assertNoTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestSaveRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	// Stale temporaries from a killed save, for the file and a rotated copy, and an unrelated file.
	os.WriteFile(filepath.Join(dir, ".ckpt.safetensors.tmp-123"), []byte("junk"), 0o644)
	os.WriteFile(filepath.Join(dir, ".ckpt.1.safetensors.tmp-link"), []byte("junk"), 0o644)
	os.WriteFile(filepath.Join(dir, "keep.me"), []byte("x"), 0o644)
	for g := 1; g <= 5; g++ {
		if err := Save(path, generation(g), SaveOptions{Keep: 2}); err != nil {
			t.Fatal(err)
		}
	}
	for k, want := range []int{5, 4, 3} {
		p := path
		if k > 0 {
			p = RotatedPath(path, k)
		}
		if g := loadGeneration(t, p); g != want {
			t.Errorf("%s holds generation %d, want %d", p, g, want)
		}
	}
	if _, err := os.Stat(RotatedPath(path, 3)); err == nil {
		t.Error("a third old checkpoint was kept")
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.me")); err != nil {
		t.Error("an unrelated file was removed")
	}
	assertNoTemps(t, dir)
}

func TestRotatedPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		k    int
		want string
	}{
		{"ckpt.safetensors", 1, "ckpt.1.safetensors"},
		{"/a/b.c/run.safetensors", 12, "/a/b.c/run.12.safetensors"},
		{"dir.x/ckpt", 2, "dir.x/ckpt.2"},
		{".ckpt", 3, ".ckpt.3"},
	} {
		if got := RotatedPath(tc.in, tc.k); got != tc.want {
			t.Errorf("RotatedPath(%q, %d) = %q, want %q", tc.in, tc.k, got, tc.want)
		}
	}
}

// killEnv names the directory a child process saves into, looping until it is killed.
const killEnv = "ANESTAR_CKPT_KILL_CHILD"

// TestSaveKilled starts a child that saves checkpoints in a loop, SIGKILLs it at a random
// moment, and checks that the file on disk is exactly the last generation the child reported
// saved or the one after it, and that the rotated copy loads too. Repeated 30 times
// (ANESTAR_KILL_ROUNDS=N for N).
func TestSaveKilled(t *testing.T) {
	if dir := os.Getenv(killEnv); dir != "" {
		saveForever(dir)
		return
	}
	if testing.Short() {
		t.Skip("re-executes the test binary 30 times")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := Save(path, generation(0), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	start, midSave := 0, 0
	rounds := 30
	if n, err := strconv.Atoi(os.Getenv("ANESTAR_KILL_ROUNDS")); err == nil && n > 0 {
		rounds = n // bench/reliability runs 100
	}
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSaveKilled$")
		cmd.Env = append(os.Environ(), killEnv+"="+dir, fmt.Sprintf("ANESTAR_CKPT_KILL_START=%d", start+1))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var last atomic.Int64
		last.Store(int64(start))
		began := time.Now()
		first := make(chan time.Duration, 1) // how long the child took to start and save once
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if g, err := strconv.Atoi(strings.TrimPrefix(sc.Text(), "saved ")); err == nil {
					if last.Swap(int64(g)) == int64(start) {
						first <- time.Since(began)
					}
				}
			}
		}()
		// Let the child complete one save, then kill it somewhere within about one more.
		select {
		case d := <-first:
			time.Sleep(time.Duration(r.Int64N(int64(d) + 1)))
		case <-done:
		case <-time.After(time.Minute):
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("round %d: the child ended by itself (%v): %s", round, err, stderr.Bytes())
		}
		l := int(last.Load())
		if entries, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(entries) > 0 {
			midSave++ // the kill interrupted a save
		}
		g := loadGeneration(t, path)
		if g != l && g != l+1 {
			t.Fatalf("round %d: file holds generation %d; the child had reported %d saved", round, g, l)
		}
		if old := RotatedPath(path, 1); l > 1 {
			if og := loadGeneration(t, old); og != g-1 && og != g {
				t.Fatalf("round %d: rotated copy holds generation %d, file %d", round, og, g)
			}
		}
		start = g
	}
	t.Logf("%d saves completed; %d of %d kills interrupted a save; the checkpoint was intact after all %d", start, midSave, rounds, rounds)
	if start < 5 {
		t.Errorf("the children completed only %d saves in all; the kills tested little", start)
	}
	// The next save cleans what the killed ones left.
	if err := Save(path, generation(start+1), SaveOptions{Keep: 1}); err != nil {
		t.Fatal(err)
	}
	assertNoTemps(t, dir)
}

// saveForever is the child of TestSaveKilled: it saves generation after generation into dir,
// printing each one it completed.
func saveForever(dir string) {
	g, _ := strconv.Atoi(os.Getenv("ANESTAR_CKPT_KILL_START"))
	for ; ; g++ {
		if err := Save(filepath.Join(dir, "ckpt.safetensors"), generation(g), SaveOptions{Keep: 1}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Printf("saved %d\n", g)
	}
}

// TestRotateOverSameFile covers the state a Save killed between its rotation and its final rename leaves:
// path and path.1 are hard links to one file. The next Save must rotate and leave no temporary file.
func TestRotateOverSameFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if err := Save(path, generation(1), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, RotatedPath(path, 1)); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := Save(path, generation(2), SaveOptions{Keep: 1}); err != nil {
		t.Fatal(err)
	}
	if g := loadGeneration(t, path); g != 2 {
		t.Errorf("path holds generation %d, want 2", g)
	}
	if g := loadGeneration(t, RotatedPath(path, 1)); g != 1 {
		t.Errorf("rotated copy holds generation %d, want 1", g)
	}
	assertNoTemps(t, dir)
}
