package tokenizer

// nextGroup returns the end of the character that starts at text[i], as run.c's encode groups bytes:
// one byte and up to three continuation bytes (10xxxxxx) after it.
func nextGroup(text string, i int) int {
	j := i + 1
	for j < len(text) && j-i < 4 && text[j]&0xC0 == 0x80 {
		j++
	}
	return j
}

// Encode returns the ids of text as llama2.c's run.c encodes it: <s> first when bos; the " " piece
// (SentencePiece's dummy prefix) when text is not empty; each character's piece, or its bytes' pieces
// when the vocabulary has none (<unk> without byte fallback); then, repeatedly, the adjacent pair whose
// concatenation is the piece with the highest score merges into it (the leftmost of equals first),
// until no pair merges; </s> last when eos.
//
// Unlike run.c, which reads C strings, a NUL byte is text like any other; and only text pieces form
// by merging: never <unk>, <s>, </s> or a byte piece, and never across <s>. Invalid UTF-8 takes the
// byte fallback. The merging costs O(n log n) for n characters.
func (t *Tokenizer) Encode(text string, bos, eos bool) []int {
	return t.EncodeProgress(text, bos, eos, nil)
}

// EncodeProgress is Encode that calls progress(done, total) now and then during a long text's merging,
// with done out of total merges at most.
func (t *Tokenizer) EncodeProgress(text string, bos, eos bool, progress func(done, total int)) []int {
	toks := t.initial(text, make([]int32, 0, len(text)+1))
	var m merger
	var report func(int)
	if progress != nil {
		total := len(toks) - 1
		report = func(done int) { progress(done, total) }
	}
	toks = m.run(toks, t.pair(), report)
	out := make([]int, 0, len(toks)+2)
	if bos {
		out = append(out, BOS)
	}
	for _, id := range toks {
		out = append(out, int(id))
	}
	if eos {
		out = append(out, EOS)
	}
	return out
}

// initial appends the ids of text before any merge: the dummy prefix, then one id per character or
// byte.
func (t *Tokenizer) initial(text string, dst []int32) []int32 {
	if text == "" {
		return dst
	}
	if t.space >= 0 {
		dst = append(dst, t.space)
	} else {
		dst = t.fallback(dst, " ")
	}
	for i := 0; i < len(text); {
		j := nextGroup(text, i)
		if id, ok := t.lookup[text[i:j]]; ok {
			dst = append(dst, id)
		} else {
			dst = t.fallback(dst, text[i:j])
		}
		i = j
	}
	return dst
}

// fallback appends the ids that stand for a character the vocabulary does not have: its bytes' pieces,
// or <unk> when there are none.
func (t *Tokenizer) fallback(dst []int32, s string) []int32 {
	if !t.byteFallback {
		return append(dst, Unk)
	}
	for i := 0; i < len(s); i++ {
		dst = append(dst, byteBase+int32(s[i]))
	}
	return dst
}

// pair returns the merge rule of the encoder: a, b merge when the concatenation of their pieces is a
// text piece whose score is above run.c's floor (a NaN score never merges).
func (t *Tokenizer) pair() pairFunc {
	var buf []byte
	return func(a, b int32) (int32, float32, bool) {
		if !t.isText(a) || !t.isText(b) {
			return 0, 0, false
		}
		buf = append(append(buf[:0], t.pieces[a]...), t.pieces[b]...)
		id, ok := t.lookup[string(buf)]
		if !ok || !(t.scores[id] > minScore) {
			return 0, 0, false
		}
		return id, t.scores[id], true
	}
}
