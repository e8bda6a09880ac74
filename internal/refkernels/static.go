package refkernels

import (
	"github.com/anestar/anestar/mil"
)

// The six kernels of train_large.m. Every surface is fp16. Weights are baked in as fp16 BLOBFILE consts,
// one file each, named as in the reference.

const fp16 = mil.FP16

// AttnWeights are the weights of the attention block, row-major [out, in] (Dim x Dim each), with the
// RMSNorm scale of Dim values.
type AttnWeights struct {
	RMS            []float32 // RMSNorm gain, Dim
	Wq, Wk, Wv, Wo []float32 // Dim x Dim, [out, in]
}

// FFNWeights are the weights of the SwiGLU feed-forward block, row-major [out, in], with the RMSNorm scale.
type FFNWeights struct {
	RMS    []float32 // RMSNorm gain, Dim
	W1, W3 []float32 // Hidden x Dim
	W2     []float32 // Dim x Hidden
}

// convArgs are the shared 1x1 conv arguments of the reference (pt, st, pd, dl, gr).
func (g *gen) convArgs() mil.Args {
	pt := g.String("pt", "valid")
	st := g.Ints("st", 1, 1)
	pd := g.Ints("pd", 0, 0, 0, 0)
	dl := g.Ints("dl", 1, 1)
	gr := g.Int("gr", 1)
	return mil.Args{"dilations": dl, "groups": gr, "pad": pd, "pad_type": pt, "strides": st}
}

// rmsNorm emits xn = x * (mean_c(x^2) + 1e-5)^-0.5 * gain, the gain from file.
func (g *gen) rmsNorm(x *mil.Var, file string, gain []float32) *mil.Var {
	d := g.c.Dim
	sq := g.Mul("sq", x, x)
	rax := g.Ints("rax", 1)
	kd := g.Bool("kd", true)
	ss := g.ReduceSum("ss", sq, rax, kd)
	invd := g.Scalar("invd", fp16, 1/float64(d))
	ss2 := g.Mul("ss2", ss, invd)
	eps := g.Scalar("eps", fp16, 0.00001)
	ss3 := g.Add("ss3", ss2, eps)
	nhalf := g.Scalar("nhalf", fp16, -0.5)
	rrms := g.Pow("rrms", ss3, nhalf)
	xr := g.Mul("xr", x, rrms)
	rw := g.WeightIn(weightPath(file), "rw", fp16, []int{1, d, 1, 1}, gain)
	return g.Mul("xn", xr, rw)
}

// weight emits a [out, in, 1, 1] conv weight const in its own file.
func (g *gen) weight(file, name string, out, in int, data []float32) *mil.Var {
	return g.WeightIn(weightPath(file), name, fp16, []int{out, in, 1, 1}, data)
}

// mask emits the causal mask const cm, [1, 1, Seq, Seq].
func (g *gen) mask() *mil.Var {
	s := g.c.Seq
	return g.WeightIn(weightPath("mask"), "cm", fp16, []int{1, 1, s, s}, CausalMask(s))
}

// causalSoftmax emits the attention weights softmax(q·k^T·scale + mask) over the last axis with the
// reference's names (sc1, scv, sc2, the mask cm, ms, sax), the softmax's result named name; no and
// yes are the false and true bool consts for matmul's transpose flags.
func (g *gen) causalSoftmax(q, k, no, yes *mil.Var, name string) *mil.Var {
	sc1 := g.as(g.Matmul("sc1", q, k, no, yes), "mm1")
	scv := g.Scalar("scv", fp16, g.c.scale())
	sc2 := g.as(g.Mul("sc2", sc1, scv), "scl")
	ms := g.as(g.Add("ms", sc2, g.mask()), "msk")
	sax := g.Int("sax", -1)
	return g.as(g.Softmax(name, ms, sax), "sm")
}

// heads emits reshape to [1, Heads, HeadDim, Seq] and transpose to [1, Heads, Seq, HeadDim], with the
// reference's result and op names.
func (g *gen) heads(x *mil.Var, shape, perm *mil.Var, r, rop, t, top string) *mil.Var {
	return g.as(g.Transpose(t, g.as(g.Reshape(r, x, shape), rop), perm), top)
}

