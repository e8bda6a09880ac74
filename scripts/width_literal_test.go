package scripts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoWidthLiteral: the libraries name the ANE's width rule (WIDTH_ALIGN, ane.width_align: the
// chip's, in one place) and never spell it as 32 in code or docstrings; comments may explain it. The
// one other 32 is dense.star's exponent 1/32, which is not a width.
func TestNoWidthLiteral(t *testing.T) {
	libs, err := filepath.Glob(filepath.Join("lib", "*.star"))
	if err != nil || len(libs) == 0 {
		t.Fatalf("no libraries: %v", err)
	}
	lit := regexp.MustCompile(`\b32\b`)
	for _, f := range libs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			code, _, _ := strings.Cut(line, "#") // no library has a # inside a string
			if lit.MatchString(code) && !strings.Contains(code, "1/32") && !strings.Contains(code, "1.0 / 32") {
				t.Errorf("%s:%d spells the width rule as 32: %s (use WIDTH_ALIGN from width.star)", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}
