package mil

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/anestar/anestar/internal/atomicfile"
)

// ModelFile is the name of the MIL text inside a model directory: DIR/model.mil beside the weight files
// that the program names @model_path/weights/NAME.bin, the layout the ANE backend stages for Apple's
// compiler and `anestar mil run DIR` reads.
const ModelFile = "model.mil"

// ModelPathPrefix starts every weight path a program names; the rest is relative to the model directory.
const ModelPathPrefix = "@model_path/"

// WeightFileRel returns the slash-separated path, relative to the model directory, of the weight file
// a program names key ("@model_path/weights/wq.bin" → "weights/wq.bin"). A path that does not start with
// "@model_path/", is not valid UTF-8, holds a backslash or NUL, is absolute, is not clean, leaves the
// directory or would overwrite the MIL text is an error naming it: the one rule for every place that
// stages, reads or writes a model directory.
func WeightFileRel(key string) (string, error) {
	rel, ok := strings.CutPrefix(key, ModelPathPrefix)
	if !ok {
		return "", fmt.Errorf("weight file %q: path must start with %q", key, ModelPathPrefix)
	}
	switch {
	case !utf8.ValidString(key):
		// NSString's stringWithUTF8String: returns nil for it, and a nil key raises an Objective-C
		// exception in the ANE backend's weights dictionary.
		return "", fmt.Errorf("weight file %q: path is not valid UTF-8", key)
	case rel == "":
		return "", fmt.Errorf("weight file %q: no file name after %q", key, ModelPathPrefix)
	case strings.ContainsAny(rel, "\\\x00"):
		return "", fmt.Errorf("weight file %q: path holds a backslash or NUL byte", key)
	case strings.HasPrefix(rel, "/"):
		return "", fmt.Errorf("weight file %q: path is absolute after %q", key, ModelPathPrefix)
	case path.Clean(rel) != rel:
		return "", fmt.Errorf("weight file %q: path is not clean (want %q)", key, ModelPathPrefix+path.Clean(rel))
	case rel == ".":
		return "", fmt.Errorf("weight file %q: path names the model directory itself", key)
	case rel == ".." || strings.HasPrefix(rel, "../"):
		return "", fmt.Errorf("weight file %q: path leaves the model directory", key)
	case rel == ModelFile:
		return "", fmt.Errorf("weight file %q: would overwrite the MIL text %s", key, ModelFile)
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
