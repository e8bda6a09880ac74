package refkernels

import (
	"github.com/anestar/anestar/mil"
)

// The kernels of mil_dynamic.h: weights travel in the input surface, packed along the spatial axis after
// the activations, and are sliced out inside the kernel, so the kernels never need recompiling after an
// optimizer step. The input surface is fp32 (cast to fp16 inside) unless noted; packed weights are
// [in, out] (channel = input feature, spatial = output feature).

const fp32 = mil.FP32

// dynMatmul is gen_dyn_matmul: it slices activations [1, ic, 1, seq] at spatial actOff and a weight
// [1, ic, 1, oc] at spatial wOff out of in, and returns y[o, t] = sum_i W[i, o]·act[i, t] as [1, oc, 1, seq].
func (g *gen) dynMatmul(p string, ic, oc, seq, actOff, wOff int, in *mil.Var) *mil.Var {
	ba := g.Ints(p+"_ba", 0, 0, 0, actOff)
	sa := g.Ints(p+"_sa", 1, ic, 1, seq)
	act := g.SliceBySize(p+"_act", in, ba, sa)
	bw := g.Ints(p+"_bw", 0, 0, 0, wOff)
	sw := g.Ints(p+"_sw", 1, ic, 1, oc)
	wt := g.SliceBySize(p+"_wt", in, bw, sw)
	ra := g.Ints(p+"_ra", 1, 1, ic, seq)
	a2 := g.Reshape(p+"_a2", act, ra)
	pm := g.Ints(p+"_pm", 0, 1, 3, 2)
	a3 := g.Transpose(p+"_a3", a2, pm)
	rw := g.Ints(p+"_rw", 1, 1, ic, oc)
	w := g.Reshape(p+"_W", wt, rw)
	bF := g.Bool("bF", false)
	yh := g.Matmul(p+"_yh", a3, w, bF, bF)
	yt := g.Transpose(p+"_yt", yh, pm)
	ro := g.Ints(p+"_ro", 1, oc, 1, seq)
	return g.Reshape(p+"_y", yt, ro)
}

// castIn emits the fp32 input x and its fp16 cast xh.
func (g *gen) castIn(ch, sp int) *mil.Var {
	x := g.Input("x", mil.Tensor(fp32, 1, ch, 1, sp))
	to16 := g.String("to16", "fp16")
	return g.as(g.Cast("xh", x, to16), "cin")
}

// castOut emits the fp32 cast of v as the kernel's output.
func (g *gen) castOut(name string, v *mil.Var) {
	to32 := g.String("to32", "fp32")
	g.Output(g.as(g.Cast(name, v, to32), "cout"))
}

// DynMatmul is gen_dyn_matmul_mil: y = W^T·x with W packed in the input.
//
//	in:  fp32 [1, ic, 1, seq+oc]: spatial act [seq], w [oc] (W is ic x oc)
//	out: fp32 [1, oc, 1, seq]:    y[o, t] = sum_i W[i, o]·act[i, t]
func DynMatmul(ic, oc, seq int) (*Kernel, error) {
	return dynMatmulKernel("dyn_matmul", ic, oc, seq)
}

func dynMatmulKernel(name string, ic, oc, seq int) (*Kernel, error) {
	g, err := newGen(Config{Dim: ic, Hidden: oc, Heads: 1, Seq: seq})
	if err != nil {
		return nil, err
	}
	xh := g.castIn(ic, seq+oc)
	y := g.dynMatmul("mm", ic, oc, seq, 0, seq, xh)
	g.castOut("y", y)
	return g.finish(name,
		layout(fp32, 3, ic, "act", seq, "w", oc),
		layout(fp32, 1, seq, "y", oc))
}

// FFNBwdW2tDynamic is gen_ffn_bwd_w2t_dynamic, DynMatmul(Dim, Hidden, Seq): dsilu = W2^T·dffn with the
// packed weight w = W2 (Dim x Hidden, [in, out] for this product).
func FFNBwdW2tDynamic(c Config) (*Kernel, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return dynMatmulKernel("ffn_bwd_w2t_dynamic", c.Dim, c.Hidden, c.Seq)
}

