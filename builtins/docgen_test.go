package builtins

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../docs/builtins.md from the code")

const referencePath = "../docs/builtins.md"

// TestReference fails when docs/builtins.md differs from what the builtin tables produce;
// `go generate ./builtins` (go test -run TestReference -update) rewrites it.
func TestReference(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(referencePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := os.ReadFile(referencePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, b.Bytes()) {
		t.Errorf("%s is out of date: run `go generate ./builtins`", referencePath)
	}
}

// TestEveryBuiltinDocumented checks that every module member and type attribute has a doc line,
// and that every module member a script can see is in the table.
func TestEveryBuiltinDocumented(t *testing.T) {
	s := &session{cfg: &Config{}}
	for _, m := range s.modules() {
		mod := m.module()
		documented := map[string]bool{}
		for _, f := range m.fns {
			if strings.TrimSpace(f.doc) == "" {
				t.Errorf("%s.%s has no doc", m.name, f.name)
			}
			documented[f.name] = true
		}
		for name := range mod.Members {
			if !documented[name] {
				t.Errorf("%s.%s is not in the reference", m.name, name)
			}
		}
	}
	for _, ty := range types {
		for _, f := range ty.members {
			if strings.TrimSpace(f.doc) == "" {
				t.Errorf("%s.%s has no doc", ty.name, f.name)
			}
		}
	}
}
