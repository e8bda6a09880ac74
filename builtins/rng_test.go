package builtins

import (
	"math"
	"runtime"
	"slices"
	"testing"
)

// TestDropoutMaskBlocks: a mask of several blocks (odd length) is the same on one core as on all of
// them and after reseeding, drops close to p of its elements overall and in each block, and its blocks
// are not copies of one another.
func TestDropoutMaskBlocks(t *testing.T) {
	const n, p = 5*maskBlock + 333, 0.3
	mask := func() []float32 {
		d := make([]float32, n)
		newRNG(7).dropoutMask(d, p)
		return d
	}
	all := mask()
	prev := runtime.GOMAXPROCS(1)
	one := mask()
	runtime.GOMAXPROCS(prev)
	if !slices.Equal(all, one) {
		t.Fatal("the mask differs between one core and all of them")
	}
	keep := float32(1 / (1 - p))
	sd := math.Sqrt(p * (1 - p) * maskBlock)
	for lo := 0; lo < n; lo += maskBlock {
		blk := all[lo:min(lo+maskBlock, n)]
		zeros := 0
		for _, v := range blk {
			switch v {
			case 0:
				zeros++
			case keep:
			default:
				t.Fatalf("element %v, want 0 or %v", v, keep)
			}
		}
		if want := p * float64(len(blk)); math.Abs(float64(zeros)-want) > 5*sd {
			t.Errorf("block at %d: %d of %d dropped, want about %.0f", lo, zeros, len(blk), want)
		}
		if lo > 0 && slices.Equal(blk[:100], all[:100]) {
			t.Errorf("block at %d starts as block 0 does", lo)
		}
	}
	z := make([]float32, 9)
	newRNG(7).dropoutMask(z, 0)
	for _, v := range z {
		if v != 1 {
			t.Fatalf("p = 0 drops: %v", z)
		}
	}
}
