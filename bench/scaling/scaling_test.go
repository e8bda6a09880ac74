package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/tokenizer"
)

func TestParseShapes(t *testing.T) {
	got, err := parseShapes("15M, 260k,tiny=64/96/2/4/2/300/64/2")
	if err != nil {
		t.Fatal(err)
	}
	want := []shape{family[1], family[0], {"tiny", 64, 96, 2, 4, 2, 300, 64, 2, 4}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"7B", "15M,15M", "x=64/96/2/4/2/300/64", "x=64/96/2/3/2/300/64/2", "x=64/96/2/4/3/300/64/2",
		"x=64/96/2/4/2/70000/64/2", "x=64/96/0/4/2/300/64/2", "=64/96/2/4/2/300/64/2", "x=64/96/2/4/2/300/64/b"} {
		if _, err := parseShapes(bad); err == nil {
			t.Errorf("parseShapes(%q): no error", bad)
		}
	}
	m, err := parseModels([]string{"260k=/m/s260.bin"}, got)
	if err != nil || m["260K"] != "/m/s260.bin" || len(m) != 1 {
		t.Errorf("parseModels: %v, %v", m, err)
	}
	for _, bad := range []string{"42M=x.bin", "260K=", "260K"} {
		if _, err := parseModels([]string{bad}, got); err == nil {
			t.Errorf("parseModels(%q): no error", bad)
		}
	}
}

// The placeholder vocabulary encodes a prompt as run.c does with it: the space piece run.c puts first,
// then a byte piece per byte (no two pieces merge), and prints ids.
func TestPlaceholderVocab(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ids.bin")
	if err := placeholderVocab(path, 300); err != nil {
		t.Fatal(err)
	}
	tk, err := tokenizer.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{1, 259, 'O' + 3, 'n' + 3, 'c' + 3, 'e' + 3, 259, 'u' + 3}
	if got := tk.Encode("Once u", true, false); !slices.Equal(got, want) {
		t.Errorf("Encode(%q) = %v, want %v", "Once u", got, want)
	}
	if s, err := tk.Decode([]int{270, 299}); err != nil || s != "270 299 " {
		t.Errorf("Decode = %q, %v", s, err)
	}
	if err := placeholderVocab(path, 259); err == nil {
		t.Error("a vocabulary of 259: no error")
	}
}

func TestSpeedLines(t *testing.T) {
	m := sampleSpeed.FindStringSubmatch("generated 238 tokens in 2.50 s: 95.11 tokens/s (10.5 ms per token, prompt 18 tokens, the first token after 18.2 ms; 7 kernels compiled in all)")
	if m == nil || m[1] != "238" || m[2] != "95.11" || m[3] != "18" || m[4] != "18.2" || m[5] != "" {
		t.Errorf("sample.star's line: %q", m)
	}
	m = sampleSpeed.FindStringSubmatch("generated 64 tokens in 0.02 s: 3200.50 tokens/s (0.3 ms per token, prompt 17 tokens, the first token after 14.1 ms, then 9001.25 tokens/s; 2 kernels compiled in all)")
	if m == nil || m[1] != "64" || m[2] != "3200.50" || m[3] != "17" || m[4] != "14.1" || m[5] != "9001.25" {
		t.Errorf("sample.star's line with the rate after the first token: %q", m)
	}
	if m := runcSpeed.FindStringSubmatch("achieved tok/s: 82.658023\n"); m == nil || m[1] != "82.658023" {
		t.Errorf("run.c's line: %q", m)
	}
	g := medianGen([]genRun{{tokensS: 3, afterS: 4, firstMS: 9, tokens: 5}, {tokensS: 1, afterS: 6, firstMS: 7, tokens: 5}, {tokensS: 2, afterS: 5, firstMS: 8, tokens: 4}})
	if g.tokensS != 2 || g.afterS != 5 || g.firstMS != 8 || g.tokens != 5 {
		t.Errorf("medianGen = %+v", g)
	}
}

// A shape of one's own, end to end: the table has anestar's training and generation figures (and the
// peer's where PyTorch is installed).
func TestScalingTiny(t *testing.T) {
	t.Chdir("../..")
	var out, log bytes.Buffer
	c := config{shapes: "tiny=64/96/2/4/2/300/64/2", train: true, gen: true, steps: 4, threads: "1", genSteps: 8, reps: 1, prompt: "Once upon a time",
		python: "/usr/bin/python3", work: t.TempDir(), log: &log}
	if err := run(c, &out); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	s := out.String()
	train := regexp.MustCompile(`\| tiny \| 0\.\d\dM \| 2 × 64 \| 4 \| (\d+) \| (\d+) \| [0-9.]+ \(\d+ %\) \| (\d+ MB|-) \|`)
	if m := train.FindStringSubmatch(s); m == nil || m[1] == "0" || m[2] == "0" {
		t.Errorf("no training row with anestar's figures:\n%s", s)
	}
	gen := regexp.MustCompile(`\| tiny \| ([0-9.]+) \| ([0-9.]+) \| [0-9.]+ ms \| .* \| 8 \| - \| - \| - \|`)
	if m := gen.FindStringSubmatch(s); m == nil || m[1] == "0.0" || m[2] == "0.0" {
		t.Errorf("no generation row with anestar's figures (8 tokens, no run.c):\n%s", s)
	}
	// generation alone: no training table
	out.Reset()
	c.train = false
	if err := run(c, &out); err != nil {
		t.Fatalf("-train=false: %v\n%s", err, log.String())
	}
	if strings.Contains(out.String(), "Training:") || !gen.MatchString(out.String()) {
		t.Errorf("-train=false: want the generation table alone:\n%s", out.String())
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil && strings.Contains(log.String(), "pytorch 1t") && strings.Contains(s, "| - | - | - | - | - |") {
		t.Errorf("the peer ran but its columns are empty:\n%s", s)
	}
}
