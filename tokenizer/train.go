package tokenizer

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Train learns a BPE vocabulary of n pieces from text. n counts the NumReserved pieces (<unk>, <s>,
// </s> and the 256 byte pieces), so it must exceed NumReserved.
//
// Pre-tokenization is SentencePiece's (splitWords): the text with its dummy-prefix space splits into
// words before every space, around every run of newlines and where letters, digits and other
// characters meet, so a word carries its leading space and a piece never spans two words; nor is a
// piece longer than MaxPieceChars characters. The characters of the text
// (every one, most frequent first, " " always) become pieces as far as n allows; the others fall back
// to bytes. Then the most frequent adjacent pair of pieces, counted over all words, merges into a new
// piece, again and again until the vocabulary has n pieces; ties go to the pair of lower ids. The k-th
// merged piece scores -k and the characters score below every merge, so Encode, merging the highest
// score first, segments each word exactly as the trainer did: the trainer keeps every word in the form
// Encode gives it under the vocabulary so far, updating only where the newest piece merges.
//
// Training is deterministic. It is an error when the text has fewer distinct pairs than n needs.
func Train(text string, n int) (*Tokenizer, error) { return TrainProgress(text, n, nil) }

// TrainProgress is Train that calls progress(pieces, n) as the vocabulary grows.
func TrainProgress(text string, n int, progress func(pieces, n int)) (*Tokenizer, error) {
	return TrainWith(text, n, TrainOptions{}, progress)
}

// TrainOptions are what Train may do differently.
type TrainOptions struct {
	// WhitespacePieces learns pieces of consecutive spaces (SentencePiece's
	// allow_whitespace_only_pieces), so indentation merges into a few pieces: a run of spaces leads the
	// word after it, and a merge makes a piece of spaces alone or, as ever, of at most one leading space
	// and then no space (the form by which Encode, merging the whole text as run.c does, reproduces the
	// trainer's segmentation). Off, each space of a run is a word of its own (SentencePiece's default).
	WhitespacePieces bool
}

// TrainWith is TrainProgress with options.
func TrainWith(text string, n int, opts TrainOptions, progress func(pieces, n int)) (*Tokenizer, error) {
	tr, err := train(text, n, opts.WhitespacePieces, progress)
	if err != nil {
		return nil, err
	}
	return tr.tokenizer()
}

// A trainer holds the state of a BPE training run.
type trainer struct {
	pieces   []string           // every piece by id, the reserved ones included
	ids      map[string]int32   // text pieces (characters and merges) to id
	rank     []int32            // merge number by id (-1 for characters and reserved pieces)
	runes    []int32            // length of each piece in characters
	nchars   int                // number of character pieces, ids NumReserved.. NumReserved+nchars-1
	merges   map[uint64]int32   // adjacent pair of text pieces to the piece their concatenation is
	prefixes map[string][]int32 // proper prefixes of merged pieces to the pieces
	suffixes map[string][]int32 // proper suffixes of merged pieces to the pieces

	words [][]int32        // each distinct word's tokens, as Encode gives them under the vocabulary so far
	freq  []int64          // how often each word occurs
	index map[string]int32 // each distinct word (but the first) to its number
	pairs pairHeap         // weighted counts of adjacent pairs, most frequent on top
	m     merger
	ws    bool // runs of spaces are words (TrainOptions.WhitespacePieces)
}

// MaxPieceChars bounds the length of a trained piece in characters, as SentencePiece's
// max_piece_length does by default: longer pieces gain little and would make training quadratic
// on a text that repeats a long word.
const MaxPieceChars = 16

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// splitWords calls fn with the words of text in order, SentencePiece's pre-tokenization: a word is a
// run of newlines, or an optional leading space then characters of one class (letters, digits or the
// rest, see charClass) up to the next space, newline or change of class. The first word follows the
// dummy prefix: it is empty when text starts with a space or a newline.
// With ws (TrainOptions.WhitespacePieces) a word's leading space may be a run of spaces.
func splitWords(text string, ws bool, fn func(w string, first bool)) {
	splitWordsFrom(text, ws, true, fn)
}

// splitWordsFrom is splitWords of a piece of text: with first the text's first piece (its first word
// follows the dummy prefix), else a piece that starts at a word boundary (a cut of lastCut).
func splitWordsFrom(text string, ws, first bool, fn func(w string, first bool)) {
	end := 0
	// The dummy prefix leads the first word; with ws a run of spaces the text starts with joins it (a
	// piece of spaces can merge them), as Encode's first word has it.
	if first {
		if text != "" && (text[0] != ' ' || ws) && text[0] != '\n' {
			end = wordEnd(text, 0, ws)
		}
		fn(text[:end], true)
	}
	for pos := end; pos < len(text); pos = end {
		end = wordEnd(text, pos, ws)
		fn(text[pos:end], false)
	}
}

// wordEnd returns the end of the word that starts at text[i] (i < len(text)); it is always past i. It
// walks run.c's character groups (nextGroup: a byte and the continuation bytes after it), so that a word
// never ends inside one: a stray continuation byte stays with the character before it, as run.c
// groups it.
func wordEnd(text string, i int, ws bool) int {
	group := func(j int) string { return text[j:nextGroup(text, j)] }
	j := i
	if group(j) == "\n" {
		for j < len(text) && group(j) == "\n" {
			j++
		}
		return j
	}
	if group(j) == " " {
		j++
		for ws && j < len(text) && group(j) == " " { // the whole run leads the word
			j++
		}
	}
	class := -1
	for j < len(text) {
		g := group(j)
		if g == " " || g == "\n" {
			break
		}
		c := 2 // invalid bytes: the rest
		if isChar(g) {
			r, _ := utf8.DecodeRuneInString(g)
			c = charClass(r)
		}
		if class < 0 {
			class = c
		} else if c != class {
			break
		}
		j += len(g)
	}
	return j
}

// charClass sorts characters as SentencePiece's split_by_unicode_script and split_by_number do, so that
// a piece never joins a word to the punctuation after it ("light," is two pieces, as "light" and ","
// are worth learning once): 0 letters and marks, 1 digits, 2 everything else (invalid bytes included).
func charClass(r rune) int {
	switch {
	case unicode.IsLetter(r) || unicode.IsMark(r):
		return 0
	case unicode.IsDigit(r):
		return 1
	}
	return 2
}

// isChar reports whether the character group g is one valid UTF-8 code point.
func isChar(g string) bool {
	r, size := utf8.DecodeRuneInString(g)
	return size == len(g) && (r != utf8.RuneError || size > 1)
}

func train(text string, n int, ws bool, progress func(pieces, n int)) (*trainer, error) {
	wc := newWordCounts(ws)
	wc.add(text, true)
	return trainCounts(wc, n, progress)
}

// wordCounts counts a text's distinct words (splitWords), piece by piece: what training needs of the
// text, in memory that grows with the distinct words, not with the text.
type wordCounts struct {
	ws    bool             // TrainOptions.WhitespacePieces
	words []string         // each distinct word, the first word of the text (after the dummy prefix) first
	freq  []int64          // how often each occurs
	index map[string]int32 // each distinct word (but the first) to its number
	bytes int64            // the text's length so far
}

func newWordCounts(ws bool) *wordCounts { return &wordCounts{ws: ws, index: map[string]int32{}} }

// add counts the words of a piece of text: with first the text's first piece, else one that starts
// at a cut of lastCut. The words are copied: the piece may be reused.
func (wc *wordCounts) add(text string, first bool) {
	wc.bytes += int64(len(text))
	splitWordsFrom(text, wc.ws, first, func(w string, first bool) {
		id, ok := wc.index[w]
		if !ok || first {
			id = int32(len(wc.words))
			w = strings.Clone(w)
			wc.words = append(wc.words, w)
			wc.freq = append(wc.freq, 0)
			if !first {
				wc.index[w] = id
			}
		}
		wc.freq[id]++
	})
}

// trainCounts trains an n-piece vocabulary on the words wc counted.
func trainCounts(wc *wordCounts, n int, progress func(pieces, n int)) (*trainer, error) {
	if n <= NumReserved {
		return nil, fmt.Errorf("tokenizer: vocabulary size %d: must exceed the %d reserved pieces (<unk>, <s>, </s> and 256 bytes)", n, NumReserved)
	}
	if wc.bytes == 0 {
		return nil, fmt.Errorf("tokenizer: no text to train on")
	}
	tr := &trainer{ids: map[string]int32{}, merges: map[uint64]int32{}, prefixes: map[string][]int32{}, suffixes: map[string][]int32{}}
	tr.pieces = append(tr.pieces, "<unk>", "\n<s>\n", "\n</s>\n")
	for b := range 256 {
		tr.pieces = append(tr.pieces, bytePiece(byte(b)))
	}
	for range tr.pieces {
		tr.rank = append(tr.rank, -1)
		tr.runes = append(tr.runes, MaxPieceChars) // never part of a pair
	}

	// Words: the first one follows the dummy prefix, a space of its own (run.c groups it apart from
	// the bytes after it), so it is kept apart from any equal-looking word later in the text.
	words := wc.words
	tr.index, tr.freq, tr.ws = wc.index, wc.freq, wc.ws
	charFreq := map[string]int64{" ": 1} // the dummy prefix
	for id, w := range words {
		for i := 0; i < len(w); {
			j := nextGroup(w, i)
			if g := w[i:j]; isChar(g) {
				charFreq[g] += tr.freq[id]
			}
			i = j
		}
	}

	// Characters, most frequent first, as many as n allows; " " (the dummy prefix) always.
	chars := make([]string, 0, len(charFreq))
	for c := range charFreq {
		chars = append(chars, c)
	}
	sort.Slice(chars, func(i, j int) bool {
		fi, fj := charFreq[chars[i]], charFreq[chars[j]]
		return fi > fj || fi == fj && chars[i] < chars[j]
	})
	if room := n - NumReserved; len(chars) > room {
		keep := chars[:room]
		if !slices.Contains(keep, " ") {
			keep[room-1] = " "
		}
		chars = keep
	}
	for _, c := range chars {
		tr.ids[c] = int32(len(tr.pieces))
		tr.pieces = append(tr.pieces, c)
		tr.rank = append(tr.rank, -1)
		tr.runes = append(tr.runes, 1)
	}
	tr.nchars = len(chars)

	tr.words = make([][]int32, len(words))
	for id, w := range words {
		var toks []int32
		if id == 0 {
			toks = append(toks, tr.ids[" "])
		}
		for i := 0; i < len(w); {
			j := nextGroup(w, i)
			if c, ok := tr.ids[w[i:j]]; ok {
				toks = append(toks, c)
			} else {
				for k := i; k < j; k++ {
					toks = append(toks, byteBase+int32(w[k]))
				}
			}
			i = j
		}
		tr.words[id] = toks
		for i := 0; i+1 < len(toks); i++ {
			tr.count(int32(id), toks[i], toks[i+1], tr.freq[id])
		}
	}

	if progress != nil {
		progress(len(tr.pieces), n)
	}
	var affected []int32
	var keys []uint64
	stamp := make([]int32, len(tr.words))
	for step := int32(1); len(tr.pieces) < n; step++ {
		slot, count := tr.pairs.top()
		if count <= 0 {
			return nil, fmt.Errorf("tokenizer: the text supports a vocabulary of at most %d pieces (%d characters, %d merges), not %d",
				len(tr.pieces), tr.nchars, len(tr.pieces)-NumReserved-tr.nchars, n)
		}
		key := tr.pairs.key[slot]
		piece := tr.pieces[int32(key>>32)] + tr.pieces[int32(uint32(key))]
		if _, dup := tr.ids[piece]; dup {
			return nil, fmt.Errorf("tokenizer: internal error: pair %q+%q is counted but merges already", tr.pieces[int32(key>>32)], tr.pieces[int32(uint32(key))])
		}
		affected = tr.add(piece, affected[:0])
		keys = keys[:0]
		for _, s := range affected {
			keys = append(keys, tr.pairs.key[s])
		}
		for _, s := range affected {
			for _, w := range tr.pairs.occ[s] {
				if stamp[w] == step {
					continue
				}
				stamp[w] = step
				tr.update(w, keys)
			}
			tr.pairs.occ[s] = nil // every occurrence has merged: the pair never forms again
		}
		if progress != nil && (len(tr.pieces)%64 == 0 || len(tr.pieces) == n) {
			progress(len(tr.pieces), n)
		}
	}
	return tr, nil
}

// add makes piece a new merged piece and appends to affected the slots of the counted pairs that now
// merge into it. It records every pair of pieces whose concatenation is a piece, the new piece being
// the left part, the right part or the whole.
func (tr *trainer) add(piece string, affected []int32) []int32 {
	p := int32(len(tr.pieces))
	tr.ids[piece] = p
	tr.pieces = append(tr.pieces, piece)
	tr.rank = append(tr.rank, int32(len(tr.pieces)-NumReserved-tr.nchars-1))
	tr.runes = append(tr.runes, int32(utf8.RuneCountInString(piece)))
	for k := 1; k < len(piece); k++ {
		x, okx := tr.ids[piece[:k]]
		y, oky := tr.ids[piece[k:]]
		if okx && oky {
			key := pairKey(x, y)
			tr.merges[key] = p
			if s, ok := tr.pairs.slot[key]; ok {
				affected = append(affected, s)
			}
		}
	}
	for _, q := range tr.prefixes[piece] {
		if y, ok := tr.ids[tr.pieces[q][len(piece):]]; ok {
			tr.merges[pairKey(p, y)] = q
		}
	}
	for _, q := range tr.suffixes[piece] {
		qs := tr.pieces[q]
		if x, ok := tr.ids[qs[:len(qs)-len(piece)]]; ok {
			tr.merges[pairKey(x, p)] = q
		}
	}
	for k := 1; k < len(piece); k++ {
		tr.prefixes[piece[:k]] = append(tr.prefixes[piece[:k]], p)
		tr.suffixes[piece[k:]] = append(tr.suffixes[piece[k:]], p)
	}
	return affected
}

// update brings word w to the form Encode gives it under the vocabulary so far, given the pairs (keys)
// that merge into the newest piece: before it, no pair of the word merged, so the merging starts at
// their occurrences. Pair counts change where merges happen.
func (tr *trainer) update(w int32, keys []uint64) {
	toks := tr.words[w]
	if len(toks) < 2 {
		return
	}
	m := &tr.m
	m.link(len(toks))
	for i := 0; i+1 < len(toks); i++ {
		if k := pairKey(toks[i], toks[i+1]); slices.Contains(keys, k) {
			m.push(toks, int32(i), int32(i+1), tr.pair)
		}
	}
	if len(m.heap) == 0 {
		return // a stale occurrence: the word no longer holds the pairs
	}
	f := tr.freq[w]
	m.loop(toks, tr.pair, func(p, l, r, rr, id int32) {
		if p >= 0 {
			tr.count(w, toks[p], toks[l], -f)
			tr.count(w, toks[p], id, f)
		}
		tr.count(w, toks[l], toks[r], -f)
		if rr >= 0 {
			tr.count(w, toks[r], toks[rr], -f)
			tr.count(w, id, toks[rr], f)
		}
	})
	tr.words[w] = m.compact(toks)
}

// pair is the trainer's merge rule, the encoder's for the vocabulary so far: the later a piece was
// merged, the lower its priority.
func (tr *trainer) pair(a, b int32) (int32, float32, bool) {
	id, ok := tr.merges[pairKey(a, b)]
	if !ok {
		return 0, 0, false
	}
	return id, -float32(tr.rank[id]), true
}

// count adds delta to the count of the pair a, b, of word w, when both are text pieces (byte pieces never
// merge) and their concatenation is at most MaxPieceChars long; when the count grows it also notes that
// w holds the pair.
func (tr *trainer) count(w, a, b int32, delta int64) {
	if a < NumReserved || b < NumReserved || tr.runes[a]+tr.runes[b] > MaxPieceChars || tr.ws && mixesSpaces(tr.pieces[a], tr.pieces[b]) {
		return
	}
	s := tr.pairs.add(pairKey(a, b), delta)
	if delta > 0 {
		tr.pairs.occ[s] = append(tr.pairs.occ[s], w)
	}
}

// mixesSpaces reports whether a+b would be a piece of two or more leading spaces and then a non-space:
// a form whitespace pieces never take (TrainOptions.WhitespacePieces).
func mixesSpaces(a, b string) bool {
	la, lb := leadingSpaces(a), leadingSpaces(b)
	if la < len(a) { // a has a non-space
		return la >= 2
	}
	return la+lb >= 2 && lb < len(b)
}

// leadingSpaces counts the spaces s starts with.
func leadingSpaces(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

// tokenizer returns the trained vocabulary: the reserved pieces (score 0), the characters, the merges.
// The k-th merge scores -k, the characters below all merges, in order of frequency.
func (tr *trainer) tokenizer() (*Tokenizer, error) {
	nmerges := len(tr.pieces) - NumReserved - tr.nchars
	scores := make([]float32, len(tr.pieces))
	for id := NumReserved; id < len(tr.pieces); id++ {
		if r := tr.rank[id]; r >= 0 {
			scores[id] = -float32(r)
		} else {
			scores[id] = -float32(nmerges + id - NumReserved)
		}
	}
	return New(tr.pieces, scores)
}

// segmentation returns the trainer's tokens of text, the text it trained on: its words' tokens in order.
func (tr *trainer) segmentation(text string) []int {
	var out []int
	splitWords(text, tr.ws, func(w string, first bool) {
		id := int32(0)
		if !first {
			id = tr.index[w]
		}
		for _, t := range tr.words[id] {
			out = append(out, int(t))
		}
	})
	return out
}
