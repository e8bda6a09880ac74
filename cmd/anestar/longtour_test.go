package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// longTourSizes are the settings that keep each script of the README's long tour fast: a key the
// command does not set itself is added; one in force replaces the command's own value (a budget of
// wall time).
var longTourSizes = map[string]struct{ fill, force []string }{
	"scripts/train_layer.star": {fill: []string{"dim=128", "hidden=256", "heads=4", "seq=64", "steps=20", "accum=10"}},
	"scripts/dynamic.star":     {fill: []string{"dim=128", "hidden=256", "heads=4", "seq=64", "steps=20", "accum=10"}},
	"scripts/mlp.star":         {fill: []string{"epochs=2"}},
	"scripts/train_lm.star": {
		fill:  []string{"dim=64", "heads=4", "kv_heads=4", "hidden=128", "layers=2", "seq=32", "batch=2", "steps=4", "eval_every=2", "val_frac=0.02", "vocab=512"},
		force: []string{"budget=3"},
	},
	"scripts/sample.star": {fill: []string{"steps=20"}},
}

// TestLongTour runs every command of the README's long tour in turn, through sh as a user would type
// it, in a fresh folder that holds what a clone holds (links), with ./anestar this test binary: the
// scripts' runs at small sizes (longTourSizes), checks and tools as written. A command whose comment
// says "(exit status N)" must exit with N, every other with 0.
func TestLongTour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's long tour")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var tour string
	for _, b := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(b[1], "train_layer.star --help") {
			tour = b[1]
		}
	}
	if tour == "" {
		t.Fatal("README.md has no long tour (a sh block with train_layer.star --help)")
	}
	dir := tourDir(t, "bench")
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nANESTAR_TEST_AS_COMMAND=1 exec %s \"$@\"\n", strconv.Quote(self))
	if err := os.WriteFile(filepath.Join(dir, "anestar"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, line := range strings.Split(strings.ReplaceAll(tour, "\\\n", " "), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "go build") {
			continue
		}
		command, comment, _ := strings.Cut(line, " # ")
		want := 0
		if m := regexp.MustCompile(`exit status (\d+)`).FindStringSubmatch(comment); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		args := strings.Fields(command)
		if args[0] != "./anestar" {
			t.Fatalf("a tour line that is not ./anestar: %s", line)
		}
		command += smallSizes(args)
		cmd := exec.Command(sh, "-c", command)
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.CombinedOutput()
		t.Logf("%s (%.1f s)", command, time.Since(start).Seconds())
		got := 0
		if err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatalf("%s: %v", command, err)
			}
			got = ee.ExitCode()
		}
		if got != want {
			t.Fatalf("%s: exit status %d, want %d\n%s", command, got, want, out)
		}
		ran++
	}
	if ran < 25 {
		t.Fatalf("the long tour ran %d commands", ran)
	}
	for _, f := range []string{"run.jsonl", "run.safetensors", "loss.png", "tok.bin", "opticks.bin", "code.bin", "model.bin", "model.tokenizer.bin"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the tour left no %s: %v", f, err)
		}
	}
}

// smallSizes is what to add to a tour command (args) to run it at small sizes: nothing for anything
// but a script's run (a check, a tool, a script's --help).
func smallSizes(args []string) string {
	if len(args) < 2 || strings.Contains(strings.Join(args, " "), "--help") {
		return ""
	}
	s, ok := longTourSizes[args[1]]
	if !ok {
		return ""
	}
	given := map[string]bool{}
	for i, a := range args {
		if a == "--set" && i+1 < len(args) {
			k, _, _ := strings.Cut(args[i+1], "=")
			given[k] = true
		}
	}
	var b strings.Builder
	for _, kv := range s.fill {
		if k, _, _ := strings.Cut(kv, "="); !given[k] {
			b.WriteString(" --set " + kv)
		}
	}
	for _, kv := range s.force {
		if k, _, _ := strings.Cut(kv, "="); given[k] {
			b.WriteString(" --set " + kv)
		}
	}
	return b.String()
}
