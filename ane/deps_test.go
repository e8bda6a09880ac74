package ane_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestContractLoadsNoLibrary: package ane, the backend contract, imports neither the host math (cpu)
// nor purego, so a program that uses the contract links no library loader.
func TestContractLoadsNoLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/anestar/anestar/cpu" || strings.HasPrefix(dep, "github.com/ebitengine/purego") {
			t.Errorf("package ane depends on %s", dep)
		}
	}
}
