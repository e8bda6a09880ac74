package npy

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// The files in testdata were written by numpy.save (testdata/gen.py).
func TestReadNumpyFiles(t *testing.T) {
	for _, tc := range []struct {
		file  string
		dtype DType
		shape []int
		data  []float32
	}{
		{"f32_2x3.npy", F32, []int{2, 3}, []float32{1.5, -2, 3.25, 0, 65504, -1e-3}},
		// 6e-8 rounds to the smallest fp16 subnormal, 2^-24.
		{"f16_4.npy", F16, []int{4}, []float32{1, -0.5, 65504, float32(math.Ldexp(1, -24))}},
		{"f64_scalar.npy", F64, []int{}, []float32{3}},
		{"f32_empty.npy", F32, []int{0, 5}, []float32{}},
	} {
		a, err := ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if a.DType != tc.dtype || !reflect.DeepEqual(a.Shape, tc.shape) || !reflect.DeepEqual(a.Data, tc.data) {
			t.Errorf("%s: got %v %v %v, want %v %v %v", tc.file, a.DType, a.Shape, a.Data, tc.dtype, tc.shape, tc.data)
		}
	}
}

// Writing what numpy wrote gives numpy's bytes back, header padding included.
func TestWriteMatchesNumpy(t *testing.T) {
	for _, f := range []string{"f32_2x3.npy", "f16_4.npy", "f32_empty.npy"} {
		want, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		a, err := Read(bytes.NewReader(want))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%s: wrote\n%q\nwant\n%q", f, buf.Bytes(), want)
		}
	}
}

func TestRoundTripFiles(t *testing.T) {
	dir := t.TempDir()
	a := &Array{Shape: []int{1, 3, 1, 2}, DType: F32, Data: []float32{1, 2, 3, 4, 5, float32(math.Inf(-1))}}
	p := filepath.Join(dir, "a.npy")
	if err := WriteFile(p, a); err != nil {
		t.Fatal(err)
	}
	b, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("round trip: got %+v, want %+v", b, a)
	}
	// fp16 storage rounds to nearest even.
	h := &Array{Shape: []int{2}, DType: F16, Data: []float32{1 + 1.0/2048, 70000}}
	var buf bytes.Buffer
	if err := Write(&buf, h); err != nil {
		t.Fatal(err)
	}
	g, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if g.Data[0] != 1 || !math.IsInf(float64(g.Data[1]), 1) {
		t.Errorf("fp16 round trip: got %v, want [1 +Inf]", g.Data)
	}
}

func TestErrors(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "f32_2x3.npy"))
	if err != nil {
		t.Fatal(err)
	}
	hdr := func(dict string) []byte {
		b := []byte(magic + "\x01\x00")
		b = append(b, byte(len(dict)), 0)
		return append(b, dict...)
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "reading magic"},
		{"magic", []byte("NOTNUMPYxxxxxxxx"), "bad magic"},
		{"version", []byte(magic + "\x09\x00\x00\x00"), "unsupported format version 9.0"},
		{"truncated data", good[:len(good)-3], "data holds 21 bytes, shape [2 3] needs 24"},
		{"dtype", hdr("{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }"), `dtype "<i4" is not supported`},
		{"fortran", hdr("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }"), "fortran_order"},
		{"missing shape", hdr("{'descr': '<f4', 'fortran_order': False, }"), `missing key "shape"`},
		{"bad dim", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (x,), }"), `shape dim "x"`},
		{"huge", hdr("{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }"), "holds more than"},
		{"short header", []byte(magic + "\x01\x00\x50\x00{'d"), "reading 80-byte header"},
	} {
		_, err := Read(bytes.NewReader(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if err := Write(&bytes.Buffer{}, &Array{Shape: []int{3}, Data: []float32{1}}); err == nil {
		t.Error("Write of 1 value for shape [3]: no error")
	}
}

// FuzzRead checks that Read never panics and that what it accepts survives a write and a read.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.npy"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatalf("Write of a read array: %v", err)
		}
		b, err := Read(&buf)
		if err != nil {
			t.Fatalf("Read of a written array: %v", err)
		}
		if !reflect.DeepEqual(a.Shape, b.Shape) || len(a.Data) != len(b.Data) {
			t.Fatalf("round trip changed %v to %v", a.Shape, b.Shape)
		}
	})
}

// TestReadRefusesDefects: duplicate header keys, bytes after the data, a size that is not the
// header's, big-endian data, and files that are not regular.
func TestReadRefusesDefects(t *testing.T) {
	good := func(header string, data int) []byte {
		h := header
		for (10+len(h)+1)%64 != 0 {
			h += " "
		}
		b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)+1), 0)
		b = append(b, h...)
		b = append(b, '\n')
		return append(b, make([]byte, data)...)
	}
	for _, tc := range []struct {
		name string
		file []byte
		want string
	}{
		{"duplicate key", good("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (4,), }", 16), `key "shape" is given twice`},
		{"trailing bytes", append(good("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8), 1, 2, 3), "the file has 11 bytes of data, shape [2] of <f4 needs 8"},
		{"big-endian", good("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "big-endian; want little-endian '<f2', '<f4' or '<f8'"},
	} {
		path := filepath.Join(t.TempDir(), "a.npy")
		os.WriteFile(path, tc.file, 0o644)
		if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	trailing := append(good("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 8), 1, 2, 3)
	if _, err := Read(bytes.NewReader(trailing)); err == nil || !strings.Contains(err.Error(), "bytes follow the data") {
		t.Errorf("a stream with bytes after the data: %v", err)
	}
	short := filepath.Join(t.TempDir(), "s.npy")
	os.WriteFile(short, good("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000,), }", 8), 0o644)
	if _, err := ReadFile(short); err == nil || !strings.Contains(err.Error(), "the file has 8 bytes of data") {
		t.Errorf("a header claiming more than the file: %v", err)
	}
	for _, p := range []string{"/dev/zero", "/dev/urandom", t.TempDir()} {
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", p, err)
		}
	}
}
