package scripts

import (
	"fmt"
	"os"
	"testing"
)

// TestMain removes out/, the folder the shipped scripts write their default outputs to (process.out_dir)
// when a test runs one without setting its paths, so that the tests leave the source tree as they found it.
func TestMain(m *testing.M) {
	_, err := os.Stat("out")
	existed := err == nil
	code := m.Run()
	if !existed {
		if err := os.RemoveAll("out"); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}
