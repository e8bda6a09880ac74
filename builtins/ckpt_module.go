package builtins

import (
	"os"

	"github.com/anestar/anestar/ckpt"
	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

func (s *session) ckptModule() *moduleDef {
	return &moduleDef{
		name: "ckpt",
		doc: "Checkpoints: a dict of tensors and a dict of metadata in one safetensors file, saved atomically " +
			"(a crash leaves the previous checkpoint or the new one, whole) and validated when loaded; and llama2.c model files.",
		fns: append([]fnDef{
			{sig: "save(path, tensors, meta = {}, keep = 0)", doc: "Saves tensors (a dict of name to tensor, stored float32) and meta " +
				"(a dict of name to any JSON value: the step, the random generator's state, the parameters, ...). keep > 0 keeps " +
				"that many older checkpoints as PATH.1, PATH.2, ...", fn: s.ckptSave},
			{sig: "read(path)", doc: "Reads a checkpoint (`load` is a Starlark keyword): a struct with tensors (a dict of name to tensor: the float ones; " +
				"others, such as save_state's random generator state, are left out) and meta (a dict of name to value).", fn: ckptLoad},
			{sig: "save_state(path, weights, optim = None, grads = None, step = 0, times = {}, meta = {}, structural = [], keep = 0)", doc: "Saves a run's " +
				"training state in the checkpoint convention of package ckpt: weights (a dict of name to tensor) as param/NAME, " +
				"the optimizer's slots as optim/NAME/SLOT and its update count, grads (the gradients accumulated in an " +
				"unfinished optimizer window, by weight name) as optim/NAME/grad, step (the next step to run), the run's random " +
				"generator, times (a dict of accumulated seconds), meta (a dict of JSON values), every parameter of params() " +
				"with its value, and structural, the names of the parameters that fix the state's shape (a resume compares " +
				"them). Each tensor's CRC-32C goes in the metadata, checked on load. The path is locked for the rest of the " +
				"run (see process.outputs).", fn: s.ckptSaveState},
			{sig: "load_state(path, weights, optim = None, grads = None, taken = [])", doc: "Restores a state saved by save_state into the run: " +
				"weights (a dict of the run's tensors; every one must be in the checkpoint with its shape, and nothing else), " +
				"the optimizer's slots and count, grads (restored when the checkpoint has them, else zeroed) and the random generator. The whole file is checked before anything is " +
				"changed; every error names the file, the tensor and what was expected. The parameters the checkpoint recorded are " +
				"compared with the run's: a structural one (save_state's structural) that differs is an error naming both values, " +
				"the others that differ are printed in a note; taken names parameters the script took from the checkpoint (ckpt.meta) " +
				"rather than its own, which are not compared. Returns a struct: path, step, times " +
				"(dict), params (the parameters saved with it, a dict), structural (a list of names), meta (dict) and grads " +
				"(whether gradients were restored). Pass step to process.metrics as resume_from, so that its file drops the lines " +
				"a killed run wrote after the checkpoint.", fn: s.ckptLoadState},
			{sig: "exists(path)", doc: "True when path exists: whether there is a checkpoint to resume from.", fn: ckptExists},
			{sig: "meta(path)", doc: "The metadata of the checkpoint at path (a dict of name to value, as read gives it), read from its header alone: what a run needs to know before it builds the tensors to load the checkpoint into, such as the model's sizes.", fn: ckptMeta},
		}, s.llama2Fns()...),
	}
}

func (s *session) ckptSave(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	var tensors *starlark.Dict
	meta := starlark.NewDict(0)
	keep := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path, "tensors", &tensors, "meta?", &meta, "keep?", &keep); err != nil {
		return nil, err
	}
	f := &ckpt.File{Tensors: map[string]ckpt.Tensor{}, Metadata: map[string]string{}}
	keys, vals, err := tensorDict(b.Name(), "tensors", tensors)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		t := vals[i]
		ct, err := ckpt.FromFloat32(ckpt.F32, t.shape, t.data)
		if err != nil {
			return nil, nameErrf(b.Name(), "tensors[%q]: %w", k, err)
		}
		f.Tensors[k] = ct
	}
	mkeys, mvals, err := dictItems(b.Name(), "meta", meta)
	if err != nil {
		return nil, err
	}
	for i, k := range mkeys {
		enc, err := starlark.Call(thread, json.Module.Members["encode"], starlark.Tuple{mvals[i]}, nil)
		if err != nil {
			return nil, nameErrf(b.Name(), "meta[%q]: %w", k, err)
		}
		f.Metadata[k] = string(enc.(starlark.String))
	}
	if err := s.check(b.Name()); err != nil {
		return nil, err
	}
	if err := s.prepareSave(path); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := ckpt.Save(path, f, ckpt.SaveOptions{Keep: keep}); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func ckptLoad(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	f, err := ckpt.Load(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	tensors := starlark.NewDict(len(f.Tensors))
	for _, k := range sortedKeys(f.Tensors) {
		ct := f.Tensors[k]
		if ct.DType != ckpt.F32 && ct.DType != ckpt.F16 && ct.DType != ckpt.BF16 {
			continue // not a float tensor (save_state's random generator state): no tensor holds it
		}
		data, err := ct.Float32()
		if err != nil {
			return nil, nameErrf(b.Name(), "%s: tensor %q: %w", path, k, err)
		}
		shape := ct.Shape
		if len(shape) == 0 {
			shape = []int{1}
		}
		t, err := TensorOf(data, shape...)
		if err != nil {
			return nil, nameErrf(b.Name(), "%s: tensor %q: %w", path, k, err)
		}
		tensors.SetKey(starlark.String(k), t)
	}
	return starlarkstruct.FromStringDict(starlark.String("checkpoint"), starlark.StringDict{"tensors": tensors, "meta": metaDict(thread, f.Metadata)}), nil
}

// metaDict is a checkpoint's metadata for a script: each value decoded from JSON, or kept as text.
func metaDict(thread *starlark.Thread, m map[string]string) *starlark.Dict {
	meta := starlark.NewDict(len(m))
	for _, k := range sortedKeys(m) {
		v, err := decodeJSON(thread, m[k])
		if err != nil {
			v = starlark.String(m[k]) // metadata written by another program: keep the text
		}
		meta.SetKey(starlark.String(k), v)
	}
	return meta
}

func ckptMeta(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	m, err := ckpt.LoadMeta(path)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return metaDict(thread, m), nil
}

func ckptExists(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var path string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "path", &path); err != nil {
		return nil, err
	}
	_, err := os.Stat(path)
	return starlark.Bool(err == nil), nil
}
