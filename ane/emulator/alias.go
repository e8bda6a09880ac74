package emulator

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/mil"
)

// Inputs read in place. An fp32 surface holds float32 values as they are (little-endian hosts), so in
// FP32 numerics an fp32 input's tensor is the surface's memory itself: no copy per Eval (the Eval's
// transfer only takes the memory's lock), which saved 4-9% of a language model's fp32 training step. The
// plan then reads its binding's surface, so each binding of such a kernel has a plan of its own (Bind
// compiles it for the binding's surfaces, with the kernel's constants); scratch stays shared as
// before. Outputs are still copied from the plan's buffers: computing them straight into their
// surfaces measured no faster (the producers' stores then go to memory that is not in cache).

// given is what a compile is given for a binding: the surfaces it reads and writes, and constants
// already decoded.
type given struct {
	ins, outs []*ane.Surface
	consts    map[string]*tensor
}

// constant returns the constant named name that g gives.
func (g *given) constant(name string) (*tensor, bool) {
	if g == nil {
		return nil, false
	}
	t, ok := g.consts[name]
	return t, ok
}

// surface returns input (in) or output i of the kernel being compiled: the given one, which must be
// of type t, or a new one.
func (c *compiler) surface(i int, in bool, name string, t mil.Type) (*ane.Surface, error) {
	t = c.portType(t)
	if c.given == nil {
		return c.newSurface(name, t)
	}
	ss := c.given.outs
	if in {
		ss = c.given.ins
	}
	if i >= len(ss) || !ss[i].Type().Equal(t) {
		return nil, fmt.Errorf("the binding's surface %d is not of type %s", i, t)
	}
	return ss[i], nil
}

// portType is the type of the surface of a port of type t: t, but in FP32 numerics an fp16 port is an
// fp32 surface, so that nothing rounds the values it carries (the numerics' promise, I/O included: an
// fp16 port's values are the fp32 ones written, as the program's own fp16 values are).
func (c *compiler) portType(t mil.Type) mil.Type {
	if c.opts.Numerics == FP32 && t.DType == mil.FP16 {
		return mil.Tensor(mil.FP32, t.Shape...)
	}
	return t
}

// aliasInput returns the values of input surface s when the plan reads them in place: FP32 numerics
// (a plain plan copies every input), an fp32 surface of heap memory, 4-byte aligned, on a
// little-endian host. Otherwise nil.
func (c *compiler) aliasInput(s *ane.Surface) []float32 {
	if c.opts.Numerics != FP32 || c.noFuse {
		return nil
	}
	m, ok := s.Memory().(*ane.HeapMemory)
	if !ok || s.Type().DType != mil.FP32 || binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return nil
	}
	b := m.Bytes()
	if len(b) < 4 || len(b) != s.Bytes() || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}
