package anetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// surfaceKernel compiles a program with an fp16 input a [1,4,1,6], an fp32 input b [1,3,1,6] and outputs
// a+a (fp16) and b (cast to fp32 of fp16(b)), so that the suite gets surfaces of both dtypes from b.
func surfaceKernel(t *testing.T, b ane.Backend) ane.Kernel {
	src := program([]tin{fp16In("a", 1, 4, 1, 6), {"b", mil.FP32, []int{1, 3, 1, 6}}}, `
		tensor<fp16, [1, 4, 1, 6]> s = add(x=a, y=a)[name=string("s")];
		string h = const()[name=string("h"), val=string("fp16")];
		tensor<fp16, [1, 3, 1, 6]> bh = cast(x=b, dtype=h)[name=string("bh")];
		string f = const()[name=string("f"), val=string("fp32")];
		tensor<fp32, [1, 3, 1, 6]> r = cast(x=bh, dtype=f)[name=string("r")];`, "s", "r")
	return compile(t, b, src, nil)
}

// locked reports the accesses in progress on a surface's memory when the memory can say.
func locked(s *ane.Surface) int {
	if m, ok := s.Memory().(interface{ Locked() int }); ok {
		return m.Locked()
	}
	return 0
}

func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not mention %q", what, err, p)
		}
	}
}

