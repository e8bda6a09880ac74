package docs_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsStayTrue keeps what the docs say of the tree true where a test can: every Go package has a
// package comment, every file of the repository a doc names in backquotes exists, and every shipped
// script is listed in scripts/doc.go.
func TestDocsStayTrue(t *testing.T) {
	root := ".."
	// Package comments.
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "out") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for name, p := range pkgs {
			documented := false
			for _, f := range p.Files {
				documented = documented || f.Doc != nil
			}
			if !documented {
				t.Errorf("package %s (%s) has no package comment", name, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Files the docs name.
	ours := regexp.MustCompile("`((?:ane|bench|builtins|ckpt|cmd|cpu|data|docs|half|internal|metrics|mil|npy|numcsv|scripts|tokenizer)/[A-Za-z0-9_./-]+\\.(?:go|star|md|s|mil|py))`")
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, doc := range append(docs, filepath.Join(root, "README.md")) {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, loc := range ours.FindAllStringSubmatchIndex(string(text), -1) {
			path := string(text[loc[2]:loc[3]])
			if before := string(text[max(0, loc[0]-40):loc[0]]); strings.Contains(before, "ane-bridge-rs") || strings.Contains(before, "ANEForge") || strings.Contains(before, "maderix") {
				continue // a file of a reference project, not of this repository
			}
			m := []string{"", path}
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Errorf("%s names %s, which does not exist", filepath.Base(doc), m[1])
			}
		}
	}
	// Every script in scripts/doc.go.
	listing, err := os.ReadFile(filepath.Join(root, "scripts", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join(root, "scripts", "*.star"))
	libs, _ := filepath.Glob(filepath.Join(root, "scripts", "lib", "*.star"))
	for _, s := range append(scripts, libs...) {
		rel, _ := filepath.Rel(filepath.Join(root, "scripts"), s)
		if !strings.Contains(string(listing), rel) {
			t.Errorf("scripts/doc.go does not list %s", rel)
		}
	}
}
