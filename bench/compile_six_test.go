package bench

import (
	"bytes"
	"context"
	"regexp"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
)

// TestCompileSix runs compile_six.star at a small size and checks that it times every round.
func TestCompileSix(t *testing.T) {
	var out bytes.Buffer
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script:  "compile_six.star",
		Backend: emulator.New(emulator.Options{}),
		Params:  map[string]string{"dim": "32", "hidden": "64", "heads": "4", "seq": "32", "rounds": "2"},
		Stdout:  &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rounds := regexp.MustCompile(`(?m)^round \d: build \d+ ms, compile \d+ ms, total \d+ ms$`).FindAllString(out.String(), -1)
	if len(rounds) != 2 {
		t.Errorf("want 2 timed rounds, got:\n%s", out.String())
	}
}
