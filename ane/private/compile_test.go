package private

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

func testWeights() mil.Weights {
	vals := make([]uint16, 128)
	for i := range vals {
		vals[i] = fp16Int(i)
	}
	return mil.Weights{"@model_path/weights/w.bin": testBlob(vals)}
}

func TestCompileSequence(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	b := &Backend{drv: d}
	p, w := testProgram(), testWeights()
	before := b.Compiles()
	kern, err := compile(b.drv, p, w, ane.ChipAll) // the ports as declared: the driver sees two inputs
	if err != nil {
		t.Fatal(err)
	}
	k := kern
	if got := b.Compiles() - before; got != 1 {
		t.Errorf("Compiles rose by %d, want 1", got)
	}
	want := []string{"newModel 1 files", "compile", "load", "ports",
		"surface 256 bytes", "surface 384 bytes", "surface 256 bytes", "newRequest 2 in 1 out"}
	if !reflect.DeepEqual(d.log, want) {
		t.Errorf("calls:\n got %q\nwant %q", d.log, want)
	}
	// The program has no buildInfo: the backend adds the reference's, on one line.
	if d.staged != mil.Print(mil.WithBuildInfo(p)) || d.models[0].text != d.staged {
		t.Errorf("model.mil and the text given to the framework differ from mil.Print with buildInfo")
	}
	if lines := strings.Split(d.staged, "\n"); !strings.HasPrefix(lines[1], `[buildInfo = dict<string, string>({{"coremlc-component-MIL", "3510.2.1"}, `) {
		t.Errorf("second line of the staged text: %q", lines[1])
	}
	dir := filepath.Join(d.tmp, d.hex)
	got, err := os.ReadFile(filepath.Join(dir, "weights", "w.bin"))
	if err != nil || string(got) != string(w["@model_path/weights/w.bin"]) {
		t.Errorf("staged weights/w.bin: %v, %d bytes", err, len(got))
	}

	// Surfaces: names, types and sizes in declaration and return order.
	var names []string
	for _, s := range append(k.Inputs(), k.Outputs()...) {
		names = append(names, s.Name()+":"+s.Type().String())
	}
	wantNames := []string{"x:tensor<fp16, [1, 4, 1, 32]>", "s:tensor<fp32, [1, 3, 1, 32]>", "y:tensor<fp16, [1, 4, 1, 32]>"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Errorf("surfaces %q, want %q", names, wantNames)
	}

	// Eval goes through the request over the same memory the surfaces expose.
	in := k.Inputs()[0].Memory()
	if err := in.Lock(false); err != nil {
		t.Fatal(err)
	}
	for i := range in.Bytes() {
		in.Bytes()[i] = byte(i)
	}
	if err := in.Unlock(false); err != nil {
		t.Fatal(err)
	}
	if err := k.Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := k.Outputs()[0].Memory()
	if err := out.Lock(true); err != nil {
		t.Fatal(err)
	}
	for i, v := range out.Bytes() {
		if v != byte(i)+1 {
			t.Fatalf("output byte %d = %d, want %d", i, v, i+1)
		}
	}
	if err := out.Unlock(true); err != nil {
		t.Fatal(err)
	}
	if locks := d.surfaces[2].locks; locks[len(locks)-2] != "lock ro" || locks[len(locks)-1] != "unlock ro" {
		t.Errorf("read-only access locked as %q", locks)
	}

	d.log = nil
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	want = []string{"release request", "unload", "release model"}
	if !reflect.DeepEqual(d.log, want) {
		t.Errorf("close calls %q, want %q", d.log, want)
	}
	for i, s := range d.surfaces {
		if !s.freed {
			t.Errorf("surface %d not freed", i)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("staging directory still there after Close: %v", err)
	}
	if err := k.Eval(context.Background()); !errors.Is(err, errClosed) {
		t.Errorf("Eval after Close: %v, want %v", err, errClosed)
	}
	if err := k.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := in.Lock(true); err == nil || !strings.Contains(err.Error(), "kernel is closed") {
		t.Errorf("Lock after Close: %v", err)
	}
}

func TestCompileFailureCleansUp(t *testing.T) {
	isolateCount(t)
	boom := &FrameworkError{Op: "x", Domain: "d", Code: 1, Description: "boom"}
	cases := []struct {
		name     string
		set      func(d *fakeDriver)
		counted  int64
		unloaded bool
		freed    int
		wantErr  string
	}{
		{"newModel", func(d *fakeDriver) { d.errNewModel = boom }, 1, false, 0, "ane compile: x failed: boom"},
		{"bad identifier", func(d *fakeDriver) { d.hex = "../escape" }, 1, false, 0, "not a plain file name"},
		{"compile", func(d *fakeDriver) { d.errCompile = boom }, 1, false, 0, "ane compile: x failed"},
		{"load", func(d *fakeDriver) { d.errLoad = boom }, 1, false, 0, "ane load: x failed"},
		{"second surface", func(d *fakeDriver) { d.failSurface = 1 }, 1, true, 1, `surface "s": no memory`},
		{"request", func(d *fakeDriver) { d.errRequest = boom }, 1, true, 3, "ane compile: x failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDriver(t.TempDir())
			c.set(d)
			before := compiles.Load()
			_, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
			if got := compiles.Load() - before; got != c.counted {
				t.Errorf("counted %d compiles, want %d", got, c.counted)
			}
			for _, m := range d.models {
				if !m.released {
					t.Errorf("model not released")
				}
				if m.loaded {
					t.Errorf("model left loaded")
				}
			}
			if got := strings.Contains(strings.Join(d.log, ","), "unload"); got != c.unloaded {
				t.Errorf("unloaded = %v, want %v (calls %q)", got, c.unloaded, d.log)
			}
			for i, s := range d.surfaces {
				if !s.freed {
					t.Errorf("surface %d not freed", i)
				}
			}
			if len(d.surfaces) != c.freed {
				t.Errorf("%d surfaces made, want %d", len(d.surfaces), c.freed)
			}
			entries, _ := os.ReadDir(d.tmp)
			if len(entries) != 0 {
				t.Errorf("staging root not empty: %v", entries)
			}
			if stagedDirs.users(filepath.Join(d.tmp, d.hex)) != 0 {
				t.Errorf("staging directory still has users")
			}
		})
	}
}

