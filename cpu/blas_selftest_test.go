package cpu

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/anestar/anestar/internal/cpuid"
)

func TestOpenBLASCoreFor(t *testing.T) {
	avx2 := cpuid.X86Features{OSXSAVE: true, AVX: true, FMA: true, AVX2: true, XCR0: 0x7}
	avx512 := avx2
	avx512.AVX512F, avx512.AVX512DQ, avx512.AVX512CD, avx512.AVX512BW, avx512.AVX512VL = true, true, true, true, true
	avx512.XCR0 = 0xe7
	with := func(f cpuid.X86Features, change func(*cpuid.X86Features)) cpuid.X86Features { change(&f); return f }
	for _, tc := range []struct {
		name string
		f    cpuid.X86Features
		want string
	}{
		{"no features", cpuid.X86Features{}, ""},
		{"AVX2+FMA", avx2, "Haswell"},
		{"AVX2 without FMA", with(avx2, func(f *cpuid.X86Features) { f.FMA = false }), ""},
		{"FMA without AVX2", with(avx2, func(f *cpuid.X86Features) { f.AVX2 = false }), ""},
		{"AVX2 but the OS saves no YMM state", with(avx2, func(f *cpuid.X86Features) { f.XCR0 = 0x3 }), ""},
		{"AVX2 without OSXSAVE", with(avx2, func(f *cpuid.X86Features) { f.OSXSAVE, f.XCR0 = false, 0 }), ""},
		{"AVX-512 (Skylake-SP)", avx512, "SkylakeX"},
		// 0.3.21 rejects "Cooperlake" in OPENBLAS_CORETYPE; its sgemm kernels are SkylakeX's.
		{"AVX-512 with BF16 (Cooper Lake, Sapphire Rapids)", with(avx512, func(f *cpuid.X86Features) { f.AVX512BF16 = true }), "SkylakeX"},
		{"AVX-512 but the OS saves no ZMM state", with(avx512, func(f *cpuid.X86Features) { f.XCR0 = 0x7 }), "Haswell"},
		{"AVX-512 without the opmask state", with(avx512, func(f *cpuid.X86Features) { f.XCR0 = 0xc7 }), "Haswell"},
		{"AVX-512 without the upper ZMM16-31 state", with(avx512, func(f *cpuid.X86Features) { f.XCR0 = 0x67 }), "Haswell"},
		{"AVX-512F without VL (Knights Landing)", with(avx512, func(f *cpuid.X86Features) { f.AVX512VL, f.AVX512BW, f.AVX512DQ = false, false, false }), "Haswell"},
		{"AVX-512 without BW", with(avx512, func(f *cpuid.X86Features) { f.AVX512BW = false }), "Haswell"},
		{"AVX-512 flags without AVX2", with(avx512, func(f *cpuid.X86Features) { f.AVX2 = false }), ""},
	} {
		if got := openBLASCoreFor(tc.f); got != tc.want {
			t.Errorf("%s (%+v): core %q, want %q", tc.name, tc.f, got, tc.want)
		}
	}
}

// withFakeBLAS makes "auto" try a library named fake with the given sgemm before gonum, with the given
// self-test limit, and collects the fallback messages.
func withFakeBLAS(t *testing.T, sgemm sgemmFunc, limit time.Duration) *bytes.Buffer {
	t.Helper()
	oldOrder, oldLimit, oldWarn := blasOrder, selfTestLimit, warnOutput
	var warn bytes.Buffer
	blasOrder, selfTestLimit, warnOutput = []string{"fake", "gonum"}, limit, &warn
	loaders["fake"] = func() (*library, error) {
		return &library{name: "fake", info: BLASInfo{Name: "fake", Version: "1.0", CoreChoice: CoreNA}, sgemm: sgemm}, nil
	}
	loaded.Delete("fake")
	t.Cleanup(func() {
		blasOrder, selfTestLimit, warnOutput = oldOrder, oldLimit, oldWarn
		delete(loaders, "fake")
		loaded.Delete("fake")
	})
	return &warn
}

