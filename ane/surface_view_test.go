package ane

import (
	"fmt"
	"slices"
	"testing"

	"github.com/anestar/anestar/mil"
)

// TestViewOps: every surface method on a view does on the parent's window what the region methods do
// on the parent, and touches nothing outside the window; byte accesses are refused.
func TestViewOps(t *testing.T) {
	for _, dt := range []mil.DType{mil.FP16, mil.FP32} {
		parent, err := NewHeapSurface("packed", mil.Tensor(dt, 1, 6, 1, 40))
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewView(parent, "part", []int{1, 3, 1, 16}, 2, 8)
		if err != nil {
			t.Fatal(err)
		}
		if v.Channels() != 3 || v.Spatial() != 16 || v.Parent() != parent {
			t.Fatalf("view is %dx%d", v.Channels(), v.Spatial())
		}
		all := func() []float32 {
			b := make([]float32, 6*40)
			if err := parent.ReadChannels(0, 6, b); err != nil {
				t.Fatal(err)
			}
			return b
		}
		vals := func(n int, base float32) []float32 {
			out := make([]float32, n)
			for i := range out {
				out[i] = base + float32(i)
			}
			return out
		}
		outside := func(before, after []float32) {
			t.Helper()
			for c := range 6 {
				for j := range 40 {
					in := c >= 2 && c < 5 && j >= 8 && j < 24
					if !in && before[c*40+j] != after[c*40+j] {
						t.Fatalf("%s: [%d, %d] outside the window changed", dt, c, j)
					}
				}
			}
		}
		before := all()
		if err := v.WriteChannels(1, 2, vals(32, 1)); err != nil {
			t.Fatal(err)
		}
		after := all()
		outside(before, after)
		want := make([]float32, 32)
		if err := parent.ReadRegion(3, 2, 8, 16, want); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(want, vals(32, 1)) {
			t.Errorf("%s: WriteChannels on the view wrote %v", dt, want)
		}
		got := make([]float32, 32)
		if err := v.ReadChannels(1, 2, got); err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: ReadChannels %v, %v", dt, got, err)
		}
		// A transposed region write and a region read.
		if err := v.WriteRegion(0, 3, 4, 2, vals(6, 50), true); err != nil {
			t.Fatal(err)
		}
		reg := make([]float32, 6)
		if err := parent.ReadRegion(2, 3, 12, 2, reg); err != nil || !slices.Equal(reg, []float32{50, 53, 51, 54, 52, 55}) {
			t.Errorf("%s: transposed region %v, %v", dt, reg, err)
		}
		if err := v.ReadRegion(0, 3, 4, 2, reg); err != nil || !slices.Equal(reg, []float32{50, 53, 51, 54, 52, 55}) {
			t.Errorf("%s: view's region read %v, %v", dt, reg, err)
		}
		// Fill, then a copy from the view into another surface, and back.
		before = all()
		if err := v.Fill(9); err != nil {
			t.Fatal(err)
		}
		outside(before, all())
		other, _ := NewHeapSurface("o", mil.Tensor(mil.FP32, 1, 3, 1, 16))
		if err := other.CopyChannels(0, v, 0, 3); err != nil {
			t.Fatal(err)
		}
		o := make([]float32, 48)
		if err := other.ReadChannels(0, 3, o); err != nil || slices.ContainsFunc(o, func(x float32) bool { return x != 9 }) {
			t.Errorf("%s: copy from the view %v, %v", dt, o, err)
		}
		if err := other.WriteChannels(0, 3, vals(48, 0)); err != nil {
			t.Fatal(err)
		}
		if err := v.CopyRegion(0, 0, other, 0, 0, 3, 16); err != nil {
			t.Fatal(err)
		}
		if err := v.ReadChannels(0, 3, o); err != nil || !slices.Equal(o, vals(48, 0)) {
			t.Errorf("%s: copy into the view %v, %v", dt, o, err)
		}
		// Regions of some columns between the view and another memory, either way (channel by channel).
		if err := other.WriteChannels(0, 3, vals(48, 100)); err != nil {
			t.Fatal(err)
		}
		if err := v.CopyRegion(1, 3, other, 0, 5, 2, 4); err != nil {
			t.Fatal(err)
		}
		reg8 := make([]float32, 8)
		if err := v.ReadRegion(1, 2, 3, 4, reg8); err != nil || !slices.Equal(reg8, []float32{105, 106, 107, 108, 121, 122, 123, 124}) {
			t.Errorf("%s: region copied into the view %v, %v", dt, reg8, err)
		}
		if err := v.ReadRegion(0, 1, 3, 4, reg8[:4]); err != nil || !slices.Equal(reg8[:4], []float32{3, 4, 5, 6}) {
			t.Errorf("%s: the view's channel outside the region changed: %v, %v", dt, reg8[:4], err)
		}
		if err := other.CopyRegion(2, 0, v, 1, 3, 1, 4); err != nil {
			t.Fatal(err)
		}
		if err := other.ReadRegion(2, 1, 0, 5, reg8[:5]); err != nil || !slices.Equal(reg8[:5], []float32{105, 106, 107, 108, 136}) {
			t.Errorf("%s: region copied out of the view %v, %v", dt, reg8[:5], err)
		}
		if err := v.WriteChannels(0, 3, vals(48, 0)); err != nil {
			t.Fatal(err)
		}
		// A reshaped copy out of the view: its values in order, across its channels.
		flat, _ := NewHeapSurface("f", mil.Tensor(mil.FP32, 1, 2, 1, 24))
		if err := flat.CopyReshaped(0, 0, 2, v, 0, 3); err != nil {
			t.Fatal(err)
		}
		f := make([]float32, 48)
		if err := flat.ReadChannels(0, 2, f); err != nil || !slices.Equal(f, vals(48, 0)) {
			t.Errorf("%s: reshaped copy from the view %v, %v", dt, f, err)
		}
		// Two parts of one surface copy through a buffer.
		w, _ := NewView(parent, "part2", []int{1, 3, 1, 16}, 0, 24)
		if err := w.CopyChannels(0, v, 0, 3); err != nil {
			t.Fatal(err)
		}
		if err := w.ReadChannels(0, 3, o); err != nil || !slices.Equal(o, vals(48, 0)) {
			t.Errorf("%s: copy between parts %v, %v", dt, o, err)
		}
		if err := v.WriteBytes(0, []byte{1}); err == nil {
			t.Errorf("%s: a byte write to a view: no error", dt)
		}
		if err := v.WriteChannels(2, 2, vals(32, 0)); err == nil {
			t.Errorf("%s: a write past the view's channels: no error", dt)
		}
		if _, err := NewView(parent, "big", []int{1, 3, 1, 40}, 0, 8); err == nil {
			t.Errorf("%s: a view past the parent's columns: no error", dt)
		}
	}
}

