package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func TestBackendsCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"backends"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"emulator", "available", "ane", "auto:", "host BLAS:"} {
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
