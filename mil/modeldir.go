package mil

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/anestar/anestar/internal/atomicfile"
)

// ModelFile is the name of the MIL text inside a model directory: DIR/model.mil beside the weight files
// that the program names @model_path/weights/NAME.bin, the layout the ANE backend stages for Apple's
// compiler and `anestar mil run DIR` reads.
const ModelFile = "model.mil"

// ModelPathPrefix starts every weight path a program names; the rest is relative to the model directory.
const ModelPathPrefix = "@model_path/"

// WeightFileRel returns the path of weight file key (an "@model_path/REL" path) relative to the model
// directory, or an error when it does not name a file inside it.
func WeightFileRel(key string) (string, error) {
	rel, ok := strings.CutPrefix(key, ModelPathPrefix)
	if !ok || rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") || strings.Contains(rel, "\\") {
		return "", fmt.Errorf("weight path %q: want %sFILE inside the model directory", key, ModelPathPrefix)
	}
	return rel, nil
}

// WriteModelDir checks p against its weights and writes it as a model directory: dir/model.mil (the
// printed program) and each weight file at its place under dir. dir is created if needed; every file is
// written to a temporary name and renamed, so a reader never sees a partial file.
func WriteModelDir(dir string, p *Program, w Weights) error {
	if err := Check(p); err != nil {
		return err
	}
	if err := CheckWeights(p, w); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(w)) {
		rel, err := WeightFileRel(key)
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(name, w[key], 0o644); err != nil {
			return fmt.Errorf("weight file %q: %w", key, err)
		}
	}
	return atomicfile.Write(filepath.Join(dir, ModelFile), []byte(Print(p)), 0o644)
}
