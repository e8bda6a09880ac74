package builtins

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarktest"
)

// runStar runs a test script with the assert module and returns its output.
func runStar(t *testing.T, cfg Config) (string, *Result, error) {
	t.Helper()
	assert, err := starlarktest.LoadAssertModule()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cfg.Stdout = &out
	cfg.Modules = map[string]starlark.StringDict{"assert.star": assert}
	cfg.Setup = func(th *starlark.Thread) { starlarktest.SetReporter(th, t) }
	if cfg.Builtins == nil {
		cfg.Builtins = queueHooks()
	}
	if cfg.BackendName == "" && cfg.Backend == nil {
		// The test scripts try builtins on small programs, not ones the ANE would take: relaxed mode.
		cfg.BackendName = "emulator"
		cfg.Settings.Relaxed = true
	}
	res, err := Run(context.Background(), cfg)
	return out.String(), res, err
}

// TestScripts runs every testdata/*.star file; each asserts its own results with the assert module.
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.star")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no test scripts")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Script: f, Seed: 7, Args: []string{dir, "a2"}, Argv: []string{f, "--seed", "7"}}
			cfg.Params = fileOptions(t, f)
			cfg.Exec = func(argv []string) error { return nil }
			cfg.Resume = true
			_, _, err := runStar(t, cfg)
			if err != nil {
				if ee, ok := err.(*starlark.EvalError); ok {
					t.Fatal(ee.Backtrace())
				}
				t.Fatal(err)
			}
		})
	}
}

// fileOptions reads a test script's in-file options, in the manner of go.starlark.net's test files:
// each line "# option:set KEY=VALUE" sets the parameter KEY to the Starlark literal VALUE, as --set does.
func fileOptions(t *testing.T, path string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, line := range strings.Split(string(src), "\n") {
		opt, ok := strings.CutPrefix(strings.TrimSpace(line), "# option:")
		if !ok {
			continue
		}
		kv, ok := strings.CutPrefix(opt, "set ")
		k, v, found := strings.Cut(kv, "=")
		if !ok || !found {
			t.Fatalf("%s: unknown option %q (want \"# option:set KEY=VALUE\")", path, line)
		}
		params[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return params
}

// queueHooks returns hold_queue(q), which makes q's worker wait until release_queue(), so that
// scripts can test the holds of pending work deterministically.
func queueHooks() starlark.StringDict {
	var gate chan struct{}
	return starlark.StringDict{
		"hold_queue": starlark.NewBuiltin("hold_queue", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var q *queue
			if err := starlark.UnpackArgs(b.Name(), args, kw, "q", &q); err != nil {
				return nil, err
			}
			g := make(chan struct{})
			gate = g
			return starlark.None, q.submit("hold_queue", nil, nil, func() error { <-g; return nil })
		}),
		"release_queue": starlark.NewBuiltin("release_queue", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			close(gate)
			return starlark.None, nil
		}),
	}
}
