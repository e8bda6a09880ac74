package ckpt

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// SaveLlama2 writes m to path as a llama2.c file of the given version (0, the only one
// llama2.c's run.c reads, or 1), atomically as Save writes.
func SaveLlama2(path string, m *Llama2Model, version int) error {
	if err := m.checkWrite(version); err != nil {
		return fmt.Errorf("ckpt: save %s: %w", path, err)
	}
	return saveWith(path, SaveOptions{}, func(w io.Writer) error { return EncodeLlama2(w, m, version) })
}

// checkWrite validates m and version before anything is written.
func (m *Llama2Model) checkWrite(version int) error {
	if version != 0 && version != 1 {
		return fmt.Errorf("llama2.c version %d cannot be written: choose 0 (legacy, read by run.c) or 1", version)
	}
	return m.CheckWeights()
}

// EncodeLlama2 writes m to w as a llama2.c file of the given version (0 or 1), laid out as
// llama2.c's export.py lays it out (legacy_export, version1_export). Version 0's RoPE tables
// are computed as model.py's precompute_freqs_cis computes them, in float32.
func EncodeLlama2(w io.Writer, m *Llama2Model, version int) error {
	if err := m.checkWrite(version); err != nil {
		return err
	}
	c := m.Config
	bw := bufio.NewWriterSize(w, 1<<16)
	le := binary.LittleEndian
	var hdr []byte
	fields := c.fields()
	if version == 0 {
		if !c.Shared {
			fields[5] = -fields[5]
		}
	} else {
		hdr = le.AppendUint32(hdr, llama2Magic)
		hdr = le.AppendUint32(hdr, 1)
	}
	for _, v := range fields {
		hdr = le.AppendUint32(hdr, uint32(int32(v)))
	}
	if version == 1 {
		flag := byte(0)
		if c.Shared {
			flag = 1
		}
		hdr = append(hdr, flag)
		hdr = append(hdr, make([]byte, llama2V1Header-len(hdr))...)
	}
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	var cos, sin []float32
	if version == 0 {
		cos, sin = ropeTables(c.HeadDim(), c.MaxSeqLen)
	}
	buf := make([]byte, 1<<16)
	var err error
	llama2Entries(c, version, func(e llama2Entry) bool {
		data := m.Weights[e.name]
		switch e.name {
		case ropeCosName:
			data = cos
		case ropeSinName:
			data = sin
		}
		for len(data) > 0 {
			k := min(len(data), len(buf)/4)
			for i, x := range data[:k] {
				le.PutUint32(buf[4*i:], math.Float32bits(x))
			}
			if _, err = bw.Write(buf[:4*k]); err != nil {
				return false
			}
			data = data[k:]
		}
		return true
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// ropeTables returns the cosines and sines [seqLen, headDim/2] of RoPE's angles, computed as
// llama2.c's precompute_freqs_cis computes them in float32: freq_i = 1 / 10000^(2i/headDim)
// for i < headDim/2, angle(t, i) = t × freq_i. The frequencies and angles come out bit for bit
// as PyTorch's; the cosines and sines are correctly rounded, which PyTorch's float32 cos and sin
// are not always: an element may differ from PyTorch's by an ulp (27 of 512 for head width 16
// and 32 positions). Neither llama2.c's run.c nor ReadLlama2 uses the tables.
func ropeTables(headDim, seqLen int) (cos, sin []float32) {
	half := headDim / 2
	freqs := make([]float32, half)
	for i := range freqs {
		e := float32(2*i) / float32(headDim)
		p := float32(math.Pow(10000, float64(e)))
		freqs[i] = 1 / p
	}
	cos = make([]float32, seqLen*half)
	sin = make([]float32, seqLen*half)
	for t := 0; t < seqLen; t++ {
		for i, f := range freqs {
			a := float64(float32(t) * f)
			cos[t*half+i] = float32(math.Cos(a))
			sin[t*half+i] = float32(math.Sin(a))
		}
	}
	return cos, sin
}
