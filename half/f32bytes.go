package half

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// littleEndian is whether the host stores a float32 as its little-endian bytes, so that those bytes
// can be copied as they are.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// floatBytes is the memory of f as bytes (4 per element): f's own alignment, so no unaligned
// float32 pointer is ever made.
func floatBytes(f []float32) []byte {
	if len(f) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&f[0])), 4*len(f))
}

// EncodeF32To stores src as little-endian float32 bytes in dst[:4*len(src)]: a memory copy on a
// little-endian host.
func EncodeF32To(dst []byte, src []float32) {
	dst = dst[:4*len(src)]
	if littleEndian {
		copy(dst, floatBytes(src))
		return
	}
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}

// DecodeF32To loads len(dst) little-endian float32 values from src: a memory copy on a little-endian
// host.
func DecodeF32To(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	if littleEndian {
		copy(floatBytes(dst), src)
		return
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}

// DecodeF32RoundF16To loads len(dst) little-endian float32 values from src rounded to fp16
// (RoundF16To), in one pass when the host is little-endian and src is 4-byte aligned, as surface
// memory is.
func DecodeF32RoundF16To(dst []float32, src []byte) {
	src = src[:4*len(dst)]
	if littleEndian && len(src) > 0 && uintptr(unsafe.Pointer(&src[0]))%4 == 0 {
		RoundF16To(dst, unsafe.Slice((*float32)(unsafe.Pointer(&src[0])), len(dst)))
		return
	}
	DecodeF32To(dst, src)
	RoundF16To(dst, dst)
}
