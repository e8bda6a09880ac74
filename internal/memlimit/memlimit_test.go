package memlimit

import (
	"math"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	if _, ok := Available(); !ok {
		t.Skip("memory not known here")
	}
	if err := Check(1<<20, "a megabyte"); err != nil {
		t.Errorf("1 MB refused: %v", err)
	}
	err := Check(math.MaxUint64, "tensor [huge]")
	if err == nil || !strings.Contains(err.Error(), "tensor [huge] needs 18446744073709551615 bytes") {
		t.Errorf("got %v", err)
	}
}