func TestSelfTestFallback(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	for _, tc := range []struct {
		name   string
		sgemm  sgemmFunc
		reason string // in the error and the message; "" for a library that passes
	}{
		{"right", gonumSgemm, ""},
		{"wrong on large products", func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
			b []float32, ldb int, beta float32, c []float32, ldc int) {
			gonumSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			if m*n*k > 1<<20 {
				c[ldc+1] += 1.0 / 1024
			}
		}, "sgemm self-test: NN 256x128x128 product: C[1,1] = "},
		{"hangs", func(bool, bool, int, int, int, float32, []float32, int, []float32, int, float32, []float32, int) {
			<-release
		}, "test product took over 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := time.Minute // the race detector on a busy machine is slow
			if tc.name == "hangs" {
				limit = 300 * time.Millisecond
			}
			warn := withFakeBLAS(t, tc.sgemm, limit)
			s := choose("auto")
			if s.err != nil {
				t.Fatal(s.err)
			}
			if tc.reason == "" {
				if s.lib.name != "fake" || warn.Len() != 0 {
					t.Fatalf("auto chose %s with message %q, want fake and none", s.lib.name, warn)
				}
				return
			}
			if s.lib.name != "gonum" {
				t.Fatalf("auto chose %s, want the gonum fallback", s.lib.name)
			}
			msg := warn.String()
			if strings.Count(msg, "\n") != 1 || !strings.HasSuffix(msg, "\n") {
				t.Errorf("message is not one line: %q", msg)
			}
			for _, want := range []string{"anestar: fake", "is unusable: ", tc.reason, "using gonum", BLASEnv + "=gonum"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
			// Forced, the library fails to load, with the same reason; nothing is printed.
			warn.Reset()
			s = choose("fake")
			var terr *unusableError
			if !errors.As(s.err, &terr) || !strings.Contains(s.err.Error(), tc.reason) || warn.Len() != 0 {
				t.Errorf("forced: err = %v, message %q; want the self-test's error and no message", s.err, warn)
			}
		})
	}
}

// The loader's choice of core, seen from a process of its own (OpenBLAS reads the environment once):
// a user's OPENBLAS_CORETYPE wins and is reported as theirs; without one the core follows the
// features, and the variable set for loading is gone afterwards.
func TestOpenBLASCoreChoiceSubprocess(t *testing.T) {
	if os.Getenv("ANESTAR_TEST_CORE_CHILD") == "1" {
		if err := SetBLAS("openblas"); err != nil {
			fmt.Println("error:", err)
			return
		}
		i := CurrentBLASInfo()
		fmt.Printf("choice=%s core=%s env=%q\n", i.CoreChoice, i.Core, os.Getenv(coreTypeEnv))
		return
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the core choice is made on amd64 only")
	}
	if _, err := LoadBLAS("openblas"); err != nil {
		t.Skipf("OpenBLAS not available here: %v", err)
	}
	child := func(core string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestOpenBLASCoreChoiceSubprocess$")
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, coreTypeEnv+"=") && !strings.HasPrefix(kv, BLASEnv+"=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "ANESTAR_TEST_CORE_CHILD=1")
		if core != "" {
			cmd.Env = append(cmd.Env, coreTypeEnv+"="+core)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return string(out)
	}
	// Prescott (SSE3) runs on every x86-64 CPU.
	if out, want := child("Prescott"), `choice=user core=Prescott env="Prescott"`; !strings.Contains(out, want) {
		t.Errorf("with %s=Prescott the child says\n%s\nwant %s", coreTypeEnv, out, want)
	}
	want := `choice=library core=`
	if core := openBLASCoreFor(cpuid.X86()); core != "" {
		want = fmt.Sprintf(`choice=auto core=%s env=""`, core)
	}
	if out := child(""); !strings.Contains(out, want) {
		t.Errorf("without %s the child says\n%s\nwant %s", coreTypeEnv, out, want)
	}
}

// Under an address-space limit too tight for its buffers OpenBLAS is not loaded (it would hang), and
// "auto" says why.
func TestOpenBLASAddressSpaceLimit(t *testing.T) {
	old := addressSpaceLeft
	addressSpaceLeft = func() (uint64, bool) { return 100 << 20, true }
	t.Cleanup(func() { addressSpaceLeft = old })
	_, err := loadVerified("openblas", loadOpenBLAS)
	var uerr *unusableError
	if !errors.As(err, &uerr) || !strings.Contains(err.Error(), "ulimit -v") || !strings.Contains(err.Error(), "leaves 100 MiB") {
		t.Fatalf("loading OpenBLAS with 100 MiB of address space left: err = %v, want the limit named", err)
	}
	var warn bytes.Buffer
	warnOutput = &warn
	t.Cleanup(func() { warnOutput = os.Stderr })
	warnFallback(err, "gonum")
	if msg := warn.String(); !strings.HasPrefix(msg, "anestar: openblas is unusable: not loaded: ") ||
		!strings.Contains(msg, BLASEnv+"=gonum") || strings.Contains(msg, coreTypeEnv) {
		t.Errorf("message %q, want the limit and %s=gonum, and no other core suggested", msg, BLASEnv)
	}
	// Where OpenBLAS computed a wrong product, another core is worth a try.
	warn.Reset()
	warnFallback(&unusableError{name: "openblas", wrong: true, err: errors.New("sgemm self-test: C[0,0] = 1, want 2")}, "gonum")
	if msg := warn.String(); !strings.Contains(msg, coreTypeEnv+" names another OpenBLAS core") {
		t.Errorf("message %q does not suggest another core", msg)
	}
}
