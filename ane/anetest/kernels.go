package anetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/internal/refkernels"
)

// The reference kernels at a small size, against float64 formulas of the transformer layer. Matrices are
// row-major []float64; an activation is [channels, Seq] (element (c, t) at c*Seq + t), a weight [out, in].

// kcfg is the size the kernels are checked at: 2 heads of 16, FFN width 64, 16 positions.
var kcfg = refkernels.Config{Dim: 32, Hidden: 64, Heads: 2, Seq: 32}

type mat struct {
	r, c int
	v    []float64
}

func newMat(r, c int) mat { return mat{r, c, make([]float64, r*c)} }

func (m mat) at(i, j int) float64 { return m.v[i*m.c+j] }

// mul is a·b.
func (a mat) mul(b mat) mat {
	o := newMat(a.r, b.c)
	for i := 0; i < a.r; i++ {
		for k := 0; k < a.c; k++ {
			x := a.v[i*a.c+k]
			for j := 0; j < b.c; j++ {
				o.v[i*o.c+j] += x * b.v[k*b.c+j]
			}
		}
	}
	return o
}

func (a mat) t() mat {
	o := newMat(a.c, a.r)
	for i := 0; i < a.r; i++ {
		for j := 0; j < a.c; j++ {
			o.v[j*o.c+i] = a.v[i*a.c+j]
		}
	}
	return o
}

func (a mat) zip(b mat, f func(x, y float64) float64) mat {
	o := newMat(a.r, a.c)
	for i := range o.v {
		o.v[i] = f(a.v[i], b.v[i])
	}
	return o
}

func (a mat) rows(lo, n int) mat { return mat{n, a.c, a.v[lo*a.c : (lo+n)*a.c]} }

func add(a, b mat) mat { return a.zip(b, func(x, y float64) float64 { return x + y }) }

// randMat draws an r x c matrix uniform in [-s, s), fp16-exact.
func randMat(rng *rand.Rand, r, c int, s float64) mat {
	return mat{r, c, f64s(uniform(rng, r*c, -s, s))}
}

func f32s(m mat) []float32 {
	out := make([]float32, len(m.v))
	for i, v := range m.v {
		out[i] = float32(v)
	}
	return out
}

// rmsNorm is x[c,t] / sqrt(mean_c x[c,t]^2 + 1e-5) * g[c].
func rmsNorm(x mat, g []float64) mat {
	o := newMat(x.r, x.c)
	for t := 0; t < x.c; t++ {
		var ss float64
		for c := 0; c < x.r; c++ {
			ss += x.at(c, t) * x.at(c, t)
		}
		r := 1 / math.Sqrt(ss/float64(x.r)+1e-5)
		for c := 0; c < x.r; c++ {
			o.v[c*o.c+t] = x.at(c, t) * r * g[c]
		}
	}
	return o
}

// head returns head h of an activation [Dim, Seq] as [Seq, HeadDim].
func head(x mat, h, hd int) mat { return x.rows(h*hd, hd).t() }

// causalProbs is softmax_u(q_t·k_u/sqrt(hd)) over u <= t, for q, k [Seq, hd].
func causalProbs(q, k mat) mat {
	s := q.mul(k.t())
	scale := 1 / math.Sqrt(float64(q.c))
	p := newMat(s.r, s.c)
	for t := 0; t < s.r; t++ {
		m := math.Inf(-1)
		for u := 0; u <= t; u++ {
			m = math.Max(m, s.at(t, u)*scale)
		}
		var z float64
		for u := 0; u <= t; u++ {
			e := math.Exp(s.at(t, u)*scale - m)
			p.v[t*p.c+u] = e
			z += e
		}
		for u := 0; u <= t; u++ {
			p.v[t*p.c+u] /= z
		}
	}
	return p
}

