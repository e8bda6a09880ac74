package transpose

import (
	"fmt"
	"testing"
)

// TestTranspose checks Transpose element by element against the definition dst[j][i] = src[i][j],
// for shapes smaller than, equal to and not multiples of a tile or a 4x4 block, with strides wider
// than the rows, and that it touches nothing outside the destination's elements.
func TestTranspose(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {1, 37}, {37, 1}, {4, 4}, {16, 16}, {17, 33}, {33, 17}, {48, 80}, {100, 3}, {5, 70}} {
		for _, pad := range []int{0, 3} {
			r, c := sh[0], sh[1]
			lds, ldd := c+pad, r+2*pad
			src := make([]float32, (r-1)*lds+c)
			for i := range src {
				src[i] = float32(i) + 0.5
			}
			dst := make([]float32, (c-1)*ldd+r)
			for i := range dst {
				dst[i] = -1
			}
			if err := Transpose(dst, ldd, src, lds, r, c); err != nil {
				t.Fatal(err)
			}
			for k, v := range dst {
				j, i := k/ldd, k%ldd
				want := float32(-1)
				if i < r {
					want = src[i*lds+j]
				}
				if v != want {
					t.Fatalf("%dx%d pad %d: dst[%d][%d] = %g, want %g", r, c, pad, j, i, v, want)
				}
			}
		}
	}
}

// TestTransposeBands checks Transpose on bands of source columns (as the weight writer uses it): the
// transpose, element by element, of every band of destination rows, for shapes that fill the 4x4 blocks and tiles exactly or leave remainders.
func TestTransposeBands(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {1, 7}, {7, 1}, {4, 4}, {16, 16}, {17, 33}, {37, 53}, {300, 301}} {
		r, c := sh[0], sh[1]
		src := make([]float32, r*c)
		for i := range src {
			src[i] = float32(i) + 0.5
		}
		for _, band := range []int{1, 5, transposeTile, c} {
			for lo := 0; lo < c; lo += band {
				hi := min(lo+band, c)
				dst := make([]float32, (hi-lo)*r+3) // longer than the band: Transpose must not write past it
				for k := range dst {
					dst[k] = -1
				}
				if err := Transpose(dst, r, src[lo:], c, r, hi-lo); err != nil {
					t.Fatal(err)
				}
				for j := lo; j < hi; j++ {
					for i := 0; i < r; i++ {
						if got := dst[(j-lo)*r+i]; got != src[i*c+j] {
							t.Fatalf("%dx%d rows [%d, %d): element [%d, %d] of the transpose is %v, want %v", r, c, lo, hi, j, i, got, src[i*c+j])
						}
					}
				}
				for k := (hi - lo) * r; k < len(dst); k++ {
					if dst[k] != -1 {
						t.Fatalf("%dx%d rows [%d, %d): wrote past the band at %d", r, c, lo, hi, k)
					}
				}
			}
		}
	}
}

func TestTransposeErrors(t *testing.T) {
	for _, tc := range []struct {
		dst, src, ldd, lds, r, c int
	}{
		{6, 6, 2, 3, -1, 3}, {6, 6, 1, 3, 2, 3}, {6, 6, 2, 2, 2, 3}, {6, 5, 2, 3, 2, 3}, {5, 6, 2, 3, 2, 3},
	} {
		dst := make([]float32, tc.dst)
		if err := Transpose(dst, tc.ldd, make([]float32, tc.src), tc.lds, tc.r, tc.c); err == nil {
			t.Errorf("%+v: no error", tc)
		}
		for _, v := range dst {
			if v != 0 {
				t.Fatalf("%+v: wrote despite the error", tc)
			}
		}
	}
	if err := Transpose(nil, 0, nil, 0, 0, 5); err != nil {
		t.Errorf("empty matrix: %v", err)
	}
}

// BenchmarkTranspose times the transposes of the reference layer's weights (the backward kernels bake
// in W^T) and a head-sized block of attention.
func BenchmarkTranspose(b *testing.B) {
	for _, sh := range [][2]int{{2048, 768}, {768, 2048}, {768, 768}, {512, 64}} {
		r, c := sh[0], sh[1]
		src := make([]float32, r*c)
		for i := range src {
			src[i] = float32(i)
		}
		dst := make([]float32, r*c)
		b.Run(fmt.Sprintf("%dx%d", r, c), func(b *testing.B) {
			b.SetBytes(int64(8 * r * c))
			for b.Loop() {
				Transpose(dst, r, src, c, r, c)
			}
		})
	}
}