// SDPAFwdTaps is gen_sdpa_fwd_taps: RMSNorm, Q/K/V projections, causal attention and the Wo projection.
//
//	in:  x [Dim]                                              channels of [1, Dim, 1, Seq]
//	out: o [Dim], q [Dim], k [Dim], v [Dim], attn [Dim], xnorm [Dim]   channels of [1, 6*Dim, 1, Seq]
//
// o = Wo·attn; q, k, v = Wq·xnorm, ...; attn is softmax(q_h·k_h^T/sqrt(HeadDim) + mask)·v_h per head h
// (head h holds channels h*HeadDim ... of q, k, v, attn).
func SDPAFwdTaps(c Config, w AttnWeights) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s, h, hd := c.Dim, c.Seq, c.Heads, c.HeadDim()
	x := g.Input("x", mil.Tensor(fp16, 1, d, 1, s))
	xn := g.rmsNorm(x, "rms1", w.RMS)
	cv := g.convArgs()
	wq := g.weight("wq", "Wq", d, d, w.Wq)
	wk := g.weight("wk", "Wk", d, d, w.Wk)
	wv := g.weight("wv", "Wv", d, d, w.Wv)
	wo := g.weight("wo", "Wo", d, d, w.Wo)
	qf := g.as(g.Conv("qf", xn, wq, cv), "cq")
	kf := g.as(g.Conv("kf", xn, wk, cv), "ck")
	vf := g.as(g.Conv("vf", xn, wv, cv), "cv")
	qsh := g.Ints("qsh", 1, h, hd, s)
	pm := g.Ints("pm", 0, 1, 3, 2)
	q := g.heads(qf, qsh, pm, "q4", "rq", "q", "tq")
	k := g.heads(kf, qsh, pm, "k4", "rk", "k", "tk")
	v := g.heads(vf, qsh, pm, "v4", "rv", "v", "tv")
	tx := g.Bool("tx", false)
	ty := g.Bool("ty", true)
	aw := g.causalSoftmax(q, k, tx, ty, "aw")
	a4 := g.as(g.Matmul("a4", aw, v, tx, tx), "mm2")
	at := g.as(g.Transpose("at", a4, pm), "ta")
	os := g.Ints("os", 1, d, 1, s)
	af := g.as(g.Reshape("af", at, os), "ra")
	oo := g.as(g.Conv("oo", af, wo, cv), "co")
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	out := g.as(g.Concat("out", cax, cid, oo, qf, kf, vf, af, xn), "cat")
	g.Output(out)
	return g.finish("sdpa_fwd_taps",
		layout(fp16, 1, s, "x", d),
		layout(fp16, 1, s, "o", d, "q", d, "k", d, "v", d, "attn", d, "xnorm", d))
}

// FFNFwdTaps is gen_ffn_fwd_taps: RMSNorm and the SwiGLU FFN.
//
//	in:  x [Dim]
//	out: y [Dim], h1 [Hidden], h3 [Hidden], gate [Hidden], xnorm [Dim]
//
// h1 = W1·xnorm, h3 = W3·xnorm, gate = silu(h1)*h3 (silu(h) = h*sigmoid(h)), y = W2·gate.
func FFNFwdTaps(c Config, w FFNWeights) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, hid, s := c.Dim, c.Hidden, c.Seq
	x := g.Input("x", mil.Tensor(fp16, 1, d, 1, s))
	xn := g.rmsNorm(x, "rms2", w.RMS)
	cv := g.convArgs()
	w1 := g.weight("w1", "W1", hid, d, w.W1)
	w3 := g.weight("w3", "W3", hid, d, w.W3)
	w2 := g.weight("w2", "W2", d, hid, w.W2)
	h1 := g.as(g.Conv("h1", xn, w1, cv), "c1")
	h3 := g.as(g.Conv("h3", xn, w3, cv), "c3")
	sig := g.as(g.Sigmoid("sig", h1), "sg")
	silu := g.as(g.Mul("silu", h1, sig), "si")
	gate := g.as(g.Mul("gate", silu, h3), "gt")
	y := g.as(g.Conv("y", gate, w2, cv), "c2")
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	out := g.as(g.Concat("out", cax, cid, y, h1, h3, gate, xn), "cat")
	g.Output(out)
	return g.finish("ffn_fwd_taps",
		layout(fp16, 1, s, "x", d),
		layout(fp16, 1, s, "y", d, "h1", hid, "h3", hid, "gate", hid, "xnorm", d))
}

