package cpu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anestar/anestar/internal/memlimit"
)

// Under a real `ulimit -v` that leaves too little room for OpenBLAS's buffers (where OpenBLAS 0.3.21
// retries its mmap for ever), "auto" ends at gonum at once, with the message, instead of hanging.
func TestAddressSpaceLimitSubprocess(t *testing.T) {
	if os.Getenv("ANESTAR_TEST_ASLIMIT_CHILD") == "1" {
		used, ok := memlimit.MappedBytes()
		var rl syscall.Rlimit
		err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl)
		if !ok {
			err = fmt.Errorf("cannot read the address space's size")
		}
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		rl.Cur = used + 150<<20
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &rl); err != nil {
			fmt.Println("error:", err)
			return
		}
		err = SetBLAS("auto")
		fmt.Printf("err=%v blas=%s\n", err, BLASName())
		return
	}
	if _, err := LoadBLAS("openblas"); err != nil {
		t.Skipf("OpenBLAS not available here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestAddressSpaceLimitSubprocess$")
	cmd.Env = append(os.Environ(), "ANESTAR_TEST_ASLIMIT_CHILD=1", BLASEnv+"=")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the child hung under a tight ulimit -v:\n%s", out)
	}
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "err=<nil> blas=gonum") || !strings.Contains(s, "anestar: openblas is unusable: not loaded: the address-space limit (ulimit -v)") {
		t.Errorf("child under a tight ulimit -v says\n%s\nwant gonum and the message", s)
	}
}
