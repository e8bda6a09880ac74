package ane

import (
	"math"
	"testing"

	"github.com/anestar/anestar/mil"
)

// Transfers large enough to be split over goroutines (ioGrain) give what element-by-element ones give.

// bigSurface is a [1, c, 1, s] surface of dtype d on the heap.
func bigSurface(t *testing.T, name string, d mil.DType, c, s int) *Surface {
	t.Helper()
	typ := mil.Tensor(d, 1, c, 1, s)
	es := 2
	if d == mil.FP32 {
		es = 4
	}
	sf, err := NewSurface(name, typ, NewHeapMemory(c*s*es))
	if err != nil {
		t.Fatal(err)
	}
	return sf
}

// halfExact returns n values that fp16 holds exactly (multiples of 1/64 below 32, with signs).
func halfExact(n, seed int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((i*7+seed*13)%4096-2048) / 64
	}
	return v
}

func TestSplitTransfersRoundTrip(t *testing.T) {
	const c, s = 96, 1024 // 3 x 2 x ioGrain elements
	for _, d := range []mil.DType{mil.FP16, mil.FP32} {
		sf := bigSurface(t, "x", d, c, s)
		src := halfExact(c*s, 1)
		if err := sf.WriteChannels(0, c, src); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, c*s)
		if err := sf.ReadChannels(0, c, got); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if got[i] != src[i] {
				t.Fatalf("%s: element %d read back %v, wrote %v", d, i, got[i], src[i])
			}
		}
		// A part: channels [10, 90).
		part := make([]float32, 80*s)
		if err := sf.ReadChannels(10, 80, part); err != nil {
			t.Fatal(err)
		}
		for i := range part {
			if part[i] != src[10*s+i] {
				t.Fatalf("%s: channel range element %d = %v, want %v", d, i, part[i], src[10*s+i])
			}
		}
	}
}

func TestSplitCopyRegion(t *testing.T) {
	const c, s = 200, 1024
	src := halfExact(c*s, 2)
	for _, same := range []bool{false, true} {
		for _, shift := range []int{-37, 41} {
			a := bigSurface(t, "a", mil.FP16, c, s)
			if err := a.WriteChannels(0, c, src); err != nil {
				t.Fatal(err)
			}
			b := a
			if !same {
				b = bigSurface(t, "b", mil.FP16, c, s)
			}
			// Copy channels [from, from+n), columns [3, s-5), to channel from+shift, column 2.
			from, n := 50, 100
			if err := b.CopyRegion(from+shift, 2, a, from, 3, n, s-8); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, c*s)
			if err := b.ReadChannels(0, c, got); err != nil {
				t.Fatal(err)
			}
			for ch := range c {
				for col := range s {
					want := float32(0)
					if same {
						want = src[ch*s+col]
					}
					if r := ch - shift - from; r >= 0 && r < n && col >= 2 && col < 2+s-8 {
						want = src[(from+r)*s+col+1]
					}
					if g := got[ch*s+col]; g != want && !(math.IsNaN(float64(g)) && math.IsNaN(float64(want))) {
						t.Fatalf("same %v shift %d: channel %d column %d = %v, want %v", same, shift, ch, col, g, want)
					}
				}
			}
		}
	}
}

// Regions written and read back, straight and transposed, big (split) and small, fp16 and fp32 (fp32
// transposed writes go straight into the surface): every element lands where the formula says and
// nothing outside the region changes.
func TestSplitRegions(t *testing.T) {
	for _, tc := range []struct {
		d                  mil.DType
		c, s               int
		ch, nch, col, ncol int
	}{
		{mil.FP16, 300, 1024, 20, 256, 100, 768}, // a [256, 768] matrix beside other values
		{mil.FP32, 300, 1024, 20, 256, 100, 768},
		{mil.FP32, 301, 1031, 17, 255, 101, 771}, // odd sizes, split
		{mil.FP16, 301, 1031, 17, 255, 101, 771}, // partial tiles of the fp16 transposed write
		{mil.FP16, 11, 37, 3, 5, 9, 13},
		{mil.FP32, 11, 37, 3, 5, 9, 13}, // odd sizes, one piece
		{mil.FP32, 4, 9, 0, 4, 8, 1},    // one column at the edge
	} {
		for _, transposed := range []bool{false, true} {
			checkRegion(t, tc.d, tc.c, tc.s, tc.ch, tc.nch, tc.col, tc.ncol, transposed)
		}
	}
}

