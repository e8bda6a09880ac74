package mil

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Blobs whose float32 values are produced piece by piece: a caller that computes its values (a
// transposed matrix, say) fills small chunks that are encoded straight into the file, so the whole
// blob never exists as float32.

// funcChunk is about the number of values one fill call produces: its scratch (128 KiB) stays in the
// L2 cache while it is encoded.
const funcChunk = 1 << 15

// funcScratch holds the per-goroutine chunk buffers of AddFloat32Func.
var funcScratch sync.Pool // *[]float32

// AddFloat32Func appends a blob of n values of dtype dt (fp16, bf16 or fp32) whose float32 values fill
// produces, and returns the offset of its metadata block. The values are cut in consecutive chunks
// [lo, hi) of whole units of unit values (the last chunk may end with a partial unit at n), about
// funcChunk values each and never less than one unit; fill writes values lo to hi-1 into dst, which
// holds hi-lo values and is encoded into place right after, with the conversion of AddFloat32s, so the
// bytes are those AddFloat32s gives for the same values. fill is called once per chunk, from up to
// GOMAXPROCS goroutines at once on disjoint chunks, each with its own dst: it must be safe for
// concurrent use and must not keep dst.
func (w *BlobWriter) AddFloat32Func(dt DType, n, unit int, fill func(lo, hi int, dst []float32)) (uint64, error) {
	size := floatEncodingSize(dt)
	switch {
	case size == 0:
		return 0, fmt.Errorf("cannot store float data as %s (want fp16, bf16 or fp32)", dt)
	case n < 0:
		return 0, fmt.Errorf("negative value count %d", n)
	case unit < 1:
		return 0, fmt.Errorf("chunk unit %d: want at least 1", unit)
	case fill == nil:
		return 0, fmt.Errorf("no fill function")
	}
	off, data := w.reserve(blobCodes[dt], size*n)
	chunk := max(1, funcChunk/unit) * unit
	chunks := (n + chunk - 1) / chunk
	var next atomic.Int64
	work := func() {
		p, _ := funcScratch.Get().(*[]float32)
		if p == nil || cap(*p) < min(chunk, n) {
			b := make([]float32, min(chunk, n))
			p = &b
		}
		for {
			k := int(next.Add(1) - 1)
			if k >= chunks {
				break
			}
			lo := k * chunk
			hi := min(lo+chunk, n)
			dst := (*p)[:hi-lo]
			fill(lo, hi, dst)
			encodeFloat32sTo(dt, data[size*lo:size*hi], dst)
		}
		funcScratch.Put(p)
	}
	parts := min(runtime.GOMAXPROCS(0), chunks)
	if parts <= 1 {
		work()
		return off, nil
	}
	var wg sync.WaitGroup
	for range parts {
		wg.Go(work)
	}
	wg.Wait()
	return off, nil
}