// WotDynamic is gen_wot_dynamic, DynMatmul(Dim, Dim, Seq): da = Wo^T·dx2 with the packed weight w = Wo.
func WotDynamic(c Config) (*Kernel, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return dynMatmulKernel("wot_dynamic", c.Dim, c.Dim, c.Seq)
}

// toRows emits reshape [1, ch, 1, S] → [1, 1, ch, S] and transpose → [1, 1, S, ch].
func (g *gen) toRows(x, shape, pm *mil.Var, r, t string) *mil.Var {
	return g.Transpose(t, g.Reshape(r, x, shape), pm)
}

// SDPAFwdDynamic is gen_sdpa_fwd_dynamic: attention with Q/K/V/O weights from the input (RMSNorm is done
// outside). Only the causal mask is a const.
//
//	in:  fp32 [1, Dim, 1, Seq+4*Dim]: spatial xnorm [Seq], wq [Dim], wk [Dim], wv [Dim], wo [Dim]
//	out: fp32 [1, 6*Dim, 1, Seq]:     channels o, q, k, v, attn, xnorm, as SDPAFwdTaps
//
// Packed weights are [in, out]: q[o, t] = sum_i wq[i, o]·xnorm[i, t] (the transpose of SDPAFwdTaps' Wq).
func SDPAFwdDynamic(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s, h, hd := c.Dim, c.Seq, c.Heads, c.HeadDim()
	xh := g.castIn(d, s+4*d)
	bx := g.Ints("bx", 0, 0, 0, 0)
	sx := g.Ints("sx", 1, d, 1, s)
	xn := g.SliceBySize("xn", xh, bx, sx)
	bq := g.Ints("bq", 0, 0, 0, s)
	sw := g.Ints("sw", 1, d, 1, d)
	wq := g.SliceBySize("Wq", xh, bq, sw)
	bk := g.Ints("bk", 0, 0, 0, s+d)
	wk := g.SliceBySize("Wk", xh, bk, sw)
	bv := g.Ints("bv", 0, 0, 0, s+2*d)
	wv := g.SliceBySize("Wv", xh, bv, sw)
	bo := g.Ints("bo", 0, 0, 0, s+3*d)
	wo := g.SliceBySize("Wo", xh, bo, sw)
	r2 := g.Ints("r2", 1, 1, d, s)
	pm := g.Ints("pm", 0, 1, 3, 2)
	xnt := g.toRows(xn, r2, pm, "xn2", "xnt")
	rw := g.Ints("rw", 1, 1, d, d)
	wq2 := g.Reshape("Wq2", wq, rw)
	wk2 := g.Reshape("Wk2", wk, rw)
	wv2 := g.Reshape("Wv2", wv, rw)
	wo2 := g.Reshape("Wo2", wo, rw)
	bF := g.Bool("bF", false)
	bT := g.Bool("bT", true)
	qm := g.Matmul("qm", xnt, wq2, bF, bF)
	km := g.Matmul("km", xnt, wk2, bF, bF)
	vm := g.Matmul("vm", xnt, wv2, bF, bF)
	qt := g.Transpose("qt", qm, pm)
	kt := g.Transpose("kt", km, pm)
	vt := g.Transpose("vt", vm, pm)
	os := g.Ints("os", 1, d, 1, s)
	qf := g.Reshape("qf", qt, os)
	kf := g.Reshape("kf", kt, os)
	vf := g.Reshape("vf", vt, os)
	qsh := g.Ints("qsh", 1, h, hd, s)
	q := g.heads(qf, qsh, pm, "q4", "rq", "q", "tq")
	k := g.heads(kf, qsh, pm, "k4", "rk", "k", "tk")
	v := g.heads(vf, qsh, pm, "v4", "rv", "v", "tv")
	aw := g.causalSoftmax(q, k, bF, bT, "aw")
	a4 := g.as(g.Matmul("a4", aw, v, bF, bF), "mm2")
	at := g.as(g.Transpose("at", a4, pm), "ta")
	af := g.as(g.Reshape("af", at, os), "ra")
	aft := g.toRows(af, r2, pm, "af2", "aft")
	om := g.Matmul("om", aft, wo2, bF, bF)
	ot := g.Transpose("ot", om, pm)
	oo := g.Reshape("oo", ot, os)
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	out := g.as(g.Concat("out", cax, cid, oo, qf, kf, vf, af, xn), "cat")
	g.castOut("out32", out)
	return g.finish("sdpa_fwd_dynamic",
		layout(fp32, 3, d, "xnorm", s, "wq", d, "wk", d, "wv", d, "wo", d),
		layout(fp32, 1, s, "o", d, "q", d, "k", d, "v", d, "attn", d, "xnorm", d))
}

