package builtins

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
)

// rng is the run's seeded random number generator. Its whole state is a PCG's two words, so a
// checkpoint can save it as a short string and a resumed run continues the same sequence exactly.
type rng struct {
	src *rand.PCG
	r   *rand.Rand
}

func newRNG(seed uint64) *rng {
	src := rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	return &rng{src: src, r: rand.New(src)}
}

// state returns the generator state as a hex string.
func (g *rng) state() string {
	b, err := g.src.MarshalBinary()
	if err != nil { // PCG's MarshalBinary cannot fail
		panic(err)
	}
	return hex.EncodeToString(b)
}

// setState restores a state returned by state.
func (g *rng) setState(s string) error {
	b, err := hex.DecodeString(s)
	if err == nil {
		err = g.src.UnmarshalBinary(b)
	}
	if err != nil {
		return fmt.Errorf("not a random generator state: %q", s)
	}
	return nil
}

// uniform fills d with values uniform in [lo, hi).
func (g *rng) uniform(d []float32, lo, hi float64) {
	for i := range d {
		d[i] = float32(lo + (hi-lo)*g.r.Float64())
	}
}

// dropoutMask fills d with 0 where a uniform draw falls below p, else 1/(1-p).
func (g *rng) dropoutMask(d []float32, p float64) {
	keep := float32(1 / (1 - p))
	for i := range d {
		if g.r.Float64() < p {
			d[i] = 0
		} else {
			d[i] = keep
		}
	}
}

// normal fills d with normally distributed values.
func (g *rng) normal(d []float32, mean, std float64) {
	for i := range d {
		d[i] = float32(mean + std*g.r.NormFloat64())
	}
}
