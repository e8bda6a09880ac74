package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
)

// blocks returns every fenced block of the given language in a markdown file, in order.
func blocks(t *testing.T, path, lang string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	s := string(src)
	for {
		start := strings.Index(s, "```"+lang+"\n")
		if start < 0 {
			return out
		}
		s = s[start+len("```"+lang+"\n"):]
		end := strings.Index(s, "```")
		if end < 0 {
			t.Fatalf("%s: unterminated block", path)
		}
		out = append(out, s[:end])
		s = s[end+3:]
	}
}

// runGuide runs a block of first-script.md as a script on the emulator, with strict ANE rules.
func runGuide(t *testing.T, src string, cfg builtins.Config) string {
	t.Helper()
	var out bytes.Buffer
	cfg.Script, cfg.Source, cfg.Stdout = "first.star", []byte(src), &out
	if !cfg.DryRun {
		cfg.Backend = emulator.New(emulator.Options{})
	}
	if _, err := builtins.Run(context.Background(), cfg); err != nil {
		t.Fatalf("%v\n%s\nscript:\n%s", err, out.String(), src)
	}
	return out.String()
}

// TestFirstScriptBlocks runs every script block of first-script.md; each checks its own results (fail()
// when the kernel and the host disagree) and the last is the training script, run by TestFirstScriptLoop.
func TestFirstScriptBlocks(t *testing.T) {
	bs := blocks(t, "first-script.md", "python")
	if len(bs) != 5 {
		t.Fatalf("first-script.md has %d python blocks, want 5", len(bs))
	}
	for i, src := range bs[:len(bs)-1] {
		t.Run(strconv.Itoa(i+1), func(t *testing.T) { runGuide(t, src, builtins.Config{Seed: 1}) })
	}
}

// TestFirstScriptLoop is the guide's check -> run -> resume loop on its training script: the dry run checks
// one program and trains nothing, the run lowers the loss, and the resumed run continues the metrics file
// from the step the checkpoint holds, with the optimizer's state, to the same losses as one longer run.
func TestFirstScriptLoop(t *testing.T) {
	bs := blocks(t, "first-script.md", "python")
	src := bs[len(bs)-1]
	dir := t.TempDir()
	set := func(name string, kv ...string) map[string]string {
		m := map[string]string{"ckpt": strconv.Quote(filepath.Join(dir, name+".safetensors")), "metrics": strconv.Quote(filepath.Join(dir, name+".jsonl"))}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	var res *builtins.Result
	{
		var out bytes.Buffer
		r, err := builtins.Run(context.Background(), builtins.Config{Script: "first.star", Source: []byte(src), Stdout: &out, DryRun: true, Params: set("dry")})
		if err != nil {
			t.Fatalf("dry run: %v\n%s", err, out.String())
		}
		res = r
	}
	if len(res.Checked) != 1 {
		t.Errorf("dry run checked %d programs, want 1", len(res.Checked))
	}
	if _, err := os.Stat(filepath.Join(dir, "dry.safetensors")); err == nil {
		t.Error("the dry run wrote a checkpoint")
	}
	runGuide(t, src, builtins.Config{Params: set("whole", "steps", "30")})
	runGuide(t, src, builtins.Config{Params: set("part", "steps", "15")})
	out := runGuide(t, src, builtins.Config{Resume: true, Params: set("part", "steps", "30")})
	if !strings.Contains(out, "resumed at step 15") {
		t.Errorf("resumed output:\n%s", out)
	}
	whole, part := guideLosses(t, filepath.Join(dir, "whole.jsonl")), guideLosses(t, filepath.Join(dir, "part.jsonl"))
	if len(whole) != 30 || len(part) != 30 {
		t.Fatalf("%d and %d steps logged, want 30", len(whole), len(part))
	}
	for i := range whole {
		if whole[i] != part[i] {
			t.Errorf("step %d: loss %g in one run, %g after the resume", i, whole[i], part[i])
		}
	}
	if !(whole[29] < 0.5*whole[0]) {
		t.Errorf("loss %g -> %g: want it at least halved", whole[0], whole[29])
	}
}

// guideLosses reads the loss of each step from a metrics file, checking that the steps run 1, 2, 3, ...
func guideLosses(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec struct {
			Step int     `json:"step"`
			Loss float64 `json:"loss"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if rec.Step != len(out)+1 { // the steps done: 1, 2, ...
			t.Fatalf("%s: step %d on line %d", path, rec.Step, len(out)+1)
		}
		out = append(out, rec.Loss)
	}
	return out
}