// FFNW13Dynamic is gen_ffn_w13_dynamic: the first FFN half with W1, W3 from the input.
//
//	in:  fp32 [1, Dim, 1, Seq+2*Hidden]: spatial xnorm [Seq], w1 [Hidden], w3 [Hidden] (each Dim x Hidden)
//	out: fp32 [1, 3*Hidden, 1, Seq]:     channels h1, h3, gate = silu(h1)*h3
func FFNW13Dynamic(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, hid, s := c.Dim, c.Hidden, c.Seq
	xh := g.castIn(d, s+2*hid)
	bx := g.Ints("bx", 0, 0, 0, 0)
	sx := g.Ints("sx", 1, d, 1, s)
	xn := g.SliceBySize("xn", xh, bx, sx)
	b1 := g.Ints("b1", 0, 0, 0, s)
	s1 := g.Ints("s1", 1, d, 1, hid)
	w1 := g.SliceBySize("W1", xh, b1, s1)
	b3 := g.Ints("b3", 0, 0, 0, s+hid)
	w3 := g.SliceBySize("W3", xh, b3, s1)
	pm := g.Ints("pm", 0, 1, 3, 2)
	rd := g.Ints("rd", 1, 1, d, s)
	xnt := g.toRows(xn, rd, pm, "xn2", "xnt")
	rw := g.Ints("rw", 1, 1, d, hid)
	w12 := g.Reshape("W12", w1, rw)
	w32 := g.Reshape("W32", w3, rw)
	bF := g.Bool("bF", false)
	h1m := g.Matmul("h1m", xnt, w12, bF, bF)
	h3m := g.Matmul("h3m", xnt, w32, bF, bF)
	h1t := g.Transpose("h1t", h1m, pm)
	h3t := g.Transpose("h3t", h3m, pm)
	rh := g.Ints("rh", 1, hid, 1, s)
	h1 := g.Reshape("h1", h1t, rh)
	h3 := g.Reshape("h3", h3t, rh)
	sig := g.as(g.Sigmoid("sig", h1), "sg")
	silu := g.as(g.Mul("silu", h1, sig), "si")
	gate := g.as(g.Mul("gate", silu, h3), "gt")
	cax := g.Int("cax", 1)
	cid := g.Bool("cid", false)
	out := g.as(g.Concat("out", cax, cid, h1, h3, gate), "cat")
	g.castOut("out32", out)
	return g.finish("ffn_w13_dynamic",
		layout(fp32, 3, d, "xnorm", s, "w1", hid, "w3", hid),
		layout(fp32, 1, s, "h1", hid, "h3", hid, "gate", hid))
}

