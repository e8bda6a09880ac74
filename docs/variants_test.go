package docs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
)

// TestModelVariantsBlocks runs model-variants.md: every code block, whose first line names a file, is
// that file's text; every command trains and its loss falls over the 50 steps.
func TestModelVariantsBlocks(t *testing.T) {
	code := blocks(t, "model-variants.md", "python")
	if len(code) < 2 {
		t.Fatalf("model-variants.md: %d code blocks", len(code))
	}
	for _, b := range code {
		first, body, _ := strings.Cut(b, "\n")
		file := strings.TrimSpace(strings.TrimPrefix(first, "#"))
		src, err := os.ReadFile(filepath.Join("..", file))
		if err != nil {
			t.Fatalf("a block names %q: %v", first, err)
		}
		if !strings.Contains(string(src), body) {
			t.Errorf("the block of %s is not its text:\n%s", file, body)
		}
	}
	cmds := blocks(t, "model-variants.md", "sh")
	if len(cmds) != 3 {
		t.Fatalf("model-variants.md: %d commands, want 3", len(cmds))
	}
	set := regexp.MustCompile(`--set (\w+)=(\S+)`)
	for _, c := range cmds {
		fields := strings.Fields(c)
		if len(fields) < 2 || fields[0] != "anestar" {
			t.Fatalf("not an anestar command: %s", c)
		}
		params := map[string]string{}
		for _, m := range set.FindAllStringSubmatch(c, -1) {
			params[m[1]] = strings.Trim(m[2], "'")
		}
		var out bytes.Buffer
		_, err := builtins.Run(context.Background(), builtins.Config{
			Script: filepath.Join("..", fields[1]), Backend: emulator.New(emulator.Options{}), Params: params, Stdout: &out,
		})
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out.String())
		}
		m := regexp.MustCompile(`(?m)^step (\d+)/50 +loss (\d+\.\d+)`).FindAllStringSubmatch(out.String(), -1)
		if len(m) < 2 {
			t.Fatalf("%s: no step losses in:\n%s", c, out.String())
		}
		first, _ := strconv.ParseFloat(m[0][2], 64)
		last, _ := strconv.ParseFloat(m[len(m)-1][2], 64)
		t.Logf("%s: loss %.3f at step %s, %.3f at step %s", fields[2:4], first, m[0][1], last, m[len(m)-1][1])
		if !(last < first-0.5) {
			t.Errorf("%s: loss %.3f at step %s, %.3f at step %s: it did not fall\n%s", c, first, m[0][1], last, m[len(m)-1][1], out.String())
		}
	}
}