// FFNBwd is gen_ffn_bwd: the SwiGLU FFN backward. W1, W3 are Hidden x Dim and W2 Dim x Hidden ([out, in]).
//
//	in:  dffn [Dim], h1 [Hidden], h3 [Hidden]
//	out: dx [Dim], dh1 [Hidden], dh3 [Hidden]
//
// dsilu = W2^T·dffn; s = sigmoid(h1); dh1 = dsilu*h3 * s*(1 + h1*(1-s)); dh3 = dsilu * h1*s;
// dx = W1^T·dh1 + W3^T·dh3.
func FFNBwd(c Config, w1, w2, w3 []float32) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, hid, s := c.Dim, c.Hidden, c.Seq
	x := g.Input("x", mil.Tensor(fp16, 1, d+2*hid, 1, s))
	cv := g.convArgs()
	bd := g.Ints("bd", 0, 0, 0, 0)
	sd := g.Ints("sd", 1, d, 1, s)
	dffn := g.as(g.SliceBySize("dffn", x, bd, sd), "s0")
	b1 := g.Ints("b1", 0, d, 0, 0)
	s1 := g.Ints("s1", 1, hid, 1, s)
	h1 := g.as(g.SliceBySize("h1", x, b1, s1), "s1x")
	b3 := g.Ints("b3", 0, d+hid, 0, 0)
	h3 := g.as(g.SliceBySize("h3", x, b3, s1), "s3x")
	w2t := g.weight("w2t", "W2t", hid, d, Transpose(w2, d, hid))
	dsilu := g.as(g.Conv("dsilu", dffn, w2t, cv), "cw2")
	sig := g.as(g.Sigmoid("sig", h1), "sg")
	one := g.Scalar("one", fp16, 1)
	oms := g.Sub("oms", one, sig)
	homs := g.Mul("homs", h1, oms)
	brk := g.Add("brk", one, homs)
	dsd := g.Mul("dsd", sig, brk)
	t1 := g.Mul("t1", dsilu, h3)
	dh1 := g.Mul("dh1", t1, dsd)
	slh := g.Mul("slh", h1, sig)
	dh3 := g.Mul("dh3", dsilu, slh)
	w1t := g.weight("w1t", "W1t", d, hid, Transpose(w1, hid, d))
	w3t := g.weight("w3t", "W3t", d, hid, Transpose(w3, hid, d))
	dx1 := g.as(g.Conv("dx1", dh1, w1t, cv), "cw1")
	dx3 := g.as(g.Conv("dx3", dh3, w3t, cv), "cw3")
	dx := g.as(g.Add("dx", dx1, dx3), "adx")
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	out := g.as(g.Concat("out", cax, cid, dx, dh1, dh3), "cat")
	g.Output(out)
	return g.finish("ffn_bwd",
		layout(fp16, 1, s, "dffn", d, "h1", hid, "h3", hid),
		layout(fp16, 1, s, "dx", d, "dh1", hid, "dh3", hid))
}

