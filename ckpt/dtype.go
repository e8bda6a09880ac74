package ckpt

import "fmt"

// DType is the element type of a tensor, named as the safetensors header names it ("F32", "I64", ...).
//
// The constants are declared in the order of the reference implementation's dtype enumeration
// (increasing element size); Encode lays tensors out in decreasing order of it, so that every
// tensor's data starts at a multiple of its element size.
type DType uint8

// The element types. Invalid is the zero value and never appears in a valid file.
const (
	Invalid DType = iota
	Bool          // one byte, 0 or 1
	U8            // unsigned 8-bit integer
	I8            // signed 8-bit integer
	F8E5M2        // 8-bit float, 5 exponent bits, 2 mantissa bits (with infinities)
	F8E4M3        // 8-bit float, 4 exponent bits, 3 mantissa bits (finite only, "fn")
	I16           // signed 16-bit integer
	U16           // unsigned 16-bit integer
	F16           // IEEE 754 half precision
	BF16          // bfloat16: the top half of an IEEE single
	I32           // signed 32-bit integer
	U32           // unsigned 32-bit integer
	F32           // IEEE 754 single precision
	F64           // IEEE 754 double precision
	I64           // signed 64-bit integer
	U64           // unsigned 64-bit integer
	numDTypes
)

var dtypeInfo = [numDTypes]struct {
	name string
	size int
}{
	Invalid: {"INVALID", 0},
	Bool:    {"BOOL", 1},
	U8:      {"U8", 1},
	I8:      {"I8", 1},
	F8E5M2:  {"F8_E5M2", 1},
	F8E4M3:  {"F8_E4M3", 1},
	I16:     {"I16", 2},
	U16:     {"U16", 2},
	F16:     {"F16", 2},
	BF16:    {"BF16", 2},
	I32:     {"I32", 4},
	U32:     {"U32", 4},
	F32:     {"F32", 4},
	F64:     {"F64", 8},
	I64:     {"I64", 8},
	U64:     {"U64", 8},
}

// DTypes lists every valid element type in declaration order.
func DTypes() []DType {
	out := make([]DType, 0, numDTypes-1)
	for d := Bool; d < numDTypes; d++ {
		out = append(out, d)
	}
	return out
}

// String returns the header name of d, such as "F32".
func (d DType) String() string {
	if d < numDTypes {
		return dtypeInfo[d].name
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// Size returns the size of one element in bytes, or 0 for an invalid DType.
func (d DType) Size() int {
	if d < numDTypes {
		return dtypeInfo[d].size
	}
	return 0
}

// Valid reports whether d is one of the element types above (not Invalid).
func (d DType) Valid() bool { return d > Invalid && d < numDTypes }

// ParseDType returns the DType with the given header name.
func ParseDType(name string) (DType, error) {
	for d := Bool; d < numDTypes; d++ {
		if dtypeInfo[d].name == name {
			return d, nil
		}
	}
	return Invalid, fmt.Errorf("unknown dtype %q", name)
}
