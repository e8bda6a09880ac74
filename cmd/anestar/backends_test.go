package main

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/anestar/anestar/cpu"
)

func TestBackendsCommand(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cpu.CacheDirEnv, dir)
	var out, errb bytes.Buffer
	if code := dispatch([]string{"backends"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"emulator", "available", "ane", "auto:", "host BLAS: " + cpu.CurrentBLASInfo().String(),
		", core ", "host sgemm peak: ", "cached in " + filepath.Join(dir, "peak-flops-")} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if runtime.GOOS != "darwin" && !strings.Contains(s, "unavailable") {
		t.Errorf("ane is not listed as unavailable on %s:\n%s", runtime.GOOS, s)
	}
	if code := dispatch([]string{"backends", "extra"}, &out, &errb); code != exitUsage {
		t.Errorf("backends extra: exit %d, want %d", code, exitUsage)
	}
}
