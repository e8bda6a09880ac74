package scripts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"go.starlark.net/starlark"
)

// small are the sizes the tests train at: a layer of 32 channels, 4 heads, 16 positions.
var small = map[string]string{"dim": "32", "hidden": "64", "heads": "4", "seq": "32"}

// with returns the small sizes plus the given settings (KEY, VALUE pairs, VALUE a Starlark literal).
func with(kv ...string) map[string]string {
	m := maps.Clone(small)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// quote makes a Starlark string literal.
func quote(s string) string { return strconv.Quote(s) }

// runScript runs script on a fresh emulator (a new process, as far as the compile count goes) and
// returns the result and the printed output. A restart request is recorded in Result.Exec.
func runScript(t *testing.T, script string, params map[string]string, opts emulator.Options, resume bool) (*builtins.Result, string) {
	t.Helper()
	var out bytes.Buffer
	argv := []string{"run", script}
	if resume {
		argv = append(argv, "--resume")
	}
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script:  script,
		Backend: emulator.New(opts),
		Params:  params,
		Resume:  resume,
		Stdout:  &out,
		Argv:    argv,
		Exec:    func([]string) error { return nil },
	})
	if err != nil {
		var ee *starlark.EvalError
		if errors.As(err, &ee) {
			t.Fatalf("%s: %s\noutput:\n%s", script, ee.Backtrace(), out.String())
		}
		t.Fatalf("%s: %v\noutput:\n%s", script, err, out.String())
	}
	return res, out.String()
}

// tensorDict converts a global dict of tensors.
func tensorDict(t *testing.T, res *builtins.Result, name string) map[string]*builtins.Tensor {
	t.Helper()
	d, ok := res.Globals[name].(*starlark.Dict)
	if !ok {
		t.Fatalf("global %s is %v, want a dict", name, res.Globals[name])
	}
	m := map[string]*builtins.Tensor{}
	for _, kv := range d.Items() {
		k, _ := starlark.AsString(kv[0])
		tv, ok := kv[1].(*builtins.Tensor)
		if !ok {
			t.Fatalf("%s[%q] is %s, want a tensor", name, k, kv[1].Type())
		}
		m[k] = tv
	}
	return m
}

// floatOf converts a Starlark number.
func floatOf(v starlark.Value) (float64, error) {
	f, ok := starlark.AsFloat(v)
	if !ok {
		return 0, fmt.Errorf("%v is not a number", v)
	}
	return f, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
