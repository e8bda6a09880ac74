package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSmallTour runs the README's small tour as written, each command in turn, in a fresh folder that
// holds the repository's scripts, data and mil folders (links), with this test binary as ./anestar
// and the build line skipped: every command must succeed.
func TestSmallTour(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's small tour")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	var tour string
	for _, b := range blocks {
		if strings.Contains(b[1], "S=\"--set") {
			tour = b[1]
		}
	}
	if tour == "" {
		t.Fatal("README.md has no small tour (a sh block that sets S)")
	}
	dir := tourDir(t)
	vars := map[string]string{}
	ran := 0
	for _, line := range strings.Split(strings.TrimSpace(tour), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "go build"):
			continue
		case regexp.MustCompile(`^\w+=".*"$`).MatchString(line):
			k, v, _ := strings.Cut(line, "=")
			vars[k] = strings.Trim(v, `"`)
			continue
		}
		for k, v := range vars {
			line = strings.ReplaceAll(line, "$"+k, v)
		}
		args := strings.Fields(line)
		if args[0] != "./anestar" {
			t.Fatalf("a tour line that is not ./anestar: %s", line)
		}
		cmd := exec.Command(os.Args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "ANESTAR_TEST_AS_COMMAND=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		ran++
	}
	if ran < 8 {
		t.Fatalf("the small tour ran %d commands", ran)
	}
	for _, f := range []string{"run.jsonl", "run.safetensors", "loss.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the tour left no %s: %v", f, err)
		}
	}
}

// tourDir is a fresh folder that holds the repository's scripts, data and mil folders and the more
// folders named (links), as a clone's working directory does.
func tourDir(t *testing.T, more ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range append([]string{"scripts", "data", "mil"}, more...) {
		abs, err := filepath.Abs(filepath.Join("../..", d))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
