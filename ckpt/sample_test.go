package ckpt

import (
	"encoding/binary"
	"math"
	"testing"
)

// sampleFile returns the content of testdata/reference.safetensors, built here from plain
// values the same way testdata/gen_reference.py builds it with the safetensors library:
// one tensor of each dtype that library and PyTorch share, an empty and a scalar tensor, and
// one metadata entry (one, so that the reference's unspecified key order cannot matter).
func sampleFile(t testing.TB) *File {
	t.Helper()
	le := binary.LittleEndian
	raw := func(dt DType, shape []int, n int, put func(b []byte, i int)) Tensor {
		b := make([]byte, n*dt.Size())
		for i := 0; i < n; i++ {
			put(b[i*dt.Size():], i)
		}
		tt, err := FromBytes(dt, shape, b)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	f32 := make([]float32, 6)
	for i := range f32 {
		f32[i] = float32(i)*0.25 - 1
	}
	mustF32 := func(dt DType, shape []int, v []float32) Tensor {
		tt, err := FromFloat32(dt, shape, v)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	f64 := []float64{0.1, -1e300, math.SmallestNonzeroFloat64}
	i8 := []int8{-128, -1, 0, 127}
	i16 := []int16{-32768, 1, 32767}
	i32 := []int32{math.MinInt32, math.MaxInt32}
	u8 := []byte{0, 1, 255}
	bools := []byte{1, 0, 0, 1}
	i64, _ := FromInt64([]int{2}, []int64{math.MinInt64, math.MaxInt64})
	scalar, _ := FromInt64([]int{}, []int64{42})
	return &File{
		Tensors: map[string]Tensor{
			"f32":    mustF32(F32, []int{2, 3}, f32),
			"f16":    mustF32(F16, []int{4}, []float32{1, -2.5, 65504, 0x1p-24}),
			"bf16":   mustF32(BF16, []int{2, 2}, []float32{1, -0.5, 3.140625, 256}),
			"f64":    raw(F64, []int{3}, 3, func(b []byte, i int) { le.PutUint64(b, math.Float64bits(f64[i])) }),
			"i8":     raw(I8, []int{4}, 4, func(b []byte, i int) { b[0] = byte(i8[i]) }),
			"i16":    raw(I16, []int{3}, 3, func(b []byte, i int) { le.PutUint16(b, uint16(i16[i])) }),
			"i32":    raw(I32, []int{2}, 2, func(b []byte, i int) { le.PutUint32(b, uint32(i32[i])) }),
			"i64":    i64,
			"u8":     raw(U8, []int{3}, 3, func(b []byte, i int) { b[0] = u8[i] }),
			"bool":   raw(Bool, []int{4}, 4, func(b []byte, i int) { b[0] = bools[i] }),
			"empty":  mustF32(F32, []int{0, 3}, nil),
			"scalar": scalar,
		},
		Metadata: map[string]string{"note": "reference \"sample\"\n"},
	}
}