func testSurfaces(t *testing.T, b ane.Backend) {
	k := surfaceKernel(t, b)
	a, bs := k.Inputs()[0], k.Inputs()[1]
	s, r := k.Outputs()[0], k.Outputs()[1]
	t.Run("Layout", func(t *testing.T) {
		for _, c := range []struct {
			s        *ane.Surface
			name     string
			ch, sp   int
			elem, by int
		}{{a, "a", 4, 6, 2, 48}, {bs, "b", 3, 6, 4, 72}, {s, "s", 4, 6, 2, 48}, {r, "r", 3, 6, 4, 72}} {
			if c.s.Name() != c.name || c.s.Channels() != c.ch || c.s.Spatial() != c.sp || c.s.ElemSize() != c.elem || c.s.Bytes() != c.by {
				t.Errorf("surface %q: %d x %d, %d-byte elements, %d bytes; want %q: %d x %d, %d, %d",
					c.s.Name(), c.s.Channels(), c.s.Spatial(), c.s.ElemSize(), c.s.Bytes(), c.name, c.ch, c.sp, c.elem, c.by)
			}
		}
	})
	t.Run("WriteReadChannels", func(t *testing.T) {
		// Channels 1..2 of a; fp16 rounds half to even and overflows to inf.
		src := []float32{1, 2, 3, 4, 5, 6, 1 + 1.0/2048, 1 + 3.0/2048, 65519, 65520, -1e6, 0.1}
		if err := a.Fill(0); err != nil {
			t.Fatal(err)
		}
		if err := a.WriteChannels(1, 2, src); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, a)
		for i, v := range got {
			var want float32
			if i >= 6 && i < 18 {
				want = half.RoundF16(src[i-6])
			}
			if v != want {
				t.Errorf("a[%d] = %v, want %v", i, v, want)
			}
		}
		if got[12] != 1 || got[13] != 1+4.0/2048 || got[14] != 65504 || !math.IsInf(float64(got[15]), 1) || !math.IsInf(float64(got[16]), -1) {
			t.Errorf("fp16 rounding: got %v", got[12:17])
		}
		one := make([]float32, 6)
		if err := a.ReadChannels(2, 1, one); err != nil || one[0] != 1 {
			t.Errorf("ReadChannels(2, 1): %v, %v", one, err)
		}
		// fp32 surfaces hold float32 exactly.
		v := []float32{1 + 1.0/2048, 1e-30, 3e38}
		row := append(append([]float32{}, v...), 0, 0, 0)
		if err := bs.WriteChannels(2, 1, row); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, 6)
		if err := bs.ReadChannels(2, 1, back); err != nil || back[0] != v[0] || back[1] != v[1] || back[2] != v[2] {
			t.Errorf("fp32 round trip: %v, %v", back, err)
		}
		if locked(a) != 0 || locked(bs) != 0 {
			t.Errorf("memory left locked: %d, %d", locked(a), locked(bs))
		}
	})
	t.Run("Regions", func(t *testing.T) {
		if err := a.Fill(0); err != nil {
			t.Fatal(err)
		}
		// 2 channels x 3 columns at channel 1, column 2.
		if err := a.WriteRegion(1, 2, 2, 3, []float32{1, 2, 3, 4, 5, 6}, false); err != nil {
			t.Fatal(err)
		}
		// Transposed: source holds 2 rows (columns) of 4 channels; goes to all channels, columns 4..5.
		if err := a.WriteRegion(0, 4, 4, 2, []float32{10, 11, 12, 13, 20, 21, 22, 23}, true); err != nil {
			t.Fatal(err)
		}
		want := []float32{
			0, 0, 0, 0, 10, 20,
			0, 0, 1, 2, 11, 21,
			0, 0, 4, 5, 12, 22,
			0, 0, 0, 0, 13, 23,
		}
		got := readAll(t, a)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("after WriteRegion: got %v, want %v", got, want)
			}
		}
		reg := make([]float32, 4)
		if err := a.ReadRegion(1, 2, 3, 2, reg); err != nil || reg[0] != 2 || reg[1] != 11 || reg[2] != 5 || reg[3] != 12 {
			t.Errorf("ReadRegion: %v, %v", reg, err)
		}
		wantErr(t, "region past the columns", a.WriteRegion(0, 1, 5, 2, []float32{1, 2}, false), `"a"`, "columns [5, 7)", "[0, 6)")
		wantErr(t, "region of the wrong size", a.WriteRegion(0, 1, 0, 2, []float32{1}, false), `"a"`, "needs 2 values, got 1")
	})
	t.Run("Copy", func(t *testing.T) {
		// fp32 -> fp16 converts; fp16 -> fp16 copies bytes.
		row := []float32{1.5, 1 + 1.0/2048, 70000, -2, 0.25, 3}
		if err := bs.WriteChannels(0, 1, row); err != nil {
			t.Fatal(err)
		}
		if err := a.Fill(7); err != nil {
			t.Fatal(err)
		}
		if err := a.CopyChannels(3, bs, 0, 1); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, a)
		for j, v := range row {
			if got[18+j] != half.RoundF16(v) {
				t.Errorf("converted copy: a[3][%d] = %v, want %v", j, got[18+j], half.RoundF16(v))
			}
		}
		if got[0] != 7 || got[17] != 7 {
			t.Errorf("copy wrote outside channel 3: %v", got)
		}
		// Within one surface, overlapping ranges.
		if err := a.WriteChannels(0, 4, []float32{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3}); err != nil {
			t.Fatal(err)
		}
		if err := a.CopyChannels(1, a, 0, 3); err != nil {
			t.Fatal(err)
		}
		got = readAll(t, a)
		for c, want := range []float32{0, 0, 1, 2} {
			if got[c*6] != want {
				t.Errorf("overlapping copy: channel %d = %v, want %v", c, got[c*6], want)
			}
		}
		var raw1, raw2 [12]byte
		if err := a.ReadBytes(2*12, raw1[:]); err != nil {
			t.Fatal(err)
		}
		if err := s.CopyRegion(0, 0, a, 2, 0, 1, 6); err != nil {
			t.Fatal(err)
		}
		if err := s.ReadBytes(0, raw2[:]); err != nil || raw1 != raw2 {
			t.Errorf("same-dtype copy changed bytes: %x vs %x (%v)", raw1, raw2, err)
		}
		wantErr(t, "copy between different widths", a.CopyChannels(0, &ane.Surface{}, 0, 1), `"a"`)
		wantErr(t, "copy past the source", a.CopyChannels(0, bs, 2, 2), `"b"`, "channels [2, 4)", "[0, 3)")
	})
	t.Run("Bytes", func(t *testing.T) {
		var buf [4]byte
		binary.LittleEndian.PutUint16(buf[0:], half.F32ToF16(3))
		binary.LittleEndian.PutUint16(buf[2:], half.F32ToF16(-0.5))
		if err := a.WriteBytes(2*6*2+4, buf[:]); err != nil {
			t.Fatal(err)
		}
		got := readAll(t, a)
		if got[14] != 3 || got[15] != -0.5 {
			t.Errorf("WriteBytes: channel 2 = %v", got[12:18])
		}
		err := a.Access(true, func(p []byte) error {
			if len(p) != a.Bytes() {
				t.Errorf("Access gives %d bytes, want %d", len(p), a.Bytes())
			}
			if !bytes.Equal(p[28:32], buf[:]) {
				t.Errorf("Access bytes %x, want %x", p[28:32], buf)
			}
			return errors.New("from f")
		})
		if err == nil || err.Error() != "from f" {
			t.Errorf("Access returns f's error: got %v", err)
		}
		wantErr(t, "bytes past the end", a.ReadBytes(46, buf[:]), `"a"`, "bytes [46, 50)", "[0, 48)")
		wantErr(t, "negative offset", a.WriteBytes(-1, buf[:1]), `"a"`)
		if locked(a) != 0 {
			t.Errorf("memory left locked: %d", locked(a))
		}
	})
	t.Run("ThroughEval", func(t *testing.T) {
		av := writeAll(t, a, uniform32(rand.New(rand.NewPCG(1, 1)), 24, -100, 100))
		bv := writeAll(t, bs, []float32{1 + 1.0/4096, 70000, -70000, 0.1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
		evalOnce(t, k)
		sv := readAll(t, s)
		for i := range av {
			if want := float64(half.RoundF16(float32(2 * av[i]))); float64(sv[i]) != want {
				t.Errorf("s[%d] = %v, want %v", i, sv[i], want)
			}
		}
		rv := readAll(t, r)
		for i := range bv {
			want := half.RoundF16(float32(bv[i]))
			if fp32Mode(b) {
				want = float32(bv[i]) // no rounding anywhere in the emulator's FP32 mode
			}
			if rv[i] != want {
				t.Errorf("r[%d] = %v, want fp16(%v) = %v", i, rv[i], bv[i], want)
			}
		}
	})
}

func testFailures(t *testing.T, b ane.Backend) {
	t.Run("SurfaceOfWrongSize", func(t *testing.T) {
		_, err := ane.NewSurface("x", mil.Tensor(mil.FP16, 1, 4, 1, 8), ane.NewHeapMemory(63))
		wantErr(t, "63-byte memory for 64 bytes", err, `"x"`, "63", "64")
		_, err = ane.NewHeapSurface("y", mil.Tensor(mil.Int32, 1, 4))
		wantErr(t, "int32 surface", err, `"y"`, "int32")
	})
	k := surfaceKernel(t, b)
	a := k.Inputs()[0]
	t.Run("ChannelRange", func(t *testing.T) {
		wantErr(t, "write past the end", a.WriteChannels(3, 2, make([]float32, 12)), `"a"`, "channels [3, 5)", "[0, 4)")
		wantErr(t, "read before the start", a.ReadChannels(-1, 1, make([]float32, 6)), `"a"`, "channels [-1, 0)")
		wantErr(t, "write of the wrong length", a.WriteChannels(0, 1, make([]float32, 5)), `"a"`, "needs 6 values, got 5")
		wantErr(t, "read into the wrong length", a.ReadChannels(0, 2, make([]float32, 6)), `"a"`, "12")
	})
	t.Run("UnsupportedOp", func(t *testing.T) {
		before := b.Compiles()
		src := program([]tin{fp16In("x", 1, 2, 1, 2)}, `tensor<fp16, [1, 2, 1, 2]> out = frobnicate(x=x)[name=string("out")];`, "out")
		p, err := mil.Parse("bad.mil", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Compile(p, nil)
		wantErr(t, "compile of frobnicate", err, "frobnicate")
		if b.Compiles() != before+1 {
			t.Errorf("a failed compile counts: Compiles went from %d to %d", before, b.Compiles())
		}
	})
	t.Run("MissingWeights", func(t *testing.T) {
		src := program([]tin{fp16In("x", 1, 2, 1, 2)}, `
			tensor<fp16, [1, 2, 1, 1]> w = const()[name=string("w"), val=tensor<fp16, [1, 2, 1, 1]>(BLOBFILE(path=string("@model_path/weights/w.bin"), offset=uint64(64)))];
			tensor<fp16, [1, 2, 1, 2]> out = mul(x=x, y=w)[name=string("out")];`, "out")
		p, err := mil.Parse("w.mil", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.Compile(p, nil)
		wantErr(t, "compile without its weight file", err, "w.bin")
	})
	t.Run("Cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := k.Eval(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Eval with a cancelled context: got %v, want context.Canceled", err)
		}
	})
	t.Run("EvalAfterClose", func(t *testing.T) {
		k2 := surfaceKernel(t, b)
		evalOnce(t, k2)
		if err := k2.Close(); err != nil {
			t.Fatal(err)
		}
		if err := k2.Eval(context.Background()); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("Eval after Close: got %v, want ane.ErrClosed", err)
		}
		// The kernel's surfaces go with it: an access is an error, never a read of reused memory.
		in := k2.Inputs()[0]
		buf := make([]float32, in.Spatial())
		if err := in.ReadChannels(0, 1, buf); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("surface read after Close: got %v, want ane.ErrClosed", err)
		}
		if err := in.WriteChannels(0, 1, buf); !errors.Is(err, ane.ErrClosed) {
			t.Errorf("surface write after Close: got %v, want ane.ErrClosed", err)
		}
	})
}

// fp32Mode reports whether b says it runs without fp16 rounding (the emulator's FP32 numerics).
// Backends that do not say are taken to round like the ANE.
func fp32Mode(b ane.Backend) bool {
	o, ok := b.(interface{ FP32() bool })
	return ok && o.FP32()
}

// relaxed reports whether b says it lets programs through that the ANE refuses (the emulator's relaxed
// mode). Backends that do not say are taken to refuse them.
func relaxed(b ane.Backend) bool {
	o, ok := b.(interface{ Relaxed() bool })
	return ok && o.Relaxed()
}