// QKVBwd is gen_qkvb: the backward of the Q, K, V projections (weights Dim x Dim, [out, in]).
//
//	in:  dq [Dim], dk [Dim], dv [Dim]
//	out: dx [Dim] = Wq^T·dq + Wk^T·dk + Wv^T·dv
func QKVBwd(c Config, wq, wk, wv []float32) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s := c.Dim, c.Seq
	x := g.Input("x", mil.Tensor(fp16, 1, 3*d, 1, s))
	cv := g.convArgs()
	sz := g.Ints("sz", 1, d, 1, s)
	b0 := g.Ints("b0", 0, 0, 0, 0)
	dq := g.as(g.SliceBySize("dq", x, b0, sz), "s0")
	b1 := g.Ints("b1", 0, d, 0, 0)
	dk := g.as(g.SliceBySize("dk", x, b1, sz), "s1")
	b2 := g.Ints("b2", 0, 2*d, 0, 0)
	dv := g.as(g.SliceBySize("dv", x, b2, sz), "s2")
	wqt := g.weight("wqt", "Wqt", d, d, Transpose(wq, d, d))
	wkt := g.weight("wkt", "Wkt", d, d, Transpose(wk, d, d))
	wvt := g.weight("wvt", "Wvt", d, d, Transpose(wv, d, d))
	dxq := g.as(g.Conv("dxq", dq, wqt, cv), "cq")
	dxk := g.as(g.Conv("dxk", dk, wkt, cv), "ck")
	dxv := g.as(g.Conv("dxv", dv, wvt, cv), "cv")
	dxqk := g.as(g.Add("dxqk", dxq, dxk), "aqk")
	out := g.Add("out", dxqk, dxv)
	g.Output(out)
	return g.finish("qkv_bwd",
		layout(fp16, 1, s, "dq", d, "dk", d, "dv", d),
		layout(fp16, 1, s, "dx", d))
}

// sliceQKVD emits the four Dim-channel slices of the SDPA backward inputs.
func (g *gen) sliceFour(x *mil.Var, names [4]string) [4]*mil.Var {
	d, s := g.c.Dim, g.c.Seq
	sz := g.Ints("sz", 1, d, 1, s)
	var out [4]*mil.Var
	for i := range out {
		bi := g.Ints("b"+string(rune('0'+i)), 0, i*d, 0, 0)
		out[i] = g.as(g.SliceBySize(names[i], x, bi, sz), "s"+string(rune('0'+i)))
	}
	return out
}

// SDPABwd1 is gen_sdpa_bwd1: the Wo backward and the first half of the attention backward (Wo is
// Dim x Dim, [out, in]).
//
//	in:  q [Dim], k [Dim], v [Dim], dx2 [Dim]
//	out: dv [Dim], probs [ScoreCh], dp [ScoreCh]
//
// da = Wo^T·dx2; per head, probs = softmax(q·k^T/sqrt(HeadDim) + mask) (recomputed), dv = probs^T·da,
// dp = da·v^T. probs and dp [Heads, Seq, Seq] are flattened to channels h*Seq + query, spatial key.
func SDPABwd1(c Config, wo []float32) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s := c.Dim, c.Seq
	x := g.Input("x", mil.Tensor(fp16, 1, 4*d, 1, s))
	cv := g.convArgs()
	sl := g.sliceFour(x, [4]string{"qf", "kf", "vf", "dx2f"})
	wot := g.weight("wot", "Wot", d, d, Transpose(wo, d, d))
	df := g.as(g.Conv("df", sl[3], wot, cv), "cwo")
	out := g.sdpaBwd1Core(sl[0], sl[1], sl[2], df, "da")
	g.Output(out)
	return g.finish("sdpa_bwd1",
		layout(fp16, 1, s, "q", d, "k", d, "v", d, "dx2", d),
		layout(fp16, 1, s, "dv", d, "probs", c.ScoreCh(), "dp", c.ScoreCh()))
}

// sdpaBwd1Core is the weight-free part shared by sdpa_bwd1 and sdpa_bwd1_noweight; daName is the result
// name of the transposed upstream gradient ("da" in train_large.m, "dat" in mil_dynamic.h).
func (g *gen) sdpaBwd1Core(qf, kf, vf, df *mil.Var, daName string) *mil.Var {
	c := g.c
	d, s, h, hd, sc := c.Dim, c.Seq, c.Heads, c.HeadDim(), c.ScoreCh()
	rsh := g.Ints("rsh", 1, h, hd, s)
	pm := g.Ints("pm", 0, 1, 3, 2)
	q := g.heads(qf, rsh, pm, "qr", "rq", "q", "tq")
	k := g.heads(kf, rsh, pm, "kr", "rk", "k", "tk")
	v := g.heads(vf, rsh, pm, "vr", "rv", "v", "tv")
	da := g.heads(df, rsh, pm, "dr", "rd", daName, "td")
	bF := g.Bool("bF", false)
	bT := g.Bool("bT", true)
	probs := g.causalSoftmax(q, k, bF, bT, "probs")
	dv4 := g.as(g.Matmul("dv4", probs, da, bT, bF), "dv")
	dp4 := g.as(g.Matmul("dp4", da, v, bF, bT), "dp")
	dvt := g.Transpose("dvt", dv4, pm)
	dvs := g.Ints("dvs", 1, d, 1, s)
	dvf := g.Reshape("dvf", dvt, dvs)
	scs := g.Ints("scs", 1, sc, 1, s)
	pf := g.Reshape("pf", probs, scs)
	dpf := g.Reshape("dpf", dp4, scs)
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	return g.as(g.Concat("out", cax, cid, dvf, pf, dpf), "cat")
}

