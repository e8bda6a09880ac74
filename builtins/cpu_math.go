package builtins

import (
	"fmt"

	"github.com/anestar/anestar/cpu"
	"go.starlark.net/starlark"
)

// cpuMathFns are the host math builtins of the cpu module.
func (s *session) cpuMathFns() []fnDef {
	return []fnDef{
		{sig: "rmsnorm(out, x, w, eps = 1e-5)", doc: "out = w * x / rms(x) per column of the channel-first [C, S] x, w of C values; out may be x.", fn: cpuRMSNorm},
		{sig: "rmsnorm_backward(dx, dw, dy, x, w, eps = 1e-5)", doc: "The gradients of rmsnorm: dx is set, dw (C values) is accumulated into.", fn: cpuRMSNormBackward},
		{sig: "activation(kind, y, x, slope = 0.0)", doc: "y = f(x) elementwise for kind identity, sigmoid, relu, leaky_relu (slope), tanh, softsign, silu, gelu or gelu_tanh; y may be x.", fn: cpuActivation},
		{sig: "activation_backward(kind, dx, dy, x, slope = 0.0)", doc: "dx = dy * f'(x), the gradient through activation kind from its input x; dx may be dy.", fn: cpuActivationBackward},
		{sig: "softmax(y, x)", doc: "y = the softmax of each row of 2-D x (the last axis); y may be x.", fn: cpuSoftmax},
		{sig: "softmax_backward(dx, dy, y)", doc: "dx = the gradient through a row softmax whose output was y.", fn: cpuSoftmaxBackward},
		{sig: "mse(pred, target, grad = None)", doc: "The mean squared error, a float; grad, when given, gets 2 (pred - target) / n.", fn: cpuMSE},
		{sig: "cross_entropy(logits, target, grad = None)", doc: "The mean cross-entropy of the rows of 2-D logits against target: a tensor of " +
			"probabilities of the same shape, or a list of class indices, one per row. grad, when given, gets the gradient with respect to logits.", fn: cpuCrossEntropy},
		{sig: "clip_value(g, limit)", doc: "Clamps every element of g to [-limit, limit], in place.", fn: cpuClipValue},
		{sig: "global_norm(grads)", doc: "The L2 norm of a list of tensors taken together.", fn: cpuGlobalNorm},
		{sig: "clip_norm(grads, max_norm)", doc: "Scales a list of tensors in place so that their global norm is at most max_norm; returns the norm before clipping.", fn: cpuClipNorm},
	}
}

// channels2D returns C, S of a tensor used as channel-first [C, S]: its first dim and the rest.
func channels2D(t *Tensor) (int, int) { return t.shape[0], len(t.data) / t.shape[0] }

func cpuRMSNorm(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var out, x, w *Tensor
	eps := number(1e-5)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "out", &out, "x", &x, "w", &w, "eps?", &eps); err != nil {
		return nil, err
	}
	C, S := channels2D(x)
	if err := sameShape(b.Name(), out, x); err != nil {
		return nil, err
	}
	if w.Size() != C {
		return nil, fmt.Errorf("%s: w has %d values, x %s has %d channels", b.Name(), w.Size(), x, C)
	}
	if err := readableAll(b.Name(), x, w); err != nil {
		return nil, err
	}
	if err := out.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := cpu.RMSNorm(out.data, x.data, w.data, C, S, float32(eps)); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return out, nil
}

func cpuRMSNormBackward(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var dx, dw, dy, x, w *Tensor
	eps := number(1e-5)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "dx", &dx, "dw", &dw, "dy", &dy, "x", &x, "w", &w, "eps?", &eps); err != nil {
		return nil, err
	}
	C, S := channels2D(x)
	for _, t := range []*Tensor{dx, dy} {
		if err := sameShape(b.Name(), t, x); err != nil {
			return nil, err
		}
	}
	if w.Size() != C || dw.Size() != C {
		return nil, fmt.Errorf("%s: w has %d values and dw %d, x %s has %d channels", b.Name(), w.Size(), dw.Size(), x, C)
	}
	if err := readableAll(b.Name(), dy, x, w); err != nil {
		return nil, err
	}
	if err := writableAll(b.Name(), dx, dw); err != nil {
		return nil, err
	}
	if err := cpu.RMSNormBackward(dx.data, dw.data, dy.data, x.data, w.data, C, S, float32(eps)); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.None, nil
}

