package builtins

import (
	"math"
	"strings"

	"github.com/anestar/anestar/nn"
	"go.starlark.net/starlark"
)

// cpuMathFns are the host math builtins of the cpu module.
func (s *session) cpuMathFns() []fnDef {
	return []fnDef{
		{sig: "rmsnorm(out, x, w, eps = 1e-5)", doc: "out = w * x / rms(x) per column of the channel-first [C, S] x, w of C values; out may be x.", fn: cpuNorm(nn.RMSNorm)},
		{sig: "rmsnorm_backward(dx, dw, dy, x, w, eps = 1e-5)", doc: "The gradients of rmsnorm: dx is set, dw (C values) is accumulated into.", fn: cpuNormBackward(nn.RMSNormBackward)},
		{sig: "layernorm(out, x, w, eps = 1e-5)", doc: "out = w * (x - mean) / std per column of the channel-first [C, S] x (LayerNorm without a bias), w of C values; out may be x.", fn: cpuNorm(nn.LayerNorm)},
		{sig: "layernorm_backward(dx, dw, dy, x, w, eps = 1e-5)", doc: "The gradients of layernorm: dx is set, dw (C values) is accumulated into.", fn: cpuNormBackward(nn.LayerNormBackward)},
		{sig: "activation(kind, y, x, slope = None)", doc: "y = f(x) elementwise for kind identity, sigmoid, relu, leaky_relu, tanh, softsign, silu, gelu or gelu_tanh; y may be x. " +
			"slope is leaky_relu's factor for negative inputs, 0.01 (libann's) when None; 0.0 makes it relu. Other kinds ignore it.", fn: cpuActivation},
		{sig: "activation_backward(kind, dx, dy, x, slope = None)", doc: "dx = dy * f'(x), the gradient through activation kind from its input x; dx may be dy. slope as for activation.", fn: cpuActivationBackward},
		{sig: "softmax(y, x)", doc: "y = the softmax of each row of 2-D x (the last axis); y may be x.", fn: cpuSoftmax},
		{sig: "softmax_backward(dx, dy, y)", doc: "dx = the gradient through a row softmax whose output was y.", fn: cpuSoftmaxBackward},
		{sig: "mse(pred, target, grad = None)", doc: "The mean squared error, a float; grad, when given, gets 2 (pred - target) / n.", fn: cpuMSE},
		{sig: "cross_entropy(logits, target, grad = None, probs = False)", doc: "The mean over rows of the categorical cross-entropy of the rows of 2-D logits against target: a tensor of " +
			"probabilities of the same shape, or a list of class indices, one per row. grad, when given, gets the gradient with respect to logits. " +
			"With probs = True the first argument holds probabilities (a softmax output, as libann's loss takes): the loss is -sum(t log p) / rows " +
			"with p floored at 1e-7, and grad gets -t / (p rows).", fn: cpuCrossEntropy},
		{sig: "binary_cross_entropy(pred, target, grad = None, logits = False)", doc: "The mean over all elements of -(t log p + (1 - t) log(1 - p)), a float, for probabilities pred " +
			"(clamped to [1e-7, 1 - 1e-7]) and targets in [0, 1] of the same shape; grad, when given, gets (p - t) / (p (1 - p) n). With logits = True, pred holds logits z " +
			"and p = sigmoid(z), computed stably; grad then gets (sigmoid(z) - t) / n.", fn: cpuBinaryCrossEntropy},
		{sig: "l1(w, lam, grad = None)", doc: "The L1 penalty lam * sum(|w|), a float; grad, when given (the shape of w), gets lam * sign(w) added (0 where w is 0). lam must be >= 0.", fn: cpuRegularize(false)},
		{sig: "l2(w, lam, grad = None)", doc: "The L2 penalty lam / 2 * sum(w^2), a float; grad, when given (the shape of w), gets lam * w added. " +
			"Before an SGD step this is libann's decay w *= 1 - lr * lam. lam must be >= 0.", fn: cpuRegularize(true)},
		{sig: "bias_grad(db, dy)", doc: "db += the column sums of the 2-D [rows, cols] dy (a batch of rows), the gradient of a bias added to every row: db has cols values. Returns db.", fn: cpuBiasGrad},
		{sig: "bias_grad_channels(db, dy)", doc: "db += the sums over positions of the channel-first [C, S] dy (first dim C, the rest S), the gradient of a per-channel bias: db has C values. Returns db.", fn: cpuBiasGradChannels},
		{sig: "clip_value(g, limit)", doc: "Clamps every element of g to [-limit, limit], in place.", fn: cpuClipValue},
		{sig: "global_norm(grads)", doc: "The L2 norm of a list of tensors taken together.", fn: cpuGlobalNorm},
		{sig: "clip_norm(grads, max_norm)", doc: "Scales a list of tensors in place so that their global norm is at most max_norm; returns the norm before clipping.", fn: cpuClipNorm},
	}
}

