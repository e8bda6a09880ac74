package builtins

import "testing"

// TestTranspose2D checks the tiled transpose element by element against the definition
// out[j][i] = in[i][j], for shapes smaller than, equal to and not multiples of a tile.
func TestTranspose2D(t *testing.T) {
	for _, sh := range [][2]int{{1, 1}, {1, 37}, {37, 1}, {16, 16}, {17, 33}, {33, 17}, {48, 80}, {100, 3}} {
		r, c := sh[0], sh[1]
		src := make([]float32, r*c)
		for i := range src {
			src[i] = float32(i) + 0.5
		}
		dst := make([]float32, r*c)
		for i := range dst {
			dst[i] = -1
		}
		transpose2D(dst, src, r, c)
		for i := range r {
			for j := range c {
				if got, want := dst[j*r+i], src[i*c+j]; got != want {
					t.Fatalf("%dx%d: out[%d][%d] = %g, want %g", r, c, j, i, got, want)
				}
			}
		}
	}
}

// BenchmarkTranspose2D times the transpose of the FFN weight [2048, 768] that the backward kernels
// of train_layer.star need.
func BenchmarkTranspose2D(b *testing.B) {
	r, c := 2048, 768
	src := make([]float32, r*c)
	for i := range src {
		src[i] = float32(i)
	}
	dst := make([]float32, r*c)
	for b.Loop() {
		transpose2D(dst, src, r, c)
	}
}
