package ckpt

import (
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// benchFile is a 16 MiB checkpoint of 16 F32 tensors.
func benchFile() *File {
	r := rand.New(rand.NewPCG(1, 1))
	f := &File{Tensors: map[string]Tensor{}, Metadata: map[string]string{"step": "1"}}
	for i := 0; i < 16; i++ {
		f.Tensors[string(rune('a'+i))] = randomTensor(r, F32, []int{512, 512})
	}
	return f
}

func BenchmarkEncode(b *testing.B) {
	f := benchFile()
	b.SetBytes(16 << 20)
	for b.Loop() {
		if err := Encode(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	data := encode(b, benchFile())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSave(b *testing.B) {
	f := benchFile()
	path := filepath.Join(b.TempDir(), "ckpt.safetensors")
	b.SetBytes(16 << 20)
	for b.Loop() {
		if err := Save(path, f, SaveOptions{Keep: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(b.TempDir(), "ckpt.safetensors")
	if err := Save(path, benchFile(), SaveOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(16 << 20)
	for b.Loop() {
		if _, err := Load(path); err != nil {
			b.Fatal(err)
		}
	}
}
