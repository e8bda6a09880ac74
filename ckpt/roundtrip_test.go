package ckpt

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// randomTensor returns a tensor of dtype dt and the given shape filled with random bytes.
func randomTensor(r *rand.Rand, dt DType, shape []int) Tensor {
	n, err := byteCount(dt, shape)
	if err != nil {
		panic(err) // the callers' shapes are all valid
	}
	b := make([]byte, n+7)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	b = b[:n:n]
	return Tensor{DType: dt, Shape: shape, Data: b}
}

// sameFile compares two files' content, treating nil and empty shapes, data and maps alike.
func sameFile(t testing.TB, got, want *File) {
	t.Helper()
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("got %d tensors, want %d", len(got.Tensors), len(want.Tensors))
	}
	for name, w := range want.Tensors {
		g, ok := got.Tensors[name]
		if !ok {
			t.Fatalf("tensor %q missing", name)
		}
		if g.DType != w.DType || len(g.Shape) != len(w.Shape) || (len(w.Shape) > 0 && !reflect.DeepEqual(g.Shape, w.Shape)) || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("tensor %q: got %v%v %x, want %v%v %x", name, g.DType, g.Shape, g.Data, w.DType, w.Shape, w.Data)
		}
	}
	if len(got.Metadata) != len(want.Metadata) || (len(want.Metadata) > 0 && !reflect.DeepEqual(got.Metadata, want.Metadata)) {
		t.Fatalf("metadata: got %q, want %q", got.Metadata, want.Metadata)
	}
}

func encode(t testing.TB, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTripEveryDType(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, dt := range DTypes() {
		for _, shape := range [][]int{{2, 3}, {}, {0}, {4, 0, 5}, {1, 1, 1, 7}} {
			f := &File{
				Tensors: map[string]Tensor{
					"a":           randomTensor(r, dt, shape),
					"b/with/path": randomTensor(r, dt, []int{3}),
					"c.f32":       randomTensor(r, F32, []int{2}),
				},
				Metadata: map[string]string{"step": "12", "json": `{"lr": 0.001, "tag": "<a&b>"}`, "ctl": "\x01\t\u2028é"},
			}
			data := encode(t, f)
			got, err := Decode(data)
			if err != nil {
				t.Fatalf("%v%v: %v", dt, shape, err)
			}
			sameFile(t, got, f)
			if again := encode(t, got); !bytes.Equal(again, data) {
				t.Fatalf("%v%v: re-encoding changed the bytes", dt, shape)
			}
			if n, _ := EncodedSize(f); n != int64(len(data)) {
				t.Fatalf("EncodedSize %d, Encode wrote %d", n, len(data))
			}
		}
	}
}

func TestRoundTripEmptyFile(t *testing.T) {
	for _, f := range []*File{{}, {Metadata: map[string]string{"only": "metadata"}}, {Tensors: map[string]Tensor{"": {DType: U8, Shape: []int{0}}}}} {
		data := encode(t, f)
		got, err := Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		sameFile(t, got, f)
	}
	if got := string(encode(t, &File{})); got != "\x08\x00\x00\x00\x00\x00\x00\x00{}      " {
		t.Fatalf("empty file encodes as %q", got)
	}
}

// TestHeaderLayout checks the exact bytes against a header written out by hand from the
// format's rules: metadata first, tensors by decreasing dtype then name, compact JSON, spaces
// up to a multiple of 8.
func TestHeaderLayout(t *testing.T) {
	a, _ := FromFloat32(F32, []int{2}, []float32{1, 2})
	b, _ := FromInt64([]int{}, []int64{-1})
	c, _ := FromBytes(U8, []int{3}, []byte{7, 8, 9})
	d, _ := FromFloat32(F16, []int{1, 1}, []float32{1})
	f := &File{
		Tensors:  map[string]Tensor{"a": a, "b": b, "c": c, "d\"q": d},
		Metadata: map[string]string{"z": "last", "k": "v"},
	}
	want := `{"__metadata__":{"k":"v","z":"last"},` +
		`"b":{"dtype":"I64","shape":[],"data_offsets":[0,8]},` +
		`"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]},` +
		`"d\"q":{"dtype":"F16","shape":[1,1],"data_offsets":[16,18]},` +
		`"c":{"dtype":"U8","shape":[3],"data_offsets":[18,21]}}`
	for len(want)%8 != 0 {
		want += " "
	}
	data := encode(t, f)
	if n := int(data[0]) | int(data[1])<<8; n != len(want) || string(data[8:8+n]) != want {
		t.Fatalf("header\n got %q\nwant %q", data[8:], want)
	}
	body := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0x3c, 7, 8, 9}
	if got := data[8+len(want):]; !bytes.Equal(got, body) {
		t.Fatalf("data\n got %x\nwant %x", got, body)
	}
}

