//go:build !noasm

package cpu

import (
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/anestar/anestar/internal/cpuid"
	"github.com/anestar/anestar/internal/transpose"
)

// The AMX paths of GemmF16 and GemmF32 (amx32_amd64.go has the latter's format). For GemmF16 op(A) is packed into tiles of 16 rows by 16 k of (hi | lo<<16) words and
// op(B) into tiles of 16 k by 16 columns of (hi | hi<<16) and (lo | lo<<16) words (AMX's VNNI pair
// layout with the pair being one value's two halves), zero-padded to 32 rows and columns. One
// TDPBF16PS of an A tile with a hi tile adds hi*hi' + lo*hi' for 16 k, one with a lo tile
// hi*lo' + lo*lo'. The kernel computes 32x32 blocks of C (four C tiles, two A, two B), over k in
// steps of chunks of 16 (see Blocking), each B panel packed just before its products.

// Linux's arch_prctl requests and the XSAVE component of tile data.
const (
	archReqXcompPerm  = 0x1023
	xfeatureXTileData = 18
	xcr0AMX           = 1<<17 | 1<<18 // XTILECFG and XTILEDATA state
)

// Blocking: products with up to amxOnePass k-chunks of 16 make one pass over C; longer ones pass
// over it in steps of the format's kc chunks, a B panel small enough to stay in L1 while the A panels
// stream by from L2 (at 704 to 2048 k, 4-25% faster than one pass with B panels from L2; at 256 k,
// the one pass is 5-7% faster: best of 5 runs of BenchmarkGemmF16 and BenchmarkGemmF32). A block of
// A rows keeps its panels of one step within amxABytes (in L2), and as many B panels are packed at
// once as fit amxBBytes.
const (
	amxOnePass = 16
	amxABytes  = 1 << 20
	amxBBytes  = 512 << 10
)

var amxOnce = sync.OnceValue(func() bool {
	f := cpuid.X86()
	if !f.AMXTile || !f.AMXBF16 || !f.AVX512F || !f.AVX512DQ || !f.AVX512BW || f.XCR0&xcr0AMX != xcr0AMX ||
		f.XCR0&cpuid.XCR0AVX512 != cpuid.XCR0AVX512 {
		return false
	}
	// Tile data is off for a process until it asks (Linux 5.16 and later); the permission is the process's.
	_, _, errno := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archReqXcompPerm, xfeatureXTileData, 0)
	return errno == 0
})

// AMXUsable reports whether GemmF16 can run: the CPU has AMX tiles with bf16, the OS saves their
// state and grants this process tile data (asked once, on the first call).
func AMXUsable() bool { return amxOnce() }

// amxTileCfg is the tile configuration: palette 1, all eight tiles 16 rows of 64 bytes.
var amxTileCfg = func() (cfg [64]byte) {
	cfg[0] = 1
	for t := range 8 {
		cfg[16+2*t] = 64
		cfg[48+t] = 16
	}
	return cfg
}()

//go:noescape
func amxConfig(cfg *[64]byte)

func amxRelease()

//go:noescape
func amxKernel(a, b *uint32, c *float32, ldc, chunks, astep, bstep int, load, third bool)

//go:noescape
func amxConvA(dst *uint32, src *float32, stride, rows int) (inexact uint32)

//go:noescape
func amxConvB(hi, lo *uint32, src *float32, stride, rows int) (inexact uint32)

// amxBufs are the packed operands and the padded C of one product, reused across calls.
type amxBufs struct {
	a, b []uint32
	c    []float32
	lowB []bool // per group of B panels packed together: whether any element has a third part
}

var amxPool = sync.Pool{New: func() any { return new(amxBufs) }}

// grow returns s with length n, reallocated when too short.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// tileSource returns the 16x16 block of op(X) at op rows r0.., columns c0.. of X (stored row-major with
// leading dimension ld, transposed when trans) as a pointer and row stride: X itself for a whole block
// in op's orientation, else a zero-padded or transposed copy in tmp.
func tileSource(x []float32, ld int, trans bool, r0, c0, rows, cols int, tmp, tmp2 *[256]float32) (*float32, int) {
	if trans {
		r0, c0, rows, cols = c0, r0, cols, rows // the stored block
	}
	src, stride := &x[r0*ld+c0], ld
	if rows < 16 || cols < 16 {
		clear(tmp[:])
		for i := range rows {
			copy(tmp[i*16:i*16+cols], x[(r0+i)*ld+c0:])
		}
		src, stride = &tmp[0], 16
	}
	if trans {
		transpose.Block16(&tmp2[0], 16, src, stride)
		return &tmp2[0], 16
	}
	return src, stride
}

