package nn

import (
	"fmt"
	"math"
	"strings"

	"github.com/anestar/anestar/internal/par"
)

// Activation is an elementwise function with its derivative. The zero
// value is not usable; get one from the package variables, LeakyReLU, or
// ActivationNamed.
type Activation struct {
	name string
	f    func(x float32) float32 // the function
	df   func(x float32) float32 // its derivative at x
}

// The activations with no parameter.
var (
	Identity = Activation{"identity", func(x float32) float32 { return x }, func(float32) float32 { return 1 }}
	Sigmoid  = Activation{"sigmoid", sigmoid, func(x float32) float32 { s := sigmoid(x); return s * (1 - s) }}
	ReLU     = LeakyReLU(0)
	Tanh     = Activation{"tanh", tanh32, func(x float32) float32 { t := tanh32(x); return 1 - t*t }}
	Softsign = Activation{"softsign", softsign, func(x float32) float32 { d := 1 + abs32(x); return 1 / (d * d) }}
	SiLU     = Activation{"silu", silu, siluGrad}
	GELU     = Activation{"gelu", gelu, geluGrad}
	GELUTanh = Activation{"gelu_tanh", geluTanh, geluTanhGrad}
)

// LeakyReLU returns x for x > 0 and slope*x otherwise (ReLU for slope 0;
// the reference library's leaky_relu uses 0.01). At 0 the derivative is
// taken as slope.
func LeakyReLU(slope float32) Activation {
	name := "relu"
	if slope != 0 {
		name = "leaky_relu"
	}
	return Activation{
		name,
		func(x float32) float32 {
			if x > 0 {
				return x
			}
			return slope * x
		},
		func(x float32) float32 {
			if x > 0 {
				return 1
			}
			return slope
		},
	}
}

// ActivationNamed returns the activation called name: identity, sigmoid,
// relu, leaky_relu (with slope), tanh, softsign, silu, gelu or gelu_tanh.
func ActivationNamed(name string, slope float32) (Activation, error) {
	switch strings.ToLower(name) {
	case "leaky_relu":
		return LeakyReLU(slope), nil
	case "relu":
		return ReLU, nil
	}
	for _, a := range []Activation{Identity, Sigmoid, Tanh, Softsign, SiLU, GELU, GELUTanh} {
		if a.name == strings.ToLower(name) {
			return a, nil
		}
	}
	return Activation{}, fmt.Errorf("cpu: unknown activation %q (want identity, sigmoid, relu, leaky_relu, tanh, softsign, silu, gelu or gelu_tanh)", name)
}

// Name returns the activation's name as ActivationNamed spells it.
func (a Activation) Name() string { return a.name }

// elemGrain is the number of elements below which elementwise work stays
// on one goroutine.
const elemGrain = 1 << 14

// Forward sets y[i] = f(x[i]) for every element of x; y may alias x.
func (a Activation) Forward(y, x []float32) error {
	if a.f == nil {
		return fmt.Errorf("nn.Activation.Forward: zero Activation")
	}
	if len(y) < len(x) {
		return fmt.Errorf("nn.Activation.Forward (%s): y has %d elements, need %d", a.name, len(y), len(x))
	}
	par.Grained(len(x), elemGrain, func(lo, hi int) {
		yr := y[lo:hi]
		for i, v := range x[lo:hi] {
			yr[i] = a.f(v)
		}
	})
	return nil
}

// Backward sets dx[i] = dy[i] * f'(x[i]), the gradient through the
// activation, from its input x; dx may alias dy.
func (a Activation) Backward(dx, dy, x []float32) error {
	if a.df == nil {
		return fmt.Errorf("nn.Activation.Backward: zero Activation")
	}
	if len(dy) < len(x) || len(dx) < len(x) {
		return fmt.Errorf("nn.Activation.Backward (%s): dx has %d and dy %d elements, need %d", a.name, len(dx), len(dy), len(x))
	}
	par.Grained(len(x), elemGrain, func(lo, hi int) {
		dxr, dyr := dx[lo:hi], dy[lo:hi]
		for i, v := range x[lo:hi] {
			dxr[i] = dyr[i] * a.df(v)
		}
	})
	return nil
}

// Apply returns f(x) for one value.
func (a Activation) Apply(x float32) float32 { return a.f(x) }

// Derivative returns f'(x) for one value.
func (a Activation) Derivative(x float32) float32 { return a.df(x) }

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// sigmoid is 1/(1+e^-x), written so that neither branch overflows.
func sigmoid(x float32) float32 {
	if x >= 0 {
		return float32(1 / (1 + math.Exp(-float64(x))))
	}
	e := math.Exp(float64(x))
	return float32(e / (1 + e))
}

func tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }

func softsign(x float32) float32 { return x / (1 + abs32(x)) }

// silu is x*sigmoid(x) (also called swish), the FFN gate of the reference.
func silu(x float32) float32 { return x * sigmoid(x) }

func siluGrad(x float32) float32 {
	s := sigmoid(x)
	return s * (1 + x*(1-s))
}

// gelu is x*Phi(x) with Phi the standard normal CDF.
func gelu(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
}

func geluGrad(x float32) float32 {
	v := float64(x)
	cdf := 0.5 * (1 + math.Erf(v/math.Sqrt2))
	pdf := math.Exp(-0.5*v*v) / math.Sqrt(2*math.Pi)
	return float32(cdf + v*pdf)
}

// Constants of the tanh approximation of GELU.
const (
	geluC = 0.7978845608028654 // sqrt(2/pi)
	geluA = 0.044715
)

// geluTanh is 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x^3))).
func geluTanh(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Tanh(geluC*(v+geluA*v*v*v))))
}

func geluTanhGrad(x float32) float32 {
	v := float64(x)
	t := math.Tanh(geluC * (v + geluA*v*v*v))
	return float32(0.5*(1+t) + 0.5*v*(1-t*t)*geluC*(1+3*geluA*v*v))
}
