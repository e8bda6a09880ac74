package ane

import (
	"fmt"
	"slices"

	"github.com/anestar/anestar/mil"
)

// The forms of the proven ops that a reference ran (rule op-form): maderix's kernels transpose with perm
// [0, 1, 3, 2] only, concatenate on the channels (axis 1: the taps of stories_mil.h) and on the width
// (axis 3: RoPE's pairs in training_dynamic/mil_dynamic.h), take the softmax along the last axis, slice
// at offsets on axes 1 and 3 (the packed inputs, RoPE's pairs), and reshape [1, D, 1, S] to
// [1, H, HD, S] (axes 0 and 3 kept, 1 and 2 regrouped) and [1, H, S, HD] to [1, H, S*HD/2, 2] (axes 0
// and 1 kept, 2 and 3 regrouped). Another value of these attributes is unknown: a warning that names
// the value and the proven form nearest it.

// attrs judges op's attributes; ok is false, with the reason and the fix, for a form no reference ran.
func (c *eligibility) attrs(op *mil.Op) (reason, fix string, ok bool) {
	ints := func(name string) ([]int, bool) {
		v := c.vals.ArgValue(op, name)
		if v == nil {
			return nil, false
		}
		n, err := v.Ints()
		return n, err == nil
	}
	rank := func(name string) int { return c.argType(op, name).Rank() }
	switch op.Kind {
	case "transpose":
		if perm, known := ints("perm"); known && !slices.Equal(perm, []int{0, 1, 3, 2}) {
			return fmt.Sprintf("has perm %v: the references transpose with [0, 1, 3, 2] only", perm),
				"swap the last two axes only, regrouping the others with reshapes (a reshape keeping axes 0 and 1, or 0 and 3)", false
		}
	case "concat":
		if ax, known := ints("axis"); known && len(ax) == 1 {
			a := ax[0]
			if len(op.Results) > 0 && op.Results[0] != nil && a < 0 {
				a += op.Results[0].Type.Rank()
			}
			if a != 1 && a != 3 {
				return fmt.Sprintf("concatenates on axis %d: the references concatenate on axes 1 and 3", ax[0]),
					"concatenate on the channels (axis 1) or the width (axis 3)", false
			}
		}
	case "softmax":
		if ax, known := ints("axis"); known && len(ax) == 1 && ax[0] != -1 && ax[0] != rank("x")-1 {
			return fmt.Sprintf("takes the softmax on axis %d: the references take it on the last axis", ax[0]), "move the axis last", false
		}
	case "slice_by_size":
		if begin, known := ints("begin"); known {
			for i, b := range begin {
				if b != 0 && i != 1 && i != 3 {
					return fmt.Sprintf("slices at offset %d on axis %d: the references slice at offsets on axes 1 and 3 only", b, i),
						"move the axis to the channels or the width first", false
				}
			}
		}
	case "reshape":
		from, to := c.argType(op, "x"), mil.Type{}
		if len(op.Results) > 0 && op.Results[0] != nil {
			to = op.Results[0].Type
		}
		if from.Rank() == 4 && to.Rank() == 4 {
			f, t := from.Shape, to.Shape
			if !ProvenReshape(f, t) {
				return fmt.Sprintf("reshapes %v to %v: the references' reshapes keep axes 0 and 3, or 0 and 1", f, t),
					"reshape in two steps, each keeping axes 0 and 3 or 0 and 1", false
			}
		}
	}
	return "", "", true
}

// ProvenReshape reports whether a rank-4 reshape from shape f to t is of a form the references ran: it
// keeps axes 0 and 3 (regrouping 1 and 2), or axes 0 and 1 (regrouping 2 and 3).
func ProvenReshape(f, t []int) bool {
	return len(f) == 4 && len(t) == 4 && f[0] == t[0] && (f[3] == t[3] || f[1] == t[1])
}

// ReshapeSteps returns the shapes a rank-4 reshape from f to t goes through in proven reshapes
// (ProvenReshape), t last: t alone when the direct one is proven; else one shape between, keeping f's
// last axis and t's channels or f's channels and t's last axis (of the two, the one with the smaller
// spatial extents: the chips cap those); else two, through [1, 1, f1*f2, f3] and [1, 1, t1*t2, t3].
func ReshapeSteps(f, t []int) [][]int {
	if len(f) != 4 || len(t) != 4 || ProvenReshape(f, t) {
		return [][]int{t}
	}
	n := f[0] * f[1] * f[2] * f[3]
	var best []int
	for _, mid := range [][2]int{{t[1], f[3]}, {f[1], t[3]}} { // the channels and the last axis kept
		if d := f[0] * mid[0] * mid[1]; f[0] == t[0] && d > 0 && n%d == 0 {
			m := []int{f[0], mid[0], n / d, mid[1]}
			if best == nil || max(m[2], m[3]) < max(best[2], best[3]) {
				best = m
			}
		}
	}
	if best != nil {
		return [][]int{best, t}
	}
	return [][]int{{f[0], 1, f[1] * f[2], f[3]}, {t[0], 1, t[1] * t[2], t[3]}, t}
}