// FFNW2Dynamic is gen_ffn_w2_dynamic: y = W2·gate with the weight from the input.
//
//	in:  fp32 [1, Hidden, 1, Seq+Dim]: spatial gate [Seq], w2 [Dim] (Hidden x Dim, [in, out])
//	out: fp32 [1, Dim, 1, Seq]
func FFNW2Dynamic(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, hid, s := c.Dim, c.Hidden, c.Seq
	xh := g.castIn(hid, s+d)
	ba := g.Ints("ba", 0, 0, 0, 0)
	sa := g.Ints("sa", 1, hid, 1, s)
	act := g.SliceBySize("act", xh, ba, sa)
	bw := g.Ints("bw", 0, 0, 0, s)
	sw := g.Ints("sw", 1, hid, 1, d)
	w2 := g.SliceBySize("W2", xh, bw, sw)
	pm := g.Ints("pm", 0, 1, 3, 2)
	ra := g.Ints("ra", 1, 1, hid, s)
	at := g.toRows(act, ra, pm, "a2", "at")
	rw := g.Ints("rw", 1, 1, hid, d)
	w22 := g.Reshape("W22", w2, rw)
	bF := g.Bool("bF", false)
	ym := g.Matmul("ym", at, w22, bF, bF)
	yt := g.Transpose("yt", ym, pm)
	ro := g.Ints("ro", 1, d, 1, s)
	yr := g.Reshape("yr", yt, ro)
	g.castOut("y", yr)
	return g.finish("ffn_w2_dynamic",
		layout(fp32, 3, hid, "gate", s, "w2", d),
		layout(fp32, 1, s, "y", d))
}

// FFNBwdW13tDynamic is gen_ffn_bwd_w13t_dynamic: dx = W1^T·dh1 + W3^T·dh3 with the weights from the input.
//
//	in:  fp32 [1, Hidden, 1, 2*Seq+2*Dim]: spatial dh1 [Seq], dh3 [Seq], w1t [Dim], w3t [Dim]
//	     (w1t, w3t are Hidden x Dim: the reference's W1, W3 transposed)
//	out: fp32 [1, Dim, 1, Seq]
func FFNBwdW13tDynamic(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, hid, s := c.Dim, c.Hidden, c.Seq
	xh := g.castIn(hid, 2*s+2*d)
	b0 := g.Ints("b0", 0, 0, 0, 0)
	sh := g.Ints("sh", 1, hid, 1, s)
	dh1 := g.SliceBySize("dh1", xh, b0, sh)
	b1 := g.Ints("b1", 0, 0, 0, s)
	dh3 := g.SliceBySize("dh3", xh, b1, sh)
	b2 := g.Ints("b2", 0, 0, 0, 2*s)
	sw := g.Ints("sw", 1, hid, 1, d)
	w1t := g.SliceBySize("W1t", xh, b2, sw)
	b3 := g.Ints("b3", 0, 0, 0, 2*s+d)
	w3t := g.SliceBySize("W3t", xh, b3, sw)
	pm := g.Ints("pm", 0, 1, 3, 2)
	ra := g.Ints("ra", 1, 1, hid, s)
	dh1t := g.toRows(dh1, ra, pm, "dh12", "dh1t")
	dh3t := g.toRows(dh3, ra, pm, "dh32", "dh3t")
	rw := g.Ints("rw", 1, 1, hid, d)
	w1t2 := g.Reshape("W1t2", w1t, rw)
	w3t2 := g.Reshape("W3t2", w3t, rw)
	bF := g.Bool("bF", false)
	dx1m := g.Matmul("dx1m", dh1t, w1t2, bF, bF)
	dx3m := g.Matmul("dx3m", dh3t, w3t2, bF, bF)
	dxm := g.Add("dxm", dx1m, dx3m)
	dxt := g.Transpose("dxt", dxm, pm)
	ro := g.Ints("ro", 1, d, 1, s)
	dx := g.Reshape("dx", dxt, ro)
	g.castOut("y", dx)
	return g.finish("ffn_bwd_w13t_dynamic",
		layout(fp32, 3, hid, "dh1", s, "dh3", s, "w1t", d, "w3t", d),
		layout(fp32, 1, s, "dx", d))
}

