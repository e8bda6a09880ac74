package tokenizer

// A pairHeap counts adjacent pairs of pieces and keeps the most frequent on top (ties to the lower key,
// so that training is deterministic). Each pair has a slot; the heap orders slots.
type pairHeap struct {
	slot  map[uint64]int32 // pair key to slot
	key   []uint64         // pair by slot
	count []int64          // weighted count by slot
	occ   [][]int32        // words that hold (or held) the pair, by slot; may repeat
	at    []int32          // position of each slot in heap
	heap  []int32          // slots, a binary max-heap
}

// add adds delta to the count of the pair key and returns its slot.
func (h *pairHeap) add(key uint64, delta int64) int32 {
	if h.slot == nil {
		h.slot = map[uint64]int32{}
	}
	s, ok := h.slot[key]
	if !ok {
		s = int32(len(h.key))
		h.slot[key] = s
		h.key = append(h.key, key)
		h.count = append(h.count, 0)
		h.occ = append(h.occ, nil)
		h.at = append(h.at, int32(len(h.heap)))
		h.heap = append(h.heap, s)
	}
	h.count[s] += delta
	if delta > 0 {
		h.up(int(h.at[s]))
	} else if delta < 0 {
		h.down(int(h.at[s]))
	}
	return s
}

// top returns the slot of the most frequent pair and its count (0 when there is none).
func (h *pairHeap) top() (int32, int64) {
	if len(h.heap) == 0 {
		return -1, 0
	}
	s := h.heap[0]
	return s, h.count[s]
}

func (h *pairHeap) less(i, j int) bool { // heap[i] goes above heap[j]
	a, b := h.heap[i], h.heap[j]
	return h.count[a] > h.count[b] || h.count[a] == h.count[b] && h.key[a] < h.key[b]
}

func (h *pairHeap) swap(i, j int) {
	h.heap[i], h.heap[j] = h.heap[j], h.heap[i]
	h.at[h.heap[i]] = int32(i)
	h.at[h.heap[j]] = int32(j)
}

func (h *pairHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			return
		}
		h.swap(i, p)
		i = p
	}
}

func (h *pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.heap) {
			return
		}
		if r := l + 1; r < len(h.heap) && h.less(r, l) {
			l = r
		}
		if !h.less(l, i) {
			return
		}
		h.swap(i, l)
		i = l
	}
}
