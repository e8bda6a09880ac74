package builtins

import (
	"slices"

	"github.com/anestar/anestar/ckpt"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// llama2Fns are the ckpt module's functions for llama2.c model files.
func (s *session) llama2Fns() []fnDef {
	return []fnDef{
		{sig: "read_llama2(path)", doc: "Reads a llama2.c model file (version 0 or 1, told by its magic; version 2 is refused): a struct " +
			"with version, config (a dict: dim, hidden, layers, heads, kv_heads, vocab, max_seq_len, shared) and tensors (a dict " +
			"of model.py's names to tensors: tok_embeddings.weight [vocab, dim]; per layer L layers.L.attention_norm.weight [dim], " +
			"layers.L.attention.wq.weight [dim, dim], .wk and .wv [kv_dim, dim], .wo [dim, dim], layers.L.ffn_norm.weight [dim], " +
			"layers.L.feed_forward.w1.weight and .w3 [hidden, dim], .w2 [dim, hidden]; norm.weight [dim]; output.weight [vocab, dim] " +
			"when not shared). The header is checked against the file's size before anything is read; a defect names the field " +
			"or tensor and its byte offset. The weights are read once, into the tensors.", fn: llama2Read},
		{sig: "is_llama2(path)", doc: "True when path is a llama2.c model file rather than a checkpoint of ckpt.save: its name " +
			"does not end in .safetensors and its first bytes are not a safetensors header (a missing file is not one). " +
			"For scripts that take either kind of file.", fn: llama2Is},
		{sig: "llama2_config(path)", doc: "Reads only the header of a llama2.c model file, checked against the file's size as " +
			"read_llama2 checks it: the config dict read_llama2 would return, without reading the weights.", fn: llama2ConfigOf},
		{sig: "write_llama2(path, config, tensors, version = 0)", doc: "Writes a llama2.c model file atomically: config as read_llama2 " +
			"returns it (shared may be left out: then the classifier is shared when tensors has no output.weight), tensors with " +
			"exactly the names and shapes read_llama2 gives. Version 0 (the default) is the layout llama2.c's run.c reads, with " +
			"the RoPE tables computed as llama2.c's model.py computes them; version 1 has the 256-byte header.", fn: s.llama2Write},
	}
}

// llama2ConfigKeys are the keys of a config dict, in the order read_llama2 writes them.
var llama2ConfigKeys = []string{"dim", "hidden", "layers", "heads", "kv_heads", "vocab", "max_seq_len", "shared"}

func llama2Read(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	m, err := ckpt.ReadLlama2(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := m.CheckFinite(); err != nil {
		return nil, nameErrf(b.Name(), "%s: %w", path, err)
	}
	c := m.Config
	list := c.Tensors()
	tensors := starlark.NewDict(len(list))
	for _, tt := range list {
		t, err := TensorOf(m.Weights[tt.Name], tt.Shape...)
		if err != nil {
			return nil, nameErrf(b.Name(), "%s: tensor %q: %w", path, tt.Name, err)
		}
		tensors.SetKey(starlark.String(tt.Name), t)
	}
	return starlarkstruct.FromStringDict(starlark.String("llama2"), starlark.StringDict{
		"version": starlark.MakeInt(m.Version), "config": llama2ConfigDict(c), "tensors": tensors,
	}), nil
}

func llama2Is(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	return starlark.Bool(ckpt.IsLlama2File(path)), nil
}

func llama2ConfigOf(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	h, err := ckpt.ReadLlama2Header(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return llama2ConfigDict(h.Config), nil
}

// llama2ConfigDict is c as the dict read_llama2 returns.
func llama2ConfigDict(c ckpt.Llama2Config) *starlark.Dict {
	config := starlark.NewDict(len(llama2ConfigKeys))
	for i, v := range []int{c.Dim, c.Hidden, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.MaxSeqLen} {
		config.SetKey(starlark.String(llama2ConfigKeys[i]), starlark.MakeInt(v))
	}
	config.SetKey(starlark.String("shared"), starlark.Bool(c.Shared))
	return config
}

func (s *session) llama2Write(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var config, tensors *starlark.Dict
	version := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "config", &config, "tensors", &tensors, "version?", &version); err != nil {
		return nil, err
	}
	c, err := llama2Config(b.Name(), config, tensors)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, nameErrf(b.Name(), "config: %w", err)
	}
	shapes := map[string][]int{}
	for _, tt := range c.Tensors() {
		shapes[tt.Name] = tt.Shape
	}
	m := &ckpt.Llama2Model{Config: c, Weights: map[string][]float32{}}
	keys, vals, err := tensorDict(b.Name(), "tensors", tensors)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		t := vals[i]
		if want, ok := shapes[k]; ok && !slices.Equal(t.shape, want) {
			return nil, nameErrf(b.Name(), "tensors[%q] is %s, want shape %s", k, t, shapeString(want))
		}
		m.Weights[k] = t.data
	}
	if err := m.CheckWeights(); err != nil {
		return nil, nameErrf(b.Name(), "tensors: %w", err)
	}
	if err := s.check(b.Name()); err != nil {
		return nil, err
	}
	if err := s.refuseScript(path); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := ckpt.SaveLlama2(path, m, version); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

// llama2Config reads a config dict: every size an int, shared a bool (when absent: true unless
// tensors holds output.weight), no other key.
func llama2Config(fn string, d, tensors *starlark.Dict) (ckpt.Llama2Config, error) {
	var c ckpt.Llama2Config
	ints := []*int{&c.Dim, &c.Hidden, &c.Layers, &c.Heads, &c.KVHeads, &c.Vocab, &c.MaxSeqLen}
	keys, vals, err := dictItems(fn, "config", d)
	if err != nil {
		return c, err
	}
	_, hasOutput, _ := tensors.Get(starlark.String(ckpt.Llama2Output))
	c.Shared = !hasOutput
	seen := map[string]bool{}
	for i, k := range keys {
		j := slices.Index(llama2ConfigKeys, k)
		switch {
		case j < 0:
			return c, nameErrf(fn, "config has an unknown key %q (known: %v)", k, llama2ConfigKeys)
		case j == len(ints):
			v, ok := vals[i].(starlark.Bool)
			if !ok {
				return c, nameErrf(fn, "config[\"shared\"]: got %s, want bool", vals[i].Type())
			}
			c.Shared = bool(v)
		default:
			if err := starlark.AsInt(vals[i], ints[j]); err != nil {
				return c, nameErrf(fn, "config[%q]: %w", k, err)
			}
		}
		seen[k] = true
	}
	for _, k := range llama2ConfigKeys[:len(ints)] {
		if !seen[k] {
			return c, nameErrf(fn, "config has no %q", k)
		}
	}
	return c, nil
}