func TestCompileRejectsBeforeTheDevice(t *testing.T) {
	isolateCount(t)
	noMain := testProgram()
	noMain.Funcs[0].Name = "other"
	badOut := testProgram()
	badOut.Funcs[0].Outputs = []mil.Ref{{Name: "nope", Pos: mil.Pos{Line: 9, Col: 4}}}
	intIn := testProgram()
	intIn.Funcs[0].Inputs[1].Type = mil.Tensor(mil.Int32, 1, 2)
	cases := []struct {
		name    string
		p       *mil.Program
		w       mil.Weights
		wantErr string
	}{
		{"nil program", nil, nil, "nil program"},
		{"no main", noMain, testWeights(), `"main"`},
		{"undefined output", badOut, testWeights(), `"nope"`},
		{"int input", intIn, testWeights(), "input `s` has rank 2 (tensor<int32, [1, 2]>): the ANE's I/O are rank-4"},
		{"missing blob", testProgram(), mil.Weights{}, `op "w" (const) in func main: BLOBFILE path "@model_path/weights/w.bin" has no weight file`},
		{"escaping weight", testProgram(), mil.Weights{"@model_path/weights/w.bin": nil, "@model_path/../x": nil}, "leaves the model directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newFakeDriver(t.TempDir())
			before := compiles.Load()
			_, err := compile(d, c.p, c.w, ane.ChipAll)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want one containing %q", err, c.wantErr)
			}
			if len(d.log) != 0 {
				t.Errorf("reached the device: calls %q", d.log)
			}
			if got := compiles.Load() - before; got != 1 {
				t.Errorf("a rejected compile counted %d times, want 1", got)
			}
		})
	}
}

func TestCompileBudgetHint(t *testing.T) {
	isolateCount(t)
	compiles.Store(150)
	d := newFakeDriver(t.TempDir())
	d.errCompile = &FrameworkError{Op: selCompileWithQoS}
	_, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	want := "ane compile: compileWithQoS:options:error: failed without an NSError (this process has compiled 151 models; " +
		"the ANE allows roughly 100-119 per process, so save a checkpoint and restart the process)"
	if err == nil || err.Error() != want {
		t.Errorf("error\n %v\nwant\n %s", err, want)
	}
	var fe *FrameworkError
	if !errors.As(err, &fe) || fe.Op != selCompileWithQoS {
		t.Errorf("errors.As did not find the FrameworkError in %v", err)
	}
}

func TestSharedStagingDirectory(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	k1, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(d.tmp, d.hex)
	if err := k1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, milFileName)); err != nil {
		t.Errorf("closing one of two kernels removed their shared directory: %v", err)
	}
	if err := k2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("directory survives its last kernel: %v", err)
	}
}

func TestEvalErrors(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	k, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := k.Eval(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Eval with a cancelled context: %v", err)
	}
	if n := k.req.(*fakeRequest).evals; n != 0 {
		t.Errorf("cancelled Eval reached the device %d times", n)
	}
	d.errEval = &FrameworkError{Op: selEvaluateWithQoS, Domain: "com.apple.appleneuralengine", Code: 5, Description: "bad"}
	err = k.Eval(context.Background())
	want := "ane eval: evaluateWithQoS:options:request:error: failed: bad (domain com.apple.appleneuralengine, code 5)"
	if err == nil || err.Error() != want {
		t.Errorf("Eval error %v, want %s", err, want)
	}
}

func TestCloseReportsUnloadError(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	k, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	if err != nil {
		t.Fatal(err)
	}
	d.errUnload = &FrameworkError{Op: selUnloadWithQoS}
	if err := k.Close(); err == nil || !strings.Contains(err.Error(), "ane close: unloadWithQoS:error: failed") {
		t.Errorf("Close: %v", err)
	}
	if !d.models[0].released {
		t.Errorf("model not released after a failed unload")
	}
}

func TestEvalAndCloseConcurrently(t *testing.T) {
	isolateCount(t)
	d := newFakeDriver(t.TempDir())
	k, err := compile(d, testProgram(), testWeights(), ane.ChipAll)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if err := k.Eval(context.Background()); err != nil && !errors.Is(err, errClosed) {
					t.Error(err)
					return
				}
			}
		}()
	}
	if err := k.Close(); err != nil {
		t.Error(err)
	}
	wg.Wait()
}

func TestBackendBasics(t *testing.T) {
	var b Backend
	if _, err := b.Compile(testProgram(), testWeights()); !errors.Is(err, errNoDriver) {
		t.Errorf("Compile on a zero Backend: %v", err)
	}
	if b.Name() != "ane" || b.PeakFLOPS() != 15.8e12 {
		t.Errorf("Name %q PeakFLOPS %g", b.Name(), b.PeakFLOPS())
	}
	var _ ane.Backend = &b
}
