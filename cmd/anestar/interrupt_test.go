package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMain lets the tests run this test binary as the anestar command itself (see runAsCommand).
func TestMain(m *testing.M) {
	if os.Getenv("ANESTAR_TEST_AS_COMMAND") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// runAsCommand returns a command that runs anestar with args, as a separate process.
func runAsCommand(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ANESTAR_TEST_AS_COMMAND=1")
	return cmd
}

// TestInterruptExits130 starts a script that loops for ever, sends it SIGINT (Ctrl-C) and checks that the
// process stops within seconds with exit code 130 and the message "interrupted".
func TestInterruptExits130(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT on windows")
	}
	script := filepath.Join(t.TempDir(), "forever.star")
	src := "print(\"started\")\nt = tensor.zeros(64, 64)\nwhile True:\n    t.add_(1.0)\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := runAsCommand(script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "started\n" {
		cmd.Process.Kill()
		t.Fatalf("first line %q, %v", line, err)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("still running 20 s after SIGINT")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("exit: %v, want code %d; stderr:\n%s", err, exitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say interrupted:\n%s", stderr.String())
	}
	t.Logf("stopped %v after SIGINT", time.Since(sent).Round(time.Millisecond))
}
