package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/anestar/anestar/ckpt"
)

// llama2Meta is a llama2.c header as ckpt ls prints it in place of metadata.
func llama2Meta(h ckpt.Llama2Header) [][2]string {
	c := h.Config
	kv := [][2]string{{"format", "llama2.c version " + strconv.Itoa(h.Version)}}
	for _, f := range []struct {
		k string
		v int
	}{{"dim", c.Dim}, {"hidden_dim", c.Hidden}, {"n_layers", c.Layers}, {"n_heads", c.Heads}, {"n_kv_heads", c.KVHeads}, {"vocab_size", c.Vocab}, {"max_seq_len", c.MaxSeqLen}} {
		kv = append(kv, [2]string{f.k, strconv.Itoa(f.v)})
	}
	return append(kv, [2]string{"shared_classifier", strconv.FormatBool(c.Shared)})
}

// lsLlama2 lists a llama2.c file's tensors in file order with their offsets, then its header;
// it reads only the header.
func lsLlama2(path string, metaOnly bool, stdout, stderr io.Writer) int {
	h, err := ckpt.ReadLlama2Header(path)
	if err != nil {
		fmt.Fprintf(stderr, "anestar ckpt ls: %v\n", err)
		return exitError
	}
	if !metaOnly {
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tDTYPE\tSHAPE\tELEMENTS\tBYTES\tOFFSET")
		var total int
		list := h.Tensors()
		for _, t := range list {
			n := 1
			for _, d := range t.Shape {
				n *= d
			}
			total += 4 * n
			fmt.Fprintf(tw, "%s\tF32\t%s\t%d\t%d\t%d\n", t.Name, ckptShape(t.Shape), n, 4*n, t.Offset)
		}
		tw.Flush()
		fmt.Fprintf(stdout, "%d tensors, %d data bytes\n", len(list), total)
	}
	fmt.Fprintln(stdout, "header:")
	for _, kv := range llama2Meta(h) {
		fmt.Fprintf(stdout, "  %s = %s\n", kv[0], kv[1])
	}
	return exitOK
}

// loadLlama2AsFile reads a llama2.c file as a checkpoint of F32 tensors whose metadata is the
// header, for ckpt diff.
func loadLlama2AsFile(path string) (*ckpt.File, error) {
	m, err := ckpt.ReadLlama2(path)
	if err != nil {
		return nil, err
	}
	f := &ckpt.File{Tensors: map[string]ckpt.Tensor{}, Metadata: map[string]string{}}
	for _, t := range m.Config.Tensors() {
		ct, err := ckpt.FromFloat32(ckpt.F32, t.Shape, m.Weights[t.Name])
		if err != nil {
			return nil, err
		}
		f.Tensors[t.Name] = ct
		delete(m.Weights, t.Name) // let the float32 copy go
	}
	for _, kv := range llama2Meta(ckpt.Llama2Header{Version: m.Version, Config: m.Config}) {
		f.Metadata[kv[0]] = kv[1]
	}
	return f, nil
}
