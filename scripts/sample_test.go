package scripts

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/builtins"
	"github.com/anestar/anestar/tokenizer"
	"go.starlark.net/starlark"
)

// llama2Dir holds the PyTorch generator's llama2.c models (ckpt/testdata/llama2/gen.py): dim 64,
// hidden 172, 2 layers, 4 heads, 2 kv heads, vocab 300, seq 32; tied in version 0, untied in version 1.
var llama2Dir = filepath.Join("..", "ckpt", "testdata", "llama2")

// llama2Expected is the part of the generator's expected.json these tests read.
type llama2Expected struct {
	Tokens    []int  `json:"tokens"`
	Prompt    string `json:"prompt"`
	PromptIDs []int  `json:"prompt_ids"`
	Models    map[string]struct {
		File   string `json:"file"`
		Logits string `json:"logits"`
		Greedy []int  `json:"greedy"`
	} `json:"models"`
}

func readLlama2Expected(t *testing.T) llama2Expected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(llama2Dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e llama2Expected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Models) != 2 {
		t.Fatalf("expected.json has %d models, want tied and untied", len(e.Models))
	}
	return e
}

func intList(ids []int) string { return strings.ReplaceAll(fmt.Sprint(ids), " ", ", ") }

// TestLlama2LogitsAgainstPyTorch runs the generator's models on the forward kernels in fp32 mode
// (their hidden of 172, which the packed kernels take as it is), one window at a time and a token
// at a time through the key/value cache, and compares the logits of every position with PyTorch's: each row's largest difference within 1e-4 of that row's largest magnitude.
func TestLlama2LogitsAgainstPyTorch(t *testing.T) {
	e := readLlama2Expected(t)
	// fp16: the window's kernels, and the cache's whose steps are the whole model's program
	// (lm_decode.star's dec_model, its residual and norms in fp16 too); both come within 1.5e-2 of
	// PyTorch's logits on these models (logits up to 11; the window's, its residual and norms on
	// the host in fp32, as far off as the cache's), so the bound is 2e-2 there, and the cache's
	// logits against the window's (two fp16 computations, rounded in other places) within 1e-2
	for _, c := range []struct {
		name, file, logits, cache string
		fp16                      bool
	}{
		{"tied", e.Models["tied"].File, e.Models["tied"].Logits, "False", false},
		{"untied", e.Models["untied"].File, e.Models["untied"].Logits, "False", false},
		{"tied_cache", e.Models["tied"].File, e.Models["tied"].Logits, "True", false},
		{"untied_cache", e.Models["untied"].File, e.Models["untied"].Logits, "True", false},
		{"tied_cache_fp16", e.Models["tied"].File, e.Models["tied"].Logits, "True", true},
		{"untied_cache_fp16", e.Models["untied"].File, e.Models["untied"].Logits, "True", true},
		{"tied_fp16", e.Models["tied"].File, e.Models["tied"].Logits, "False", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			numerics, bound, same := emulator.FP32, 1e-4, 1e-5
			if c.fp16 {
				numerics, bound, same = emulator.FP16, 2e-2, 1e-2
			}
			var out strings.Builder
			res, err := builtins.Run(context.Background(), builtins.Config{
				Script: "testdata/llama2_logits.star", Backend: emulator.New(emulator.Options{Numerics: numerics}),
				Params: map[string]string{"model": quote(filepath.Join(llama2Dir, c.file)), "tokens": intList(e.Tokens), "cache": c.cache}, Stdout: &out,
			})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if h := res.Globals["kernels_hidden"].String(); h != "172" {
				t.Errorf("kernels' hidden %s, want the file's 172 (packed kernels take it as it is)", h)
			}
			got := tensorData(t, res.Globals["logits"])
			if c.cache == "True" {
				if res.Globals["fed"].String() != fmt.Sprint(len(e.Tokens)) {
					t.Errorf("the decoder ran %s tokens for %d positions, want each once", res.Globals["fed"], len(e.Tokens))
				}
				// the same numerics both ways: in fp32 the same sums in another order
				d, _ := starlark.AsFloat(res.Globals["slid_diff"])
				if !(d < same) {
					t.Errorf("past seq: the cache's logits differ from the window's of the last seq/2 tokens by %.3g (relative L2)", d)
				}
				t.Logf("past seq, the cache against the window of the last seq/2 tokens: %.2g (relative L2)", d)
				if d, _ := starlark.AsFloat(res.Globals["other_diff"]); !(d < same) {
					t.Errorf("another text: the cache's logits differ from the window's by %.3g (relative L2)", d)
				}
				if res.Globals["restaged_equal"] != starlark.True {
					t.Error("after stage() with new weights the decoder's logits differ from a fresh decoder's")
				}
				if res.Globals["appended_equal"] != starlark.True || res.Globals["appended_slid_equal"] != starlark.True {
					t.Errorf("append's logits differ from next_logits' (token by token %s, past seq %s)", res.Globals["appended_equal"], res.Globals["appended_slid_equal"])
				}
			}
			want := readNpy(t, filepath.Join(llama2Dir, c.logits))
			vocab := len(want) / len(e.Tokens)
			if len(got) != len(want) || vocab != 300 {
				t.Fatalf("%d logits, want %d (300 per position)", len(got), len(want))
			}
			worst := 0.0
			for r := range e.Tokens {
				g, w := got[r*vocab:(r+1)*vocab], want[r*vocab:(r+1)*vocab]
				var dmax, wmax float64
				for i := range w {
					dmax = math.Max(dmax, math.Abs(float64(g[i])-float64(w[i])))
					wmax = math.Max(wmax, math.Abs(float64(w[i])))
				}
				if rel := dmax / wmax; !(rel <= bound) {
					t.Errorf("position %d: largest difference %.3g is %.3g of the row's largest logit %.3g, bound %.0e", r, dmax, rel, wmax, bound)
				} else {
					worst = math.Max(worst, rel)
				}
			}
			t.Logf("largest difference relative to its row's largest logit: %.2g", worst)
		})
	}
}

