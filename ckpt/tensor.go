package ckpt

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/anestar/anestar/half"
)

// Tensor is one named array of a checkpoint: its element type, its shape (outermost dimension
// first; an empty shape is a scalar, a zero dimension an empty tensor) and its elements packed
// row-major in little-endian byte order. len(Data) is always product(Shape) × DType.Size() in
// a valid tensor.
type Tensor struct {
	DType DType  // element type
	Shape []int  // dimensions, outermost first
	Data  []byte // row-major little-endian elements
}

// elemCount returns the number of elements of shape, failing on a negative dimension or when
// the count overflows int.
func elemCount(shape []int) (int, error) {
	n := uint64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("dimension %d is negative (%d)", i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > math.MaxInt {
			return 0, fmt.Errorf("shape %v overflows the element count", shape)
		}
		n = lo
	}
	return int(n), nil
}

// byteCount returns the byte size of a tensor of type dt and the given shape.
func byteCount(dt DType, shape []int) (int, error) {
	if !dt.Valid() {
		return 0, fmt.Errorf("invalid dtype %v", dt)
	}
	n, err := elemCount(shape)
	if err != nil {
		return 0, err
	}
	hi, lo := bits.Mul64(uint64(n), uint64(dt.Size()))
	if hi != 0 || lo > math.MaxInt {
		return 0, fmt.Errorf("shape %v of %v overflows the byte count", shape, dt)
	}
	return int(lo), nil
}

// Len returns the number of elements of t, or an error when its shape is invalid.
func (t Tensor) Len() (int, error) { return elemCount(t.Shape) }

// Validate checks that t has a known dtype, no negative dimension, and exactly the data its
// shape calls for.
func (t Tensor) Validate() error {
	n, err := byteCount(t.DType, t.Shape)
	if err != nil {
		return err
	}
	if len(t.Data) != n {
		return fmt.Errorf("%v%v needs %d bytes, has %d", t.DType, t.Shape, n, len(t.Data))
	}
	return nil
}

// FromBytes returns a tensor of type dt and the given shape over data (not copied), checking
// that the sizes agree.
func FromBytes(dt DType, shape []int, data []byte) (Tensor, error) {
	t := Tensor{DType: dt, Shape: append([]int{}, shape...), Data: data}
	if err := t.Validate(); err != nil {
		return Tensor{}, err
	}
	return t, nil
}

// checkLen verifies that shape holds exactly n elements.
func checkLen(shape []int, n int) error {
	want, err := elemCount(shape)
	if err != nil {
		return err
	}
	if want != n {
		return fmt.Errorf("shape %v holds %d elements, got %d values", shape, want, n)
	}
	return nil
}

// FromFloat32 returns a tensor of type dt (F32, F16 or BF16) holding v with the given shape.
// F16 and BF16 are rounded to nearest, ties to even; overflow gives ±Inf.
func FromFloat32(dt DType, shape []int, v []float32) (Tensor, error) {
	if err := checkLen(shape, len(v)); err != nil {
		return Tensor{}, err
	}
	t := Tensor{DType: dt, Shape: append([]int{}, shape...)}
	switch dt {
	case F32:
		t.Data = make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
		}
	case F16:
		t.Data = make([]byte, 2*len(v))
		half.EncodeF16To(t.Data, v)
	case BF16:
		t.Data = make([]byte, 2*len(v))
		half.EncodeBF16To(t.Data, v)
	default:
		return Tensor{}, fmt.Errorf("cannot store float32 values as %v", dt)
	}
	return t, nil
}

// Float32 returns the elements of an F32, F16 or BF16 tensor as float32 (exactly).
func (t Tensor) Float32() ([]float32, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	switch t.DType {
	case F32:
		out := make([]float32, len(t.Data)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
		return out, nil
	case F16:
		out := make([]float32, len(t.Data)/2)
		half.DecodeF16To(out, t.Data)
		return out, nil
	case BF16:
		out := make([]float32, len(t.Data)/2)
		half.DecodeBF16To(out, t.Data)
		return out, nil
	}
	return nil, fmt.Errorf("%v tensor is not a float32, float16 or bfloat16 tensor", t.DType)
}

// FromFloat64 returns an F64 tensor holding v with the given shape.
func FromFloat64(shape []int, v []float64) (Tensor, error) {
	if err := checkLen(shape, len(v)); err != nil {
		return Tensor{}, err
	}
	t := Tensor{DType: F64, Shape: append([]int{}, shape...), Data: make([]byte, 8*len(v))}
	for i, x := range v {
		binary.LittleEndian.PutUint64(t.Data[8*i:], math.Float64bits(x))
	}
	return t, nil
}

// FromInt64 returns an I64 tensor holding v with the given shape.
func FromInt64(shape []int, v []int64) (Tensor, error) {
	if err := checkLen(shape, len(v)); err != nil {
		return Tensor{}, err
	}
	t := Tensor{DType: I64, Shape: append([]int{}, shape...), Data: make([]byte, 8*len(v))}
	for i, x := range v {
		binary.LittleEndian.PutUint64(t.Data[8*i:], uint64(x))
	}
	return t, nil
}

// Int64 returns the elements of an I64 tensor.
func (t Tensor) Int64() ([]int64, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	if t.DType != I64 {
		return nil, fmt.Errorf("%v tensor is not an I64 tensor", t.DType)
	}
	out := make([]int64, len(t.Data)/8)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(t.Data[8*i:]))
	}
	return out, nil
}

// Float64 returns the elements of a tensor of any dtype converted to float64: floats exactly,
// integers exactly up to 2^53 in magnitude, BOOL as 0 or 1. It is meant for comparing and
// printing; use Float32, Int64 or Data to read values exactly.
func (t Tensor) Float64() ([]float64, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	sz := t.DType.Size()
	out := make([]float64, len(t.Data)/sz)
	le := binary.LittleEndian
	for i := range out {
		b := t.Data[sz*i:]
		var x float64
		switch t.DType {
		case Bool, U8:
			x = float64(b[0])
		case I8:
			x = float64(int8(b[0]))
		case F8E5M2:
			x = f8e5m2ToF64(b[0])
		case F8E4M3:
			x = f8e4m3ToF64(b[0])
		case I16:
			x = float64(int16(le.Uint16(b)))
		case U16:
			x = float64(le.Uint16(b))
		case F16:
			x = float64(half.F16ToF32(le.Uint16(b)))
		case BF16:
			x = float64(half.BF16ToF32(le.Uint16(b)))
		case I32:
			x = float64(int32(le.Uint32(b)))
		case U32:
			x = float64(le.Uint32(b))
		case F32:
			x = float64(math.Float32frombits(le.Uint32(b)))
		case F64:
			x = math.Float64frombits(le.Uint64(b))
		case I64:
			x = float64(int64(le.Uint64(b)))
		case U64:
			x = float64(le.Uint64(b))
		}
		out[i] = x
	}
	return out, nil
}
