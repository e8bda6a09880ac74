package tokenizer

import "fmt"

// Decode returns the text of ids: <s> and </s> write nothing; a byte piece writes its byte; any other
// piece its text, but the first piece and a piece right after <s> lose one leading space (the dummy
// prefix the encoder added), so Decode(Encode(text, bos, eos)) == text. An id outside the vocabulary is
// an error naming its position.
func (t *Tokenizer) Decode(ids []int) (string, error) {
	var b []byte
	start := true // at the start of a sequence: a leading space is the dummy prefix
	for i, id := range ids {
		if id < 0 || id >= len(t.pieces) {
			return "", fmt.Errorf("tokenizer: token %d: id %d outside the vocabulary of %d pieces", i, id, len(t.pieces))
		}
		switch {
		case id == BOS:
			start = true
			continue
		case id == EOS:
			continue
		case t.byteFallback && id >= byteBase && id < NumReserved:
			if c := byte(id - byteBase); !start || c != ' ' {
				b = append(b, c)
			}
		default:
			p := t.pieces[id]
			if start && p[0] == ' ' {
				p = p[1:]
			}
			b = append(b, p...)
		}
		start = false
	}
	return string(b), nil
}