// channels2D returns C, S of a tensor used as channel-first [C, S]: its first dim and the rest.
func channels2D(t *Tensor) (int, int) { return t.shape[0], len(t.data) / t.shape[0] }

// cpuNorm is the builtin of a column norm (nn.RMSNorm, nn.LayerNorm).
func cpuNorm(norm func(out, x, w []float32, C, S int, eps float32) error) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var out, x, w *Tensor
		eps := number(1e-5)
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "out", &out, "x", &x, "w", &w, "eps?", &eps); err != nil {
			return nil, err
		}
		C, S := channels2D(x)
		if err := sameShapes(b.Name(), x, out); err != nil {
			return nil, err
		}
		if w.Size() != C {
			return nil, nameErrf(b.Name(), "w has %d values, x %s has %d channels", w.Size(), x, C)
		}
		if err := readWrite(b.Name(), []*Tensor{x, w}, out); err != nil {
			return nil, err
		}
		if err := norm(out.data, x.data, w.data, C, S, float32(eps)); err != nil {
			return nil, nameErr(b.Name(), err)
		}
		return out, nil
	}
}

// cpuNormBackward is the builtin of a column norm's backward (nn.RMSNormBackward, nn.LayerNormBackward).
func cpuNormBackward(back func(dx, dw, dy, x, w []float32, C, S int, eps float32) error) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var dx, dw, dy, x, w *Tensor
		eps := number(1e-5)
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dx", &dx, "dw", &dw, "dy", &dy, "x", &x, "w", &w, "eps?", &eps); err != nil {
			return nil, err
		}
		C, S := channels2D(x)
		if err := sameShapes(b.Name(), x, dx, dy); err != nil {
			return nil, err
		}
		if w.Size() != C || dw.Size() != C {
			return nil, nameErrf(b.Name(), "w has %d values and dw %d, x %s has %d channels", w.Size(), dw.Size(), x, C)
		}
		if err := readWrite(b.Name(), []*Tensor{dy, x, w}, dx, dw); err != nil {
			return nil, err
		}
		if err := back(dx.data, dw.data, dy.data, x.data, w.data, C, S, float32(eps)); err != nil {
			return nil, nameErr(b.Name(), err)
		}
		return starlark.None, nil
	}
}

// defaultLeakySlope is leaky_relu's slope when a script gives none, libann's.
const defaultLeakySlope = 0.01

// activation returns the activation kind; slope is leaky_relu's, None (or absent) for the default.
func activation(fn, kind string, slope starlark.Value) (nn.Activation, error) {
	s := float64(defaultLeakySlope)
	if slope != nil && slope != starlark.None {
		f, ok := starlark.AsFloat(slope)
		if !ok {
			return nn.Activation{}, nameErrf(fn, "for parameter slope: got %s, want number or None", slope.Type())
		}
		s = f
	}
	if !strings.EqualFold(kind, "leaky_relu") {
		s = 0
	}
	a, err := nn.ActivationNamed(kind, float32(s))
	if err != nil {
		return a, nameErr(fn, err)
	}
	return a, nil
}

