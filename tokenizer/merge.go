package tokenizer

// pairFunc says what the adjacent tokens a, b merge into: the merged id and its priority (the higher,
// the earlier), or ok false when they do not merge.
type pairFunc func(a, b int32) (id int32, score float32, ok bool)

// A candidate is a possible merge of the token at pos with the next one.
type candidate struct {
	score       float32 // priority of the merged piece
	pos         int32   // index of the left token in the original sequence
	left, right int32   // the two ids when the candidate was made: it is stale once either changed
	id          int32   // merged id
}

// before orders candidates as run.c's scan picks them: the highest score, then the leftmost.
func (c candidate) before(d candidate) bool {
	return c.score > d.score || c.score == d.score && c.pos < d.pos
}

// A merger runs the BPE merge loop of run.c's encode in O(n log n): a heap of adjacent pairs over a
// linked list of tokens, instead of a rescan of the whole list for every merge. It keeps its buffers
// between runs.
type merger struct {
	next, prev []int32
	heap       []candidate
}

// run merges toks in place until no adjacent pair merges and returns the result (a prefix of toks).
func (m *merger) run(toks []int32, pair pairFunc) []int32 {
	if len(toks) < 2 {
		return toks
	}
	m.link(len(toks))
	for i := 0; i+1 < len(toks); i++ {
		m.push(toks, int32(i), int32(i+1), pair)
	}
	m.loop(toks, pair, nil)
	return m.compact(toks)
}

// link starts a run over n tokens: a list in order and an empty heap.
func (m *merger) link(n int) {
	m.next = resize(m.next, n)
	m.prev = resize(m.prev, n)
	m.heap = m.heap[:0]
	for i := range n {
		m.next[i] = int32(i + 1)
		m.prev[i] = int32(i - 1)
	}
	m.next[n-1] = -1
}

// loop merges the best candidate until none is left. A merge pushes the new pairs it makes, so a run
// seeded with every pair (run) or with the only pairs that can merge (the trainer) ends where no pair
// merges. onMerge, when not nil, sees each merge before it happens: the tokens before and after the
// pair (-1 at an end), the pair and the merged id.
func (m *merger) loop(toks []int32, pair pairFunc, onMerge func(p, l, r, rr, id int32)) {
	for len(m.heap) > 0 {
		c := m.pop()
		r := m.next[c.pos]
		if toks[c.pos] != c.left || r < 0 || toks[r] != c.right {
			continue // stale: one of the two tokens has merged since
		}
		rr := m.next[r]
		if onMerge != nil {
			onMerge(m.prev[c.pos], c.pos, r, rr, c.id)
		}
		toks[c.pos] = c.id
		toks[r] = -1
		m.next[c.pos] = rr
		if rr >= 0 {
			m.prev[rr] = c.pos
		}
		if p := m.prev[c.pos]; p >= 0 {
			m.push(toks, p, c.pos, pair)
		}
		if rr >= 0 {
			m.push(toks, c.pos, rr, pair)
		}
	}
}

// compact returns the tokens left in the list, in order, in a prefix of toks.
func (m *merger) compact(toks []int32) []int32 {
	out := toks[:0]
	for i := int32(0); i >= 0; i = m.next[i] {
		out = append(out, toks[i])
	}
	return out
}

func resize(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// push adds the merge of tokens i and j (adjacent) when they merge.
func (m *merger) push(toks []int32, i, j int32, pair pairFunc) {
	id, score, ok := pair(toks[i], toks[j])
	if !ok {
		return
	}
	c := candidate{score: score, pos: i, left: toks[i], right: toks[j], id: id}
	h := append(m.heap, c)
	k := len(h) - 1
	for k > 0 {
		p := (k - 1) / 2
		if !c.before(h[p]) {
			break
		}
		h[k] = h[p]
		k = p
	}
	h[k] = c
	m.heap = h
}

func (m *merger) pop() candidate {
	h := m.heap
	top := h[0]
	last := h[len(h)-1]
	h = h[:len(h)-1]
	k := 0
	for {
		l := 2*k + 1
		if l >= len(h) {
			break
		}
		if r := l + 1; r < len(h) && h[r].before(h[l]) {
			l = r
		}
		if !h[l].before(last) {
			break
		}
		h[k] = h[l]
		k = l
	}
	if len(h) > 0 {
		h[k] = last
	}
	m.heap = h
	return top
}
