package builtins

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anestar/anestar/ckpt"
	"go.starlark.net/starlark"
)

func TestMergeFlags(t *testing.T) {
	for _, tc := range []struct{ argv, flags, want []string }{
		{[]string{"run", "s.star", "--set", "a=5"}, []string{"--set", "b=3"}, []string{"run", "s.star", "--set", "a=5", "--set", "b=3"}},
		{[]string{"run", "s.star", "--set", "a=5"}, []string{"--set", "a=6"}, []string{"run", "s.star", "--set", "a=6"}},
		{[]string{"run", "s.star", "--set=a=5", "--resume"}, []string{"--resume", "--set=a=7"}, []string{"run", "s.star", "--resume", "--set", "a=7"}},
		{[]string{"run", "s.star"}, []string{"--resume"}, []string{"run", "s.star", "--resume"}},
	} {
		got, err := mergeFlags(tc.argv, tc.flags)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("mergeFlags(%q, %q) = %q, %v; want %q", tc.argv, tc.flags, got, err, tc.want)
		}
	}
	if _, err := mergeFlags(nil, []string{"--set"}); err == nil {
		t.Error("a trailing --set accepted")
	}
	if _, err := mergeFlags(nil, []string{"--set", "novalue"}); err == nil {
		t.Error("--set without = accepted")
	}
}

// TestExecKeepsSettings: a script that restarts itself until a setting holds ends after one restart.
func TestExecKeepsSettings(t *testing.T) {
	src := "P = params(a = 0, b = 0)\nif P.b != 3:\n    process.exec([\"--set\", \"b=3\"])\n"
	var got []string
	cfg := Config{Script: "x.star", Source: []byte(src), Params: map[string]string{"a": "5"},
		Argv: []string{"run", "x.star", "--set", "a=5"}, Exec: func(argv []string) error { got = argv; return nil }}
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if want := []string{"run", "x.star", "--set", "a=5", "--set", "b=3"}; !slices.Equal(got, want) {
		t.Fatalf("exec with %q, want %q", got, want)
	}
}

// TestMetricsWriteErrorWarnsOnce writes metrics to /dev/full: every write fails, the run goes on,
// and one warning is printed.
func TestMetricsWriteErrorWarnsOnce(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	src := "log = process.metrics(\"/dev/full\")\nfor i in range(5):\n    log.write(step = i, loss = 1.0)\ndone = True\n"
	var warn bytes.Buffer
	res, err := Run(context.Background(), Config{Script: "m.star", Source: []byte(src), Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	if res.Globals["done"] == nil {
		t.Fatal("the script did not finish")
	}
	if n := strings.Count(warn.String(), "warning:"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, warn.String())
	}
}

// TestResumedMetricsDropLinesPastCheckpoint: given the step ckpt.load_state restored, 3 (steps done),
// as resume_from, a metrics file keeps the lines up to and including step 3 and loses the later ones,
// which a killed run wrote after its checkpoint; with --resume or without. Without resume_from a
// resumed run appends and drops nothing: loading a checkpoint alone does not touch the file.
func TestResumedMetricsDropLinesPastCheckpoint(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "m.jsonl")
	var lines string
	for i := 0; i < 6; i++ {
		lines += `{"step":` + string(rune('0'+i)) + `,"loss":1}` + "\n"
	}
	c := filepath.Join(dir, "c.safetensors")
	save := "W = {\"w\": tensor.ones(2)}\nckpt.save_state(" + quoteStar(c) + ", W, step = 3)\n"
	if _, err := Run(context.Background(), Config{Script: "s.star", Source: []byte(save)}); err != nil {
		t.Fatal(err)
	}
	kept := `{"step":0,"loss":1}` + "\n" + `{"step":1,"loss":1}` + "\n" + `{"step":2,"loss":1}` + "\n" + `{"step":3,"loss":1}` + "\n"
	for _, tc := range []struct {
		name, metrics string
		resume        bool
		want          string
	}{
		{"resume_from", "process.metrics(" + quoteStar(m) + ", resume_from = st.step)", true, kept},
		{"resume_from without --resume", "process.metrics(" + quoteStar(m) + ", resume_from = st.step)", false, kept},
		{"no resume_from", "process.metrics(" + quoteStar(m) + ")", true, lines},
	} {
		os.WriteFile(m, []byte(lines), 0o644)
		resume := "W = {\"w\": tensor.ones(2)}\nst = ckpt.load_state(" + quoteStar(c) + ", W)\nlog = " + tc.metrics + "\nlog.write(step = st.step + 1, loss = 0.5)\n"
		if _, err := Run(context.Background(), Config{Script: "r.star", Source: []byte(resume), Resume: tc.resume}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		data, _ := os.ReadFile(m)
		if want := tc.want + `{"step":4,"loss":0.5}` + "\n"; string(data) != want {
			t.Errorf("%s: metrics file:\n%s\nwant:\n%s", tc.name, data, want)
		}
	}
}

func quoteStar(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// TestCheckFailsOnUncreatableOutputFolder: the dry run (`anestar check`) of a script that declares a
// checkpoint in a folder no run could create (under a file) fails at once.
func TestCheckFailsOnUncreatableOutputFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	src := "process.outputs(checkpoint = " + quoteStar(file+"/no/c.safetensors") + ")\nprint(\"trained\")\n"
	var out bytes.Buffer
	_, err := Run(context.Background(), Config{Script: "c.star", Source: []byte(src), DryRun: true, Stdout: &out})
	if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "not a") || out.Len() > 0 {
		t.Fatalf("err %v, output %q", err, out.String())
	}
}

