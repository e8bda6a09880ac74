package scripts

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/tokenizer"
)

// stories15M writes a model of stories15M's shapes (dim 288, hidden 768, 6 layers, 6 heads, vocab
// 32000, seq 256) with llama2.c's random initialisation and a valid 32000-piece vocabulary (the
// reserved pieces, the bytes, then made-up words) into dir; it returns their paths.
func stories15M(b *testing.B, dir string) (model, tok string) {
	b.Helper()
	model, tok = filepath.Join(dir, "s15.bin"), filepath.Join(dir, "tok.bin")
	var out strings.Builder
	if _, err := builtins.Run(context.Background(), builtins.Config{
		Script: "testdata/llama2_random.star", Backend: emulator.New(emulator.Options{}), Stdout: &out,
		Params: map[string]string{"out": quote(model)},
	}); err != nil {
		b.Fatalf("%v\n%s", err, out.String())
	}
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n"}
	for c := range 256 {
		pieces = append(pieces, fmt.Sprintf("<0x%02X>", c))
	}
	for i := 0; len(pieces) < 32000; i++ {
		pieces = append(pieces, fmt.Sprintf(" w%d", i))
	}
	scores := make([]float32, len(pieces))
	for i := range scores {
		scores[i] = -float32(i)
	}
	v, err := tokenizer.New(pieces, scores)
	if err == nil {
		err = v.Save(tok)
	}
	if err != nil {
		b.Fatal(err)
	}
	return model, tok
}

// BenchmarkSampleStories15M generates 64 tokens greedily after a short prompt from a model of
// stories15M's shapes on the emulator (fp16), with the key/value cache and recomputing the window:
// tokens/s is sample.star's own figure (generation only); ns/op includes reading the model and compiling.
//
//	go test ./scripts -run XXX -bench Stories15M -benchtime 3x
func BenchmarkSampleStories15M(b *testing.B) {
	model, tok := stories15M(b, b.TempDir())
	speed := regexp.MustCompile(`: ([0-9.]+) tokens/s`)
	for _, cache := range []string{"True", "False"} {
		b.Run("cache="+cache, func(b *testing.B) {
			total := 0.0
			for range b.N {
				var stdout, stderr strings.Builder
				if _, err := builtins.Run(context.Background(), builtins.Config{
					Script: "sample.star", Backend: emulator.New(emulator.Options{}), Stdout: &stdout, Stderr: &stderr,
					Params: map[string]string{"model": quote(model), "tokenizer": quote(tok), "prompt": quote("w1 w2 w3"),
						"steps": "64", "temperature": "0", "cache": cache},
				}); err != nil {
					b.Fatal(err)
				}
				m := speed.FindStringSubmatch(stderr.String())
				if m == nil {
					b.Fatalf("no speed in %q", stderr.String())
				}
				v, _ := strconv.ParseFloat(m[1], 64)
				total += v
			}
			b.ReportMetric(total/float64(b.N), "tokens/s")
		})
	}
}
