package tokenizer

import "strings"

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
// byte fallback. The merging costs O(n log n) for n characters, with a heap of adjacent pairs where
// run.c rescans them all for every merge; and when no piece holds a space after its first byte (true of
// SentencePiece's BPE vocabularies and of Train's; pieces of spaces alone may), no merge can cross the
// start of a run of spaces, so each distinct word merges once and its ids are reused.
func (t *Tokenizer) Encode(text string, bos, eos bool) []int {
	return t.EncodeProgress(text, bos, eos, nil)
}

// EncodeProgress is Encode that calls progress(done, total) about every MiB of a long text, with done
// out of total bytes encoded (never for a vocabulary with spaces inside pieces, which merges the text
// as a whole).
func (t *Tokenizer) EncodeProgress(text string, bos, eos bool, progress func(done, total int)) []int {
	out := make([]int, 0, len(text)/3+3)
	if bos {
		out = append(out, BOS)
	}
	var m merger
	if !t.splitSpaces {
		toks := t.initial(text, make([]int32, 0, len(text)+1))
		for _, id := range m.run(toks, t.pair()) {
			out = append(out, int(id))
		}
	} else {
		out = t.encodeWords(out, text, true, &m, map[string][]int32{}, progress)
	}
	if eos {
		out = append(out, EOS)
	}
	return out
}

// encodeWords appends the ids of text, merged a word at a time, a word starting where a run of spaces
// starts after a non-space: when no text piece holds a space after a non-space (pieces of spaces alone
// may), no merge crosses such a start, and the merges in one word do not depend on the others (run.c
// takes the highest score over all words, which is the highest of each word in turn).
// Repeated words are merged once (cache holds them). first says text is the start of the whole text:
// its first word follows the dummy prefix; a later piece of it (EncodeStream's) starts at a space.
func (t *Tokenizer) encodeWords(out []int, text string, first bool, m *merger, cache map[string][]int32, progress func(done, total int)) []int {
	pair := t.pair()
	var buf []int32
	next := 1 << 20
	for pos := 0; pos < len(text); {
		end := wordStart(text, pos+1)
		w := text[pos:end]
		toks, ok := cache[w]
		switch {
		case pos == 0 && first: // the first word, after the dummy prefix
			toks = m.run(t.initial(w, buf[:0]), pair)
		case !ok:
			buf = t.chars(buf[:0], w)
			toks = append([]int32(nil), m.run(buf, pair)...)
			cache[w] = toks
		}
		for _, id := range toks {
			out = append(out, int(id))
		}
		if pos = end; progress != nil && pos >= next {
			progress(pos, len(text))
			next = pos + 1<<20
		}
	}
	return out
}

// wordStart returns the first position at or after i where a run of spaces starts after a non-space
// (the start of a word of encodeWords), or len(text).
func wordStart(text string, i int) int {
	for i < len(text) {
		k := strings.IndexByte(text[i:], ' ')
		if k < 0 {
			return len(text)
		}
		if i+k > 0 && text[i+k-1] != ' ' {
			return i + k
		}
		i += k + 1
	}
	return len(text)
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
	return t.chars(dst, text)
}

// chars appends the ids of text's characters: their pieces, else byte pieces.
func (t *Tokenizer) chars(dst []int32, text string) []int32 {
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
