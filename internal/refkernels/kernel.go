package refkernels

import (
	"fmt"
	"math"

	"github.com/anestar/anestar/internal/transpose"
	"github.com/anestar/anestar/mil"
)

// Config sizes one transformer layer.
type Config struct {
	Dim    int // model width
	Hidden int // FFN width
	Heads  int // attention heads; Dim must divide by Heads
	Seq    int // sequence length (the spatial size of every surface)
}

// Reference is the size train_large.m trains: dim 768, hidden 2048, 12 heads, seq 512.
func Reference() Config { return Config{Dim: 768, Hidden: 2048, Heads: 12, Seq: 512} }

// HeadDim is Dim / Heads.
func (c Config) HeadDim() int { return c.Dim / c.Heads }

// ScoreCh is the channel count of flattened attention scores [Heads, Seq, Seq] → [Heads*Seq, Seq].
func (c Config) ScoreCh() int { return c.Heads * c.Seq }

// Validate checks that the sizes are positive and that Dim divides by Heads.
func (c Config) Validate() error {
	if c.Dim <= 0 || c.Hidden <= 0 || c.Heads <= 0 || c.Seq <= 0 {
		return fmt.Errorf("refkernels: sizes must be positive: %+v", c)
	}
	if c.Dim%c.Heads != 0 {
		return fmt.Errorf("refkernels: dim %d does not divide by %d heads", c.Dim, c.Heads)
	}
	return nil
}

// Segment is one tensor within a surface: Size channels (or spatial positions) starting at Offset.
type Segment struct {
	Name   string // what the tensor is, e.g. "q" or "wq"
	Offset int    // first channel (Axis 1) or spatial position (Axis 3)
	Size   int    // number of channels or positions
}

// Layout describes a kernel's input or output surface, [1, Channels, 1, Spatial] of DType.
type Layout struct {
	Channels int       // C
	Spatial  int       // S
	DType    mil.DType // fp16 or fp32
	Axis     int       // 1: Segments are channel ranges; 3: spatial ranges
	Segments []Segment // the tensors, in order, covering the axis
}

// Segment returns the segment called name.
func (l Layout) Segment(name string) (Segment, bool) {
	for _, s := range l.Segments {
		if s.Name == name {
			return s, true
		}
	}
	return Segment{}, false
}

// Kernel is one generated kernel.
type Kernel struct {
	Name    string // the reference generator's name without "gen_", e.g. "sdpa_fwd_taps"
	Program *mil.Program
	Weights mil.Weights // weight files of its BLOBFILE consts (the causal mask, baked weights)
	In      Layout      // the input surface, main's parameter x
	Out     Layout      // the output surface, main's result
}

// layout builds a Layout from names and sizes laid out in order along axis.
func layout(dt mil.DType, axis, other int, parts ...any) Layout {
	l := Layout{DType: dt, Axis: axis}
	off := 0
	for i := 0; i+1 < len(parts); i += 2 {
		n := parts[i+1].(int)
		l.Segments = append(l.Segments, Segment{Name: parts[i].(string), Offset: off, Size: n})
		off += n
	}
	if axis == 1 {
		l.Channels, l.Spatial = off, other
	} else {
		l.Channels, l.Spatial = other, off
	}
	return l
}

// gen holds what every generator needs: the builder and the sizes.
type gen struct {
	*mil.Builder
	c Config
}

func newGen(c Config) (*gen, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &gen{Builder: mil.NewBuilder(), c: c}, nil
}

// as sets the op name of v where the reference names an op differently from its result.
func (g *gen) as(v *mil.Var, opName string) *mil.Var {
	g.SetOpName(v, opName)
	return v
}

// finish builds the program and checks that its surfaces match the layouts.
func (g *gen) finish(name string, in, out Layout) (*Kernel, error) {
	p, w, err := g.Build()
	if err != nil {
		return nil, fmt.Errorf("refkernels: %s: %w", name, err)
	}
	f := p.Funcs[0]
	if len(f.Inputs) != 1 || len(f.Outputs) != 1 {
		return nil, fmt.Errorf("refkernels: %s: want one input and one output", name)
	}
	check := func(what string, t mil.Type, l Layout) error {
		if !t.Equal(mil.Tensor(l.DType, 1, l.Channels, 1, l.Spatial)) {
			return fmt.Errorf("refkernels: %s: %s has type %s, layout says [1, %d, 1, %d] %s", name, what, t, l.Channels, l.Spatial, l.DType)
		}
		return nil
	}
	if err := check("input", f.Inputs[0].Type, in); err != nil {
		return nil, err
	}
	var outT mil.Type
	for _, op := range f.Ops {
		for _, r := range op.Results {
			if r.Name == f.Outputs[0].Name {
				outT = r.Type
			}
		}
	}
	if err := check("output", outT, out); err != nil {
		return nil, err
	}
	return &Kernel{Name: name, Program: p, Weights: w, In: in, Out: out}, nil
}

// weightPath is the reference's weight file for a short name: "@model_path/weights/NAME.bin".
func weightPath(name string) string { return mil.WeightPath(name) }

// CausalMask returns the [Seq, Seq] additive mask of the reference: 0 where key t2 <= query t, else -65504
// (the most negative fp16), row-major by query.
func CausalMask(seq int) []float32 {
	m := make([]float32, seq*seq)
	for t := range seq {
		for t2 := t + 1; t2 < seq; t2++ {
			m[t*seq+t2] = -65504
		}
	}
	return m
}

// Transpose returns the [cols, rows] transpose of the row-major [rows, cols] matrix w.
func Transpose(w []float32, rows, cols int) []float32 {
	if len(w) != rows*cols {
		return nil // the builder then reports the size mismatch at the weight
	}
	out := make([]float32, len(w))
	transpose.Transpose(out, rows, w, cols, rows, cols)
	return out
}

// scale is the attention scale 1/sqrt(HeadDim).
func (c Config) scale() float64 { return 1 / math.Sqrt(float64(c.HeadDim())) }