func cpuActivation(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var kind string
	var y, x *Tensor
	var slope starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "kind", &kind, "y", &y, "x", &x, "slope?", &slope); err != nil {
		return nil, err
	}
	a, err := activation(b.Name(), kind, slope)
	if err != nil {
		return nil, err
	}
	if err := sameShapes(b.Name(), x, y); err != nil {
		return nil, err
	}
	if err := readWrite(b.Name(), []*Tensor{x}, y); err != nil {
		return nil, err
	}
	if err := a.Forward(y.data, x.data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return y, nil
}

func cpuActivationBackward(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var kind string
	var dx, dy, x *Tensor
	var slope starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "kind", &kind, "dx", &dx, "dy", &dy, "x", &x, "slope?", &slope); err != nil {
		return nil, err
	}
	a, err := activation(b.Name(), kind, slope)
	if err != nil {
		return nil, err
	}
	if err := sameShapes(b.Name(), x, dx, dy); err != nil {
		return nil, err
	}
	if err := readWrite(b.Name(), []*Tensor{dy, x}, dx); err != nil {
		return nil, err
	}
	if err := a.Backward(dx.data, dy.data, x.data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return dx, nil
}

func rows2D(fn string, t *Tensor) (int, int, error) {
	if len(t.shape) != 2 {
		return 0, 0, nameErrf(fn, "%s is not 2-D", t)
	}
	return t.shape[0], t.shape[1], nil
}

func cpuSoftmax(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var y, x *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "y", &y, "x", &x); err != nil {
		return nil, err
	}
	r, c, err := rows2D(b.Name(), x)
	if err != nil {
		return nil, err
	}
	if err := sameShapes(b.Name(), x, y); err != nil {
		return nil, err
	}
	if err := readWrite(b.Name(), []*Tensor{x}, y); err != nil {
		return nil, err
	}
	if err := nn.Softmax(y.data, x.data, r, c); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return y, nil
}

func cpuSoftmaxBackward(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var dx, dy, y *Tensor
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dx", &dx, "dy", &dy, "y", &y); err != nil {
		return nil, err
	}
	r, c, err := rows2D(b.Name(), y)
	if err != nil {
		return nil, err
	}
	if err := sameShapes(b.Name(), y, dx, dy); err != nil {
		return nil, err
	}
	if err := readWrite(b.Name(), []*Tensor{dy, y}, dx); err != nil {
		return nil, err
	}
	if err := nn.SoftmaxBackward(dx.data, dy.data, y.data, r, c); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return dx, nil
}

// optGrad unpacks an optional gradient output of the shape of like.
func optGrad(fn string, g starlark.Value, like *Tensor) ([]float32, error) {
	if g == nil || g == starlark.None {
		return nil, nil
	}
	t, ok := g.(*Tensor)
	if !ok {
		return nil, nameErrf(fn, "for parameter grad: got %s, want tensor or None", g.Type())
	}
	if err := sameShape(fn, t, like); err != nil {
		return nil, err
	}
	if err := t.writable(fn); err != nil {
		return nil, err
	}
	return t.data, nil
}

// elementwiseLossArgs unpacks (pred, target, grad = None) of mse, with flag = False after them
// when flag is not "" (binary_cross_entropy's logits): pred and target of one shape and
// readable, grad nil or the writable data of a tensor of their shape.
func elementwiseLossArgs(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, flag string) (pred, target *Tensor, g []float32, on bool, err error) {
	var grad starlark.Value
	pairs := []any{"pred", &pred, "target", &target, "grad?", &grad}
	if flag != "" {
		pairs = append(pairs, flag+"?", &on)
	}
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, pairs...); err != nil {
		return nil, nil, nil, false, err
	}
	if err := sameShape(b.Name(), pred, target); err != nil {
		return nil, nil, nil, false, err
	}
	if err := readableAll(b.Name(), pred, target); err != nil {
		return nil, nil, nil, false, err
	}
	if g, err = optGrad(b.Name(), grad, pred); err != nil {
		return nil, nil, nil, false, err
	}
	return pred, target, g, on, nil
}

