package private

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

func TestPlatformReason(t *testing.T) {
	cases := []struct{ goos, goarch, want string }{
		{"darwin", "arm64", ""},
		{"linux", "amd64", "not darwin/arm64 (this is linux/amd64)"},
		{"darwin", "amd64", "not darwin/arm64 (this is darwin/amd64)"},
		{"linux", "arm64", "not darwin/arm64 (this is linux/arm64)"},
	}
	for _, c := range cases {
		err := platformReason(c.goos, c.goarch)
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("platformReason(%s, %s) = %v, want %q", c.goos, c.goarch, err, c.want)
		}
	}
}

func TestLoadErrorMessages(t *testing.T) {
	cases := []struct {
		err  loadError
		want string
	}{
		{loadError{stage: stageFramework, name: aneFrameworkPath, detail: "image not found"},
			"framework " + aneFrameworkPath + " did not load: image not found"},
		{loadError{stage: stageFramework, name: ioSurfacePath},
			"framework " + ioSurfacePath + " did not load: (no dlerror text)"},
		{loadError{stage: stageSymbol, name: "IOSurfaceLock", owner: ioSurfacePath, detail: "symbol not found"},
			"symbol IOSurfaceLock not found in " + ioSurfacePath + ": symbol not found"},
		{loadError{stage: stageClass, name: classModel},
			"class _ANEInMemoryModel is missing after loading AppleNeuralEngine.framework (this macOS version may have renamed its private API)"},
		{loadError{stage: stageMethod, name: "-" + selCompileWithQoS, owner: classModel},
			"class _ANEInMemoryModel does not respond to -compileWithQoS:options:error: (this macOS version may have changed its private API)"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

func TestProbeAndRegistry(t *testing.T) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		t.Skip("on darwin/arm64 Probe depends on the machine; private_darwin_test.go covers it")
	}
	want := "not darwin/arm64 (this is " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if err := Probe(); err == nil || err.Error() != want {
		t.Errorf("Probe() = %v, want %s", err, want)
	}
	if b, err := Open(); b != nil || err == nil || err.Error() != want {
		t.Errorf("Open() = %v, %v", b, err)
	}
	found := false
	for _, s := range ane.List() {
		if s.Name != "ane" {
			continue
		}
		found = true
		if s.Priority != 10 || s.Err == nil || s.Err.Error() != want || s.Summary == "" {
			t.Errorf("registry entry %+v", s)
		}
	}
	if !found {
		t.Fatal(`"ane" is not registered`)
	}
	if _, err := ane.Open("ane", ane.Settings{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf(`ane.Open("ane"): %v`, err)
	}
}

func TestFrameworkErrorMessages(t *testing.T) {
	cases := []struct {
		err  FrameworkError
		want string
	}{
		{FrameworkError{Op: selLoadWithQoS}, "loadWithQoS:options:error: failed without an NSError"},
		{FrameworkError{Op: selModelWithMILText, Description: "returned nil"},
			"modelWithMILText:weights:optionsPlist: failed: returned nil"},
		{FrameworkError{Op: selCompileWithQoS, Domain: "com.apple.appleneuralengine.compiler", Code: -3,
			Description: `Error Domain=com.apple.appleneuralengine.compiler Code=-3 "compile failed"`},
			`compileWithQoS:options:error: failed: Error Domain=com.apple.appleneuralengine.compiler Code=-3 "compile failed" (domain com.apple.appleneuralengine.compiler, code -3)`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	var fe *FrameworkError
	wrapped := error(&cases[0].err)
	if !errors.As(errors.Join(errors.New("x"), wrapped), &fe) || fe.Op != selLoadWithQoS {
		t.Errorf("errors.As failed")
	}
}

func TestBudgetHint(t *testing.T) {
	if h := budgetHint(99); h != "" {
		t.Errorf("hint at 99 compiles: %q", h)
	}
	if h := budgetHint(100); !strings.Contains(h, "compiled 100 models") || !strings.Contains(h, "100-119") {
		t.Errorf("hint at 100 compiles: %q", h)
	}
}

func TestIOSpecs(t *testing.T) {
	p := testProgram()
	p.Funcs[0].Inputs = append(p.Funcs[0].Inputs, &mil.Var{Name: "k", Type: mil.Scalar(mil.FP32)})
	p.Funcs[0].Outputs = append(p.Funcs[0].Outputs, mil.Ref{Name: "x"})
	ins, outs, err := ioSpecs(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range append(ins, outs...) {
		got = append(got, fmt.Sprintf("%s:%s:%d", s.name, s.typ, s.bytes))
	}
	want := "x:tensor<fp16, [1, 4, 1, 32]>:256 s:tensor<fp32, [1, 3, 1, 32]>:384 k:fp32:4 y:tensor<fp16, [1, 4, 1, 32]>:256 x:tensor<fp16, [1, 4, 1, 32]>:256"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
	if ins[2].bytes != 4 || ins[1].bytes != 384 {
		t.Errorf("sizes %d %d", ins[1].bytes, ins[2].bytes)
	}

	bad := []struct {
		t    mil.Type
		want string
	}{
		{mil.Tensor(mil.FP16, 1, 0, 1, 4), "has a dim below 1"},
		{mil.Tensor(mil.FP16, 1, -2), "has a dim below 1"},
		{mil.Tensor(mil.FP16, 1<<20, 1<<20), "too large"},
		{mil.Tensor(mil.FP32, 1<<28+1), "too large"},
		{mil.Tensor(mil.BF16, 4), "dtype bf16"},
		{mil.Type{Kind: mil.TupleKind, Elems: []mil.Type{mil.Scalar(mil.FP16)}}, "is not a tensor"},
	}
	for _, c := range bad {
		p := testProgram()
		p.Funcs[0].Inputs[0].Pos = mil.Pos{Line: 2, Col: 10}
		p.Funcs[0].Inputs[0].Type = c.t
		_, _, err := ioSpecs(p)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `input "x" at 2:10`) {
			t.Errorf("%s: %v, want %q", c.t, err, c.want)
		}
	}
	noMain := testProgram()
	noMain.Funcs[0].Name = "other"
	if _, _, err := ioSpecs(noMain); err == nil || err.Error() != "program has no func main" {
		t.Errorf("no main: %v", err)
	}
	undef := testProgram()
	undef.Funcs[0].Outputs = []mil.Ref{{Name: "nope", Pos: mil.Pos{Line: 9, Col: 4}}}
	if _, _, err := ioSpecs(undef); err == nil || err.Error() != `func main output "nope" at 9:4 is not defined` {
		t.Errorf("undefined output: %v", err)
	}
	empty := testProgram()
	empty.Funcs[0].Outputs = nil
	if _, _, err := ioSpecs(empty); err == nil || !strings.Contains(err.Error(), "returns nothing") {
		t.Errorf("no outputs: %v", err)
	}
}

func TestSurfaceProps(t *testing.T) {
	got := map[string]int64{}
	for _, p := range surfaceProps(96) {
		got[p.key] = p.value
	}
	want := map[string]int64{"kIOSurfaceWidth": 96, "kIOSurfaceHeight": 1, "kIOSurfaceBytesPerElement": 1,
		"kIOSurfaceBytesPerRow": 96, "kIOSurfaceAllocSize": 96, "kIOSurfacePixelFormat": 0}
	if len(got) != len(want) {
		t.Errorf("props %v", got)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %d (present %v), want %d", k, g, ok, v)
		}
	}
	if lockOptions(true) != 1 || lockOptions(false) != 0 {
		t.Errorf("lock options %d %d", lockOptions(true), lockOptions(false))
	}
}

func TestPrivateAPITable(t *testing.T) {
	classes := map[string]bool{classDescriptor: true, classModel: true, classRequest: true, classIOSurface: true}
	seen := map[string]bool{}
	for _, m := range privateAPI {
		if !classes[m.class] {
			t.Errorf("%s: unknown class %s", m.sel, m.class)
		}
		if n := strings.Count(m.sel, ":"); n != m.args {
			t.Errorf("%s has %d colons, table says %d arguments", m.sel, n, m.args)
		}
		if seen[m.class+m.sel] {
			t.Errorf("%s listed twice", m.sel)
		}
		seen[m.class+m.sel] = true
	}
	if len(seen) != 10 {
		t.Errorf("%d methods, want 10: the reference's 9 and modelAttributes (for the ports)", len(seen))
	}
}

func TestFP16Int(t *testing.T) {
	for n, want := range map[int]uint16{0: 0, 1: 0x3C00, 2: 0x4000, 3: 0x4200, 5: 0x4500, 1024: 0x6400, 2047: 0x67FF, 2048: 0x6800} {
		if got := fp16Int(n); got != want {
			t.Errorf("fp16Int(%d) = %#04x, want %#04x", n, got, want)
		}
	}
}

// TestSettingsRefused checks that the ANE backend refuses, with a message, every setting it cannot
// honour instead of dropping it.
func TestSettingsRefused(t *testing.T) {
	if err := refuseSettings(ane.Settings{}); err != nil {
		t.Errorf("no settings: %v", err)
	}
	for _, c := range []struct {
		s    ane.Settings
		want string
	}{
		{ane.Settings{FP32: true}, "--fp32: the ANE computes in fp16"},
		{ane.Settings{CheckNumerics: true}, "--check-numerics: the ANE does not report"},
		{ane.Settings{Relaxed: true}, "--relaxed: the ANE refuses the programs that relaxed mode lets through"},
	} {
		err := refuseSettings(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "use --backend emulator") {
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
}

func TestMacOSReason(t *testing.T) {
	for v, ok := range map[string]bool{"15.0": true, "15.3.1": true, "26.3": true, "14.7.2": false, "13": false, "x": false, "": false} {
		err := macOSReason(v)
		if (err == nil) != ok {
			t.Errorf("macOS %q: %v", v, err)
		}
		if err != nil && ok == false && v == "14.7.2" && !strings.Contains(err.Error(), "macOS 14.7.2 is older than 15") {
			t.Errorf("macOS 14.7.2: %v", err)
		}
	}
}