// TestFlatView: a part flattened into a block of the packed surface's rows reads and writes its values in
// the block's row-major order, copies whole channels to and from other surfaces run by run, and leaves
// the rest of the surface alone.
func TestFlatView(t *testing.T) {
	for _, dt := range []mil.DType{mil.FP16, mil.FP32} {
		parent, _ := NewHeapSurface("packed", mil.Tensor(dt, 1, 4, 1, 40))
		// An [8, 6] part in rows [0, 4) x columns [10, 22): 48 values, 12 per row.
		v, err := NewFlatView(parent, "h", []int{1, 8, 1, 6}, 0, 10, 4, 12)
		if err != nil {
			t.Fatal(err)
		}
		vals := make([]float32, 48)
		for i := range vals {
			vals[i] = float32(i + 1)
		}
		if err := v.WriteChannels(0, 8, vals); err != nil {
			t.Fatal(err)
		}
		all := make([]float32, 160)
		if err := parent.ReadChannels(0, 4, all); err != nil {
			t.Fatal(err)
		}
		for r := range 4 {
			for c := range 40 {
				want := float32(0)
				if c >= 10 && c < 22 {
					want = float32(r*12 + c - 10 + 1)
				}
				if all[r*40+c] != want {
					t.Fatalf("%s: packed [%d, %d] = %g, want %g", dt, r, c, all[r*40+c], want)
				}
			}
		}
		reg := make([]float32, 6)
		if err := v.ReadRegion(1, 3, 2, 2, reg); err != nil || !slices.Equal(reg, []float32{9, 10, 15, 16, 21, 22}) {
			t.Errorf("%s: region of the flattened part %v, %v", dt, reg, err)
		}
		// Whole channels to and from a surface of the part's shape, both ways.
		other, _ := NewHeapSurface("o", mil.Tensor(mil.FP32, 1, 8, 1, 6))
		if err := other.CopyChannels(0, v, 0, 8); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, 48)
		if err := other.ReadChannels(0, 8, got); err != nil || !slices.Equal(got, vals) {
			t.Errorf("%s: copy out of the flattened part %v, %v", dt, got, err)
		}
		for i := range got {
			got[i] = -got[i]
		}
		other.WriteChannels(0, 8, got)
		if err := v.CopyChannels(2, other, 2, 3); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, 48)
		v.ReadChannels(0, 8, back)
		for i := range back {
			want := vals[i]
			if i >= 12 && i < 30 {
				want = -vals[i]
			}
			if back[i] != want {
				t.Fatalf("%s: after copying channels 2-4 in: [%d] = %g, want %g", dt, i, back[i], want)
			}
		}
		// A region of some columns, out of the part and into it (channel by channel, one access each).
		if err := other.CopyRegion(1, 0, v, 6, 2, 2, 3); err != nil {
			t.Fatal(err)
		}
		got5 := make([]float32, 6)
		if err := other.ReadRegion(1, 2, 0, 3, got5); err != nil || !slices.Equal(got5, []float32{39, 40, 41, 45, 46, 47}) {
			t.Errorf("%s: region copied out of the flattened part %v, %v", dt, got5, err)
		}
		if err := v.CopyRegion(0, 3, other, 1, 0, 2, 3); err != nil {
			t.Fatal(err)
		}
		if err := v.ReadRegion(0, 2, 2, 4, got[:8]); err != nil || !slices.Equal(got[:8], []float32{3, 39, 40, 41, 9, 45, 46, 47}) {
			t.Errorf("%s: region copied into the flattened part %v, %v", dt, got[:8], err)
		}
		if err := v.WriteRegion(0, 2, 0, 6, vals[:12], true); err != nil {
			t.Fatal(err)
		}
		if _, err := NewFlatView(parent, "big", []int{1, 8, 1, 6}, 0, 30, 4, 12); err == nil {
			t.Errorf("%s: a flattened part past the columns: no error", dt)
		}
		flatColumns(t, dt, v)
		windowColumns(t, dt)
	}
}