func cpuMSE(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	pred, target, g, _, err := elementwiseLossArgs(b, args, kwargs, "")
	if err != nil {
		return nil, err
	}
	l, err := nn.MSE(g, pred.data, target.data)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.Float(l), nil
}

// logitsArgs checks a loss's 2-D logits [rows, cols], readable, and its optional gradient output.
func logitsArgs(fn string, logits *Tensor, grad starlark.Value) (rows, cols int, g []float32, err error) {
	if rows, cols, err = rows2D(fn, logits); err != nil {
		return 0, 0, nil, err
	}
	if err := logits.readable(fn); err != nil {
		return 0, 0, nil, err
	}
	g, err = optGrad(fn, grad, logits)
	return rows, cols, g, err
}

func cpuCrossEntropy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var logits *Tensor
	var target, grad starlark.Value
	probs := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "logits", &logits, "target", &target, "grad?", &grad, "probs?", &probs); err != nil {
		return nil, err
	}
	r, c, g, err := logitsArgs(b.Name(), logits, grad)
	if err != nil {
		return nil, err
	}
	var l float32
	switch t := target.(type) {
	case *Tensor:
		if err := sameShape(b.Name(), t, logits); err != nil {
			return nil, err
		}
		if err := t.readable(b.Name()); err != nil {
			return nil, err
		}
		if probs {
			l, err = nn.CrossEntropyProbs(g, logits.data, t.data, r, c)
		} else {
			l, err = nn.CrossEntropyLogits(g, logits.data, t.data, r, c)
		}
	case *starlark.List, starlark.Tuple:
		var labels shapeArg
		if err := labels.Unpack(t); err != nil {
			return nil, nameErrf(b.Name(), "target: %w", err)
		}
		if len(labels) != r {
			return nil, nameErrf(b.Name(), "%d labels for %d rows", len(labels), r)
		}
		if probs {
			var hot []float32
			if hot, err = oneHot(b.Name(), labels, c); err != nil {
				return nil, err
			}
			l, err = nn.CrossEntropyProbs(g, logits.data, hot, r, c)
		} else {
			l, err = nn.CrossEntropyLabels(g, logits.data, labels, r, c)
		}
	default:
		return nil, nameErrf(b.Name(), "for parameter target: got %s, want tensor or list of class indices", target.Type())
	}
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.Float(l), nil
}

// oneHot returns the [len(labels), cols] one-hot rows of class indices, each in [0, cols).
func oneHot(fn string, labels []int, cols int) ([]float32, error) {
	hot := make([]float32, len(labels)*cols)
	for r, l := range labels {
		if l < 0 || l >= cols {
			return nil, nameErrf(fn, "labels[%d] = %d out of range [0, %d)", r, l, cols)
		}
		hot[r*cols+l] = 1
	}
	return hot, nil
}

func cpuBinaryCrossEntropy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	pred, target, g, logits, err := elementwiseLossArgs(b, args, kwargs, "logits")
	if err != nil {
		return nil, err
	}
	var l float32
	if logits {
		l, err = nn.BinaryCrossEntropyLogits(g, pred.data, target.data)
	} else {
		l, err = nn.BinaryCrossEntropy(g, pred.data, target.data)
	}
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.Float(l), nil
}

