package builtins

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/anestar/anestar/internal/par"
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

// dropoutMask fills d with 0 where a uniform draw falls below p, else 1/(1-p). Draws are 32 bits, two
// per 64-bit output. Each block of maskBlock elements draws from its own PCG, seeded by one word of g
// taken in block order, so that the blocks fill on all cores with the same result on any number of
// them (a mask is millions of draws per training step).
func (g *rng) dropoutMask(d []float32, p float64) {
	keep := float32(1 / (1 - p))
	thr := uint64(math.Ldexp(p, 32)) // a 32-bit draw u drops its element when u < p * 2^32
	seeds := make([]uint64, (len(d)+maskBlock-1)/maskBlock)
	for i := range seeds {
		seeds[i] = g.r.Uint64()
	}
	kb := math.Float32bits(keep)
	pick := func(u uint64) float32 { // without a branch: a tenth of the draws would mispredict
		drop := uint32((int64(u) - int64(thr)) >> 63) // all ones when u < thr (both below 2^33)
		return math.Float32frombits(kb &^ drop)
	}
	par.For(len(seeds), 1, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			src := rand.NewPCG(seeds[b], maskStream)
			blk := d[b*maskBlock : min((b+1)*maskBlock, len(d))]
			i := 0
			for ; i+1 < len(blk); i += 2 {
				u := src.Uint64()
				blk[i], blk[i+1] = pick(u&0xffffffff), pick(u>>32)
			}
			if i < len(blk) {
				blk[i] = pick(src.Uint64() & 0xffffffff)
			}
		}
	})
}

// maskBlock is the number of mask elements one seeded generator fills; maskStream the second word of
// its PCG state.
const (
	maskBlock  = 1 << 14
	maskStream = 0x6a09e667f3bcc909
)

// normal fills d with normally distributed values.
func (g *rng) normal(d []float32, mean, std float64) {
	for i := range d {
		d[i] = float32(mean + std*g.r.NormFloat64())
	}
}
