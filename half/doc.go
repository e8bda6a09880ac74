// Package half holds anestar's number formats: IEEE binary16 (fp16, the
// ANE's storage format) and bfloat16, as scalar definitions and vectorised
// bulk conversions. It imports nothing of anestar's but the CPU feature
// detection (internal/cpuid, a leaf), so that every package that stores or
// reads half-precision data (cpu, mil, ckpt, npy, the emulator) shares one
// definition without linking the BLAS loaders.
//
// Scalars. [F32ToF16] converts a float32 to the nearest half, ties to
// even: magnitudes from 65520 up become ±inf (no saturation, as on the
// ANE), tiny values become subnormals or signed zero, and a NaN stays a
// quiet NaN with its sign and the high bits of its payload (the payload is
// kept as IEEE 754 recommends and as the F16C instruction VCVTPS2PH does,
// so the bulk conversions below need no extra pass). [F16ToF32] is exact.
// [RoundF16] is the two in one, inlined for the normal range: what storing
// a value in an fp16 tensor and reading it back gives. [F32ToBF16] and
// [BF16ToF32] do the same for bfloat16. [MaxF16] is the largest finite
// half.
//
// Bulk. [EncodeF16] and [DecodeF16] convert whole tensors to and from
// little-endian fp16 bytes (surfaces, weight blobs, checkpoints), split
// over the processors when large; [EncodeF16To], [DecodeF16To],
// [RoundF16To], [EncodeBF16To] and [DecodeBF16To] run on the calling
// goroutine without allocating, for callers that parallelise themselves.
// On amd64 the fp16 conversions use the F16C instructions, bit for bit
// equal to the scalar definitions (NaN payloads included). The build tag
// noasm (gonum's own, so one tag switches both) leaves every assembly path
// out for the plain Go fallbacks.
//
// The F16C paths run when internal/cpuid's HasF16C says the CPU and the
// operating system support them.
//
// Float32 bytes. [EncodeF32To] and [DecodeF32To] move float32 values to and
// from their little-endian bytes (a plain copy on a little-endian host): the
// fp32 surfaces of kernels whose I/O is fp32.
package half
