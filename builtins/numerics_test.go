package builtins

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"github.com/anestar/anestar/cpu"
)

// With the emulator's numerics check, an op of a built program (which has no MIL line) that overflows is
// named by its result and by the script line of the builder call that made it.
func TestNumericsCheckNamesScriptLine(t *testing.T) {
	src := overflowProgram + "k.eval()\n"
	_, err := Run(context.Background(), Config{
		Script:  "overflow.star",
		Source:  []byte(src),
		Backend: emulator.New(emulator.Options{CheckNumerics: true, Relaxed: true}),
		Stdout:  &bytes.Buffer{},
	})
	var ne *ane.NumericsError
	if !errors.As(err, &ne) {
		t.Fatalf("Run: %v; want an *ane.NumericsError", err)
	}
	for _, want := range []string{`op "sq" (mul)`, "built at overflow.star:4:", "+Inf"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "MIL line 0") {
		t.Errorf("error %q names MIL line 0", err)
	}
}

// ane.numerics() tells a script how its kernels round, so that a header does not claim fp16 under --fp32.
func TestNumericsReported(t *testing.T) {
	for _, c := range []struct {
		opts emulator.Options
		want string
	}{{emulator.Options{}, "fp16"}, {emulator.Options{Numerics: emulator.FP32}, "fp32"}} {
		var out bytes.Buffer
		if _, err := Run(context.Background(), Config{Script: "n.star", Source: []byte("print(ane.numerics())\n"),
			Backend: emulator.New(c.opts), Stdout: &out}); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(out.String()); got != c.want {
			t.Errorf("ane.numerics() = %q, want %q", got, c.want)
		}
	}
}

// TestBLASInfoNumerics: cpu.blas_info names the AMX path of the fp16 products only in runs that have
// fp16 products, never with fp32 numerics (set by --fp32 or by the backend given).
func TestBLASInfoNumerics(t *testing.T) {
	info := func(cfg Config) string {
		var out bytes.Buffer
		cfg.Script, cfg.Source, cfg.Stdout = "i.star", []byte("print(cpu.blas_info)\n"), &out
		if _, err := Run(context.Background(), cfg); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	for name, cfg := range map[string]Config{
		"--fp32":          {BackendName: "emulator", Settings: ane.Settings{FP32: true}},
		"an fp32 backend": {Backend: emulator.New(emulator.Options{Numerics: emulator.FP32})},
	} {
		s := strings.TrimSpace(info(cfg))
		if strings.Contains(s, "fp16 products on AMX") {
			t.Errorf("%s: blas_info %q names the fp16 products", name, s)
		}
		if amx := cpu.GemmName() == "amx"; amx != strings.HasSuffix(s, "; fp32 products on AMX") {
			t.Errorf("%s, fp32 products on %s: blas_info %q", name, cpu.GemmName(), s)
		}
	}
	s := strings.TrimSpace(info(Config{Backend: emulator.New(emulator.Options{})}))
	if strings.Contains(s, "fp32 products") {
		t.Errorf("fp16 numerics: blas_info %q names the fp32 products", s)
	}
	if amx := cpu.F16GemmName() == "amx"; amx != strings.HasSuffix(s, "; fp16 products on AMX") {
		t.Errorf("fp16 numerics, products on %s: blas_info %q", cpu.F16GemmName(), s)
	}
}