// windowColumns: a column written to and read from a window of a packed surface lands in its places
// and nowhere else.
func windowColumns(t *testing.T, dt mil.DType) {
	t.Helper()
	parent, _ := NewHeapSurface("packed", mil.Tensor(dt, 1, 6, 1, 20))
	w, err := NewView(parent, "w", []int{1, 4, 1, 5}, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRegion(0, 4, 3, 1, []float32{1, 2, 3, 4}, true); err != nil {
		t.Fatal(err)
	}
	checkGrid(t, dt.String()+": packed", parent, func(r, c int) float32 {
		if r >= 1 && r < 5 && c == 10 {
			return float32(r)
		}
		return 0
	})
	got := make([]float32, 3)
	if err := w.ReadRegion(1, 3, 3, 1, got); err != nil || !slices.Equal(got, []float32{2, 3, 4}) {
		t.Errorf("%s: column read %v, %v", dt, got, err)
	}
}

// flatColumns: one-column regions of the flattened [8, 6] part v (a token's column in generation: an
// element per channel, each its own run) written, read and copied between flattened parts of fp16 and
// fp32 surfaces, against the values' row-major places.
func flatColumns(t *testing.T, dt mil.DType, v *Surface) {
	t.Helper()
	all := make([]float32, 48)
	for i := range all {
		all[i] = float32(100 + i)
	}
	v.WriteChannels(0, 8, all)
	col := []float32{-1, -2, -3, -4, -5}
	if err := v.WriteRegion(2, 5, 4, 1, col, false); err != nil {
		t.Fatal(err)
	}
	for c := range 5 {
		all[(2+c)*6+4] = col[c]
	}
	got := make([]float32, 48)
	v.ReadChannels(0, 8, got)
	if !slices.Equal(got, all) {
		t.Fatalf("%s: after a column written: %v, want %v", dt, got, all)
	}
	if err := v.WriteRegion(0, 3, 1, 1, []float32{7, 8, 9}, true); err != nil {
		t.Fatal(err)
	}
	all[1], all[7], all[13] = 7, 8, 9
	one := make([]float32, 8)
	if err := v.ReadRegion(0, 8, 1, 1, one); err != nil || !slices.Equal(one, []float32{7, 8, 9, all[19], all[25], all[31], all[37], all[43]}) {
		t.Errorf("%s: column 1 read %v, %v", dt, one, err)
	}
	for _, odt := range []mil.DType{mil.FP16, mil.FP32} {
		p2, _ := NewHeapSurface("packed2", mil.Tensor(odt, 1, 2, 1, 50))
		w, err := NewFlatView(p2, "w", []int{1, 10, 1, 7}, 0, 5, 2, 35)
		if err != nil {
			t.Fatal(err)
		}
		w.Fill(0)
		// v's column 4, channels 1-6, into w's column 3 from channel 2, and back into v's column 0
		if err := w.CopyRegion(2, 3, v, 1, 4, 6, 1); err != nil {
			t.Fatal(err)
		}
		checkGrid(t, fmt.Sprintf("%s to %s: w", dt, odt), w, func(c, j int) float32 {
			if j == 3 && c >= 2 && c < 8 {
				return all[(c-1)*6+4]
			}
			return 0
		})
		if err := v.CopyRegion(0, 0, w, 2, 3, 6, 1); err != nil {
			t.Fatal(err)
		}
		v.ReadRegion(0, 8, 0, 1, one)
		if want := []float32{all[10], all[16], all[22], all[28], all[34], all[40], all[36], all[42]}; !slices.Equal(one, want) {
			t.Errorf("%s from %s: v's column 0 %v, want %v", dt, odt, one, want)
		}
		v.WriteChannels(0, 8, all)
	}
}

// checkGrid fails unless every value of s, channel r and column c, is want(r, c).
func checkGrid(t *testing.T, what string, s *Surface, want func(r, c int) float32) {
	t.Helper()
	got := make([]float32, s.Channels()*s.Spatial())
	if err := s.ReadChannels(0, s.Channels(), got); err != nil {
		t.Fatal(err)
	}
	for r := range s.Channels() {
		for c := range s.Spatial() {
			if w := want(r, c); got[r*s.Spatial()+c] != w {
				t.Fatalf("%s [%d, %d] = %g, want %g", what, r, c, got[r*s.Spatial()+c], w)
			}
		}
	}
}
