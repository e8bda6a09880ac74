package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A 400 MB token file trains with the memory of a small one: it is checked a MiB at a time and only
// the windows drawn are read (a sparse file: its ids are zeros, read from holes, nothing written to
// disk). Its run's peak RSS stays within 100 MB of a 4000-token file's (the issue allows 400), also
// under a 4 GB address limit.
func TestLargeTokenFileMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("reads 400 MB; under -race memory is the detector's")
	}
	dir := tourDir(t)
	big := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(400 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	small := filepath.Join("scripts", "testdata", "lm_ref", "tokens.bin")
	args := func(data string) []string {
		return []string{"scripts/train_lm.star", "--set", "data=" + data, "--set", "val_data=" + small,
			"--set", "dim=64", "--set", "layers=2", "--set", "heads=4", "--set", "hidden=192", "--set", "vocab=300",
			"--set", "seq=32", "--set", "batch=2", "--set", "steps=2", "--set", "eval_every=0", "--set", "ckpt=",
			"--set", "best=", "--set", "metrics="}
	}
	rss := map[string]float64{}
	for _, data := range []string{small, big} {
		cmd := runAsCommand(args(data)...)
		cmd.Dir = dir
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", data, err, b)
		}
		if want := "train 3600 tokens"; data == big {
			if want = "train 209715200 tokens"; !strings.Contains(string(b), want) {
				t.Fatalf("%s: no %q in\n%s", data, want, b)
			}
		}
		rss[data] = peakRSS(t, cmd.ProcessState.SysUsage())
	}
	t.Logf("peak RSS: %.0f MB with 4000 tokens, %.0f MB with 400 MB of them", rss[small]/1e6, rss[big]/1e6)
	if rss[big] > rss[small]+100e6 {
		t.Errorf("a 400 MB token file took %.0f MB of peak RSS, a small one %.0f MB", rss[big]/1e6, rss[small]/1e6)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to set an address limit")
	}
	line := "ulimit -v 4194304 && exec \"$@\""
	cmd := exec.Command("sh", append([]string{"-c", line, "sh", os.Args[0]}, args(big)...)...)
	cmd.Env = append(os.Environ(), "ANESTAR_TEST_AS_COMMAND=1")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(b), "step 2 val_loss") {
		t.Errorf("under a 4 GB address limit: %v\n%s", err, b)
	}
}
