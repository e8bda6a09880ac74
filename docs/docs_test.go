package docs_test

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
)

// firstBlock returns the first fenced block of the given language in a markdown file.
func firstBlock(t *testing.T, path, lang string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	start := strings.Index(s, "```"+lang+"\n")
	if start < 0 {
		t.Fatalf("%s: no ```%s block", path, lang)
	}
	s = s[start+len("```"+lang+"\n"):]
	end := strings.Index(s, "```")
	if end < 0 {
		t.Fatalf("%s: unterminated block", path)
	}
	return s[:end]
}

// TestKernelGuideExample runs the first example of kernels.md and checks that the kernel agrees with the
// host computation within fp16 accuracy.
func TestKernelGuideExample(t *testing.T) {
	src := firstBlock(t, "kernels.md", "python")
	var out bytes.Buffer
	_, err := builtins.Run(context.Background(), builtins.Config{
		Script:  "kernels_example.star",
		Source:  []byte(src),
		Backend: emulator.New(ane.Options{}),
		Stdout:  &out,
		Seed:    1,
	})
	if err != nil {
		t.Fatalf("example failed: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`max \|kernel - host\| = (\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("example printed no comparison:\n%s", out.String())
	}
	d, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	// 64 outputs of magnitude below 2, each rounded to fp16 twice (conv, silu): a norm well under 0.02.
	if d <= 0 || d > 0.02 {
		t.Errorf("kernel and host differ by %g, want (0, 0.02]", d)
	}
}
