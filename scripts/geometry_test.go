package scripts

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/builtins"
	"go.starlark.net/starlark"
)

// llamaGeometries are llama2.c's published models' sizes (its README's table): what users of ANE
// trainers train, given as a user gives them: kv_heads only where it differs from heads (llama2.c's
// n_kv_heads defaults to n_heads, and so does train_lm.star's kv_heads when heads alone is given).
var llamaGeometries = []struct {
	name   string
	params map[string]string
}{
	{"stories260K", map[string]string{"dim": "64", "hidden": "172", "layers": "5", "heads": "8", "kv_heads": "4", "vocab": "512", "seq": "512"}},
	{"stories15M", map[string]string{"dim": "288", "hidden": "768", "layers": "6", "heads": "6", "vocab": "32000", "seq": "256"}},
	{"stories42M", map[string]string{"dim": "512", "hidden": "1376", "layers": "8", "heads": "8", "vocab": "32000", "seq": "1024"}},
	{"stories110M", map[string]string{"dim": "768", "hidden": "2048", "layers": "12", "heads": "12", "vocab": "32000", "seq": "1024"}},
}

// Every kernel train_lm.star builds at llama2.c's geometries, at its default batch, is proven under
// the rules of every chip at once (--chip all, the default here): its I/O and every tensor within
// each chip's per-axis cap, every op in a form a reference ran. One layer: every layer's kernels are
// the same programs (a layer is a binding), and a binding of a dry run still holds its surfaces' memory.
func TestLlamaGeometriesProven(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.bin")
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]uint16, 400_000)
	for i := range ids {
		ids[i] = uint16(rng.IntN(512))
	}
	b := make([]byte, 2*len(ids))
	for i, id := range ids {
		binary.LittleEndian.PutUint16(b[2*i:], id)
	}
	if err := os.WriteFile(tokens, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, g := range llamaGeometries {
		params := map[string]string{"data": quote(tokens), "ckpt": `""`, "layers": "1"}
		for k, v := range g.params {
			if k != "layers" {
				params[k] = v
			}
		}
		res, err := builtins.Run(context.Background(), builtins.Config{
			Script: "train_lm.star", BackendName: "emulator", Params: params, DryRun: true, Argv: []string{"check", "train_lm.star"},
		})
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if len(res.Checked) == 0 {
			t.Fatalf("%s: no kernel checked", g.name)
		}
		want := g.params["kv_heads"]
		if want == "" {
			want = g.params["heads"]
		}
		if P, ok := res.Globals["P"].(starlark.HasAttrs); !ok {
			t.Errorf("%s: no struct P among the globals", g.name)
		} else if kv, err := P.Attr("kv_heads"); err != nil || kv.String() != want {
			t.Errorf("%s: kv_heads = %v (%v), want %s (heads given alone: llama2.c's n_kv_heads = n_heads)", g.name, kv, err, want)
		}
		for _, k := range res.Checked {
			for _, f := range k.Verdict.Findings {
				if f.Support != ane.Proven {
					t.Errorf("%s: kernel %s: %s [%s]: %s", g.name, k.Where(), f.Support, f.Rule, f)
				}
			}
		}
	}
}
