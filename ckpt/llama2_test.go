package ckpt

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/anestar/anestar/npy"
)

// llama2Dir holds the models gen.py wrote (see testdata/llama2/README.md).
const llama2Dir = "testdata/llama2"

// llama2Expected is testdata/llama2/expected.json: what gen.py computed for its models.
type llama2Expected struct {
	Tokens    []int `json:"tokens"`     // the sequence whose logits are stored
	PromptIDs []int `json:"prompt_ids"` // run.c's encoding of the prompt, BOS first
	Models    map[string]struct {
		File    string `json:"file"`
		Version int    `json:"version"`
		Config  struct {
			Dim       int  `json:"dim"`
			Hidden    int  `json:"hidden"`
			Layers    int  `json:"layers"`
			Heads     int  `json:"heads"`
			KVHeads   int  `json:"kv_heads"`
			Vocab     int  `json:"vocab"`
			MaxSeqLen int  `json:"max_seq_len"`
			Shared    bool `json:"shared"`
		} `json:"config"`
		Logits  string `json:"logits"` // .npy file [len(tokens), vocab] float32
		Greedy  []int  `json:"greedy"` // greedy continuation of prompt_ids
		Text    string `json:"text"`   // what run.c prints for prompt_ids + greedy
		Tensors map[string]struct {
			Shape []int     `json:"shape"`
			Sum   float64   `json:"sum"`
			First []float64 `json:"first"`
		} `json:"tensors"`
	} `json:"models"`
}

func loadLlama2Expected(t testing.TB) *llama2Expected {
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
		t.Fatalf("expected.json has %d models, want 2", len(e.Models))
	}
	return &e
}

