package ckpt

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// rawFile assembles a file from a header text and a data area, as a hostile writer could.
func rawFile(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	b = append(b, header...)
	return append(b, data...)
}

func TestDecodeAcceptsForeignLayouts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		data   []byte
	}{
		{"unpadded header", `{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, []byte{1, 2}},
		{"entries out of offset order", `{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{1, 2}},
		{"fields in any order, whitespace", "{ \"a\" : {\"data_offsets\":[0,2], \"shape\":[1], \"dtype\":\"F16\"}\n}\t \r\n", []byte{0, 0x3c}},
		{"null metadata", `{"__metadata__":null}`, nil},
		{"two empty tensors at one offset", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"I64","shape":[3,0],"data_offsets":[0,0]}}`, nil},
		{"huge dimension times zero", `{"a":{"dtype":"F32","shape":[0,9223372036854775807],"data_offsets":[0,0]}}`, nil},
	} {
		if _, err := Decode(rawFile(tc.header, tc.data)); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	u8 := func(name, offs string) string {
		return `"` + name + `":{"dtype":"U8","shape":[2],"data_offsets":` + offs + `}`
	}
	for _, tc := range []struct {
		name   string
		file   []byte
		want   string // substring of the message
		tensor string // tensor the error must name
		offset int64  // byte offset the error must give; -1 to skip the check
	}{
		{"empty", nil, "too short", "", 0},
		{"short", []byte{1, 2, 3}, "too short", "", 3},
		{"header beyond limit", binary.LittleEndian.AppendUint64(nil, 1<<40), "exceeds the limit", "", 0},
		{"header past end", append(binary.LittleEndian.AppendUint64(nil, 100), "{}"...), "runs past the end", "", 0},
		{"header length overflowing", binary.LittleEndian.AppendUint64(nil, ^uint64(0)), "exceeds the limit", "", 0},
		{"empty header", rawFile("", nil), "ends early", "", 8},
		{"not an object", rawFile(`[1]`, nil), `want "{"`, "", -1},
		{"bad JSON", rawFile(`{"a":{"dtype":"U8",,}}`, nil), "header JSON", "a", 27},
		{"truncated JSON", rawFile(`{"a":{"dtype":"U8"`, nil), "ends early", "a", -1},
		{"trailing garbage", rawFile(`{}x`, nil), `unexpected byte 'x'`, "", 10},
		{"second object", rawFile(`{}{}`, nil), "after the header object", "", 10},
		{"not UTF-8", rawFile("{\"\xff\":1}", nil), "not valid UTF-8", "", 8},
		{"duplicate tensor", rawFile(`{`+u8("a", "[0,2]")+`,`+u8("a", "[2,4]")+`}`, make([]byte, 4)), "appears twice", "a", -1},
		{"duplicate metadata", rawFile(`{"__metadata__":{"k":"1","k":"2"}}`, nil), `metadata key "k" appears twice`, "", -1},
		{"duplicate __metadata__", rawFile(`{"__metadata__":{},"__metadata__":{}}`, nil), "appears twice", "__metadata__", -1},
		{"metadata not object", rawFile(`{"__metadata__":[1]}`, nil), "must be an object", "", -1},
		{"metadata number", rawFile(`{"__metadata__":{"step":12}}`, nil), `metadata "step": value must be a string, got number 12`, "", -1},
		{"unknown dtype", rawFile(`{"a":{"dtype":"F128","shape":[],"data_offsets":[0,16]}}`, make([]byte, 16)), `unknown dtype "F128"`, "a", -1},
		{"dtype not string", rawFile(`{"a":{"dtype":4,"shape":[],"data_offsets":[0,4]}}`, make([]byte, 4)), "dtype must be a string", "a", -1},
		{"negative dim", rawFile(`{"a":{"dtype":"U8","shape":[-1],"data_offsets":[0,0]}}`, nil), "-1 is not a non-negative", "a", -1},
		{"fractional dim", rawFile(`{"a":{"dtype":"U8","shape":[1.5],"data_offsets":[0,0]}}`, nil), "1.5 is not", "a", -1},
		{"exponent dim", rawFile(`{"a":{"dtype":"U8","shape":[1e3],"data_offsets":[0,1000]}}`, nil), "1e3 is not", "a", -1},
		{"dim beyond uint64", rawFile(`{"a":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,0]}}`, nil), "is not a non-negative 64-bit", "a", -1},
		{"dim beyond int", rawFile(`{"a":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,0]}}`, nil), "too large", "a", -1},
		{"shape overflow", rawFile(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, nil), "overflows", "a", -1},
		{"byte overflow", rawFile(`{"a":{"dtype":"F64","shape":[4611686018427387904],"data_offsets":[0,0]}}`, nil), "overflows the byte count", "a", -1},
		{"shape not array", rawFile(`{"a":{"dtype":"U8","shape":2,"data_offsets":[0,2]}}`, nil), `shape: want "["`, "a", -1},
		{"size mismatch", rawFile(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)), "F32[2] needs 8 bytes but data_offsets [0,4] give 4", "a", -1},
		{"offsets reversed", rawFile(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}`, make([]byte, 4)), "end before they begin", "a", -1},
		{"three offsets", rawFile(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2,4]}}`, make([]byte, 4)), "more than 2 values", "a", -1},
		{"one offset", rawFile(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[2]}}`, make([]byte, 4)), "want 2 values, got 1", "a", -1},
		{"missing dtype", rawFile(`{"a":{"shape":[2],"data_offsets":[0,2]}}`, make([]byte, 2)), "dtype missing", "a", -1},
		{"missing shape", rawFile(`{"a":{"dtype":"U8","data_offsets":[0,2]}}`, make([]byte, 2)), "shape missing", "a", -1},
		{"missing offsets", rawFile(`{"a":{"dtype":"U8","shape":[2]}}`, make([]byte, 2)), "data_offsets missing", "a", -1},
		{"unknown field", rawFile(`{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2],"x":1}}`, make([]byte, 2)), `unknown field "x"`, "a", -1},
		{"field twice", rawFile(`{"a":{"dtype":"U8","dtype":"U8","shape":[2],"data_offsets":[0,2]}}`, make([]byte, 2)), "dtype given twice", "a", -1},
		{"entry not object", rawFile(`{"a":[1]}`, nil), `tensor entry: want "{"`, "a", -1},
		{"gap", rawFile(`{`+u8("a", "[0,2]")+`,`+u8("b", "[3,5]")+`}`, make([]byte, 5)), "leave a gap after offset 2", "b", -1},
		{"overlap", rawFile(`{`+u8("a", "[0,2]")+`,`+u8("b", "[1,3]")+`}`, make([]byte, 3)), "overlap the previous tensor", "b", -1},
		{"not from zero", rawFile(`{`+u8("a", "[1,3]")+`}`, make([]byte, 3)), "gap after offset 0", "a", -1},
		{"truncated data", rawFile(`{`+u8("a", "[0,2]")+`,`+u8("b", "[2,4]")+`}`, make([]byte, 3)), "run past the data area of 3 bytes", "b", -1},
		{"extra data", rawFile(`{`+u8("a", "[0,2]")+`}`, make([]byte, 5)), "data area has 5 bytes but the tensors cover 2", "", 8 + 53 + 2},
		{"data without tensors", rawFile(`{}`, make([]byte, 1)), "data area has 1 bytes but the tensors cover 0", "", 10},
	} {
		_, err := Decode(tc.file)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: got %v, want a *FormatError", tc.name, err)
			continue
		}
		if !strings.Contains(fe.Msg, tc.want) || fe.Tensor != tc.tensor || (tc.offset >= 0 && fe.Offset != tc.offset) {
			t.Errorf("%s: got %q (tensor %q, offset %d), want %q (tensor %q, offset %d)", tc.name, err, fe.Tensor, fe.Offset, tc.want, tc.tensor, tc.offset)
		}
		if fe.Offset < 0 || fe.Offset > int64(len(tc.file)) {
			t.Errorf("%s: offset %d outside the %d-byte file", tc.name, fe.Offset, len(tc.file))
		}
	}
}

