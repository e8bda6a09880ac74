package half

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// f16Grain is the number of elements below which bulk conversions stay on
// one goroutine.
const f16Grain = 1 << 15

// split calls body over [0, n) in contiguous parts, at most one per
// processor and none smaller than f16Grain, the first on the calling
// goroutine.
func split(n int, body func(lo, hi int)) {
	parts := min(runtime.GOMAXPROCS(0), n/f16Grain)
	if parts <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() { body(n*p/parts, n*(p+1)/parts) })
	}
	body(0, n/parts)
	wg.Wait()
}

// EncodeF16 writes src as little-endian half-precision values into the
// first 2*len(src) bytes of dst, rounding ties to even. It returns an error
// when dst is too short.
func EncodeF16(dst []byte, src []float32) error {
	if len(dst) < 2*len(src) {
		return fmt.Errorf("half.EncodeF16: dst has %d bytes, need %d for %d values", len(dst), 2*len(src), len(src))
	}
	if len(src) < 2*f16Grain {
		encodeF16Range(dst, src)
		return nil
	}
	split(len(src), func(lo, hi int) {
		encodeF16Range(dst[2*lo:2*hi], src[lo:hi])
	})
	return nil
}

// EncodeF16To is EncodeF16 on the calling goroutine, without allocating,
// for the first min(len(dst)/2, len(src)) values.
func EncodeF16To(dst []byte, src []float32) {
	encodeF16Range(dst, src[:min(len(dst)/2, len(src))])
}

func encodeF16Range(dst []byte, src []float32) {
	dst = dst[:2*len(src)]
	i := encodeF16Vec(dst, src)
	dst, src = dst[2*i:], src[i:]
	for i, v := range src {
		// F32ToF16 with its normal case inline, as the compiler does not inline F32ToF16.
		b := math.Float32bits(v)
		a := b &^ 0x80000000
		var h uint16
		if a-f32HalfNormal < f32HalfOver-f32HalfNormal {
			r := a - f32Rebias
			r += 0xfff + (r>>13)&1
			h = uint16(b>>16)&f16SignMask | uint16(r>>13)
		} else {
			h = F32ToF16(v)
		}
		dst[2*i] = byte(h)
		dst[2*i+1] = byte(h >> 8)
	}
}

// DecodeF16 reads len(src)/2 little-endian half-precision values from src
// into the start of dst. It returns an error when src has an odd length or
// dst is too short.
func DecodeF16(dst []float32, src []byte) error {
	if len(src)%2 != 0 {
		return fmt.Errorf("half.DecodeF16: src has odd length %d", len(src))
	}
	n := len(src) / 2
	if len(dst) < n {
		return fmt.Errorf("half.DecodeF16: dst has %d values, need %d", len(dst), n)
	}
	if n < 2*f16Grain {
		decodeF16Range(dst[:n], src)
		return nil
	}
	split(n, func(lo, hi int) {
		decodeF16Range(dst[lo:hi], src[2*lo:2*hi])
	})
	return nil
}

// DecodeF16To is DecodeF16 on the calling goroutine, without allocating,
// for the first min(len(dst), len(src)/2) values.
func DecodeF16To(dst []float32, src []byte) {
	decodeF16Range(dst[:min(len(dst), len(src)/2)], src)
}

func decodeF16Range(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	i := decodeF16Vec(dst, src)
	decodeF16Scalar(dst[i:], src[2*i:])
}

// decodeF16Scalar is decodeF16Range without vector instructions.
func decodeF16Scalar(dst []float32, src []byte) {
	src = src[:2*len(dst)]
	t := f16Table
	for i := range dst {
		dst[i] = t[binary.LittleEndian.Uint16(src[2*i:])]
	}
}