func readLlama2(t testing.TB, name string) (*Llama2Model, []byte) {
	t.Helper()
	path := filepath.Join(llama2Dir, name)
	m, err := ReadLlama2(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return m, raw
}

// TestLlama2Reference reads gen.py's two models (version 0 tied, version 1 untied) and checks the
// sizes, every tensor's shape, first values and sum, and, through a float64 forward pass, the
// logits PyTorch computed in fp32 and the greedy continuation of the prompt.
func TestLlama2Reference(t *testing.T) {
	e := loadLlama2Expected(t)
	for name, want := range e.Models {
		t.Run(name, func(t *testing.T) {
			m, _ := readLlama2(t, want.File)
			wc := want.Config
			c := Llama2Config{wc.Dim, wc.Hidden, wc.Layers, wc.Heads, wc.KVHeads, wc.Vocab, wc.MaxSeqLen, wc.Shared}
			if m.Config != c || m.Version != want.Version {
				t.Fatalf("read version %d %v, want version %d %v", m.Version, m.Config, want.Version, c)
			}
			if len(m.Weights) != len(want.Tensors) {
				t.Fatalf("read %d tensors, want %d", len(m.Weights), len(want.Tensors))
			}
			for _, tt := range m.Config.Tensors() {
				wt, ok := want.Tensors[tt.Name]
				if !ok || !reflect.DeepEqual(wt.Shape, tt.Shape) {
					t.Fatalf("tensor %q %v: generator has %v (present %v)", tt.Name, tt.Shape, wt.Shape, ok)
				}
				v := m.Weights[tt.Name]
				sum, abs := 0.0, 0.0
				for i, x := range v {
					if i < len(wt.First) && float64(x) != wt.First[i] {
						t.Fatalf("tensor %q[%d] = %v, want %v", tt.Name, i, x, wt.First[i])
					}
					sum += float64(x)
					abs += math.Abs(float64(x))
				}
				if math.Abs(sum-wt.Sum) > 1e-12*abs {
					t.Errorf("tensor %q sums to %v, want %v", tt.Name, sum, wt.Sum)
				}
			}
			logits, err := npy.ReadFile(filepath.Join(llama2Dir, want.Logits))
			if err != nil {
				t.Fatal(err)
			}
			got := llama2Forward(m, e.Tokens)
			worst := 0.0
			for tk, row := range got {
				for i, g := range row {
					w := float64(logits.Data[tk*c.Vocab+i])
					// Relative to the position's largest logit, so that a logit near zero is
					// judged on the row's scale.
					worst = math.Max(worst, math.Abs(g-w)/llama2RowScale(logits.Data[tk*c.Vocab:(tk+1)*c.Vocab]))
				}
			}
			t.Logf("logits: largest difference from PyTorch's fp32 %.2g of the row's largest |logit|", worst)
			if worst > 1e-4 {
				t.Errorf("logits differ from PyTorch's by %.3g relative, want <= 1e-4", worst)
			}
			if g := llama2Greedy(m, e.PromptIDs, c.MaxSeqLen); !reflect.DeepEqual(g, want.Greedy) {
				t.Errorf("greedy continuation %v, want %v", g, want.Greedy)
			}
		})
	}
}

func llama2RowScale(row []float32) float64 {
	s := 0.0
	for _, v := range row {
		s = math.Max(s, math.Abs(float64(v)))
	}
	return s
}

func encodeLlama2(t testing.TB, m *Llama2Model, version int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := EncodeLlama2(&b, m, version); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decodeLlama2(t testing.TB, b []byte) *Llama2Model {
	t.Helper()
	m, err := DecodeLlama2(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameLlama2 fails unless a and b have the same config and bit-identical weights.
func sameLlama2(t testing.TB, a, b *Llama2Model) {
	t.Helper()
	if a.Config != b.Config || len(a.Weights) != len(b.Weights) {
		t.Fatalf("models differ: %v with %d tensors, %v with %d", a.Config, len(a.Weights), b.Config, len(b.Weights))
	}
	for name, wa := range a.Weights {
		wb := b.Weights[name]
		if len(wa) != len(wb) {
			t.Fatalf("tensor %q: %d elements, other has %d", name, len(wa), len(wb))
		}
		for i := range wa {
			if math.Float32bits(wa[i]) != math.Float32bits(wb[i]) {
				t.Fatalf("tensor %q[%d]: %v, other has %v", name, i, wa[i], wb[i])
			}
		}
	}
}

// ropeRange returns the byte range of version 0's RoPE tables in a file of config c.
func ropeRange(c Llama2Config) (lo, hi int) {
	llama2Entries(c, 0, func(e llama2Entry) bool {
		if e.name == ropeCosName {
			lo = int(e.offset)
		}
		if e.name == ropeSinName {
			hi = int(e.offset + 4*e.n)
		}
		return true
	})
	return lo, hi
}

// TestLlama2Export checks export → re-import in both versions (bit-identical weights, and the
// same bytes when exported again), that our export of a model in the version gen.py wrote is
// byte for byte gen.py's file (version 0's RoPE tables within an ulp of PyTorch's), and the
// conversions v0 → v1 → v0 and v1 → v0 → v1.
func TestLlama2Export(t *testing.T) {
	e := loadLlama2Expected(t)
	for name, want := range e.Models {
		t.Run(name, func(t *testing.T) {
			m, raw := readLlama2(t, want.File)
			var enc [2][]byte
			for v := range 2 {
				enc[v] = encodeLlama2(t, m, v)
				back := decodeLlama2(t, enc[v])
				if back.Version != v {
					t.Fatalf("version %d export read back as version %d", v, back.Version)
				}
				sameLlama2(t, back, m)
				if again := encodeLlama2(t, back, 1-v); !bytes.Equal(again, encodeLlama2(t, m, 1-v)) {
					t.Errorf("version %d → %d conversion differs from a direct version %d export", v, 1-v, 1-v)
				}
				if again := encodeLlama2(t, back, v); !bytes.Equal(again, enc[v]) {
					t.Errorf("version %d: re-export of the re-import differs", v)
				}
			}
			ours := enc[want.Version]
			if len(ours) != len(raw) {
				t.Fatalf("our version %d export has %d bytes, gen.py's %d", want.Version, len(ours), len(raw))
			}
			lo, hi := len(raw), len(raw)
			if want.Version == 0 {
				lo, hi = ropeRange(m.Config)
			}
			if !bytes.Equal(ours[:lo], raw[:lo]) || !bytes.Equal(ours[hi:], raw[hi:]) {
				t.Fatalf("our version %d export differs from gen.py's outside the RoPE tables", want.Version)
			}
			exact, worst := 0, int64(0)
			for i := lo; i < hi; i += 4 {
				a := int64(int32(le32(ours[i:])))
				b := int64(int32(le32(raw[i:])))
				if a == b {
					exact++
				}
				worst = max(worst, a-b, b-a)
			}
			if hi > lo {
				t.Logf("RoPE tables: %d of %d values equal to PyTorch's, the others within %d ulp", exact, (hi-lo)/4, worst)
				if worst > 1 {
					t.Errorf("RoPE tables differ from PyTorch's by %d ulp, want <= 1", worst)
				}
			}
		})
	}
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// TestLlama2SaveRead saves both models in both versions to files and reads them back.
func TestLlama2SaveRead(t *testing.T) {
	e := loadLlama2Expected(t)
	dir := t.TempDir()
	for name, want := range e.Models {
		m, _ := readLlama2(t, want.File)
		for v := range 2 {
			path := filepath.Join(dir, name+".bin")
			if err := SaveLlama2(path, m, v); err != nil {
				t.Fatal(err)
			}
			back, err := ReadLlama2(path)
			if err != nil {
				t.Fatal(err)
			}
			sameLlama2(t, back, m)
			h, err := ReadLlama2Header(path)
			if err != nil || h.Version != v || h.Config != m.Config {
				t.Fatalf("header of version %d file: %+v, %v", v, h, err)
			}
			st, _ := os.Stat(path)
			if h.Size != st.Size() {
				t.Errorf("header size %d, file %d", h.Size, st.Size())
			}
			placed := h.Tensors()
			if len(placed) != len(m.Weights) {
				t.Fatalf("version %d: Tensors() lists %d tensors, want %d", v, len(placed), len(m.Weights))
			}
			raw, _ := os.ReadFile(path)
			for _, p := range placed {
				w := m.Weights[p.Name]
				if product(p.Shape) != len(w) || math.Float32frombits(le32(raw[p.Offset:])) != w[0] ||
					math.Float32frombits(le32(raw[p.Offset+4*int64(len(w)-1):])) != w[len(w)-1] {
					t.Fatalf("version %d: tensor %q%v is not at byte %d", v, p.Name, p.Shape, p.Offset)
				}
			}
		}
	}
}

// TestLlama2PythonReadsOurs writes our exports of both models in both versions and has gen.py's
// own reader check them: header and weights equal to its files', RoPE tables within an ulp of
// PyTorch's, and PyTorch's logits of them, computed here with this machine's BLAS, within 1e-5 of
// each row's largest logit of the committed ones (another machine's kernels sum in other orders).
// It runs where /usr/bin/python3 has PyTorch, and is skipped elsewhere.
func TestLlama2PythonReadsOurs(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import torch, numpy").Run() != nil {
		t.Skip("no /usr/bin/python3 with torch and numpy")
	}
	e := loadLlama2Expected(t)
	dir := t.TempDir()
	for name, want := range e.Models {
		m, _ := readLlama2(t, want.File)
		for v := range 2 {
			if err := SaveLlama2(filepath.Join(dir, name+".ours-v"+string(rune('0'+v))+".bin"), m, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := exec.Command("/usr/bin/python3", filepath.Join(llama2Dir, "gen.py"), "check", dir).CombinedOutput()
	t.Logf("gen.py check:\n%s", out)
	if err != nil {
		t.Fatalf("gen.py check: %v", err)
	}
}

// TestLlama2RunC checks what llama2.c's run.c printed when it sampled our version 0 exports
// greedily (testdata/llama2/runc.*.txt, see the README there): the text of the prompt and of
// the greedy continuation that the forward pass above and PyTorch agree on.
func TestLlama2RunC(t *testing.T) {
	e := loadLlama2Expected(t)
	pieces := readTokenizerPieces(t, filepath.Join(llama2Dir, "tokenizer.bin"), 300)
	for name, want := range e.Models {
		b, err := os.ReadFile(filepath.Join(llama2Dir, "runc."+name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		text := runCText(pieces, append(append([]int{}, e.PromptIDs...), want.Greedy...))
		if string(b) != text || text != want.Text {
			t.Errorf("%s: run.c printed %q; the greedy ids decode to %q; gen.py says %q", name, b, text, want.Text)
		}
	}
}

// TestLlama2RunCLive runs a llama2.c run.c binary built outside the repository (named by
// ANESTAR_LLAMA2C_RUN; skipped without it) on our version 0 exports and compares what it prints
// with runc.*.txt.
func TestLlama2RunCLive(t *testing.T) {
	run := os.Getenv("ANESTAR_LLAMA2C_RUN")
	if run == "" {
		t.Skip("ANESTAR_LLAMA2C_RUN names no llama2.c run binary")
	}
	e := loadLlama2Expected(t)
	for name, want := range e.Models {
		m, _ := readLlama2(t, want.File)
		path := filepath.Join(t.TempDir(), name+".bin")
		if err := SaveLlama2(path, m, 0); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(run, path, "-z", filepath.Join(llama2Dir, "tokenizer.bin"), "-t", "0", "-n", "32", "-s", "1", "-i", "the cat sat")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", run, err)
		}
		b, _ := os.ReadFile(filepath.Join(llama2Dir, "runc."+name+".txt"))
		if string(out) != string(b) {
			t.Errorf("%s: run.c printed %q, want %q", name, out, b)
		}
	}
}

// readTokenizerPieces reads the pieces of a llama2.c tokenizer.bin of n tokens (test helper).
func readTokenizerPieces(t testing.TB, path string, n int) [][]byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pos := 4
	var out [][]byte
	for range n {
		l := int(le32(b[pos+4:]))
		out = append(out, b[pos+8:pos+8+l])
		pos += 8 + l
	}
	if pos != len(b) {
		t.Fatalf("%s: %d bytes left after %d pieces", path, len(b)-pos, n)
	}
	return out
}

// runCText is what run.c's generate prints for the tokens ids (BOS first): each token's piece
// after the first, a leading space dropped after BOS, "<0xHH>" pieces as their byte, single
// bytes that are neither printable nor space skipped; then a newline.
func runCText(pieces [][]byte, ids []int) string {
	var out []byte
	for i := 1; i < len(ids); i++ {
		p := pieces[ids[i]]
		if ids[i-1] == 1 && len(p) > 0 && p[0] == ' ' {
			p = p[1:]
		}
		var hex byte
		if len(p) == 6 && string(p[:3]) == "<0x" && p[5] == '>' {
			for _, c := range p[3:5] {
				d := c - '0'
				if c >= 'A' {
					d = c - 'A' + 10
				}
				hex = hex<<4 | d
			}
			p = []byte{hex}
		}
		if len(p) == 1 && !(p[0] >= 0x20 && p[0] <= 0x7e || p[0] >= 0x09 && p[0] <= 0x0d) {
			continue
		}
		out = append(out, p...)
	}
	return string(out) + "\n"
}

// tinyLlama2 is a small valid model with deterministic weights.
func tinyLlama2(shared bool) *Llama2Model {
	c := Llama2Config{Dim: 4, Hidden: 6, Layers: 2, Heads: 2, KVHeads: 1, Vocab: 5, MaxSeqLen: 3, Shared: shared}
	m := &Llama2Model{Config: c, Weights: map[string][]float32{}}
	k := 0
	for _, tt := range c.Tensors() {
		w := make([]float32, product(tt.Shape))
		for i := range w {
			k++
			w[i] = float32(k%17-8) / 8
		}
		m.Weights[tt.Name] = w
	}
	return m
}

// TestLlama2WriteErrors: what cannot be written is refused before anything is written.
func TestLlama2WriteErrors(t *testing.T) {
	cases := []struct {
		name    string
		change  func(m *Llama2Model)
		version int
		want    string
	}{
		{"version 2", func(m *Llama2Model) {}, 2, "version 2 cannot be written"},
		{"missing", func(m *Llama2Model) { delete(m.Weights, "layers.1.attention.wk.weight") }, 0, `"layers.1.attention.wk.weight" [2 4] is missing`},
		{"short", func(m *Llama2Model) { m.Weights["norm.weight"] = m.Weights["norm.weight"][:3] }, 1, `"norm.weight" has 3 elements, its shape [4] needs 4`},
		{"extra", func(m *Llama2Model) { m.Weights["layers.2.ffn_norm.weight"] = []float32{1} }, 0, `"layers.2.ffn_norm.weight" is not a tensor`},
		{"output when shared", func(m *Llama2Model) { m.Weights[Llama2Output] = m.Weights[Llama2Embedding] }, 0, "shared with the embedding"},
		{"bad config", func(m *Llama2Model) { m.Config.KVHeads = 3 }, 0, "n_kv_heads = 3 does not divide n_heads = 2"},
		{"zero", func(m *Llama2Model) { m.Config.Hidden = 0 }, 1, "hidden_dim = 0: must be between 1"},
	}
	for _, tc := range cases {
		m := tinyLlama2(true)
		tc.change(m)
		var b bytes.Buffer
		err := EncodeLlama2(&b, m, tc.version)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) || b.Len() != 0 {
			t.Errorf("%s: got %v (%d bytes written), want an error containing %q", tc.name, err, b.Len(), tc.want)
		}
		path := filepath.Join(t.TempDir(), "m.bin")
		if err := SaveLlama2(path, m, tc.version); err == nil {
			t.Errorf("%s: SaveLlama2 succeeded", tc.name)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: a refused save left %s", tc.name, path)
		}
	}
}