// TestDecodeEveryTruncation cuts a valid file at every length: each prefix must fail cleanly.
func TestDecodeEveryTruncation(t *testing.T) {
	data := encode(t, sampleFile(t))
	for n := 0; n < len(data); n++ {
		if _, err := Decode(data[:n]); err == nil {
			t.Fatalf("prefix of %d of %d bytes decoded", n, len(data))
		}
	}
}

// TestDecodeAliasing checks that tensors share the input and cannot grow into each other.
func TestDecodeAliasing(t *testing.T) {
	data := encode(t, sampleFile(t))
	f, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, tt := range f.Tensors {
		if cap(tt.Data) != len(tt.Data) {
			t.Errorf("%s: capacity %d beyond length %d", name, cap(tt.Data), len(tt.Data))
		}
	}
}

func TestFormatErrorText(t *testing.T) {
	e := &FormatError{Path: "x.safetensors", Offset: 12, Tensor: "w", Msg: "bad"}
	if got, want := e.Error(), `x.safetensors: byte 12: tensor "w": bad`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A file of another kind (text, here) is named as not a safetensors file, not as a huge header length.
func TestDecodeOtherFile(t *testing.T) {
	_, err := Decode([]byte("# anestar\n\nanestar trains neural networks"))
	if err == nil || !strings.Contains(err.Error(), "not a safetensors file") {
		t.Fatalf("Decode(text) = %v, want a \"not a safetensors file\" error", err)
	}
}
