package private

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/anestar/anestar/mil"
)

func TestWeightRelPath(t *testing.T) {
	cases := []struct {
		key, rel, err string
	}{
		{"@model_path/weights/wq.bin", "weights/wq.bin", ""},
		{"@model_path/w.bin", "w.bin", ""},
		{"@model_path/weights/layer0/w1.bin", "weights/layer0/w1.bin", ""},
		{"weights/wq.bin", "", "must start with"},
		{"@model_path", "", "must start with"},
		{"@model_path/", "", "no file name"},
		{"@model_path//etc/passwd", "", "absolute"},
		{"@model_path/../w.bin", "", "leaves the model directory"},
		{"@model_path/..", "", "leaves the model directory"},
		{"@model_path/weights/../../w.bin", "", "not clean"},
		{"@model_path/weights/./w.bin", "", "not clean"},
		{"@model_path/weights//w.bin", "", "not clean"},
		{"@model_path/weights/", "", "not clean"},
		{"@model_path/.", "", "model directory itself"},
		{"@model_path/weights\\..\\..\\w.bin", "", "backslash"},
		{"@model_path/w\x00.bin", "", "NUL"},
		{"@model_path/w\xff.bin", "", "not valid UTF-8"},
		{"@model_path/model.mil", "", "overwrite the MIL text"},
	}
	for _, c := range cases {
		rel, err := weightRelPath(c.key)
		if c.err == "" {
			if err != nil || rel != c.rel {
				t.Errorf("weightRelPath(%q) = %q, %v; want %q", c.key, rel, err, c.rel)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "weight file") {
			t.Errorf("weightRelPath(%q) = %q, %v; want an error containing %q", c.key, rel, err, c.err)
		}
	}
}

// FuzzWeightRelPath checks that every accepted path stays inside the model directory and maps back to
// its key.
func FuzzWeightRelPath(f *testing.F) {
	for _, s := range []string{"@model_path/weights/w.bin", "@model_path/../x", "@model_path/a/./b", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		rel, err := weightRelPath(key)
		if err != nil {
			return
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, "\\") {
			t.Fatalf("%q maps to %q, which is not local", key, rel)
		}
		if modelPathPrefix+rel != key {
			t.Fatalf("%q maps to %q, which does not map back", key, rel)
		}
		if rel == milFileName {
			t.Fatalf("%q overwrites the MIL text", key)
		}
	})
}

func TestWeightFilesSorted(t *testing.T) {
	w := mil.Weights{
		"@model_path/weights/b.bin": {2},
		"@model_path/weights/a.bin": {1},
		"@model_path/c.bin":         {3},
	}
	files, err := weightFiles(w)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.key+"="+f.rel+"="+string('0'+f.data[0]))
	}
	want := "@model_path/c.bin=c.bin=3 @model_path/weights/a.bin=weights/a.bin=1 @model_path/weights/b.bin=weights/b.bin=2"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q\nwant %q", strings.Join(got, " "), want)
	}
	if files, err := weightFiles(nil); err != nil || len(files) != 0 {
		t.Errorf("no weights: %v, %v", files, err)
	}
}

func TestCheckBlobRefsInTuplesAndArgs(t *testing.T) {
	p := testProgram()
	// Move the blob into a tuple literal passed as an argument.
	blob := p.Funcs[0].Ops[0].Attrs[1].Value
	p.Funcs[0].Ops[0].Attrs = p.Funcs[0].Ops[0].Attrs[:1]
	blob.Pos = mil.Pos{Line: 3, Col: 7}
	p.Funcs[0].Ops[1].Args = append(p.Funcs[0].Ops[1].Args, &mil.Arg{Name: "t", Tuple: true,
		Operands: []mil.Operand{{Lit: &mil.Value{Elems: []*mil.Value{blob}}}}})
	err := checkBlobRefs(p, mil.Weights{})
	want := `op "r" (add) in func main at 3:7: BLOBFILE path "@model_path/weights/w.bin" has no weight file`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if err := checkBlobRefs(p, testWeights()); err != nil {
		t.Errorf("present blob: %v", err)
	}
}
