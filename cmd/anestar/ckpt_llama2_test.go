package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ckpt"
)

const llama2Tied = "../../ckpt/testdata/llama2/tied.v0.bin"

func TestCkptLsLlama2(t *testing.T) {
	code, out, errs := runCkptCLI("ckpt", "ls", llama2Tied)
	if code != exitOK || errs != "" {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	// Compare with the columns' padding collapsed to one space.
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	flat := strings.Join(lines, "\n")
	for _, want := range []string{
		"NAME DTYPE SHAPE ELEMENTS BYTES OFFSET\ntok_embeddings.weight F32 [300 64] 19200 76800 28\n",
		"layers.0.attention_norm.weight F32 [64] 64 256 76828\nlayers.1.attention_norm.weight F32 [64] 64 256 77084\n",
		"layers.1.attention.wk.weight F32 [32 64] 2048 8192 ",
		"20 tensors, 440576 data bytes\n",
		"header:\nformat = llama2.c version 0\ndim = 64\nhidden_dim = 172\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 300\nmax_seq_len = 32\nshared_classifier = true\n",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, meta, _ := runCkptCLI("ckpt", "ls", "--meta", llama2Tied); !strings.HasPrefix(meta, "header:\n") {
		t.Errorf("--meta: %q", meta)
	}
}

func TestCkptDiffLlama2(t *testing.T) {
	m, err := ckpt.ReadLlama2(llama2Tied)
	if err != nil {
		t.Fatal(err)
	}
	v1 := filepath.Join(t.TempDir(), "tied.v1.bin")
	if err := ckpt.SaveLlama2(v1, m, 1); err != nil {
		t.Fatal(err)
	}
	_, out, _ := runCkptCLI("ckpt", "diff", llama2Tied, v1)
	if !strings.Contains(out, "20 tensors compared, 0 differ; 0 only in A, 0 only in B, 0 with other shapes; 1 metadata differences") ||
		!strings.Contains(out, "metadata format: llama2.c version 0 in A, llama2.c version 1 in B") {
		t.Errorf("diff of a version 0 file and its version 1 export:\n%s", out)
	}
	data, _ := os.ReadFile(llama2Tied)
	bad := filepath.Join(t.TempDir(), "bad.bin")
	os.WriteFile(bad, data[:1000], 0o644)
	for _, args := range [][]string{{"ckpt", "ls", bad}, {"ckpt", "diff", bad, v1}} {
		code, out, errs := runCkptCLI(args...)
		if code != exitError || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "bad.bin: byte 28: tensor \"tok_embeddings.weight\": ") {
			t.Errorf("%v: code %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