// amxFormat is one way of packing operands for the tile kernels: fp16 values split in two bf16
// parts (GemmF16) or float32 values in three (GemmF32, three set).
type amxFormat struct {
	aWords, bWords int  // packed words per k-chunk of 16: of a 32-row block of op(A), of a 32-column panel of op(B)
	kc             int  // k-chunks per pass over C beyond amxOnePass: a B panel of kc chunks (24 KiB) stays in L1 while A streams by
	three          bool // three parts (amx32_amd64.go), else two
}

// f16Format packs fp16 values (see GemmF16): per k-chunk, A tiles (hi | lo) of rows 0-15 and
// 16-31; B tiles (hi | hi) of columns 0-15 and 16-31, then (lo | lo) of both.
var f16Format = &amxFormat{aWords: 512, bWords: 1024, kc: 6}

// The format's conversions and kernel, called directly (not through function values) so that the
// compiler sees the assembly's noescape and keeps tileSource's scratch blocks on the stack.

// convA packs 16 rows of a 16x16 block of op(A) to the block's tiles from dst; convB one 16-column
// half of a panel's block of op(B). Both report rows outside the contract (bad) and rows with a
// non-zero third part (low).
func (f *amxFormat) convA(dst *uint32, src *float32, stride, rows int) (bad, low uint32) {
	if f.three {
		return amxConvA3(dst, src, stride, rows)
	}
	return amxConvA(dst, src, stride, rows), 0
}

func (f *amxFormat) convB(dst *uint32, src *float32, stride, rows int) (bad, low uint32) {
	if f.three {
		return amxConvB3(dst, src, stride, rows)
	}
	return amxConvB(dst, (*uint32)(unsafe.Add(unsafe.Pointer(dst), 512*4)), src, stride, rows), 0
}

// kernel computes one 32x32 block of C; third adds the products of third parts, which are zero when
// neither operand has any.
func (f *amxFormat) kernel(a, b *uint32, c *float32, ldc, chunks int, load, third bool) {
	amxKernel(a, b, c, ldc, chunks, f.aWords*4, f.bWords*4, load, third && f.three)
}

// packA packs op(A) (m x k) into pa: for each block of 32 rows, each k-chunk of 16, the format's
// tiles. It reports whether every element is within the format's contract and whether any has a
// third part.
func (f *amxFormat) packA(trans bool, m, k int, a []float32, lda int, pa []uint32) (ok, low bool) {
	kb := (k + 15) / 16
	var tmp, tmp2 [256]float32
	var bad, lows uint32
	for rb := range (m + 31) / 32 * 2 {
		for kc := range kb {
			blk := pa[(rb/2*kb+kc)*f.aWords:][:f.aWords]
			r0, k0 := rb*16, kc*16
			if r0 >= m {
				for t := rb % 2 * 256; t < f.aWords; t += 512 {
					clear(blk[t : t+256])
				}
				continue
			}
			src, stride := tileSource(a, lda, trans, r0, k0, min(16, m-r0), min(16, k-k0), &tmp, &tmp2)
			b, l := f.convA(&blk[rb%2*256], src, stride, 16)
			bad, lows = bad|b, lows|l
		}
	}
	return bad == 0, lows != 0
}

// packB packs the panels of 32 columns from c0 up to c1 (a multiple of 32) and k-chunks
// [kc0, kc0+chunks) of op(B) (k x n) into pb, panel after panel, per k-chunk the format's tiles.
// Rows of B are read across all the panels at once, not panel by panel, for fewer pages per row.
// It reports as packA does.
func (f *amxFormat) packB(trans bool, k, n int, b []float32, ldb int, c0, c1, kc0, chunks int, pb []uint32) (ok, low bool) {
	var tmp, tmp2 [256]float32
	var bad, lows uint32
	for kc := range chunks {
		k0 := (kc0 + kc) * 16
		for c := c0; c < c1; c += 16 {
			blk := pb[((c-c0)/32*chunks+kc)*f.bWords:][:f.bWords]
			half := c / 16 % 2 * 256
			if c >= n {
				for t := half; t < f.bWords; t += 512 {
					clear(blk[t : t+256])
				}
				continue
			}
			src, stride := tileSource(b, ldb, trans, k0, c, min(16, k-k0), min(16, n-c), &tmp, &tmp2)
			bd, l := f.convB(&blk[half], src, stride, 16)
			bad, lows = bad|bd, lows|l
		}
	}
	return bad == 0, lows != 0
}

// gemmF16 is GemmF16 on validated arguments with m, n, k > 0.
func gemmF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	if !f16Format.gemm(transA, transB, m, n, k, a, lda, b, ldb, false, c, ldc) {
		return ErrNotF16
	}
	return nil
}

