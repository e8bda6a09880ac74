package emulator

import (
	"fmt"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/half"
	"github.com/anestar/anestar/mil"
)

// Surface transfers convert between a surface's bytes and float32 tensor buffers directly, in pieces
// spread over the worker pool, with the vectorised fp16 conversions of package half. An output that is
// a concat of whole blocks (concat along the first axis of size above one, the channels of a
// [1, C, 1, S] result) is written from its parts: the concat itself never runs.

// ioGrain is the number of elements one transfer piece converts.
const ioGrain = 1 << 15

// ioPiece is one run of values between a tensor buffer and a surface: elements data, at byte offset
// off of the surface.
type ioPiece struct {
	data []float32 // the tensor's values
	off  int       // byte offset in the surface
}

// transfer moves the values of a list of pieces between one surface and its tensors.
type transfer struct {
	surf   *ane.Surface
	fp16   bool      // surface dtype: fp16, else fp32
	pieces []ioPiece // at most ioGrain elements each
	values int       // elements in all pieces
	buf    []byte    // the surface's bytes during a transfer
	read   bool      // surface to tensors (an input), else tensors to surface
	round  bool      // round what is read to fp16 (newInputTransfer)
	body   func(lo, hi int)
}

// newInputTransfer prepares the transfer of input surface s into its tensor t, rounding the values to
// fp16 as they arrive when t's only reader is a cast to fp16 (castOp then shares t's buffer): one pass
// over the values, in pieces that are still in cache, where a copy and the cast's pass were two.
func newInputTransfer(s *ane.Surface, t *tensor) *transfer {
	x := newTransfer(s, []ioPiece{{data: t.data}}, true)
	x.round = t.roundIn
	return x
}

// newTransfer prepares the transfer of segs (tensor buffers at byte offsets) to or from s.
func newTransfer(s *ane.Surface, segs []ioPiece, read bool) *transfer {
	t := &transfer{surf: s, fp16: s.Type().DType == mil.FP16, read: read}
	for _, sg := range segs {
		es := 4
		if t.fp16 {
			es = 2
		}
		for lo := 0; lo < len(sg.data); lo += ioGrain {
			hi := min(lo+ioGrain, len(sg.data))
			t.pieces = append(t.pieces, ioPiece{data: sg.data[lo:hi], off: sg.off + lo*es})
		}
		t.values += len(sg.data)
	}
	t.body = func(lo, hi int) {
		for _, p := range t.pieces[lo:hi] {
			t.move(p)
		}
	}
	return t
}

// move converts one piece (and rounds it, for an input read by a cast to fp16 alone).
func (t *transfer) move(p ioPiece) {
	switch {
	case t.round && !t.fp16:
		half.DecodeF32RoundF16To(p.data, t.buf[p.off:p.off+4*len(p.data)])
	case t.round:
		t.convert(p)
		half.RoundF16To(p.data, p.data)
	default:
		t.convert(p)
	}
}

// convert moves one piece's values.
func (t *transfer) convert(p ioPiece) {
	if t.fp16 {
		b := t.buf[p.off : p.off+2*len(p.data)]
		if t.read {
			half.DecodeF16To(p.data, b)
		} else {
			half.EncodeF16To(b, p.data)
		}
		return
	}
	b := t.buf[p.off : p.off+4*len(p.data)]
	if t.read {
		half.DecodeF32To(p.data, b)
	} else {
		half.EncodeF32To(b, p.data)
	}
}

// run does the transfer.
func (t *transfer) run() error {
	mem := t.surf.Memory()
	if err := mem.Lock(t.read); err != nil {
		return fmt.Errorf("surface %q: lock: %w", t.surf.Name(), err)
	}
	t.buf = mem.Bytes()
	var err error
	if len(t.buf) != t.surf.Bytes() {
		err = fmt.Errorf("surface %q: memory holds %d bytes, want %d", t.surf.Name(), len(t.buf), t.surf.Bytes())
	} else if t.values < 4*ioGrain {
		// a few small pieces (a stacked output's parts, a small model's cache): handing them to
		// helpers costs more than converting them here (waking one took 6 us of the caller's time on
		// a VM, where converting 80K values took 6.5 us)
		t.body(0, len(t.pieces))
	} else {
		parallel(len(t.pieces), 1, t.body)
	}
	t.buf = nil
	if uerr := mem.Unlock(t.read); uerr != nil && err == nil {
		err = fmt.Errorf("surface %q: unlock: %w", t.surf.Name(), uerr)
	}
	return err
}
