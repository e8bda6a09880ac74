package builtins

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.starlark.net/starlark"
)

func TestExec(t *testing.T) {
	var got []string
	cfg := Config{Script: "testdata/process.star", Seed: 7, Resume: true,
		Args: []string{t.TempDir(), "a2"}, Argv: []string{"x.star", "--seed", "7"}}
	cfg.Exec = func(argv []string) error { got = argv; return nil }
	_, res, err := runStar(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x.star", "--seed", "7", "--resume"}
	if !reflect.DeepEqual(res.Exec, want) || !reflect.DeepEqual(got, want) {
		t.Errorf("exec argv = %q (hook saw %q), want %q", res.Exec, got, want)
	}
	m, err := os.ReadFile(filepath.Join(cfg.Args[0], "m.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wantLines := `{"step":1,"loss":0.5}` + "\n" + `{"step":2,"loss":0.25,"lr":0.001}` + "\n" + `{"step":3}` + "\n" // step first, then sorted
	if string(m) != wantLines {
		t.Errorf("metrics file:\n%s\nwant:\n%s", m, wantLines)
	}

	// A fresh run (no --resume) starts the metrics file anew: no step appears twice.
	fresh := Config{Script: "fresh.star", Args: []string{cfg.Args[0]},
		Source: []byte(`m = process.metrics(process.args[0] + "/m.jsonl")` + "\n" + `m.write(step = 9)` + "\n")}
	if _, _, err := runStar(t, fresh); err != nil {
		t.Fatal(err)
	}
	if m, _ := os.ReadFile(filepath.Join(cfg.Args[0], "m.jsonl")); string(m) != `{"step":9}`+"\n" {
		t.Errorf("metrics file after a fresh run:\n%s\nwant one line", m)
	}

	// Without an Exec hook, process.exec is an error.
	cfg.Exec = nil
	_, _, err = runStar(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "process.exec: this host cannot restart the program") {
		t.Errorf("exec without hook: err = %v", err)
	}
	// A failing hook is reported.
	cfg.Exec = func([]string) error { return errors.New("exec failed") }
	_, _, err = runStar(t, cfg)
	if err == nil || !strings.Contains(err.Error(), "process.exec: exec failed") {
		t.Errorf("failing exec: err = %v", err)
	}
}

func TestLoadCycle(t *testing.T) {
	_, _, err := runStar(t, Config{Script: "main.star", Source: []byte(`load("testdata/lib/cycle1.star", "x")`)})
	if err == nil || !strings.Contains(err.Error(), "cycle in load graph: testdata/lib/cycle1.star -> testdata/lib/cycle2.star -> testdata/lib/cycle1.star") {
		t.Errorf("err = %v", err)
	}
	_, _, err = runStar(t, Config{Script: "main.star", Source: []byte(`load("testdata/lib/none.star", "x")`)})
	if err == nil || !strings.Contains(err.Error(), "none.star") {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestCancel checks that an endless loop stops soon after its context is cancelled.
func TestCancel(t *testing.T) {
	for _, src := range []string{
		"while True:\n    pass\n",
		"x = tensor.zeros(64, 64)\nwhile True:\n    x.add_(1)\n",
	} {
		ctx, cancel := context.WithCancel(context.Background())
		start := time.Now()
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := Run(ctx, Config{Script: "loop.star", Source: []byte(src)})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%q: err = %v, want context.Canceled", src, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%q: stopped after %v, want under a second", src, d)
		}
	}
}

func TestPrintAndQuiet(t *testing.T) {
	src := []byte(`print("hello", 1)`)
	out, _, err := runStar(t, Config{Script: "p.star", Source: src})
	if err != nil || out != "hello 1\n" {
		t.Errorf("print: %q, %v", out, err)
	}
	out, _, err = runStar(t, Config{Script: "p.star", Source: src, Quiet: true})
	if err != nil || out != "" {
		t.Errorf("quiet print: %q, %v", out, err)
	}
}

func TestExtraBuiltins(t *testing.T) {
	cfg := Config{Script: "e.star", Source: []byte(`load("mine", "two")` + "\nr = twice(two)\n")}
	cfg.Builtins = starlark.StringDict{"twice": starlark.NewBuiltin("twice", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		var n int
		if err := starlark.UnpackArgs(b.Name(), args, kw, "n", &n); err != nil {
			return nil, err
		}
		return starlark.MakeInt(2 * n), nil
	})}
	cfg.Modules = map[string]starlark.StringDict{"mine": {"two": starlark.MakeInt(2)}}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Globals["r"]; got.String() != "4" {
		t.Errorf("r = %v, want 4", got)
	}
}

// TestWriteAndLog checks process.write (output without newlines, a print after it on a line of its own)
// and process.log (lines to Stderr), and that --quiet silences both.
func TestWriteAndLog(t *testing.T) {
	src := []byte(`process.write("ab"); process.write("c"); print("d"); process.log("x", 1, "y")`)
	for _, quiet := range []bool{false, true} {
		var out, errw bytes.Buffer
		if _, err := Run(context.Background(), Config{Script: "w.star", Source: src, Stdout: &out, Stderr: &errw, Quiet: quiet}); err != nil {
			t.Fatal(err)
		}
		wantOut, wantErr := "abc\nd\n", "x 1 y\n"
		if quiet {
			wantOut, wantErr = "", ""
		}
		if out.String() != wantOut || errw.String() != wantErr {
			t.Errorf("quiet %v: stdout %q, stderr %q; want %q, %q", quiet, out.String(), errw.String(), wantOut, wantErr)
		}
	}
}