// gemm computes C = op(A)*op(B), or C += op(A)*op(B) with accumulate, in the format on validated
// arguments with m, n, k > 0, on the calling goroutine. op(A) is packed whole, first, then each
// 32-column panel of op(B) is packed just before its products, so that it is still in cache for them;
// blocks of rows of A keep their panels of one step of k in L2. It returns false, with C unchanged when
// accumulating and partly written otherwise, when an operand holds a value outside the format's
// contract. (Packing op(A) once for pieces of panels run in parallel measured slower than Sgemm's
// split into independent products, each on its own rows or columns: the pieces then read op(A) from
// the other core's cache.)
func (f *amxFormat) gemm(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, accumulate bool, c []float32, ldc int) bool {
	bufs := amxPool.Get().(*amxBufs)
	defer amxPool.Put(bufs)
	mp, kb, nbk := (m+31)/32*32, (k+15)/16, (n+31)/32
	kc := kb
	if kb > amxOnePass {
		kc = f.kc
	}
	bufs.a = grow(bufs.a, mp/32*kb*f.aWords)
	okA, lowA := f.packA(transA, m, k, a, lda, bufs.a)
	if !okA {
		return false
	}
	// Whole blocks of one pass over k, not accumulating, are written to C in place. Otherwise C is summed
	// in bufs.c as 32x32 blocks of 4 KiB one after another, rows 128 bytes apart — so that a block's rows
	// never compete for one cache set, as C's do when ldc is a multiple of 1024 — which also keeps C as
	// it was when accumulating, should B turn out to be outside the contract.
	blocked := accumulate || kc < kb || m%32 != 0 || n%32 != 0
	if blocked {
		bufs.c = grow(bufs.c, mp*nbk*32)
		if accumulate {
			blockCopy(bufs.c, c, ldc, m, n, nbk, true)
		}
	}
	// The tile configuration and data belong to the OS thread: stay on it from LDTILECFG to TILERELEASE.
	runtime.LockOSThread()
	amxConfig(&amxTileCfg)
	ok := true
loops:
	for k0 := 0; k0 < kb; k0 += kc {
		chunks := min(kc, kb-k0)
		mb := max(1, amxABytes/(chunks*f.aWords*4)) // 32-row blocks per block of A
		nb := max(1, amxBBytes/(chunks*f.bWords*4)) // panels of B packed together
		bufs.b = grow(bufs.b, min(nbk, nb)*chunks*f.bWords)
		if mb < mp/32 { // several blocks of A rows: every panel stays packed for the next block
			bufs.b = grow(bufs.b, nbk*chunks*f.bWords)
		}
		lowB := grow(bufs.lowB, (nbk+nb-1)/nb)
		bufs.lowB = lowB
		for i0 := 0; i0 < mp/32; i0 += mb {
			for j := range nbk {
				// With one block of A rows, a panel is done with before the next group is packed: reuse
				// one group's space, which stays in cache.
				slot := j
				if mb >= mp/32 {
					slot %= nb
				}
				pb := bufs.b[slot*chunks*f.bWords:]
				if i0 == 0 && j%nb == 0 {
					good, low := f.packB(transB, k, n, b, ldb, j*32, min(j+nb, nbk)*32, k0, chunks, pb)
					if !good {
						ok = false
						break loops
					}
					lowB[j/nb] = low
				}
				third := lowA || lowB[j/nb]
				for i := i0; i < min(i0+mb, mp/32); i++ {
					cp, cld := &c[i*32*ldc+j*32], ldc*4
					if blocked {
						cp, cld = &bufs.c[(i*nbk+j)*1024], 128
					}
					f.kernel(&bufs.a[(i*kb+k0)*f.aWords], &pb[0], cp, cld, chunks, k0 > 0 || accumulate, third)
				}
			}
		}
	}
	amxRelease()
	runtime.UnlockOSThread()
	if ok && blocked {
		blockCopy(bufs.c, c, ldc, m, n, nbk, false)
	}
	return ok
}

// blockCopy copies the m x n matrix C (row stride ldc) into (in) or out of cb, which holds C as 32x32
// blocks, nbk to a row of blocks, each row-major.
func blockCopy(cb, c []float32, ldc, m, n, nbk int, in bool) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		for j := 0; j < n; j += 32 {
			blk := cb[((i/32)*nbk+j/32)*1024+i%32*32:][:min(32, n-j)]
			if in {
				copy(blk, row[j:])
			} else {
				copy(row[j:], blk)
			}
		}
	}
}
