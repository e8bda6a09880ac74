package main

import (
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/anestar/anestar/metrics"
)

// TestCheckEstimates checks what `anestar check scripts/train_lm.star` estimates against a real run:
// at the default sizes and at a larger model, check's memory estimate against the peak RSS of a
// child process that trains 3 steps (its checkpoint and best state saved at the end, as a run does),
// within 25 %; and its step-time estimate against those steps' times (the fastest after the first,
// which pays for first touches), within a factor 2. The machine's sgemm peak is measured once, by
// the first check, in a cache of the test's own.
func TestCheckEstimates(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("trains the language model twice; under -race memory and time are the detector's")
	}
	cache := t.TempDir()
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"defaults", nil},
		{"dim384", []string{"--set", "dim=384", "--set", "heads=6", "--set", "kv_heads=6", "--set", "hidden=1024"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := tourDir(t)
			env := []string{"ANESTAR_CACHE_DIR=" + cache}
			out := runIn(t, dir, env, append([]string{"check", "scripts/train_lm.star"}, c.sets...)...)
			mem := estimated(t, out, `estimated memory: (\d+) MB`)
			step := estimated(t, out, `estimated step: (\d+) ms`)
			cmd := runAsCommand(append([]string{"scripts/train_lm.star", "--set", "steps=3", "--set", "eval_every=0",
				"--set", "val_frac=0.02", "--set", "metrics=m.jsonl"}, c.sets...)...)
			cmd.Dir = dir
			cmd.Env = append(cmd.Env, env...)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the run: %v\n%s", err, b)
			}
			rss := peakRSS(t, cmd.ProcessState.SysUsage())
			ms := stepTimes(t, filepath.Join(dir, "m.jsonl"))
			fastest := slices.Min(ms[1:])
			t.Logf("memory: estimated %.0f MB, peak RSS %.0f MB (%+.0f %%); step: estimated %.0f ms, measured %.0f ms (steps %v)",
				mem, rss/1e6, 100*(mem*1e6-rss)/rss, step, fastest, ms)
			if d := (mem*1e6 - rss) / rss; d > 0.25 || d < -0.25 {
				t.Errorf("memory estimate %.0f MB is %+.0f %% off the run's peak RSS %.0f MB", mem, 100*d, rss/1e6)
			}
			if r := step / fastest; r > 2 || r < 0.5 {
				t.Errorf("step estimate %.0f ms is %.2fx the run's %.0f ms", step, r, fastest)
			}
		})
	}
}

// runIn runs anestar with args in dir, with env added, and returns its output; a failure is fatal.
func runIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := runAsCommand(args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("anestar %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return string(b)
}

// estimated is the number the first group of pattern matches in out.
func estimated(t *testing.T, out, pattern string) float64 {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q in check's output:\n%s", pattern, out)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// peakRSS is the peak resident set in bytes of a process that ended with usage.
func peakRSS(t *testing.T, usage any) float64 {
	t.Helper()
	ru, ok := usage.(*syscall.Rusage)
	if !ok || ru.Maxrss <= 0 {
		t.Skip("no peak RSS of a child here")
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) // bytes
	}
	return float64(ru.Maxrss) * 1024 // kilobytes
}

// stepTimes are the ms of each step in a metrics file.
func stepTimes(t *testing.T, path string) []float64 {
	t.Helper()
	s, err := metrics.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	ms := s.Column("ms")
	if len(ms) < 2 {
		t.Fatalf("%s holds %d step times, want at least 2", path, len(ms))
	}
	return ms
}
