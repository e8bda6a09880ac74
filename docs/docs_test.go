package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

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
		Backend: emulator.New(emulator.Options{}),
		Stdout:  &out,
		Seed:    1,
	})
	if err != nil {
		t.Fatalf("example failed: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`\|\|kernel - host\|\| = (\S+)`).FindStringSubmatch(out.String())
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

// TestMetricsKeysDocumented runs each script named in metrics.md at a small size and checks that the keys
// of its metrics lines are exactly those the page lists.
func TestMetricsKeysDocumented(t *testing.T) {
	src, err := os.ReadFile("metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `(scripts/[a-z_]+\\.star)` \\| [a-z]+ \\| ([a-z_, ]+) \\|$").FindAllStringSubmatch(string(src), -1)
	if len(rows) != 3 {
		t.Fatalf("metrics.md: found %d script rows, want 3", len(rows))
	}
	small := map[string]map[string]string{
		"scripts/train_layer.star": {"dim": "32", "hidden": "64", "heads": "4", "seq": "32", "steps": "2", "accum": "1"},
		"scripts/dynamic.star":     {"dim": "32", "hidden": "64", "heads": "4", "seq": "32", "steps": "2", "accum": "1"},
		"scripts/mlp.star":         {"epochs": "1", "hidden": `"16"`, "shift": "0", "data": strconv.Quote("../data/digits.csv.gz")},
	}
	for _, row := range rows {
		script, want := row[1], strings.Split(row[2], ", ")
		t.Run(script, func(t *testing.T) {
			set, ok := small[script]
			if !ok {
				t.Fatalf("no small configuration for %s", script)
			}
			dir := t.TempDir()
			params := map[string]string{"metrics": strconv.Quote(dir + "/m.jsonl")}
			for k, v := range set {
				params[k] = v
			}
			if script != "scripts/mlp.star" {
				params["ckpt"] = strconv.Quote(dir + "/c.safetensors")
			}
			_, err := builtins.Run(context.Background(), builtins.Config{
				Script:  "../" + script,
				Backend: emulator.New(emulator.Options{}),
				Params:  params,
				Seed:    1,
			})
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(dir + "/m.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(string(data), "\n")
			var rec map[string]any
			if err := json.Unmarshal([]byte(first), &rec); err != nil {
				t.Fatalf("%s: %v", first, err)
			}
			var got []string
			for k := range rec {
				got = append(got, k)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, ", ") != strings.Join(want, ", ") {
				t.Errorf("%s writes keys %v, metrics.md lists %v", script, got, want)
			}
		})
	}
}
