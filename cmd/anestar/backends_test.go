package main

import (
	"bytes"
	"encoding/json"
	"os"
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

// TestBackendsRecalibrate: --recalibrate replaces a cached peak (here one made absurdly low, as a
// measurement on a busy machine would be) with a new measurement, and says so.
func TestBackendsRecalibrate(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(cpu.CacheDirEnv, dir)
	if cpu.RecalibratePeakFLOPS() == 0 { // writes the cache file in dir (PeakFLOPS may have it in memory already)
		t.Skip("no BLAS loads here")
	}
	path := cpu.PeakFLOPSFile()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pf map[string]any
	if err := json.Unmarshal(raw, &pf); err != nil {
		t.Fatal(err)
	}
	pf["flops"] = 2e6
	low, _ := json.Marshal(pf)
	if err := os.WriteFile(path, low, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"backends", "--recalibrate"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "(measured now, cached in "+path+")") {
		t.Errorf("output:\n%s", out.String())
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pf); err != nil {
		t.Fatal(err)
	}
	if f, _ := pf["flops"].(float64); !(f > 1e9) {
		t.Errorf("the cache holds %v FLOP/s after --recalibrate", pf["flops"])
	}
	if code := dispatch([]string{"backends", "--fast"}, &out, &errb); code != exitUsage {
		t.Errorf("backends --fast: exit %d, want %d", code, exitUsage)
	}
}
