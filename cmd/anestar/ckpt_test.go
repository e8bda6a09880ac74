package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/ckpt"
)

// runCkptCLI runs anestar with args and returns the exit code, stdout and stderr.
func runCkptCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

// saveCkpt saves tensors and metadata to name in a fresh temporary folder.
func saveCkpt(t *testing.T, name string, tensors map[string]ckpt.Tensor, meta map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := ckpt.Save(path, &ckpt.File{Tensors: tensors, Metadata: meta}, ckpt.SaveOptions{}); err != nil {
		t.Fatal(err)
	}
	return path
}

func f32(t *testing.T, shape []int, v ...float32) ckpt.Tensor {
	t.Helper()
	x, err := ckpt.FromFloat32(ckpt.F32, shape, v)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestCkptLs(t *testing.T) {
	step, _ := ckpt.FromInt64(nil, []int64{7})
	path := saveCkpt(t, "a.safetensors", map[string]ckpt.Tensor{
		"param/w":    f32(t, []int{2, 3}, 1, 2, 3, 4, 5, 6),
		"state/step": step,
		"empty":      f32(t, []int{0, 4}),
	}, map[string]string{"params": `{"dim": 8}`, "note": "two\nlines"})
	code, out, errs := runCkptCLI("ckpt", "ls", path)
	if code != exitOK || errs != "" {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"NAME        DTYPE  SHAPE  ELEMENTS  BYTES\n",
		"empty       F32    [0 4]  0         0\n",
		"param/w     F32    [2 3]  6         24\n",
		"state/step  I64    []     1         8\n",
		"3 tensors, 32 data bytes\n",
		"metadata:\n  note = \"two\\nlines\"\n  params = {\"dim\": 8}\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCkptCLI("ckpt", "ls", "--meta", path)
	if code != exitOK || strings.Contains(out, "param/w") || !strings.Contains(out, "params =") {
		t.Errorf("ls --meta: code %d, output %q", code, out)
	}
}

func TestCkptDiff(t *testing.T) {
	a := saveCkpt(t, "a.safetensors", map[string]ckpt.Tensor{
		"same":    f32(t, []int{2}, 1, 2),
		"w":       f32(t, []int{3}, 1, 2, 3),
		"nan":     f32(t, []int{2}, float32(math.NaN()), 1),
		"reshape": f32(t, []int{2, 2}, 1, 2, 3, 4),
		"onlyA":   f32(t, []int{1}, 1),
	}, map[string]string{"step": "1", "k": "v"})
	bf16, _ := ckpt.FromFloat32(ckpt.BF16, []int{2}, []float32{1, 2})
	b := saveCkpt(t, "b.safetensors", map[string]ckpt.Tensor{
		"same":    bf16,
		"w":       f32(t, []int{3}, 1, 2.5, 2.75),
		"nan":     f32(t, []int{2}, float32(math.NaN()), 2),
		"reshape": f32(t, []int{4}, 1, 2, 3, 4),
		"onlyB":   f32(t, []int{1}, 1),
	}, map[string]string{"step": "2", "extra": "x"})
	code, out, errs := runCkptCLI("ckpt", "diff", a, b)
	if code != exitOK || errs != "" {
		t.Fatalf("code %d, stderr %q", code, errs)
	}
	for _, want := range []string{
		"nan   F32       [2]    1\n",
		"same  F32/BF16  [2]    0\n",
		"w     F32       [3]    0.5\n",
		"only in A: onlyA\n",
		"only in B: onlyB\n",
		"shapes differ: reshape: F32[2 2] in A, F32[4] in B\n",
		"metadata only in A: k = v\n",
		"metadata only in B: extra = x\n",
		"metadata step: 1 in A, 2 in B\n",
		"3 tensors compared, 2 differ; 1 only in A, 1 only in B, 1 with other shapes; 3 metadata differences\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	_, out, _ = runCkptCLI("ckpt", "diff", "--tol", "0.6", a, b)
	if !strings.Contains(out, "3 tensors compared, 1 differ;") {
		t.Errorf("--tol 0.6: %s", out)
	}
}

func TestCkptErrors(t *testing.T) {
	good := saveCkpt(t, "good.safetensors", map[string]ckpt.Tensor{"w": f32(t, []int{2}, 1, 2)}, nil)
	data, _ := os.ReadFile(good)
	bad := filepath.Join(t.TempDir(), "bad.safetensors")
	os.WriteFile(bad, data[:len(data)-3], 0o644)
	for _, args := range [][]string{
		{"ckpt", "ls", bad},
		{"ckpt", "diff", good, bad},
		{"ckpt", "diff", bad, good},
		{"ckpt", "ls", filepath.Join(t.TempDir(), "missing.safetensors")},
	} {
		code, out, errs := runCkptCLI(args...)
		if code != exitError || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "anestar ckpt ") {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want 1 and one line", args, code, out, errs)
		}
		if args[len(args)-1] == bad && !strings.Contains(errs, "bad.safetensors: byte ") {
			t.Errorf("%v: %q does not name the file and offset", args, errs)
		}
	}
	for _, args := range [][]string{
		{"ckpt"}, {"ckpt", "cat", good}, {"ckpt", "ls"}, {"ckpt", "ls", good, good},
		{"ckpt", "diff", good}, {"ckpt", "ls", "--bogus", good}, {"ckpt", "diff", "--tol", "x", good, good},
	} {
		if code, _, errs := runCkptCLI(args...); code != exitUsage || errs == "" {
			t.Errorf("%v: code %d, stderr %q; want 2", args, code, errs)
		}
	}
	for _, args := range [][]string{{"ckpt", "--help"}, {"ckpt", "help", "ls"}, {"ckpt", "diff", "-h"}, {"help", "ckpt"}} {
		if code, out, _ := runCkptCLI(args...); code != exitOK || !strings.Contains(out, "Usage:") || !strings.Contains(out, "anestar ckpt") {
			t.Errorf("%v: code %d, stdout %q", args, code, out)
		}
	}
}
