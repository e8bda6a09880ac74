package mil

import "fmt"

// DType is a MIL element type, named as MIL names it (fp16, int32, bool, ...).
type DType uint8

// The MIL element types.
const (
	Invalid DType = iota
	FP16
	FP32
	FP64
	BF16
	Int4
	Int8
	Int16
	Int32
	Int64
	UInt1
	UInt2
	UInt3
	UInt4
	UInt6
	UInt8
	UInt16
	UInt32
	UInt64
	Bool
	String
)

var dtypeNames = [...]string{
	Invalid: "invalid",
	FP16:    "fp16",
	FP32:    "fp32",
	FP64:    "fp64",
	BF16:    "bf16",
	Int4:    "int4",
	Int8:    "int8",
	Int16:   "int16",
	Int32:   "int32",
	Int64:   "int64",
	UInt1:   "uint1",
	UInt2:   "uint2",
	UInt3:   "uint3",
	UInt4:   "uint4",
	UInt6:   "uint6",
	UInt8:   "uint8",
	UInt16:  "uint16",
	UInt32:  "uint32",
	UInt64:  "uint64",
	Bool:    "bool",
	String:  "string",
}

// String returns the MIL name of d.
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// ParseDType returns the DType with MIL name s.
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if i != int(Invalid) && n == s {
			return DType(i), true
		}
	}
	return Invalid, false
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == FP16 || d == FP32 || d == FP64 || d == BF16 }

// IsInt reports whether d is a signed or unsigned integer type.
func (d DType) IsInt() bool { return d >= Int4 && d <= UInt64 }

// Bits is the storage width of one element in bits (0 for string).
func (d DType) Bits() int {
	switch d {
	case FP16, BF16, Int16, UInt16:
		return 16
	case FP32, Int32, UInt32:
		return 32
	case FP64, Int64, UInt64:
		return 64
	case Int8, UInt8, Bool:
		return 8
	case Int4, UInt4:
		return 4
	case UInt1:
		return 1
	case UInt2:
		return 2
	case UInt3:
		return 3
	case UInt6:
		return 6
	}
	return 0
}
