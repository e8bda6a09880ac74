package ckpt

import (
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	w, _ := FromFloat32(F32, []int{2, 2}, []float32{1, -2, 3.5, 1e-30})
	m, _ := FromFloat32(F32, []int{2, 2}, []float32{0.1, 0.2, 0.3, 0.4})
	v, _ := FromFloat32(F32, []int{2, 2}, []float32{1e-8, 2e-8, 3e-8, 4e-8})
	emb, _ := FromFloat32(BF16, []int{3}, []float32{1, 2, 3})
	rng := []byte{0, 1, 2, 255, 254, 0, 0, 7}
	fwd := 0.1
	fwd += 0.2 // 0.30000000000000004, which only a shortest round-trip format keeps
	s := &State{
		Params:   map[string]Tensor{"layer0/w": w, "emb": emb},
		Optim:    map[string]map[string]Tensor{"layer0/w": {"m": m, "v": v}},
		Counters: map[string]int64{"step": 1234, "data_pos": MaxCounter, "zero": 0},
		RNG:      map[string][]byte{"data": rng, "empty": {}},
		Times:    map[string]float64{"fwd": fwd, "total": 1e-300, "big": math.MaxFloat64},
		Config:   `{"dim": 768, "lr": 0.0003}`,
		Meta:     map[string]string{"note": "resume me"},
	}
	f, err := s.File()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"param/layer0/w", "param/emb", "optim/layer0/w/m", "optim/layer0/w/v", "state/step", "rng/data"} {
		if _, ok := f.Tensors[name]; !ok {
			t.Errorf("tensor %q missing; have %v", name, keys(f.Tensors))
		}
	}
	if f.Metadata["params"] != s.Config || f.Metadata["time/fwd"] != "0.30000000000000004" || f.Metadata["format"] != FormatVersion {
		t.Errorf("metadata %q", f.Metadata)
	}
	path := filepath.Join(t.TempDir(), "state.safetensors")
	if err := SaveState(path, s, SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := LoadState(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Counters, s.Counters) || !reflect.DeepEqual(got.Times, s.Times) ||
		got.Config != s.Config || !reflect.DeepEqual(got.Meta, s.Meta) || string(got.RNG["data"]) != string(rng) || len(got.RNG["empty"]) != 0 {
		t.Errorf("got %+v\nwant %+v", got, s)
	}
	sameFile(t, &File{Tensors: got.Params}, &File{Tensors: s.Params})
	sameFile(t, &File{Tensors: got.Optim["layer0/w"]}, &File{Tensors: s.Optim["layer0/w"]})
}

func keys(m map[string]Tensor) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestStateRejects(t *testing.T) {
	u8 := Tensor{DType: U8, Shape: []int{1}, Data: []byte{1}}
	for _, tc := range []struct {
		f    *File
		want string
	}{
		{&File{Tensors: map[string]Tensor{"w": u8}}, `"w" follows no naming convention`},
		{&File{Tensors: map[string]Tensor{"optim/w": u8}}, "want optim/NAME/SLOT"},
		{&File{Tensors: map[string]Tensor{"optim/w/": u8}}, "want optim/NAME/SLOT"},
		{&File{Tensors: map[string]Tensor{"state/step": u8}}, "must be an I64 scalar"},
		{&File{Tensors: map[string]Tensor{"rng/x": {DType: I64, Shape: []int{}, Data: make([]byte, 8)}}}, "must be a U8 vector"},
		{&File{Metadata: map[string]string{"time/x": "soon"}}, "not a number"},
		{&File{Metadata: map[string]string{"format": "other/2"}}, "format"},
		{stateFile(t, "step", -1), "state/step = -1: want 0 to"},
		{stateFile(t, "step", math.MaxInt64), "state/step = 9223372036854775807: want 0 to"},
		{&File{Metadata: map[string]string{"time/x": "-1"}}, "time/x = -1: want a non-negative"},
		{&File{Metadata: map[string]string{"time/x": "+Inf"}}, "want a non-negative"},
		{&File{Metadata: map[string]string{"params": "[1]"}}, `"params" is not a JSON object`},
		{&File{Metadata: map[string]string{"params": `{"dim": 1}`, "structural": `["seq"]`}}, `structural parameter "seq" is not among`},
		{&File{Metadata: map[string]string{"structural": `"dim"`}}, "not a JSON list"},
	} {
		if _, err := StateFromFile(tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
	for _, s := range []*State{
		{Meta: map[string]string{"params": "x"}},
		{Meta: map[string]string{"time/x": "1"}},
		{Optim: map[string]map[string]Tensor{"w": {"a/b": u8}}},
		{Params: map[string]Tensor{"": u8}},
	} {
		if _, err := s.File(); err == nil {
			t.Errorf("State.File accepted %+v", s)
		}
	}
}

// stateFile returns a file holding one counter.
func stateFile(t *testing.T, name string, v int64) *File {
	c, err := FromInt64([]int{}, []int64{v})
	if err != nil {
		t.Fatal(err)
	}
	return &File{Tensors: map[string]Tensor{CounterPrefix + name: c}}
}
