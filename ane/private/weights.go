package private

import (
	"fmt"
	"sort"

	"github.com/anestar/anestar/mil"
)

// milFileName is the name of the MIL text inside a model directory.
const milFileName = mil.ModelFile

// modelPathPrefix starts every weight file path a program names; the framework replaces it with the
// model's directory.
const modelPathPrefix = mil.ModelPathPrefix

// weightFile is one weight blob file of a program.
type weightFile struct {
	key  string // the path as the program names it, "@model_path/weights/wq.bin"
	rel  string // its place in the model directory, slash-separated: "weights/wq.bin"
	data []byte // the whole blob file
}

// weightFiles maps every entry of w to its place in the model directory, sorted by key. A path that does
// not start with "@model_path/", that would leave the directory, that is not clean, or that would
// overwrite the MIL text is an error naming it.
func weightFiles(w mil.Weights) ([]weightFile, error) {
	files := make([]weightFile, 0, len(w))
	for key, data := range w {
		rel, err := weightRelPath(key)
		if err != nil {
			return nil, err
		}
		files = append(files, weightFile{key: key, rel: rel, data: data})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].key < files[j].key })
	return files, nil
}

// weightRelPath returns the slash-separated path inside the model directory of the weight file that a
// program names key (mil.WeightFileRel's rule).
func weightRelPath(key string) (string, error) { return mil.WeightFileRel(key) }

// checkBlobRefs returns an error naming the first BLOBFILE reference in p, in source order, whose path
// has no entry in w.
func checkBlobRefs(p *mil.Program, w mil.Weights) error {
	for _, f := range p.Funcs {
		for _, op := range f.Ops {
			for _, a := range op.Attrs {
				if err := checkValueBlobs(f, op, a.Value, w); err != nil {
					return err
				}
			}
			for _, a := range op.Args {
				for _, o := range a.Operands {
					if err := checkValueBlobs(f, op, o.Lit, w); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// checkValueBlobs checks the blob references of v and of its members.
func checkValueBlobs(f *mil.Func, op *mil.Op, v *mil.Value, w mil.Weights) error {
	if v == nil {
		return nil
	}
	if v.Blob != nil {
		if _, ok := w[v.Blob.Path]; !ok {
			return fmt.Errorf("op %s in func %s%s: BLOBFILE path %q has no weight file",
				opName(op), f.Name, at(v.Pos), v.Blob.Path)
		}
	}
	for _, e := range v.Elems {
		if err := checkValueBlobs(f, op, e, w); err != nil {
			return err
		}
	}
	return nil
}

// opName names op in messages: its first result, or its kind when it has none.
func opName(op *mil.Op) string {
	if len(op.Results) > 0 {
		return fmt.Sprintf("%q (%s)", op.Results[0].Name, op.Kind)
	}
	return op.Kind
}

// at returns " at line:col" for a parsed position and "" for a built one.
func at(p mil.Pos) string {
	if !p.IsValid() {
		return ""
	}
	return " at " + p.String()
}