// SDPABwd2 is gen_sdpa_bwd2 (identical in both reference files): the second half of the attention
// backward, without weights.
//
//	in:  probs [ScoreCh], dp [ScoreCh], q [Dim], k [Dim]
//	out: dq [Dim], dk [Dim]
//
// Per head, ds = probs*(dp - rowsum(probs*dp)) / sqrt(HeadDim); dq = ds·k; dk = ds^T·q.
func SDPABwd2(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s, h, hd, sc := c.Dim, c.Seq, c.Heads, c.HeadDim(), c.ScoreCh()
	x := g.Input("x", mil.Tensor(fp16, 1, 2*sc+2*d, 1, s))
	szsc := g.as(g.Ints("sz_sc", 1, sc, 1, s), "szsc")
	b0 := g.Ints("b0", 0, 0, 0, 0)
	pf := g.as(g.SliceBySize("pf", x, b0, szsc), "s0")
	b1 := g.Ints("b1", 0, sc, 0, 0)
	dpf := g.as(g.SliceBySize("dpf", x, b1, szsc), "s1")
	szd := g.as(g.Ints("sz_d", 1, d, 1, s), "szd")
	b2 := g.Ints("b2", 0, 2*sc, 0, 0)
	qf := g.as(g.SliceBySize("qf", x, b2, szd), "s2")
	b3 := g.Ints("b3", 0, 2*sc+d, 0, 0)
	kf := g.as(g.SliceBySize("kf", x, b3, szd), "s3")
	ssh := g.Ints("ssh", 1, h, s, s)
	probs := g.as(g.Reshape("probs", pf, ssh), "rp")
	dp := g.as(g.Reshape("dp", dpf, ssh), "rdp")
	rsh := g.Ints("rsh", 1, h, hd, s)
	pm := g.Ints("pm", 0, 1, 3, 2)
	q := g.heads(qf, rsh, pm, "qr", "rq", "q", "tq")
	k := g.heads(kf, rsh, pm, "kr", "rk", "k", "tk")
	pdp := g.Mul("pdp", probs, dp)
	rax := g.Ints("rax", -1)
	kd := g.Bool("kd", true)
	spdp := g.as(g.ReduceSum("spdp", pdp, rax, kd), "rs")
	dps := g.Sub("dps", dp, spdp)
	ds0 := g.Mul("ds0", probs, dps)
	scv := g.Scalar("scv", fp16, c.scale())
	ds := g.Mul("ds", ds0, scv)
	bF := g.Bool("bF", false)
	bT := g.Bool("bT", true)
	dq4 := g.as(g.Matmul("dq4", ds, k, bF, bF), "dq")
	dk4 := g.as(g.Matmul("dk4", ds, q, bT, bF), "dk")
	dqt := g.Transpose("dqt", dq4, pm)
	dkt := g.Transpose("dkt", dk4, pm)
	fs := g.Ints("fs", 1, d, 1, s)
	dqf := g.Reshape("dqf", dqt, fs)
	dkf := g.Reshape("dkf", dkt, fs)
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	out := g.as(g.Concat("out", cax, cid, dqf, dkf), "cat")
	g.Output(out)
	return g.finish("sdpa_bwd2",
		layout(fp16, 1, s, "probs", sc, "dp", sc, "q", d, "k", d),
		layout(fp16, 1, s, "dq", d, "dk", d))
}