// attention is causal multi-head attention of q, k, v [Dim, Seq], as [Dim, Seq].
func attention(q, k, v mat, heads int) mat {
	hd := q.r / heads
	o := newMat(q.r, q.c)
	for h := 0; h < heads; h++ {
		a := causalProbs(head(q, h, hd), head(k, h, hd)).mul(head(v, h, hd)).t()
		copy(o.v[h*hd*o.c:], a.v)
	}
	return o
}

func silu(x float64) float64 { return x * sigmoid(x) }

// kernelCase is a generated kernel with its inputs by segment and the expected outputs by segment.
type kernelCase struct {
	k    *refkernels.Kernel
	err  error
	in   map[string]mat // segment name -> [C x size] for spatial layouts, [size x Seq] for channel layouts
	want map[string]mat // output segment name -> [size x Seq]
}

func testKernels(t *testing.T, b ane.Backend) {
	rng := rand.New(rand.NewPCG(21, 22))
	c := kcfg
	d, hid, s, hd := c.Dim, c.Hidden, c.Seq, c.HeadDim()
	w := func(out, in int) mat { return randMat(rng, out, in, 1/math.Sqrt(float64(in))) }
	rms := f64s(uniform(rng, d, 0.5, 1.5))
	wq, wk, wv, wo := w(d, d), w(d, d), w(d, d), w(d, d)
	w1, w3, w2 := w(hid, d), w(hid, d), w(d, hid)
	x := randMat(rng, d, s, 1)

	var cases []kernelCase
	add1 := func(k *refkernels.Kernel, err error, in, want map[string]mat) {
		cases = append(cases, kernelCase{k, err, in, want})
	}
	// sdpa_fwd_taps
	{
		xn := rmsNorm(x, rms)
		q, kk, v := wq.mul(xn), wk.mul(xn), wv.mul(xn)
		at := attention(q, kk, v, c.Heads)
		k, err := refkernels.SDPAFwdTaps(c, refkernels.AttnWeights{RMS: f32s(mat{1, d, rms}), Wq: f32s(wq), Wk: f32s(wk), Wv: f32s(wv), Wo: f32s(wo)})
		add1(k, err, map[string]mat{"x": x}, map[string]mat{"o": wo.mul(at), "q": q, "k": kk, "v": v, "attn": at, "xnorm": xn})
	}
	// ffn_fwd_taps
	{
		xn := rmsNorm(x, rms)
		h1, h3 := w1.mul(xn), w3.mul(xn)
		gate := h1.zip(h3, func(a, b float64) float64 { return silu(a) * b })
		k, err := refkernels.FFNFwdTaps(c, refkernels.FFNWeights{RMS: f32s(mat{1, d, rms}), W1: f32s(w1), W3: f32s(w3), W2: f32s(w2)})
		add1(k, err, map[string]mat{"x": x}, map[string]mat{"y": w2.mul(gate), "h1": h1, "h3": h3, "gate": gate, "xnorm": xn})
	}
	// ffn_bwd: the SiLU-gated FFN backward from the chain rule.
	dffn, h1, h3 := randMat(rng, d, s, 1), randMat(rng, hid, s, 2), randMat(rng, hid, s, 2)
	dsilu := w2.t().mul(dffn)
	dh1 := newMat(hid, s)
	dh3 := newMat(hid, s)
	for i := range dh1.v {
		sg := sigmoid(h1.v[i])
		dh1.v[i] = dsilu.v[i] * h3.v[i] * (sg + h1.v[i]*sg*(1-sg)) // d silu/dh = s + h s (1 - s)
		dh3.v[i] = dsilu.v[i] * silu(h1.v[i])
	}
	{
		k, err := refkernels.FFNBwd(c, f32s(w1), f32s(w2), f32s(w3))
		add1(k, err, map[string]mat{"dffn": dffn, "h1": h1, "h3": h3},
			map[string]mat{"dx": add(w1.t().mul(dh1), w3.t().mul(dh3)), "dh1": dh1, "dh3": dh3})
	}
	// qkv_bwd
	dq, dk, dv := randMat(rng, d, s, 1), randMat(rng, d, s, 1), randMat(rng, d, s, 1)
	dxQKV := add(add(wq.t().mul(dq), wk.t().mul(dk)), wv.t().mul(dv))
	{
		k, err := refkernels.QKVBwd(c, f32s(wq), f32s(wk), f32s(wv))
		add1(k, err, map[string]mat{"dq": dq, "dk": dk, "dv": dv}, map[string]mat{"dx": dxQKV})
	}
	// sdpa_bwd1: attention backward through the value product, per head.
	q, kk, v, dx2 := randMat(rng, d, s, 1), randMat(rng, d, s, 1), randMat(rng, d, s, 1), randMat(rng, d, s, 1)
	bwd1 := func(da mat) (dvOut, probs, dp mat) {
		dvOut, probs, dp = newMat(d, s), newMat(c.ScoreCh(), s), newMat(c.ScoreCh(), s)
		for h := 0; h < c.Heads; h++ {
			p := causalProbs(head(q, h, hd), head(kk, h, hd))
			dah := head(da, h, hd)
			copy(dvOut.v[h*hd*s:], p.t().mul(dah).t().v) // dV = P^T dA
			copy(probs.v[h*s*s:], p.v)
			copy(dp.v[h*s*s:], dah.mul(head(v, h, hd).t()).v) // dP = dA V^T
		}
		return
	}
	{
		da := wo.t().mul(dx2)
		dvOut, probs, dp := bwd1(da)
		k, err := refkernels.SDPABwd1(c, f32s(wo))
		add1(k, err, map[string]mat{"q": q, "k": kk, "v": v, "dx2": dx2}, map[string]mat{"dv": dvOut, "probs": probs, "dp": dp})
		k, err = refkernels.SDPABwd1NoWeight(c)
		add1(k, err, map[string]mat{"q": q, "k": kk, "v": v, "da": da}, map[string]mat{"dv": dvOut, "probs": probs, "dp": dp})
	}
	// sdpa_bwd2: softmax backward dS = P*(dP - rowsum(P*dP)) / sqrt(hd), then dQ = dS K, dK = dS^T Q.
	{
		probs, dp := newMat(c.ScoreCh(), s), randMat(rng, c.ScoreCh(), s, 1)
		dqOut, dkOut := newMat(d, s), newMat(d, s)
		for h := 0; h < c.Heads; h++ {
			p := causalProbs(head(q, h, hd), head(kk, h, hd))
			copy(probs.v[h*s*s:], p.v)
			dph := dp.rows(h*s, s)
			ds := newMat(s, s)
			for t := 0; t < s; t++ {
				var dot float64
				for u := 0; u < s; u++ {
					dot += p.at(t, u) * dph.at(t, u)
				}
				for u := 0; u < s; u++ {
					ds.v[t*s+u] = p.at(t, u) * (dph.at(t, u) - dot) / math.Sqrt(float64(hd))
				}
			}
			copy(dqOut.v[h*hd*s:], ds.mul(head(kk, h, hd)).t().v)
			copy(dkOut.v[h*hd*s:], ds.t().mul(head(q, h, hd)).t().v)
		}
		k, err := refkernels.SDPABwd2(c)
		add1(k, err, map[string]mat{"probs": probs, "dp": dp, "q": q, "k": kk}, map[string]mat{"dq": dqOut, "dk": dkOut})
	}
	// The dynamic kernels take weights packed [in, out] along the spatial axis.
	{
		xn := rmsNorm(x, rms)
		qd, kd, vd := wq.mul(xn), wk.mul(xn), wv.mul(xn)
		at := attention(qd, kd, vd, c.Heads)
		k, err := refkernels.SDPAFwdDynamic(c)
		add1(k, err, map[string]mat{"xnorm": xn, "wq": wq.t(), "wk": wk.t(), "wv": wv.t(), "wo": wo.t()},
			map[string]mat{"o": wo.mul(at), "q": qd, "k": kd, "v": vd, "attn": at, "xnorm": xn})
		h1d, h3d := w1.mul(xn), w3.mul(xn)
		gate := h1d.zip(h3d, func(a, b float64) float64 { return silu(a) * b })
		k, err = refkernels.FFNW13Dynamic(c)
		add1(k, err, map[string]mat{"xnorm": xn, "w1": w1.t(), "w3": w3.t()}, map[string]mat{"h1": h1d, "h3": h3d, "gate": gate})
		k, err = refkernels.FFNW2Dynamic(c)
		add1(k, err, map[string]mat{"gate": gate, "w2": w2.t()}, map[string]mat{"y": w2.mul(gate)})
		k, err = refkernels.FFNBwdW2tDynamic(c)
		add1(k, err, map[string]mat{"act": dffn, "w": w2}, map[string]mat{"y": dsilu})
		k, err = refkernels.WotDynamic(c)
		add1(k, err, map[string]mat{"act": dx2, "w": wo}, map[string]mat{"y": wo.t().mul(dx2)})
		k, err = refkernels.FFNBwdW13tDynamic(c)
		add1(k, err, map[string]mat{"dh1": dh1, "dh3": dh3, "w1t": w1, "w3t": w3}, map[string]mat{"dx": add(w1.t().mul(dh1), w3.t().mul(dh3))})
		k, err = refkernels.QKVBwdDynamic(c)
		add1(k, err, map[string]mat{"dq": dq, "dk": dk, "dv": dv, "wqt": wq, "wkt": wk, "wvt": wv}, map[string]mat{"dx": dxQKV})
	}
	for i, kc := range cases {
		name := fmt.Sprint(i)
		if kc.k != nil {
			name = kc.k.Name
		}
		t.Run(name, func(t *testing.T) {
			if kc.err != nil {
				t.Fatal(kc.err)
			}
			runKernelCase(t, b, kc)
		})
	}
}

