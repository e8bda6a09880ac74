package anetest

import "math"

// Plain float64 implementations of the ops, written from their definitions with index arithmetic and
// nothing shared with any backend.

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// index returns the row-major multi-index of flat index i in shape.
func index(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		idx[k] = i % shape[k]
		i /= shape[k]
	}
	return idx
}

// flat is the row-major flat index of idx in shape.
func flat(idx, shape []int) int {
	f := 0
	for k := range shape {
		f = f*shape[k] + idx[k]
	}
	return f
}

// broadcastShape is numpy's broadcast of two shapes (assumed compatible).
func broadcastShape(a, b []int) []int {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := 0; i < n; i++ {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		out[i] = max(da, db)
	}
	return out
}

// at reads x of shape at the broadcast index idx (aligned at the last dims; size-1 dims repeat).
func at(x []float64, shape, idx []int) float64 {
	f := 0
	off := len(idx) - len(shape)
	for k := range shape {
		i := idx[k+off]
		if shape[k] == 1 {
			i = 0
		}
		f = f*shape[k] + i
	}
	return x[f]
}

// binaryRef applies f elementwise with broadcasting.
func binaryRef(a []float64, as []int, b []float64, bs []int, f func(x, y float64) float64) []float64 {
	os := broadcastShape(as, bs)
	out := make([]float64, prod(os))
	for i := range out {
		idx := index(i, os)
		out[i] = f(at(a, as, idx), at(b, bs, idx))
	}
	return out
}

func unaryRef(a []float64, f func(float64) float64) []float64 {
	out := make([]float64, len(a))
	for i, v := range a {
		out[i] = f(v)
	}
	return out
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// matmulRef multiplies the last two dims of x and y with batch broadcasting (both of rank >= 2).
func matmulRef(x []float64, xs []int, y []float64, ys []int, tx, ty bool) ([]float64, []int) {
	get := func(a []float64, s []int, batch []int, r, c int, tr bool) float64 {
		if tr {
			r, c = c, r
		}
		idx := append(append([]int{}, batch...), r, c)
		return at(a, s, idx)
	}
	m, k := xs[len(xs)-2], xs[len(xs)-1]
	if tx {
		m, k = k, m
	}
	n := ys[len(ys)-1]
	if ty {
		n = ys[len(ys)-2]
	}
	bs := broadcastShape(xs[:len(xs)-2], ys[:len(ys)-2])
	os := append(append([]int{}, bs...), m, n)
	out := make([]float64, prod(os))
	for i := range out {
		idx := index(i, os)
		batch, r, c := idx[:len(bs)], idx[len(bs)], idx[len(bs)+1]
		var s float64
		for j := 0; j < k; j++ {
			s += get(x, xs, batch, r, j, tx) * get(y, ys, batch, j, c, ty)
		}
		out[i] = s
	}
	return out, os
}

// convRef is a direct 2-D (or 1-D, with a unit height) convolution with explicit padding.
func convRef(x []float64, xs []int, w []float64, ws []int, bias []float64, strides, dil, padB, padE []int, groups int) ([]float64, []int) {
	n, cin, h, wd := xs[0], xs[1], xs[2], xs[3]
	cout, cig, kh, kw := ws[0], ws[1], ws[2], ws[3]
	oh := (h+padB[0]+padE[0]-dil[0]*(kh-1)-1)/strides[0] + 1
	ow := (wd+padB[1]+padE[1]-dil[1]*(kw-1)-1)/strides[1] + 1
	cog := cout / groups
	out := make([]float64, n*cout*oh*ow)
	for b := 0; b < n; b++ {
		for co := 0; co < cout; co++ {
			g := co / cog
			for oy := 0; oy < oh; oy++ {
				for ox := 0; ox < ow; ox++ {
					var s float64
					if bias != nil {
						s = bias[co]
					}
					for ci := 0; ci < cig; ci++ {
						for ky := 0; ky < kh; ky++ {
							for kx := 0; kx < kw; kx++ {
								iy := oy*strides[0] - padB[0] + ky*dil[0]
								ix := ox*strides[1] - padB[1] + kx*dil[1]
								if iy < 0 || iy >= h || ix < 0 || ix >= wd {
									continue
								}
								s += x[((b*cin+g*cig+ci)*h+iy)*wd+ix] * w[((co*cig+ci)*kh+ky)*kw+kx]
							}
						}
					}
					out[((b*cout+co)*oh+oy)*ow+ox] = s
				}
			}
		}
	}
	return out, []int{n, cout, oh, ow}
}

// reduceRef reduces x over axes with f (sum, mean or max), keeping reduced dims as size 1.
func reduceRef(x []float64, xs []int, axes []int, kind string) []float64 {
	red := make([]bool, len(xs))
	for _, a := range axes {
		red[a] = true
	}
	os := make([]int, len(xs))
	for i, d := range xs {
		os[i] = d
		if red[i] {
			os[i] = 1
		}
	}
	out := make([]float64, prod(os))
	cnt := make([]int, len(out))
	for i := range out {
		if kind == "max" {
			out[i] = math.Inf(-1)
		}
	}
	for i, v := range x {
		idx := index(i, xs)
		for k := range idx {
			if red[k] {
				idx[k] = 0
			}
		}
		o := flat(idx, os)
		cnt[o]++
		if kind == "max" {
			out[o] = math.Max(out[o], v)
		} else {
			out[o] += v
		}
	}
	if kind == "mean" {
		for i := range out {
			out[i] /= float64(cnt[i])
		}
	}
	return out
}

// softmaxRef is softmax of x along axis.
func softmaxRef(x []float64, xs []int, axis int) []float64 {
	m := reduceRef(x, xs, []int{axis}, "max")
	e := make([]float64, len(x))
	rs := append([]int{}, xs...)
	rs[axis] = 1
	for i, v := range x {
		e[i] = math.Exp(v - at(m, rs, index(i, xs)))
	}
	s := reduceRef(e, xs, []int{axis}, "sum")
	for i := range e {
		e[i] /= at(s, rs, index(i, xs))
	}
	return e
}

// transposeRef permutes the dims of x: result dim i is x's dim perm[i].
func transposeRef(x []float64, xs, perm []int) []float64 {
	os := make([]int, len(perm))
	for i, p := range perm {
		os[i] = xs[p]
	}
	out := make([]float64, len(x))
	src := make([]int, len(xs))
	for i := range out {
		idx := index(i, os)
		for k, p := range perm {
			src[p] = idx[k]
		}
		out[i] = x[flat(src, xs)]
	}
	return out
}