// cpuRegularize is cpu.l2 (when l2) or cpu.l1: the penalty of w, and its gradient added to grad.
func cpuRegularize(l2 bool) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var w *Tensor
		var lam number
		var grad starlark.Value
		if err := starlark.UnpackArgs(b.Name(), args, kwargs, "w", &w, "lam", &lam, "grad?", &grad); err != nil {
			return nil, err
		}
		if !(lam >= 0) || math.IsInf(float64(lam), 1) {
			return nil, nameErrf(b.Name(), "lam = %g, want a finite number >= 0", float64(lam))
		}
		if err := w.readable(b.Name()); err != nil {
			return nil, err
		}
		g, err := optGrad(b.Name(), grad, w)
		if err != nil {
			return nil, err
		}
		var pen float64
		if l2 {
			pen = nn.L2Penalty(w.data, float32(lam))
			if g != nil {
				err = nn.AddL2Grad(g, w.data, float32(lam))
			}
		} else {
			pen = nn.L1Penalty(w.data, float32(lam))
			if g != nil {
				err = nn.AddL1Grad(g, w.data, float32(lam))
			}
		}
		if err != nil {
			return nil, nameErr(b.Name(), err)
		}
		return starlark.Float(pen), nil
	}
}

// biasGradArgs unpacks db and dy, checks that db may be changed, dy read, and that they do not overlap.
func biasGradArgs(fn string, args starlark.Tuple, kwargs []starlark.Tuple) (db, dy *Tensor, err error) {
	if err := starlark.UnpackArgs(fn, args, kwargs, "db", &db, "dy", &dy); err != nil {
		return nil, nil, err
	}
	if db.st == dy.st {
		return nil, nil, nameErrf(fn, "db shares storage with dy")
	}
	if err := dy.readable(fn); err != nil {
		return nil, nil, err
	}
	if err := db.writable(fn); err != nil {
		return nil, nil, err
	}
	return db, dy, nil
}

func cpuBiasGrad(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	db, dy, err := biasGradArgs(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	r, c, err := rows2D(b.Name(), dy)
	if err != nil {
		return nil, err
	}
	if db.Size() != c {
		return nil, nameErrf(b.Name(), "db %s has %d values, dy %s has %d columns", db, db.Size(), dy, c)
	}
	if err := nn.BiasGrad(db.data, dy.data, r, c); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return db, nil
}

func cpuBiasGradChannels(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	db, dy, err := biasGradArgs(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	C, S := channels2D(dy)
	if db.Size() != C {
		return nil, nameErrf(b.Name(), "db %s has %d values, dy %s has %d channels", db, db.Size(), dy, C)
	}
	if err := nn.BiasGradChannels(db.data, dy.data, C, S); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return db, nil
}

func cpuClipValue(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var g *Tensor
	var limit number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "g", &g, "limit", &limit); err != nil {
		return nil, err
	}
	if err := g.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := nn.ClipByValue(g.data, float32(limit)); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return g, nil
}

func gradSlices(fn string, v starlark.Value, write bool) ([][]float32, error) {
	ts, err := tensorList(fn, "grads", v)
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(ts))
	for i, t := range ts {
		if write {
			err = t.writable(fn)
		} else {
			err = t.readable(fn)
		}
		if err != nil {
			return nil, err
		}
		out[i] = t.data
	}
	return out, nil
}

// readSlices unpacks the one argument name, a list of tensors, and returns their data to be read.
func readSlices(b *starlark.Builtin, name string, args starlark.Tuple, kwargs []starlark.Tuple) ([][]float32, error) {
	var v starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, name, &v); err != nil {
		return nil, err
	}
	return gradSlices(b.Name(), v, false)
}

func cpuGlobalNorm(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	gs, err := readSlices(b, "grads", args, kwargs)
	if err != nil {
		return nil, err
	}
	return starlark.Float(nn.GlobalNorm(gs...)), nil
}

func cpuClipNorm(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var grads starlark.Value
	var maxNorm number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "grads", &grads, "max_norm", &maxNorm); err != nil {
		return nil, err
	}
	gs, err := gradSlices(b.Name(), grads, true)
	if err != nil {
		return nil, err
	}
	n, err := nn.ClipByGlobalNorm(float32(maxNorm), gs...)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.Float(n), nil
}