// SDPABwd1NoWeight is gen_sdpa_bwd1_noweight: SDPABwd1 without the Wo^T product (done by WotDynamic).
// Its surfaces are fp16, with no casts.
//
//	in:  fp16 [1, 4*Dim, 1, Seq]:             channels q, k, v, da
//	out: fp16 [1, Dim+2*ScoreCh, 1, Seq]:     channels dv, probs, dp
func SDPABwd1NoWeight(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s := c.Dim, c.Seq
	x := g.Input("x", mil.Tensor(fp16, 1, 4*d, 1, s))
	sl := g.sliceFour(x, [4]string{"qf", "kf", "vf", "da"})
	out := g.sdpaBwd1Core(sl[0], sl[1], sl[2], sl[3], "dat")
	g.Output(out)
	return g.finish("sdpa_bwd1_noweight",
		layout(fp16, 1, s, "q", d, "k", d, "v", d, "da", d),
		layout(fp16, 1, s, "dv", d, "probs", c.ScoreCh(), "dp", c.ScoreCh()))
}

// QKVBwdDynamic is gen_qkvb_dynamic: dx = Wq^T·dq + Wk^T·dk + Wv^T·dv with the weights from the input.
//
//	in:  fp32 [1, Dim, 1, 3*Seq+3*Dim]: spatial dq [Seq], dk [Seq], dv [Seq], wqt [Dim], wkt [Dim], wvt [Dim]
//	     (each Dim x Dim: the reference's Wq, Wk, Wv transposed, [in, out] for this product)
//	out: fp32 [1, Dim, 1, Seq]
func QKVBwdDynamic(c Config) (*Kernel, error) {
	g, err := newGen(c)
	if err != nil {
		return nil, err
	}
	d, s := c.Dim, c.Seq
	xh := g.castIn(d, 3*s+3*d)
	sd := g.Ints("sd", 1, d, 1, s)
	b0 := g.Ints("b0", 0, 0, 0, 0)
	dq := g.SliceBySize("dq", xh, b0, sd)
	b1 := g.Ints("b1", 0, 0, 0, s)
	dk := g.SliceBySize("dk", xh, b1, sd)
	b2 := g.Ints("b2", 0, 0, 0, 2*s)
	dv := g.SliceBySize("dv", xh, b2, sd)
	sw := g.Ints("sw", 1, d, 1, d)
	b3 := g.Ints("b3", 0, 0, 0, 3*s)
	wqt := g.SliceBySize("Wqt", xh, b3, sw)
	b4 := g.Ints("b4", 0, 0, 0, 3*s+d)
	wkt := g.SliceBySize("Wkt", xh, b4, sw)
	b5 := g.Ints("b5", 0, 0, 0, 3*s+2*d)
	wvt := g.SliceBySize("Wvt", xh, b5, sw)
	pm := g.Ints("pm", 0, 1, 3, 2)
	bF := g.Bool("bF", false)
	rd := g.Ints("rd", 1, 1, d, s)
	rw := g.Ints("rw", 1, 1, d, d)
	dqt := g.toRows(dq, rd, pm, "dq2", "dqt")
	wqt2 := g.Reshape("Wqt2", wqt, rw)
	dxq := g.Matmul("dxq", dqt, wqt2, bF, bF)
	dkt := g.toRows(dk, rd, pm, "dk2", "dkt")
	wkt2 := g.Reshape("Wkt2", wkt, rw)
	dxk := g.Matmul("dxk", dkt, wkt2, bF, bF)
	dvt := g.toRows(dv, rd, pm, "dv2", "dvt")
	wvt2 := g.Reshape("Wvt2", wvt, rw)
	dxv := g.Matmul("dxv", dvt, wvt2, bF, bF)
	dxqk := g.as(g.Add("dxqk", dxq, dxk), "aqk")
	dxall := g.as(g.Add("dxall", dxqk, dxv), "aall")
	dxt := g.Transpose("dxt", dxall, pm)
	ro := g.Ints("ro", 1, d, 1, s)
	dx := g.Reshape("dx", dxt, ro)
	g.castOut("y", dx)
	return g.finish("qkv_bwd_dynamic",
		layout(fp32, 3, d, "dq", s, "dk", s, "dv", s, "wqt", d, "wkt", d, "wvt", d),
		layout(fp32, 1, s, "dx", d))
}