func TestEncodeRejects(t *testing.T) {
	for _, tc := range []struct {
		f    *File
		want string
	}{
		{&File{Tensors: map[string]Tensor{"x": {DType: F32, Shape: []int{2}, Data: make([]byte, 7)}}}, `tensor "x": F32[2] needs 8 bytes, has 7`},
		{&File{Tensors: map[string]Tensor{"x": {DType: Invalid, Shape: []int{}, Data: nil}}}, "invalid dtype"},
		{&File{Tensors: map[string]Tensor{"x": {DType: U8, Shape: []int{-1}}}}, "negative"},
		{&File{Tensors: map[string]Tensor{"x": {DType: U8, Shape: []int{1 << 40, 1 << 40}}}}, "overflows"},
		{&File{Tensors: map[string]Tensor{"__metadata__": {DType: U8, Shape: []int{0}}}}, "reserved"},
		{&File{Tensors: map[string]Tensor{"\xff": {DType: U8, Shape: []int{0}}}}, "UTF-8"},
		{&File{Metadata: map[string]string{"k": "\xff"}}, "UTF-8"},
	} {
		err := Encode(&bytes.Buffer{}, tc.f)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Encode: got %v, want an error containing %q", err, tc.want)
		}
	}
}

func TestTensorHelpers(t *testing.T) {
	if _, err := FromFloat32(F32, []int{2, 2}, []float32{1, 2, 3}); err == nil {
		t.Error("FromFloat32 accepted 3 values for shape [2 2]")
	}
	if _, err := FromFloat32(I32, []int{1}, []float32{1}); err == nil {
		t.Error("FromFloat32 accepted I32")
	}
	if _, err := (Tensor{DType: I64, Shape: []int{1}, Data: make([]byte, 8)}).Float32(); err == nil {
		t.Error("Float32 of an I64 tensor succeeded")
	}
	if _, err := (Tensor{DType: F32, Shape: []int{1}, Data: make([]byte, 8)}).Int64(); err == nil {
		t.Error("Int64 of an F32 tensor succeeded")
	}
	x, _ := FromInt64([]int{3}, []int64{-5, 0, 1 << 62})
	v, err := x.Int64()
	if err != nil || !reflect.DeepEqual(v, []int64{-5, 0, 1 << 62}) {
		t.Errorf("Int64 round trip: %v %v", v, err)
	}
	y, _ := FromFloat64([]int{2}, []float64{0.1, -3})
	w, err := y.Float64()
	if err != nil || !reflect.DeepEqual(w, []float64{0.1, -3}) {
		t.Errorf("Float64 round trip: %v %v", w, err)
	}
	for _, dt := range []DType{F32, F16, BF16} {
		in := []float32{0.5, -2, 1024, 0}
		tt, err := FromFloat32(dt, []int{2, 2}, in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := tt.Float32()
		if err != nil || !reflect.DeepEqual(out, in) {
			t.Errorf("%v: %v -> %v (%v)", dt, in, out, err)
		}
	}
	// Float64 of every integer type, from hand-written little-endian bytes.
	for _, tc := range []struct {
		dt   DType
		data []byte
		want float64
	}{
		{Bool, []byte{1}, 1}, {U8, []byte{200}, 200}, {I8, []byte{0x80}, -128},
		{I16, []byte{0xfe, 0xff}, -2}, {U16, []byte{0xfe, 0xff}, 65534},
		{I32, []byte{0, 0, 0, 0x80}, -2147483648}, {U32, []byte{0xff, 0xff, 0xff, 0xff}, 4294967295},
		{I64, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, -1}, {U64, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, 1 << 63},
		{F16, []byte{0x00, 0xc0}, -2}, {BF16, []byte{0x49, 0x40}, 3.140625}, {F32, []byte{0, 0, 0x80, 0x3f}, 1},
		{F8E4M3, []byte{0x7e}, 448}, {F8E4M3, []byte{0x01}, 0x1p-9}, {F8E4M3, []byte{0xb8}, -1},
		{F8E5M2, []byte{0x7b}, 57344}, {F8E5M2, []byte{0x01}, 0x1p-16}, {F8E5M2, []byte{0x3c}, 1},
	} {
		got, err := (Tensor{DType: tc.dt, Shape: []int{}, Data: tc.data}).Float64()
		if err != nil || got[0] != tc.want {
			t.Errorf("%v % x: got %v (%v), want %v", tc.dt, tc.data, got, err, tc.want)
		}
	}
}

func TestParseDType(t *testing.T) {
	for _, dt := range DTypes() {
		got, err := ParseDType(dt.String())
		if err != nil || got != dt {
			t.Errorf("ParseDType(%q) = %v, %v", dt.String(), got, err)
		}
	}
	for _, s := range []string{"", "f32", "INVALID", "F8_E4M3FN", "C64"} {
		if _, err := ParseDType(s); err == nil {
			t.Errorf("ParseDType(%q) succeeded", s)
		}
	}
}