// A fresh run keeps a checkpoint an earlier run left at its path as PATH.prev (one generation), saying
// so; a resumed run saves over it as before.
func TestFreshRunKeepsEarlierCheckpoint(t *testing.T) {
	dir := t.TempDir()
	c := filepath.Join(dir, "c.safetensors")
	save := func(v string, resume bool) string {
		t.Helper()
		var errb strings.Builder
		src := "ckpt.save_state(" + quoteStar(c) + ", {\"w\": tensor.full([2], " + v + ")}, step = 1)\n" +
			"ckpt.save_state(" + quoteStar(c) + ", {\"w\": tensor.full([2], " + v + ")}, step = 2)\n"
		if _, err := Run(context.Background(), Config{Script: "s.star", Source: []byte(src), Resume: resume, Stderr: &errb}); err != nil {
			t.Fatal(err)
		}
		return errb.String()
	}
	first := func(path string) float32 {
		t.Helper()
		f, err := ckpt.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(f.Tensors["param/w"].Data))
	}
	if msg := save("1.0", false); strings.Contains(msg, ".prev") {
		t.Errorf("a first run with nothing to keep says %q", msg)
	}
	if _, err := os.Stat(c + ".prev"); err == nil {
		t.Fatal("a .prev with nothing to keep")
	}
	if msg := save("2.0", false); !strings.Contains(msg, c+".prev") {
		t.Errorf("the fresh run does not say where the earlier checkpoint went: %q", msg)
	}
	if a, b := first(c), first(c+".prev"); a != 2 || b != 1 {
		t.Errorf("checkpoint holds %v and .prev %v, want 2 and 1 (the second save of a run replaces its own first)", a, b)
	}
	save("3.0", true)
	if a, b := first(c), first(c+".prev"); a != 3 || b != 1 {
		t.Errorf("after a resume: checkpoint %v and .prev %v, want 3 and 1", a, b)
	}
	save("4.0", false)
	if a, b := first(c), first(c+".prev"); a != 4 || b != 3 {
		t.Errorf("after another fresh run: checkpoint %v and .prev %v, want 4 and 3 (one generation)", a, b)
	}
}

