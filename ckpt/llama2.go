package ckpt

import (
	"fmt"
	"math"
	"math/bits"
)

// Llama2Config is the header of a llama2.c model file: the sizes of a llama2.c transformer.
type Llama2Config struct {
	Dim       int  // width of the residual stream (dim)
	Hidden    int  // width of the SwiGLU feed-forward layer (hidden_dim)
	Layers    int  // number of transformer blocks (n_layers)
	Heads     int  // number of query heads (n_heads)
	KVHeads   int  // number of key/value heads (n_kv_heads), dividing Heads
	Vocab     int  // vocabulary size (vocab_size), positive
	MaxSeqLen int  // longest sequence the model was trained for (max_seq_len)
	Shared    bool // the classifier is the token embedding (no output.weight)
}

// HeadDim is the width of one attention head, Dim / Heads.
func (c Llama2Config) HeadDim() int { return c.Dim / c.Heads }

// KVDim is the width of the keys and values, KVHeads × HeadDim.
func (c Llama2Config) KVDim() int { return c.KVHeads * c.HeadDim() }

// Field names of the header, as llama2.c's Config struct names them, in file order.
var llama2Fields = [7]string{"dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "max_seq_len"}

// fields returns the seven header values in file order.
func (c Llama2Config) fields() [7]int {
	return [7]int{c.Dim, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.MaxSeqLen}
}

// configError is a defect of one header field: its index in llama2Fields and what is wrong.
type configError struct {
	field int
	msg   string
}

func (e *configError) Error() string { return e.msg }

// Validate checks that every size is positive and fits an int32, that Heads divides Dim into
// heads of even width (RoPE rotates pairs) and that KVHeads divides Heads. The error names the
// header field.
func (c Llama2Config) Validate() error {
	if err := c.validate(); err != nil {
		return err
	}
	return nil
}

// validate is Validate with the concrete error type, so that a reader can add the field's offset.
func (c Llama2Config) validate() *configError {
	for i, v := range c.fields() {
		if v <= 0 || v > math.MaxInt32 {
			return &configError{i, fmt.Sprintf("%s = %d: must be between 1 and %d", llama2Fields[i], v, math.MaxInt32)}
		}
	}
	switch {
	case c.Dim%c.Heads != 0:
		return &configError{3, fmt.Sprintf("n_heads = %d does not divide dim = %d", c.Heads, c.Dim)}
	case c.HeadDim()%2 != 0:
		return &configError{3, fmt.Sprintf("head width dim/n_heads = %d/%d = %d is odd: RoPE rotates pairs", c.Dim, c.Heads, c.HeadDim())}
	case c.Heads%c.KVHeads != 0:
		return &configError{4, fmt.Sprintf("n_kv_heads = %d does not divide n_heads = %d", c.KVHeads, c.Heads)}
	}
	return nil
}

// The names of a llama2.c model's tensors are those of llama2.c's model.py state dict.
const (
	Llama2Embedding = "tok_embeddings.weight" // [vocab, dim]
	Llama2FinalNorm = "norm.weight"           // [dim]
	Llama2Output    = "output.weight"         // [vocab, dim], only when the classifier is not shared
)

// Llama2LayerTensors are the per-layer tensor names after "layers.L.", in the order of a
// version 0 file.
var Llama2LayerTensors = [9]string{
	"attention_norm.weight",  // [dim]
	"attention.wq.weight",    // [dim, dim]
	"attention.wk.weight",    // [kv_dim, dim]
	"attention.wv.weight",    // [kv_dim, dim]
	"attention.wo.weight",    // [dim, dim]
	"ffn_norm.weight",        // [dim]
	"feed_forward.w1.weight", // [hidden, dim]
	"feed_forward.w2.weight", // [dim, hidden]
	"feed_forward.w3.weight", // [hidden, dim]
}

// Llama2LayerName returns the full name of layer l's tensor kind, e.g. "layers.0.attention.wq.weight".
func Llama2LayerName(l int, kind string) string { return fmt.Sprintf("layers.%d.%s", l, kind) }

// Llama2Tensor names one tensor of a model and gives its shape.
type Llama2Tensor struct {
	Name  string // model.py's state-dict name
	Shape []int  // dimensions, outermost first
}

// layerShape returns the shape of the per-layer tensor kind k (an index of Llama2LayerTensors).
func (c Llama2Config) layerShape(k int) []int {
	switch k {
	case 0, 5:
		return []int{c.Dim}
	case 1, 4:
		return []int{c.Dim, c.Dim}
	case 2, 3:
		return []int{c.KVDim(), c.Dim}
	case 6, 8:
		return []int{c.Hidden, c.Dim}
	default:
		return []int{c.Dim, c.Hidden}
	}
}

// Tensors lists the model's tensors with their shapes: the embedding, each layer's nine in the
// order of Llama2LayerTensors, the final norm, and the classifier when it is not shared.
func (c Llama2Config) Tensors() []Llama2Tensor {
	out := []Llama2Tensor{{Llama2Embedding, []int{c.Vocab, c.Dim}}}
	for l := 0; l < c.Layers; l++ {
		for k, kind := range Llama2LayerTensors {
			out = append(out, Llama2Tensor{Llama2LayerName(l, kind), c.layerShape(k)})
		}
	}
	out = append(out, Llama2Tensor{Llama2FinalNorm, []int{c.Dim}})
	if !c.Shared {
		out = append(out, Llama2Tensor{Llama2Output, []int{c.Vocab, c.Dim}})
	}
	return out
}

// Llama2Model is a llama2.c model: its sizes and its float32 weights.
type Llama2Model struct {
	Config  Llama2Config         // sizes and whether the classifier is shared
	Weights map[string][]float32 // every tensor of Config.Tensors(), by name, row-major
	Version int                  // the file version it was read from (0 or 1); writers ignore it
}

// CheckWeights verifies that m's config is valid and that Weights holds exactly the tensors of
// Config.Tensors(), each with the elements its shape calls for.
func (m *Llama2Model) CheckWeights() error {
	if err := m.Config.Validate(); err != nil {
		return err
	}
	want := m.Config.Tensors()
	for _, t := range want {
		w, ok := m.Weights[t.Name]
		if !ok {
			return fmt.Errorf("tensor %q %v is missing", t.Name, t.Shape)
		}
		if n := t.Shape[0] * product(t.Shape[1:]); len(w) != n {
			return fmt.Errorf("tensor %q has %d elements, its shape %v needs %d", t.Name, len(w), t.Shape, n)
		}
	}
	if len(m.Weights) != len(want) {
		known := map[string]bool{}
		for _, t := range want {
			known[t.Name] = true
		}
		for name := range m.Weights {
			if !known[name] {
				if name == Llama2Output {
					return fmt.Errorf("tensor %q given for a model whose classifier is shared with the embedding", name)
				}
				return fmt.Errorf("tensor %q is not a tensor of a llama2.c model of %d layers", name, m.Config.Layers)
			}
		}
	}
	return nil
}

func product(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// llama2Entry is one array of a llama2.c file: a tensor, or a RoPE table (skip) of version 0.
type llama2Entry struct {
	name   string
	offset uint64 // byte offset in the file
	n      uint64 // elements (float32)
	skip   bool   // a RoPE table: skipped on read, recomputed on write
}

// Names of version 0's RoPE tables, as llama2.c's first run.c called them.
const (
	ropeCosName = "freq_cis_real"
	ropeSinName = "freq_cis_imag"
)

// Header sizes of the two versions.
const (
	llama2V0Header = 7 * 4
	llama2V1Header = 256
	llama2Magic    = 0x616b3432 // "ak42"
)

// llama2Size returns the size of a file of the given version for config c, or an error when it
// overflows 64 bits. c must be valid. It allocates nothing, whatever the sizes.
func llama2Size(c Llama2Config, version int) (uint64, error) {
	var overflow bool
	mul := func(a, b uint64) uint64 {
		hi, lo := bits.Mul64(a, b)
		overflow = overflow || hi != 0
		return lo
	}
	add := func(a, b uint64) uint64 {
		s, carry := bits.Add64(a, b, 0)
		overflow = overflow || carry != 0
		return s
	}
	var layer uint64
	for k := range Llama2LayerTensors {
		s := c.layerShape(k)
		n := uint64(s[0])
		if len(s) == 2 {
			n = mul(n, uint64(s[1]))
		}
		layer = add(layer, n)
	}
	embed := mul(uint64(c.Vocab), uint64(c.Dim))
	n := add(add(mul(layer, uint64(c.Layers)), embed), uint64(c.Dim))
	header := uint64(llama2V1Header)
	if version == 0 {
		header = llama2V0Header
		n = add(n, mul(2, mul(uint64(c.MaxSeqLen), uint64(c.HeadDim()/2))))
	}
	if !c.Shared {
		n = add(n, embed)
	}
	total := add(header, mul(n, 4))
	if overflow {
		return 0, fmt.Errorf("the sizes overflow 64 bits")
	}
	return total, nil
}

// llama2Entries calls fn with the arrays of a file of the given version for config c, in file
// order, until fn returns false. c must be valid and llama2Size(c, version) must not overflow,
// so that no offset does; the caller bounds the work by stopping at the end of its file.
func llama2Entries(c Llama2Config, version int, fn func(llama2Entry) bool) {
	pos := uint64(llama2V0Header)
	if version == 1 {
		pos = llama2V1Header
	}
	ok := true
	add := func(name string, n uint64, skip bool) {
		if ok {
			ok = fn(llama2Entry{name: name, offset: pos, n: n, skip: skip})
			pos += 4 * n
		}
	}
	kind := func(k int) {
		s := c.layerShape(k)
		n := uint64(product(s))
		for l := 0; l < c.Layers && ok; l++ {
			add(Llama2LayerName(l, Llama2LayerTensors[k]), n, false)
		}
	}
	embed := func() { add(Llama2Embedding, uint64(c.Vocab)*uint64(c.Dim), false) }
	if version == 0 {
		embed()
		for k := range Llama2LayerTensors {
			kind(k)
		}
		add(Llama2FinalNorm, uint64(c.Dim), false)
		rope := uint64(c.MaxSeqLen) * uint64(c.HeadDim()/2)
		add(ropeCosName, rope, true)
		add(ropeSinName, rope, true)
	} else {
		kind(0)
		kind(5)
		add(Llama2FinalNorm, uint64(c.Dim), false)
		embed()
		for _, k := range []int{1, 2, 3, 4, 6, 7, 8} {
			kind(k)
		}
	}
	if !c.Shared {
		add(Llama2Output, uint64(c.Vocab)*uint64(c.Dim), false)
	}
}

// CheckFinite fails at the first weight that is NaN or infinite, naming its tensor and element: such a
// model computes nothing (every step of a fine-tune would be skipped, every logit NaN), so the programs
// that train or sample refuse it when they read it. Listing and comparing files do not check.
func (m *Llama2Model) CheckFinite() error {
	for _, t := range m.Config.Tensors() {
		for i, v := range m.Weights[t.Name] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("tensor %q holds %v at element %d: a model with non-finite weights cannot train or sample", t.Name, v, i)
			}
		}
	}
	return nil
}
