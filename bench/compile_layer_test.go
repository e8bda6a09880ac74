package bench

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
)

// runScript runs script on the emulator with params and returns what it printed.
func runScript(t *testing.T, script string, params map[string]string) string {
	t.Helper()
	var out bytes.Buffer
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script:  script,
		Backend: emulator.New(emulator.Options{}),
		Params:  params,
		Stdout:  &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	return out.String()
}

// TestCompileLayer runs compile_layer.star at a small size and checks that it times every round.
func TestCompileLayer(t *testing.T) {
	out := runScript(t, "compile_layer.star", map[string]string{"dim": "32", "hidden": "64", "heads": "4", "seq": "32", "rounds": "2"})
	rounds := regexp.MustCompile(`(?m)^round \d: build \d+ ms, compile \d+ ms, total \d+ ms$`).FindAllString(out, -1)
	if len(rounds) != 2 {
		t.Errorf("want 2 timed rounds, got:\n%s", out)
	}
}
