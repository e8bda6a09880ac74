package ckpt

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestChecksumCatchesBitFlips flips each byte of a saved file's data area in turn and checks that
// every flip is refused with an error naming the tensor, while the file as saved loads.
func TestChecksumCatchesBitFlips(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.safetensors")
	f := &File{Tensors: map[string]Tensor{}}
	f.Tensors["a"], _ = FromFloat32(F32, []int{3}, []float32{1, 2, 3})
	f.Tensors["b"], _ = FromInt64([]int{2}, []int64{7, -7})
	if err := Save(path, f, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	g, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Metadata[ChecksumKey]; ok {
		t.Errorf("Decode left %s in the metadata", ChecksumKey)
	}
	areaLen := 3*4 + 2*8
	for i := len(data) - areaLen; i < len(data); i++ {
		bad := append([]byte(nil), data...)
		bad[i] ^= 0x10
		_, err := Decode(bad)
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Tensor == "" || !strings.Contains(err.Error(), "corrupt") {
			t.Fatalf("flip at byte %d: %v", i, err)
		}
	}
}

// TestSaveHugeKeep checks that a huge keep costs what the existing rotated files cost, not keep.
func TestSaveHugeKeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.safetensors")
	done := make(chan error, 1)
	go func() {
		for g := 0; g < 3; g++ {
			if err := Save(path, generation(g), SaveOptions{Keep: 100000000}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Save with keep = 1e8 still runs after 30 s")
	}
	if g := loadGeneration(t, RotatedPath(path, 2)); g != 0 {
		t.Errorf("slot 2 holds generation %d, want 0", g)
	}
}

// TestSaveLeavesOtherProcessesTemps checks that a Save removes its own stale temporary files and
// those of dead processes, but never a running process's.
func TestSaveLeavesOtherProcessesTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.safetensors")
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip(err)
	}
	live := filepath.Join(dir, fmt.Sprintf(".c.safetensors.tmp-p%d-1", child.Process.Pid))
	gone := filepath.Join(dir, fmt.Sprintf(".c.safetensors.tmp-p%d-1", dead.Process.Pid))
	mine := filepath.Join(dir, fmt.Sprintf(".c.safetensors.tmp-p%d-9", os.Getpid()))
	for _, p := range []string{live, gone, mine} {
		os.WriteFile(p, []byte("partial"), 0o644)
	}
	if err := Save(path, generation(1), SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a running process's temporary file was removed: %v", err)
	}
	for _, p := range []string{gone, mine} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was left", filepath.Base(p))
		}
	}
}

// lockEnvChild names the checkpoint path a child process locks (see TestLockAcrossProcesses).
const lockEnvChild = "ANESTAR_CKPT_LOCK_CHILD"

// TestLockAcrossProcesses locks a path here and checks that a second process fails at once,
// naming this process's pid, and succeeds once the lock is released.
func TestLockAcrossProcesses(t *testing.T) {
	if p := os.Getenv(lockEnvChild); p != "" {
		l, err := Lock(p)
		if err != nil {
			fmt.Println(err)
			os.Exit(3)
		}
		l.Unlock()
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "c.safetensors")
	l, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(path); !errors.Is(err, ErrLocked) {
		t.Errorf("second Lock in one process: %v", err)
	}
	run := func() (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockAcrossProcesses$")
		cmd.Env = append(os.Environ(), lockEnvChild+"="+path)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run()
	if err == nil || !strings.Contains(out, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second process: %v, %q; want a failure naming pid %d", err, out, os.Getpid())
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if out, err := run(); err != nil {
		t.Fatalf("after Unlock: %v, %s", err, out)
	}
	if _, err := os.Stat(path + LockSuffix); err == nil {
		t.Error("the lock file remains after Unlock")
	}
}

// TestLoadRefusesSpecialFiles checks that Load errors at once on a device and a folder.
func TestLoadRefusesSpecialFiles(t *testing.T) {
	for _, p := range []string{"/dev/zero", "/dev/urandom", t.TempDir()} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestLockKeptAcrossExec: a child locks a path, execs itself, and locks it again in the new
// program (taking the inherited lock over); meanwhile this process cannot take it.
func TestLockKeptAcrossExec(t *testing.T) {
	switch os.Getenv(lockEnvChild + "_STAGE") {
	case "1":
		p := os.Getenv(lockEnvChild + "_PATH")
		if _, err := Lock(p); err != nil {
			fmt.Println("stage 1:", err)
			os.Exit(3)
		}
		if err := InheritLocks(); err != nil {
			fmt.Println("stage 1:", err)
			os.Exit(3)
		}
		os.Setenv(lockEnvChild+"_STAGE", "2")
		err := syscallExec(os.Args[0], os.Args, os.Environ())
		fmt.Println("exec:", err)
		os.Exit(3)
	case "2":
		if _, err := Lock(os.Getenv(lockEnvChild + "_PATH")); err != nil {
			fmt.Println("stage 2:", err)
			os.Exit(3)
		}
		fmt.Println("locked")
		var b [1]byte
		os.Stdin.Read(b[:]) // hold the lock until the parent closes stdin
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "c.safetensors")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockKeptAcrossExec$")
	cmd.Env = append(os.Environ(), lockEnvChild+"_STAGE=1", lockEnvChild+"_PATH="+path)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	buf := make([]byte, 256)
	n, _ := out.Read(buf)
	if got := strings.TrimSpace(string(buf[:n])); got != "locked" {
		t.Fatalf("child: %q", got)
	}
	_, err := Lock(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Fatalf("Lock while the exec'd child holds it: %v", err)
	}
}

// TestRemoveTemps: the temporary file of a Save in progress is removed by RemoveTemps (what the
// command calls before it exits on a second signal).
func TestRemoveTemps(t *testing.T) {
	p := filepath.Join(t.TempDir(), ".c.safetensors.tmp-p1-x")
	os.WriteFile(p, []byte("partial"), 0o644)
	active.Store(p, true)
	defer active.Delete(p)
	RemoveTemps()
	if _, err := os.Stat(p); err == nil {
		t.Fatal("the temporary file remains")
	}
}
