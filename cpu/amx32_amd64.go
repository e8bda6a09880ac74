//go:build !noasm

package cpu

// The fp32 format of the AMX gemm: a float32 x splits exactly into three bf16 values, h = bf16(x)
// (round to nearest even), m = bf16(x - h) and l = x - h - m (x - h has at most 16 significant bits,
// so l has at most 8); |m| <= 2^-8 |x| and |l| <= 2^-16 |x| roughly. Per k-chunk, op(A) is packed as
// tiles of (h | m) pairs and of (h | l) pairs, op(B) as (h | h), (m | m) and (l | h), so that three
// TDPBF16PS give h*h' + m*h' + h*m' + m*m' + h*l' + l*h' for each k: every partial product is exact
// in fp32, and the terms left out, m*l' + l*m' + l*l', are at most about 2^-23 |x*y| (typically
// far less) — fp32's own rounding. Where neither operand has a low part (fp16 values, for one) the
// third product is zero and skipped.

var f32Format = &amxFormat{aWords: 1024, bWords: 1536, kc: 4, three: true}

//go:noescape
func amxConvA3(dst *uint32, src *float32, stride, rows int) (bad, low uint32)

//go:noescape
func amxConvB3(dst *uint32, src *float32, stride, rows int) (bad, low uint32)