// No builtin that writes a file may replace the running script, and a metrics file is locked for
// its run as a checkpoint is.
func TestWritesRefuseScriptAndSharedMetrics(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.star")
	for _, call := range []string{
		`ckpt.save(SELF, {"w": tensor.ones(2)})`,
		`ckpt.save_state(SELF, {"w": tensor.ones(2)}, step = 1)`,
		`process.metrics(SELF)`,
		`tokenizer.train("abc abd abe", 262).save(SELF)`,
		`tensor.save_npy(SELF, tensor.ones(2))`,
	} {
		src := "SELF = " + quoteStar(script) + "\n" + call + "\n"
		if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), Config{Script: script})
		if err == nil || !strings.Contains(err.Error(), "is the running script") {
			t.Errorf("%s: err %v, want a refusal naming the running script", call, err)
		}
		if got, _ := os.ReadFile(script); string(got) != src {
			t.Errorf("%s: the script was changed", call)
		}
	}
	m := filepath.Join(dir, "m.jsonl")
	hold := "log = process.metrics(" + quoteStar(m) + ")\nlog.write(step = 1, loss = 1.0)\nanswer()\n"
	second := make(chan error, 1)
	answer := starlark.NewBuiltin("answer", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMetricsLockChild$")
		cmd.Env = append(os.Environ(), "ANESTAR_METRICS_LOCK_CHILD="+m)
		out, err := cmd.CombinedOutput()
		if err == nil {
			second <- nil
		} else {
			second <- fmt.Errorf("%v: %s", err, out)
		}
		return starlark.None, nil
	})
	if _, err := Run(context.Background(), Config{Script: "h.star", Source: []byte(hold), Builtins: starlark.StringDict{"answer": answer}}); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err == nil || !strings.Contains(err.Error(), "m.jsonl") {
		t.Errorf("a second run on the metrics file in use: %v, want it refused", err)
	}
	if data, _ := os.ReadFile(m); strings.Count(string(data), "\n") != 1 {
		t.Errorf("metrics file after the refused run:\n%s", data)
	}
}

// TestMetricsLockChild is the second run of TestWritesRefuseScriptAndSharedMetrics; alone it does nothing.
func TestMetricsLockChild(t *testing.T) {
	m := os.Getenv("ANESTAR_METRICS_LOCK_CHILD")
	if m == "" {
		t.Skip("run by TestWritesRefuseScriptAndSharedMetrics")
	}
	src := "log = process.metrics(" + quoteStar(m) + ", append = True)\nlog.write(step = 2, loss = 1.0)\n"
	if _, err := Run(context.Background(), Config{Script: "c.star", Source: []byte(src)}); err != nil {
		t.Fatal(err)
	}
}

// Random tensors refuse parameters that give no distribution: a negative or non-finite std, NaN or
// infinite bounds, low above high.
func TestRandomTensorsRefuseBadParameters(t *testing.T) {
	for _, call := range []string{
		"tensor.normal([4], std = -1.0)", `tensor.normal([4], std = float("inf"))`, `tensor.normal([4], mean = float("nan"))`,
		`tensor.uniform([4], low = float("nan"))`, `tensor.uniform([4], high = float("inf"))`, "tensor.uniform([4], low = 2.0, high = 1.0)",
	} {
		if _, err := Run(context.Background(), Config{Script: "r.star", Source: []byte(call + "\n")}); err == nil || !strings.Contains(err.Error(), "want") {
			t.Errorf("%s: err %v, want a refusal", call, err)
		}
	}
	if _, err := Run(context.Background(), Config{Script: "r.star", Source: []byte("tensor.normal([4], std = 0.0)\ntensor.uniform([4], low = 1.0, high = 1.0)\n")}); err != nil {
		t.Errorf("degenerate but valid distributions: %v", err)
	}
}

// TestStrayArgsWarned: positional arguments a script never reads are warned about; read, they are not.
func TestStrayArgsWarned(t *testing.T) {
	for _, c := range []struct {
		src  string
		warn bool
	}{{"print('hi')\n", true}, {"print(process.args)\n", false}} {
		var out, warn bytes.Buffer
		if _, err := Run(context.Background(), Config{Script: "a.star", Source: []byte(c.src), Args: []string{"data.txt"}, Stdout: &out, Warn: &warn}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(warn.String(), `never read process.args: the arguments ["data.txt"] did nothing`); got != c.warn {
			t.Errorf("%q: warning %q, want one: %v", c.src, warn.String(), c.warn)
		}
	}
}
