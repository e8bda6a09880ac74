package tokenizer

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// rawFile builds tokenizer.bin bytes by hand, independently of MarshalBinary.
func rawFile(maxLen uint32, pieces []string, scores []float32) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, maxLen)
	for i, p := range pieces {
		binary.Write(&b, binary.LittleEndian, scores[i])
		binary.Write(&b, binary.LittleEndian, int32(len(p)))
		b.WriteString(p)
	}
	return b.Bytes()
}

func TestParseAndMarshal(t *testing.T) {
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n", "a", "b", "ab", " "}
	scores := []float32{0, 0, 0, -1, -2, 5, -3}
	data := rawFile(6, pieces, scores)
	tok, err := Parse(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if tok.VocabSize() != 7 || tok.Piece(5) != "ab" || tok.Score(5) != 5 || tok.ByteFallback() {
		t.Fatalf("got %d pieces, piece 5 %q score %v, byte fallback %v", tok.VocabSize(), tok.Piece(5), tok.Score(5), tok.ByteFallback())
	}
	out, err := tok.MarshalBinary()
	if err != nil || !bytes.Equal(out, data) {
		t.Fatalf("MarshalBinary differs from the input (err %v)", err)
	}
	// A size from the model's header reads that many pieces and ignores the rest.
	if tok4, err := Parse(data, 4); err != nil || tok4.VocabSize() != 4 {
		t.Fatalf("Parse(data, 4): %v", err)
	}
	// Without byte pieces, an unknown character is <unk>.
	if got := tok.Encode("abc", false, false); !slices.Equal(got, []int{6, 5, Unk}) {
		t.Fatalf("Encode(abc) = %v, want [6 5 0]", got)
	}
	if tok.Piece(-1) != "" || tok.Piece(7) != "" || !math.IsNaN(float64(tok.Score(7))) || tok.TokenBytes(99) != 0 {
		t.Fatal("out-of-range ids must give empty results")
	}
	// Save and Load give back the same bytes.
	path := filepath.Join(t.TempDir(), "tok.bin")
	if err := tok.Save(path); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
		t.Fatal("Save wrote other bytes")
	}
}

func TestParseErrors(t *testing.T) {
	good := rawFile(6, []string{"<unk>", "\n<s>\n", "\n</s>\n", "abc"}, []float32{0, 0, 0, 0})
	withLen := func(n int32) []byte {
		d := slices.Clone(good)
		binary.LittleEndian.PutUint32(d[len(d)-7:], uint32(n))
		return d
	}
	for _, c := range []struct {
		name   string
		data   []byte
		size   int
		offset int64
		id     int
		msg    string
	}{
		{"empty", nil, 0, 0, -1, "too short"},
		{"header only", good[:4], 0, 4, 0, "only 0 pieces"},
		{"truncated piece", good[:len(good)-1], 0, int64(len(good) - 3), 3, "truncated: the 3-byte piece has 2 bytes left"},
		{"truncated score", good[:len(good)-5], 0, int64(len(good) - 11), 3, "truncated: 6 bytes left"},
		{"longer than max", withLen(7), 0, int64(len(good) - 7), 3, "exceeds the file's max_token_length 6"},
		{"negative length", withLen(-1), 0, int64(len(good) - 7), 3, "piece length -1"},
		{"zero length", withLen(0), 0, int64(len(good) - 7), 3, "piece length 0"},
		{"fewer than asked", good, 5, int64(len(good)), 4, "the vocabulary has 5 pieces"},
	} {
		_, err := Parse(c.data, c.size)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v is not a *FormatError", c.name, err)
			continue
		}
		if fe.Offset != c.offset || fe.ID != c.id || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: got offset %d id %d %q; want offset %d id %d and %q", c.name, fe.Offset, fe.ID, err, c.offset, c.id, c.msg)
		}
	}
	path := filepath.Join(t.TempDir(), "bad.bin")
	os.WriteFile(path, good[:len(good)-1], 0o644)
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path+": offset") || !strings.Contains(err.Error(), "piece 3") {
		t.Errorf("Load: %v; want the path, the offset and the piece", err)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of a directory: no error")
	}
}

func TestTokenFiles(t *testing.T) {
	ids := []int{0, 1, 65535, 300, 2}
	data, err := AppendTokens(nil, ids, 65536)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 1, 0, 0xff, 0xff, 0x2c, 1, 2, 0}; !bytes.Equal(data, want) {
		t.Fatalf("AppendTokens = %v, want %v", data, want)
	}
	got, err := ParseTokens(data, 65536)
	if err != nil || !slices.Equal(got, ids) {
		t.Fatalf("ParseTokens = %v, %v", got, err)
	}
	if _, err := ParseTokens(data, 1000); err == nil || !strings.Contains(err.Error(), "token 2 (offset 4): id 65535") {
		t.Errorf("id out of range: %v", err)
	}
	if _, err := ParseTokens(data[:3], 1000); err == nil || !strings.Contains(err.Error(), "odd length 3") {
		t.Errorf("odd length: %v", err)
	}
	if _, err := AppendTokens(nil, ids, 65537); err == nil || !strings.Contains(err.Error(), "does not fit a uint16 token file") {
		t.Errorf("vocabulary too large: %v", err)
	}
	if _, err := AppendTokens(nil, []int{5, 1000}, 1000); err == nil || !strings.Contains(err.Error(), "token 1: id 1000") {
		t.Errorf("id out of range on write: %v", err)
	}
	path := filepath.Join(t.TempDir(), "t.bin")
	if err := SaveTokens(path, ids, 65536); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadTokens(path, 65536); err != nil || !slices.Equal(got, ids) {
		t.Fatalf("LoadTokens = %v, %v", got, err)
	}
	if _, err := LoadTokens(path, 300); err == nil || !strings.Contains(err.Error(), path+": token 2") {
		t.Errorf("LoadTokens out of range: %v", err)
	}
}

// TestFingerprint: a vocabulary's fingerprint survives Save and Load, and one changed piece or score
// changes it.
func TestFingerprint(t *testing.T) {
	pieces := []string{"<unk>", "\n<s>\n", "\n</s>\n", " ", "a", "b", " a"}
	scores := make([]float32, len(pieces))
	for i := range scores {
		scores[i] = -float32(i)
	}
	a, err := New(pieces, scores)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(raw, len(pieces))
	if err != nil {
		t.Fatal(err)
	}
	if back.Fingerprint() != a.Fingerprint() || len(a.Fingerprint()) != 16 {
		t.Errorf("fingerprint %q after a round trip, %q before", back.Fingerprint(), a.Fingerprint())
	}
	p2 := append([]string(nil), pieces...)
	p2[len(p2)-1] = " b"
	s2 := append([]float32(nil), scores...)
	s2[len(s2)-1]--
	for _, c := range []struct {
		p []string
		s []float32
	}{{p2, scores}, {pieces, s2}} {
		o, err := New(c.p, c.s)
		if err != nil {
			t.Fatal(err)
		}
		if o.Fingerprint() == a.Fingerprint() {
			t.Error("a changed vocabulary keeps its fingerprint")
		}
	}
}