// runSample runs sample.star on the emulator and returns the result, its standard output and error.
func runSample(t *testing.T, mode emulator.Numerics, params map[string]string) (*builtins.Result, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	res, err := builtins.Run(context.Background(), builtins.Config{
		Script: "sample.star", Backend: emulator.New(emulator.Options{Numerics: mode}), Params: params,
		Stdout: &stdout, Stderr: &stderr, Argv: []string{"run", "sample.star"},
	})
	if err != nil {
		t.Fatalf("sample.star: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return res, stdout.String(), stderr.String()
}

// runCText is what llama2.c's run.c prints for ids (BOS first): each piece as its decode() makes it
// (the leading space of the piece after BOS dropped, <0xHH> as the byte) through safe_printf, which
// leaves out a one-byte piece that is neither printable nor space in the C locale; a newline at the end.
func runCText(tok *tokenizer.Tokenizer, ids []int) string {
	var b strings.Builder
	for i := 1; i < len(ids); i++ {
		p := tok.Piece(ids[i])
		if ids[i-1] == 1 && strings.HasPrefix(p, " ") {
			p = p[1:]
		}
		var c byte
		if n, _ := fmt.Sscanf(p, "<0x%02X>", &c); n == 1 && len(p) == 6 {
			p = string([]byte{c})
		}
		if len(p) == 1 && !(p[0] >= 0x20 && p[0] < 0x7f || strings.IndexByte(" \t\n\v\f\r", p[0]) >= 0) {
			continue
		}
		b.WriteString(p)
	}
	return b.String() + "\n"
}

// TestSampleGreedy generates greedily from the generator's models in fp32 mode, with the key/value cache
// and recomputing the window: the ids are PyTorch's
// greedy continuation, standard output is exactly the prompt and the decoded continuation and a
// newline (the figures go to standard error), and run.c's output (runc.*.txt) is what run.c prints for
// these ids.
func TestSampleGreedy(t *testing.T) {
	e := readLlama2Expected(t)
	tok, err := tokenizer.Load(filepath.Join(llama2Dir, "tokenizer.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, cache string }{{"tied", "True"}, {"untied", "True"}, {"tied", "False"}, {"untied", "False"}} {
		name, m := c.name, e.Models[c.name]
		t.Run(name+"_cache_"+c.cache, func(t *testing.T) {
			res, stdout, stderr := runSample(t, emulator.FP32, map[string]string{
				"model": quote(filepath.Join(llama2Dir, m.File)), "tokenizer": quote(filepath.Join(llama2Dir, "tokenizer.bin")),
				"prompt": quote(e.Prompt), "steps": fmt.Sprint(len(m.Greedy)), "temperature": "0", "cache": c.cache,
			})
			if got := res.Globals["out"].String(); got != intList(m.Greedy) {
				t.Errorf("greedy ids\n %s\nPyTorch's\n %s", got, intList(m.Greedy))
			}
			text, err := tok.Decode(append(append([]int{}, e.PromptIDs...), m.Greedy...))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(text, e.Prompt) || stdout != text+"\n" {
				t.Errorf("standard output %q, want the prompt and the continuation %q", stdout, text+"\n")
			}
			if !strings.Contains(stderr, "tokens/s") || !regexp.MustCompile(`the first token after [0-9.]+ ms`).MatchString(stderr) {
				t.Errorf("standard error has no speed or no time to the first token: %q", stderr)
			}
			runc, err := os.ReadFile(filepath.Join(llama2Dir, "runc."+name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			if want := runCText(tok, append(append([]int{}, e.PromptIDs...), m.Greedy...)); string(runc) != want {
				t.Errorf("run.c printed %q, for these ids it prints %q", runc, want)
			}
		})
	}
}

// TestSampleNucleus samples at temperature 1: a nucleus of one id (top_p tiny) is the greedy
// continuation; the same seed gives the same text, past seq tokens too (the window slides); and a
// bad setting is an error naming it.
func TestSampleNucleus(t *testing.T) {
	e := readLlama2Expected(t)
	m := e.Models["tied"]
	base := map[string]string{
		"model": quote(filepath.Join(llama2Dir, m.File)), "tokenizer": quote(filepath.Join(llama2Dir, "tokenizer.bin")),
		"prompt": quote(e.Prompt), "temperature": "1.0",
	}
	set := func(kv ...string) map[string]string {
		p := maps.Clone(base)
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	res, _, _ := runSample(t, emulator.FP32, set("steps", fmt.Sprint(len(m.Greedy)), "top_p", "1e-9"))
	if got := res.Globals["out"].String(); got != intList(m.Greedy) {
		t.Errorf("top_p 1e-9: ids\n %s\nwant the greedy\n %s", got, intList(m.Greedy))
	}
	res1, out1, _ := runSample(t, emulator.FP16, set("steps", "80", "seed", "7"))
	_, out2, _ := runSample(t, emulator.FP16, set("steps", "80", "seed", "7"))
	_, out3, _ := runSample(t, emulator.FP16, set("steps", "80", "seed", "8"))
	if out1 != out2 {
		t.Errorf("seed 7 twice: %q and %q", out1, out2)
	}
	if out1 == out3 {
		t.Errorf("seeds 7 and 8 gave the same text %q", out1)
	}
	if n := res1.Globals["out"].(*starlark.List).Len(); n != 80 {
		t.Errorf("80 steps past the window of 32 gave %d ids", n)
	}
	for _, c := range []struct{ k, v, want string }{
		{"top_p", "0.0", "top_p = 0.0: must lie in (0, 1]"},
		{"temperature", "-1.0", "temperature = -1.0: must be finite and at least 0"},
		{"seq", "64", "seq = 64 is longer than"},
		{"model", quote("/nonexistent/model.bin"), "/nonexistent/model.bin"},
		{"tokenizer", quote("../tokenizer/testdata/sp_slice.bin"), "has 1024 pieces, the model"},
	} {
		_, err := builtins.Run(context.Background(), builtins.Config{
			Script: "sample.star", Backend: emulator.New(emulator.Options{}), Params: set(c.k, c.v),
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s = %s: error %v, want %q", c.k, c.v, err, c.want)
		}
	}
}

// TestSampleVariantsCache trains a model of each variant of docs/model-variants.md for a few steps and
// runs it through the key/value cache and over one window (lm.star's forward, checked against
// PyTorch): the logits of every position agree, so the cache's kernels, built from nn.star, have the
// variant. In fp32 numerics a token's kernels take their weights as inputs, as a prompt's do: the
// logits agree to float32's rounding; in fp16 numerics they have each layer's weights baked in, and
// agree to fp16's.
func TestSampleVariantsCache(t *testing.T) {
	// The variants, a geometry whose attention weights are not whole blocks of 32 columns
	// (2*72 + 2*2*18 = 216): compiling packs them; and a window of 128 positions, whose cache moves
	// through the kernels of 32, 64 and 128 columns (lm_decode.star's cache_widths).
	for _, variant := range []string{"qk_norm", "parallel", "gpt2", "dim=72", "seq=128"} {
		dir := t.TempDir()
		ck := filepath.Join(dir, "lm.safetensors")
		p := map[string]string{"dim": "64", "layers": "2", "heads": "4", "kv_heads": "2", "hidden": "172",
			"vocab": "300", "seq": "64", "batch": "2", "steps": "20", "eval_every": "0", "ckpt": quote(ck), "metrics": quote(""), "best": quote("")}
		if k, v, ok := strings.Cut(variant, "="); ok {
			p[k] = v
		} else {
			p[variant] = "True"
		}
		mustRunLM(t, p, false)
		seq, _ := strconv.Atoi(p["seq"])
		ids := make([]int, seq)
		for i := range ids {
			ids[i] = (i*37 + 11) % 300
		}
		// numerics, the tolerances (relative) of the logits against the window's and of the cache's
		// ways of feeding against each other, and the kernels of seq 128 once 128 tokens went in one at
		// a time: the FFN and attention at 32, 64 and 128 columns for a prompt, and a token's FFN and
		// attention (fp32), or in fp16 the whole model's token step (lm_decode.star's dec_model) at each
		// cache width the cache grew through, 32, 64 and 128, and nothing else (the prompt's programs
		// are compiled when a block first needs them)
		for _, n := range []struct {
			numerics        emulator.Numerics
			window, feeding float64
			kernels         string
		}{{emulator.FP32, 1e-4, 1e-5, "6"}, {emulator.FP16, 3e-3, 3e-3, "3"}} {
			checkCacheLogits(t, variant, ck, ids, n.numerics, n.window, n.feeding, n.kernels)
		}
	}
}

// checkCacheLogits runs testdata/llama2_logits.star on model ck and ids through the cache and over
// one window in numerics n: the logits agree within window (relative to the largest), the cache's
// ways of feeding within feeding, and a model of 128 positions compiles kernels decoder kernels.
func checkCacheLogits(t *testing.T, variant, ck string, ids []int, n emulator.Numerics, window, feeding float64, kernels string) {
	t.Helper()
	nm := map[emulator.Numerics]string{emulator.FP16: "fp16", emulator.FP32: "fp32"}[n]
	var logits [][]float32
	for _, cache := range []string{"True", "False"} {
		var out strings.Builder
		res, err := builtins.Run(context.Background(), builtins.Config{
			Script: "testdata/llama2_logits.star", Backend: emulator.New(emulator.Options{Numerics: n}),
			Params: map[string]string{"model": quote(ck), "tokens": intList(ids), "cache": cache}, Stdout: &out,
		})
		if err != nil {
			t.Fatalf("%s, %s: %v\n%s", variant, nm, err, out.String())
		}
		logits = append(logits, tensorData(t, res.Globals["logits"]))
		if d, ok := res.Globals["prefill_diff"]; ok {
			if f, _ := starlark.AsFloat(d); !(f < feeding) {
				t.Errorf("%s, %s: the sequence fed at once ends with logits %.3g (relative) off those fed a token at a time", variant, nm, f)
			}
		}
		if d, ok := res.Globals["mixed_diff"]; ok {
			if f, _ := starlark.AsFloat(d); !(f < feeding) {
				t.Errorf("%s, %s: tokens fed one, then a block, then one again end with logits %.3g (relative) off those fed a token at a time", variant, nm, f)
			}
		}
		if k, ok := res.Globals["decoder_kernels"]; ok && len(ids) == 128 && k.String() != kernels {
			t.Errorf("seq 128, %s: the decoder compiled %s kernels, want %s", nm, k, kernels)
		}
	}
	worst, scale := 0.0, 0.0
	for i := range logits[1] {
		worst = max(worst, math.Abs(float64(logits[0][i]-logits[1][i])))
		scale = max(scale, math.Abs(float64(logits[1][i])))
	}
	t.Logf("%s, %s: cache against window: largest difference %.2g of %.3g", variant, nm, worst, scale)
	if worst > window*scale {
		t.Errorf("%s, %s: the cache's logits differ from the window's by %.3g (largest logit %.3g)", variant, nm, worst, scale)
	}
}
