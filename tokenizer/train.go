package tokenizer

import (
	"fmt"
	"sort"
	"unicode/utf8"
)

// Train learns a BPE vocabulary of n pieces from text. n counts the NumReserved pieces (<unk>, <s>,
// </s> and the 256 byte pieces), so it must exceed NumReserved.
//
// Pre-tokenization is SentencePiece's: the text with its dummy-prefix space splits into words before
// every space and every newline, so a word carries its leading space (or newline) and a piece never
// spans two words. The characters of the text (every one, most frequent first, " " always) become
// pieces as far as n allows; the others fall back to bytes. Then the most frequent adjacent pair of
// pieces, counted over all words, merges into a new piece, again and again until the vocabulary has
// n pieces; ties go to the pair of lower ids. The k-th merged piece scores -k and the characters score
// below every merge, so Encode, merging the highest score first, segments each word exactly as the
// trainer did: the trainer keeps every word in the form Encode gives it under the vocabulary so far.
//
// Training is deterministic. It is an error when the text has fewer distinct pairs than n needs.
func Train(text string, n int) (*Tokenizer, error) { return TrainProgress(text, n, nil) }

// TrainProgress is Train that calls progress(pieces, n) as the vocabulary grows.
func TrainProgress(text string, n int, progress func(pieces, n int)) (*Tokenizer, error) {
	tr, err := train(text, n, progress)
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
	nchars   int                // number of character pieces, ids NumReserved.. NumReserved+nchars-1
	merges   map[uint64]int32   // adjacent pair of text pieces to the piece their concatenation is
	prefixes map[string][]int32 // proper prefixes of merged pieces to the pieces
	suffixes map[string][]int32 // proper suffixes of merged pieces to the pieces

	words [][]int32 // each distinct word's tokens, as Encode gives them under the vocabulary so far
	freq  []int64   // how often each word occurs
	order []int32   // the words of the text, in order
	pairs pairHeap  // weighted counts of adjacent pairs, most frequent on top
	m     merger
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// isBoundary reports whether a word starts at the character group g.
func isBoundary(g string) bool { return g[0] == ' ' || g[0] == '\n' }

// isChar reports whether the character group g is one valid UTF-8 code point.
func isChar(g string) bool {
	r, size := utf8.DecodeRuneInString(g)
	return size == len(g) && (r != utf8.RuneError || size > 1)
}

func train(text string, n int, progress func(pieces, n int)) (*trainer, error) {
	if n <= NumReserved {
		return nil, fmt.Errorf("tokenizer: vocabulary size %d: must exceed the %d reserved pieces (<unk>, <s>, </s> and 256 bytes)", n, NumReserved)
	}
	if text == "" {
		return nil, fmt.Errorf("tokenizer: no text to train on")
	}
	tr := &trainer{ids: map[string]int32{}, merges: map[uint64]int32{}, prefixes: map[string][]int32{}, suffixes: map[string][]int32{}}
	tr.pieces = append(tr.pieces, "<unk>", "\n<s>\n", "\n</s>\n")
	for b := range 256 {
		tr.pieces = append(tr.pieces, bytePiece(byte(b)))
	}
	for range tr.pieces {
		tr.rank = append(tr.rank, -1)
	}

	// Words: the first one starts with the dummy prefix, a space of its own (run.c groups it apart
	// from the bytes after it), so it is kept apart from any equal-looking word later in the text.
	index := map[string]int32{}
	var groups [][]string // each distinct word's character groups
	charFreq := map[string]int64{" ": 0}
	addWord := func(w string, gs []string, first bool) {
		id, ok := index[w]
		if !ok || first {
			id = int32(len(groups))
			groups = append(groups, gs)
			tr.freq = append(tr.freq, 0)
			if !first {
				index[w] = id
			}
		}
		tr.freq[id]++
		tr.order = append(tr.order, id)
	}
	gs := []string{" "}
	start, first := 0, true
	for i := 0; i < len(text); {
		j := nextGroup(text, i)
		g := text[i:j]
		if isBoundary(g) && len(gs) > 0 {
			addWord(text[start:i], gs, first)
			gs, start, first = nil, i, false
		}
		gs = append(gs, g)
		i = j
	}
	addWord(text[start:], gs, first)
	for id, gs := range groups {
		for _, g := range gs {
			if isChar(g) {
				charFreq[g] += tr.freq[id]
			}
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
		if !contains(keep, " ") {
			keep[room-1] = " "
		}
		chars = keep
	}
	for _, c := range chars {
		tr.ids[c] = int32(len(tr.pieces))
		tr.pieces = append(tr.pieces, c)
		tr.rank = append(tr.rank, -1)
	}
	tr.nchars = len(chars)

	tr.words = make([][]int32, len(groups))
	for w, gs := range groups {
		var toks []int32
		for _, g := range gs {
			if id, ok := tr.ids[g]; ok {
				toks = append(toks, id)
			} else {
				for k := 0; k < len(g); k++ {
					toks = append(toks, byteBase+int32(g[k]))
				}
			}
		}
		tr.words[w] = toks
		tr.countPairs(int32(w), toks, +1, true)
	}

	if progress != nil {
		progress(len(tr.pieces), n)
	}
	var affected []int32
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
		for _, s := range affected {
			for _, w := range tr.pairs.occ[s] {
				if stamp[w] == step {
					continue
				}
				stamp[w] = step
				tr.update(w)
			}
			tr.pairs.occ[s] = nil // every occurrence has merged: the pair never forms again
		}
		if progress != nil && (len(tr.pieces)%64 == 0 || len(tr.pieces) == n) {
			progress(len(tr.pieces), n)
		}
	}
	return tr, nil
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// add makes piece a new merged piece and appends to affected the slots of the counted pairs that now
// merge into it. It records every pair of pieces whose concatenation is a piece, the new piece being
// the left part, the right part or the whole.
func (tr *trainer) add(piece string, affected []int32) []int32 {
	p := int32(len(tr.pieces))
	tr.ids[piece] = p
	tr.pieces = append(tr.pieces, piece)
	tr.rank = append(tr.rank, int32(len(tr.pieces)-NumReserved-tr.nchars-1))
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

// update brings word w to the form Encode gives it under the vocabulary so far and moves its pair
// counts along.
func (tr *trainer) update(w int32) {
	old := tr.words[w]
	toks := tr.m.run(append([]int32(nil), old...), tr.pair)
	if len(toks) == len(old) {
		return // a stale occurrence: the word no longer holds the pair
	}
	tr.countPairs(w, old, -1, false)
	tr.countPairs(w, toks, +1, true)
	tr.words[w] = toks
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

// countPairs adds sign times word w's frequency to the count of each adjacent pair of text pieces in
// toks; with record it also notes that w holds them.
func (tr *trainer) countPairs(w int32, toks []int32, sign int64, record bool) {
	f := sign * tr.freq[w]
	for i := 0; i+1 < len(toks); i++ {
		a, b := toks[i], toks[i+1]
		if a < NumReserved || b < NumReserved {
			continue // byte pieces never merge
		}
		s := tr.pairs.add(pairKey(a, b), f)
		if record {
			tr.pairs.occ[s] = append(tr.pairs.occ[s], w)
		}
	}
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

// segmentation returns the trainer's tokens of the whole text: its words' tokens in order.
func (tr *trainer) segmentation() []int {
	var out []int
	for _, w := range tr.order {
		for _, id := range tr.words[w] {
			out = append(out, int(id))
		}
	}
	return out
}