// runKernelCase compiles a reference kernel, fills its input surface by segment, evaluates it and
// compares every output segment with its float64 value, within 1.5% of the segment's RMS plus fp16
// relative error: a few fp16 roundings per element, while a wrong formula is off by the order of the
// values themselves.
func runKernelCase(t *testing.T, b ane.Backend, kc kernelCase) {
	k := compileCase(t, b, kc.k.Program, kc.k.Weights)
	if len(k.Inputs()) != 1 || len(k.Outputs()) != 1 {
		t.Fatalf("%d inputs, %d outputs; want 1 and 1", len(k.Inputs()), len(k.Outputs()))
	}
	in, out := k.Inputs()[0], k.Outputs()[0]
	if in.Channels() != kc.k.In.Channels || in.Spatial() != kc.k.In.Spatial {
		t.Fatalf("input surface %d x %d, layout says %d x %d", in.Channels(), in.Spatial(), kc.k.In.Channels, kc.k.In.Spatial)
	}
	var err error
	for _, seg := range kc.k.In.Segments {
		m, ok := kc.in[seg.Name]
		if !ok {
			t.Fatalf("no data for input segment %q", seg.Name)
		}
		if kc.k.In.Axis == 1 {
			err = in.WriteChannels(seg.Offset, seg.Size, f32s(m))
		} else {
			err = in.WriteRegion(0, in.Channels(), seg.Offset, seg.Size, f32s(m), false)
		}
		if err != nil {
			t.Fatalf("segment %q: %v", seg.Name, err)
		}
	}
	evalOnce(t, k)
	for _, seg := range kc.k.Out.Segments {
		want, ok := kc.want[seg.Name]
		if !ok {
			t.Fatalf("no expected value for output segment %q", seg.Name)
		}
		got := make([]float32, seg.Size*out.Spatial())
		if err := out.ReadChannels(seg.Offset, seg.Size, got); err != nil {
			t.Fatal(err)
		}
		var ss float64
		for _, v := range want.v {
			ss += v * v
		}
		rms := math.Sqrt(ss / float64(max(1, len(want.v))))
		near(t, kc.k.Name+" output "+seg.Name, got, want.v, tolerance{abs: 0.015 * rms, rel: 1.0 / 256})
	}
}
