//go:build !noasm

package cpu

import (
	"runtime"
	"sync"
	"syscall"

	"github.com/anestar/anestar/half"
)

// The AMX path of GemmF16. op(A) is packed into tiles of 16 rows by 16 k of (hi | lo<<16) words and
// op(B) into tiles of 16 k by 16 columns of (hi | hi<<16) and (lo | lo<<16) words (AMX's VNNI pair
// layout with the pair being one value's two halves), zero-padded to 32 rows and columns. One
// TDPBF16PS of an A tile with a hi tile adds hi*hi' + lo*hi' for 16 k, one with a lo tile
// hi*lo' + lo*lo'. The kernel computes 32x32 blocks of C (four C tiles, two A, two B), over k in
// blocks of up to amxKC chunks of 16, each B panel packed just before its products.

// Linux's arch_prctl requests and the XSAVE component of tile data.
const (
	archReqXcompPerm  = 0x1023
	xfeatureXTileData = 18
	xcr0AMX           = 1<<17 | 1<<18 // XTILECFG and XTILEDATA state
)

// Blocking: up to amxKC k-chunks of 16 per kernel call (a B panel of up to 256 KiB), as many rows of
// op(A) per block as keep its A panels within amxABytes (in L2), and as many B panels packed at once
// as fit amxBBytes.
const (
	amxKC     = 64
	amxABytes = 1 << 20
	amxBBytes = 512 << 10
)

var amxOnce = sync.OnceValue(func() bool {
	f := half.X86()
	if !f.AMXTile || !f.AMXBF16 || !f.AVX512F || !f.AVX512DQ || !f.AVX512BW || f.XCR0&xcr0AMX != xcr0AMX ||
		f.XCR0&xcr0AVX512 != xcr0AVX512 {
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
func amxKernel(a, b *uint32, c *float32, ldc, chunks int, load bool)

//go:noescape
func amxTranspose16(dst, src *float32, stride int)

//go:noescape
func amxConvA(dst *uint32, src *float32, stride, rows int) (inexact uint32)

//go:noescape
func amxConvB(hi, lo *uint32, src *float32, stride, rows int) (inexact uint32)

// amxBufs are the packed operands and the padded C of one product, reused across calls.
type amxBufs struct {
	a, b []uint32
	c    []float32
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
		amxTranspose16(&tmp2[0], src, stride)
		return &tmp2[0], 16
	}
	return src, stride
}

// packA packs op(A) (m x k) into pa: for each block of 32 rows, each k-chunk of 16, two tiles. It
// returns false when an element is not an fp16 value.
func packA(trans bool, m, k int, a []float32, lda int, pa []uint32) bool {
	kb := (k + 15) / 16
	var tmp, tmp2 [256]float32
	var inexact uint32
	for rb := range (m + 31) / 32 * 2 {
		for kc := range kb {
			dst := pa[((rb/2*kb+kc)*2+rb%2)*256:][:256]
			r0, k0 := rb*16, kc*16
			if r0 >= m {
				clear(dst)
				continue
			}
			src, stride := tileSource(a, lda, trans, r0, k0, min(16, m-r0), min(16, k-k0), &tmp, &tmp2)
			inexact |= amxConvA(&dst[0], src, stride, 16)
		}
	}
	return inexact == 0
}

// packB packs the panels of 32 columns from c0 up to c1 (a multiple of 32) and k-chunks
// [kc0, kc0+chunks) of op(B) (k x n) into pb, panel after panel: per k-chunk, four tiles (hi of
// columns 0-15, of 16-31, then lo of both). Rows of B are read across all the panels at once, not
// panel by panel, for fewer pages per row. It returns false when an element is not an fp16 value.
func packB(trans bool, k, n int, b []float32, ldb int, c0, c1, kc0, chunks int, pb []uint32) bool {
	var tmp, tmp2 [256]float32
	var inexact uint32
	for kc := range chunks {
		k0 := (kc0 + kc) * 16
		for c := c0; c < c1; c += 16 {
			half := c / 16 % 2
			t := pb[((c-c0)/32*chunks+kc)*1024:]
			hi, lo := t[half*256:][:256], t[(2+half)*256:][:256]
			if c >= n {
				clear(hi)
				clear(lo)
				continue
			}
			src, stride := tileSource(b, ldb, trans, k0, c, min(16, k-k0), min(16, n-c), &tmp, &tmp2)
			inexact |= amxConvB(&hi[0], &lo[0], src, stride, 16)
		}
	}
	return inexact == 0
}

// gemmF16 is GemmF16 on validated arguments with m, n, k > 0. op(A) is packed whole; op(B) one
// panel (32 columns by amxKC chunks) at a time, just before its first products, so that it is still
// in cache for them. Blocks of rows of A keep the A panels of one k block in L2.
func gemmF16(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) error {
	bufs := amxPool.Get().(*amxBufs)
	defer amxPool.Put(bufs)
	mp, np, kb := (m+31)/32*32, (n+31)/32*32, (k+15)/16
	bufs.a = grow(bufs.a, mp*kb*16)
	bufs.b = grow(bufs.b, np*min(kb, amxKC)*32)
	if !packA(transA, m, k, a, lda, bufs.a) {
		return ErrNotF16
	}
	// Whole 32x32 blocks are written to C in place; otherwise to a padded copy.
	out, ld := c, ldc
	direct := m%32 == 0 && n%32 == 0
	if !direct {
		bufs.c = grow(bufs.c, mp*np)
		out, ld = bufs.c, np
	}
	// The tile configuration and data belong to the OS thread: stay on it from LDTILECFG to TILERELEASE.
	runtime.LockOSThread()
	amxConfig(&amxTileCfg)
	exact := true
loops:
	for k0 := 0; k0 < kb; k0 += amxKC {
		chunks := min(amxKC, kb-k0)
		mb := max(1, amxABytes/(chunks*2048)) // 32-row blocks per block of A
		nb := max(1, amxBBytes/(chunks*4096)) // panels of B packed together
		for i0 := 0; i0 < mp/32; i0 += mb {
			for j := range np / 32 {
				// With one block of A rows, a panel is done with before the next group is packed: reuse
				// one group's space, which stays in cache.
				slot := j
				if mb >= mp/32 {
					slot = j % nb
				}
				pb := bufs.b[slot*chunks*1024:]
				if i0 == 0 && j%nb == 0 && !packB(transB, k, n, b, ldb, j*32, min(j+nb, np/32)*32, k0, chunks, pb) {
					exact = false
					break loops
				}
				for i := i0; i < min(i0+mb, mp/32); i++ {
					amxKernel(&bufs.a[(i*kb+k0)*512], &pb[0], &out[i*32*ld+j*32], ld*4, chunks, k0 > 0)
				}
			}
		}
	}
	amxRelease()
	runtime.UnlockOSThread()
	if !exact {
		return ErrNotF16
	}
	if !direct {
		for i := range m {
			copy(c[i*ldc:i*ldc+n], out[i*ld:])
		}
	}
	return nil
}
