package mil

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/anestar/anestar/half"
)

// The conversions weight files need: float32 to and from fp16 and bf16 (package half's, round half to
// even, NaN payloads kept), and decoding of the integer dtypes.

// floatEncodingSize is the element size in bytes of the dtypes float data can be stored as (fp16, bf16,
// fp32), and 0 for any other dtype.
func floatEncodingSize(dt DType) int {
	switch dt {
	case FP16, BF16:
		return 2
	case FP32:
		return 4
	}
	return 0
}

// encodeFloat32sTo encodes vals as little-endian elements of dtype dt (fp16, bf16 or fp32) into dst,
// which holds exactly floatEncodingSize(dt)*len(vals) bytes. Large fp16 weights are split over the
// cores (half.EncodeF16): a compile happens between training steps, when the other core is idle.
func encodeFloat32sTo(dt DType, dst []byte, vals []float32) {
	switch dt {
	case FP16:
		half.EncodeF16(dst, vals) // dst is long enough: no error
	case BF16:
		half.EncodeBF16To(dst, vals)
	case FP32:
		for i, v := range vals {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
	}
}

// decodeFloat32s decodes little-endian elements of dtype dt into float32.
func decodeFloat32s(dt DType, data []byte) ([]float32, error) {
	size := dt.Bits() / 8
	if size == 0 || dt.Bits()%8 != 0 {
		return nil, fmt.Errorf("cannot decode %s data", dt)
	}
	if len(data)%size != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %s elements", len(data), dt)
	}
	n := len(data) / size
	out := make([]float32, n)
	le := binary.LittleEndian
	switch dt {
	case FP16:
		half.DecodeF16To(out, data)
		return out, nil
	case BF16:
		half.DecodeBF16To(out, data)
		return out, nil
	case FP32:
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(data[4*i:]))
		}
		return out, nil
	}
	for i := range out {
		p := data[i*size:]
		switch dt {
		case Int8:
			out[i] = float32(int8(p[0]))
		case UInt8, Bool:
			out[i] = float32(p[0])
		case Int16:
			out[i] = float32(int16(le.Uint16(p)))
		case UInt16:
			out[i] = float32(le.Uint16(p))
		case Int32:
			out[i] = float32(int32(le.Uint32(p)))
		case UInt32:
			out[i] = float32(le.Uint32(p))
		default:
			return nil, fmt.Errorf("cannot decode %s data", dt)
		}
	}
	return out, nil
}
