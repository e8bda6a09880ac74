package private

import (
	"encoding/binary"

	"github.com/anestar/anestar/mil"
)

// nameAttr is the [name=string("n")] attribute every op carries.
func nameAttr(n string) *mil.Attr {
	return &mil.Attr{Name: "name", Value: &mil.Value{Type: mil.Scalar(mil.String), Strs: []string{n}}}
}

// ref is an operand naming v.
func ref(v string) mil.Operand { return mil.Operand{Ref: &mil.Ref{Name: v}} }

// testProgram is main(x: fp16 [1,4,1,32], s: fp32 [1,3,1,32]) -> (y: fp16 [1,4,1,32]) with
// y = conv(identity, x + w), where the constant w lives in the weight file "@model_path/weights/w.bin". It
// passes ane.Eligible (with a warning for its two inputs).
func testProgram() *mil.Program {
	xt := mil.Tensor(mil.FP16, 1, 4, 1, 32)
	wConst := &mil.Op{
		Kind: "const",
		Attrs: []*mil.Attr{nameAttr("w"), {Name: "val", Value: &mil.Value{
			Type: xt,
			Blob: &mil.BlobRef{Path: "@model_path/weights/w.bin", Offset: 64},
		}}},
		Results: []*mil.Var{{Name: "w", Type: xt}},
	}
	add := &mil.Op{
		Kind:    "add",
		Args:    []*mil.Arg{{Name: "x", Operands: []mil.Operand{ref("x")}}, {Name: "y", Operands: []mil.Operand{ref("w")}}},
		Attrs:   []*mil.Attr{nameAttr("r")},
		Results: []*mil.Var{{Name: "r", Type: xt}},
	}
	f := &mil.Func{
		Name:   "main",
		Opset:  "ios18",
		Inputs: []*mil.Var{{Name: "x", Type: xt}, {Name: "s", Type: mil.Tensor(mil.FP32, 1, 3, 1, 32)}},
		Ops:    []*mil.Op{wConst, add},
	}
	anchored(f, "r", xt)
	return &mil.Program{Version: "1.3", Funcs: []*mil.Func{f}}
}

// testBlob is a weight blob file of fp16 values laid out as the reference README describes: a 64-byte
// file header (count 1, version 2), a 64-byte metadata block at offset 64 (sentinel 0xDEADBEEF, dtype
// fp16 = 1, data size, data offset 128), then the data.
func testBlob(fp16 []uint16) []byte {
	b := make([]byte, 128+2*len(fp16))
	binary.LittleEndian.PutUint32(b[0:], 1)
	binary.LittleEndian.PutUint32(b[4:], 2)
	binary.LittleEndian.PutUint32(b[64:], 0xDEADBEEF)
	binary.LittleEndian.PutUint32(b[68:], 1)
	binary.LittleEndian.PutUint64(b[72:], uint64(2*len(fp16)))
	binary.LittleEndian.PutUint64(b[80:], 128)
	for i, v := range fp16 {
		binary.LittleEndian.PutUint16(b[128+2*i:], v)
	}
	return b
}

// fp16Int returns the fp16 bits of the integer n, 0 <= n <= 2048, which fp16 holds exactly.
func fp16Int(n int) uint16 {
	if n == 0 {
		return 0
	}
	e := 0
	for 1<<(e+1) <= n {
		e++
	}
	mant := ((n - 1<<e) << 10) >> e
	return uint16((e+15)<<10 | mant)
}