// checkRegion writes an nch x ncol region at (ch, col) of a fresh c x s surface of dtype d and checks
// the whole surface.
func checkRegion(t *testing.T, d mil.DType, c, s, ch, nch, col, ncol int, transposed bool) {
	t.Helper()
	sf := bigSurface(t, "w", d, c, s)
	m := halfExact(nch*ncol, 3)
	if d == mil.FP32 {
		for i := range m {
			m[i] += float32(i) / 3 // values fp16 does not hold
		}
	}
	if err := sf.WriteRegion(ch, nch, col, ncol, m, transposed); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, nch*ncol)
	if err := sf.ReadRegion(ch, nch, col, ncol, got); err != nil {
		t.Fatal(err)
	}
	for r := range nch {
		for j := range ncol {
			want := m[r*ncol+j]
			if transposed {
				want = m[j*nch+r]
			}
			if g := got[r*ncol+j]; g != want {
				t.Fatalf("%s %dx%d transposed %v: region element [%d, %d] = %v, want %v", d, nch, ncol, transposed, r, j, g, want)
			}
		}
	}
	all := make([]float32, c*s)
	if err := sf.ReadChannels(0, c, all); err != nil {
		t.Fatal(err)
	}
	for i, v := range all {
		r, j := i/s-ch, i%s-col
		if (r < 0 || r >= nch || j < 0 || j >= ncol) && v != 0 {
			t.Fatalf("%s %dx%d transposed %v: channel %d column %d outside the region = %v", d, nch, ncol, transposed, i/s, i%s, v)
		}
	}
}

// TestCopyReshaped: a block of whole channels of one surface lands, value after value, in a region of
// rows of another at another width, for every pair of dtypes, big enough to be split; nothing outside
// the region changes; bad counts, ranges and a copy within one surface are errors.
func TestCopyReshaped(t *testing.T) {
	const sc, ss = 64, 1024           // source: 64 channels of 1024
	const dc, ds = 40, 5000           // destination: 40 channels of 5000
	const from, nch = 6, 50           // source channels [6, 56): 51200 values
	const rows, ch, col = 16, 3, 1700 // into 16 rows of 3200 columns from channel 3, column 1700
	for _, sd := range []mil.DType{mil.FP16, mil.FP32} {
		for _, dd := range []mil.DType{mil.FP16, mil.FP32} {
			src, dst := bigSurface(t, "src", sd, sc, ss), bigSurface(t, "dst", dd, dc, ds)
			vals, old := halfExact(sc*ss, 3), halfExact(dc*ds, 4)
			if err := src.WriteChannels(0, sc, vals); err != nil {
				t.Fatal(err)
			}
			if err := dst.WriteChannels(0, dc, old); err != nil {
				t.Fatal(err)
			}
			if err := dst.CopyReshaped(ch, col, rows, src, from, nch); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, dc*ds)
			if err := dst.ReadChannels(0, dc, got); err != nil {
				t.Fatal(err)
			}
			w := nch * ss / rows
			for c := range dc {
				for x := range ds {
					want := old[c*ds+x]
					if r := c - ch; r >= 0 && r < rows && x >= col && x < col+w {
						want = vals[from*ss+r*w+x-col]
					}
					if g := got[c*ds+x]; g != want {
						t.Fatalf("%s to %s: channel %d column %d = %v, want %v", sd, dd, c, x, g, want)
					}
				}
			}
			for _, bad := range []struct {
				what                   string
				ch, col, rows, from, n int
			}{{"rows not dividing", ch, col, 17, from, nch}, {"no rows", ch, col, 0, from, nch}, {"source range", ch, col, rows, 60, 10},
				{"destination columns", ch, 1900, rows, from, nch}, {"destination rows", 30, col, rows, from, nch}} {
				if err := dst.CopyReshaped(bad.ch, bad.col, bad.rows, src, bad.from, bad.n); err == nil {
					t.Errorf("%s to %s: %s: no error", sd, dd, bad.what)
				}
			}
			if err := dst.CopyReshaped(0, 0, 1, dst, 0, 1); err == nil {
				t.Errorf("%s: copy within one surface: no error", dd)
			}
		}
	}
}