func activation(fn, kind string, slope number) (cpu.Activation, error) {
	a, err := cpu.ActivationNamed(kind, float32(slope))
	if err != nil {
		return a, fmt.Errorf("%s: %v", fn, err)
	}
	return a, nil
}

func cpuActivation(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var kind string
	var y, x *Tensor
	var slope number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "kind", &kind, "y", &y, "x", &x, "slope?", &slope); err != nil {
		return nil, err
	}
	a, err := activation(b.Name(), kind, slope)
	if err != nil {
		return nil, err
	}
	if err := sameShape(b.Name(), y, x); err != nil {
		return nil, err
	}
	if err := x.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := y.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := a.Forward(y.data, x.data); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return y, nil
}

func cpuActivationBackward(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var kind string
	var dx, dy, x *Tensor
	var slope number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "kind", &kind, "dx", &dx, "dy", &dy, "x", &x, "slope?", &slope); err != nil {
		return nil, err
	}
	a, err := activation(b.Name(), kind, slope)
	if err != nil {
		return nil, err
	}
	for _, t := range []*Tensor{dx, dy} {
		if err := sameShape(b.Name(), t, x); err != nil {
			return nil, err
		}
	}
	if err := readableAll(b.Name(), dy, x); err != nil {
		return nil, err
	}
	if err := dx.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := a.Backward(dx.data, dy.data, x.data); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return dx, nil
}

func rows2D(fn string, t *Tensor) (int, int, error) {
	if len(t.shape) != 2 {
		return 0, 0, fmt.Errorf("%s: %s is not 2-D", fn, t)
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
	if err := sameShape(b.Name(), y, x); err != nil {
		return nil, err
	}
	if err := x.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := y.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := cpu.Softmax(y.data, x.data, r, c); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
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
	for _, t := range []*Tensor{dx, dy} {
		if err := sameShape(b.Name(), t, y); err != nil {
			return nil, err
		}
	}
	if err := readableAll(b.Name(), dy, y); err != nil {
		return nil, err
	}
	if err := dx.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := cpu.SoftmaxBackward(dx.data, dy.data, y.data, r, c); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
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
		return nil, fmt.Errorf("%s: for parameter grad: got %s, want tensor or None", fn, g.Type())
	}
	if err := sameShape(fn, t, like); err != nil {
		return nil, err
	}
	if err := t.writable(fn); err != nil {
		return nil, err
	}
	return t.data, nil
}

func cpuMSE(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pred, target *Tensor
	var grad starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pred", &pred, "target", &target, "grad?", &grad); err != nil {
		return nil, err
	}
	if err := sameShape(b.Name(), pred, target); err != nil {
		return nil, err
	}
	if err := readableAll(b.Name(), pred, target); err != nil {
		return nil, err
	}
	g, err := optGrad(b.Name(), grad, pred)
	if err != nil {
		return nil, err
	}
	l, err := cpu.MSE(g, pred.data, target.data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.Float(l), nil
}

func cpuCrossEntropy(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var logits *Tensor
	var target, grad starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "logits", &logits, "target", &target, "grad?", &grad); err != nil {
		return nil, err
	}
	r, c, err := rows2D(b.Name(), logits)
	if err != nil {
		return nil, err
	}
	if err := logits.readable(b.Name()); err != nil {
		return nil, err
	}
	g, err := optGrad(b.Name(), grad, logits)
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
		l, err = cpu.CrossEntropyLogits(g, logits.data, t.data, r, c)
	case *starlark.List, starlark.Tuple:
		var labels shapeArg
		if err := labels.Unpack(t); err != nil {
			return nil, fmt.Errorf("%s: target: %v", b.Name(), err)
		}
		if len(labels) != r {
			return nil, fmt.Errorf("%s: %d labels for %d rows", b.Name(), len(labels), r)
		}
		l, err = cpu.CrossEntropyLabels(g, logits.data, labels, r, c)
	default:
		return nil, fmt.Errorf("%s: for parameter target: got %s, want tensor or list of class indices", b.Name(), target.Type())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.Float(l), nil
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
	if err := cpu.ClipByValue(g.data, float32(limit)); err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
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

func cpuGlobalNorm(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var grads starlark.Value
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "grads", &grads); err != nil {
		return nil, err
	}
	gs, err := gradSlices(b.Name(), grads, false)
	if err != nil {
		return nil, err
	}
	return starlark.Float(cpu.GlobalNorm(gs...)), nil
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
	n, err := cpu.ClipByGlobalNorm(float32(maxNorm), gs...)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", b.Name(), err)
	}
	return starlark.Float(n), nil
}
