package emulator

import (
	"github.com/anestar/anestar/mil"
)

// Concat targets. A concat of whole blocks (nothing before the axis but dims of size 1: the channel
// concat of a [1, C, 1, S] value, such as the FFN backward's d_h13 of d_h1 and d_h3) copies each part
// into its place in the result. When a part is read by the concat alone, its op can compute it in that
// place instead: the planner gives the part a window of the concat's buffer (planner.slots), and the
// concat copies only the parts that are not already where it would put them (a part that aliases
// another value, for one). The values are those the op computes either way, so the bits do not change
// (concat_target_test.go compares with the plain compile). Concats whose result is an output written
// from its parts (output_concat.go) have no buffer and are left to that.

// concatSlot is where a part of a concat target lives: elements [off, off+n) of the buffer of the
// concat's result owner, which holds total elements and is needed until op index until (the concat).
type concatSlot struct {
	owner      string
	off, total int
	until      int
}

// concatTargets returns the slots of the parts of fn's concats that can be computed in place: of plain
// concats of whole blocks whose result has a buffer (not an output written from its parts, nor one an
// output cast reads, casts), the parts that ops make, that the concat alone reads and that are no
// output or constant; not those of a concat that is itself such a part. outputs and used are the
// function's outputs and the names its ops read.
func (c *compiler) concatTargets(outputs, used map[string]bool, casts map[int]int) map[string]concatSlot {
	fn := c.fn
	reads := readCounts(fn)
	made := map[string]mil.Type{} // the values ops make, and their types
	for _, op := range fn.Ops {
		if op != nil && op.Kind != "const" {
			for _, r := range op.Results {
				if r != nil {
					made[r.Name] = r.Type
				}
			}
		}
	}
	slots := map[string]concatSlot{}
	owners := map[string]bool{}
	for i, op := range fn.Ops {
		if op == nil || op.Kind != "concat" || len(op.Results) != 1 || op.Results[0] == nil {
			continue
		}
		r := op.Results[0]
		if _, ok := casts[i]; ok || outputs[r.Name] && !used[r.Name] || r.Type.Kind != mil.TensorKind {
			continue
		}
		parts, ok := c.blockSlots(op, r.Type.Shape, made)
		if !ok {
			continue
		}
		for _, p := range parts {
			if reads[p.name] == 1 && !outputs[p.name] && c.consts[p.name] == nil {
				slots[p.name] = concatSlot{owner: r.Name, off: p.off, total: numel(r.Type.Shape), until: i}
				owners[r.Name] = true
			}
		}
	}
	// A concat's result that is itself a part of another: the outer one copies it.
	for name, s := range slots {
		if owners[name] {
			outer := s.owner
			for n, t := range slots {
				if t.owner == outer {
					delete(slots, n)
				}
			}
		}
	}
	return slots
}

// blockPart is one value of a concat and its offset in the result.
type blockPart struct {
	name string
	off  int
}

// blockSlots returns the parts of op, a concat, and their offsets when it lays whole blocks of values
// that ops make (made: their types) end to end into its result of shape; ok is false otherwise.
func (c *compiler) blockSlots(op *mil.Op, shape []int, made map[string]mil.Type) (parts []blockPart, ok bool) {
	a := op.Arg("values")
	if a == nil {
		return nil, false
	}
	seen := map[string]bool{}
	var shapes [][]int
	off := 0
	for _, o := range a.Operands {
		if o.Ref == nil || seen[o.Ref.Name] {
			return nil, false
		}
		t, ok := made[o.Ref.Name]
		if !ok || t.Kind != mil.TensorKind {
			return nil, false
		}
		seen[o.Ref.Name] = true
		shapes = append(shapes, t.Shape)
		parts = append(parts, blockPart{name: o.Ref.Name, off: off})
		off += numel(t.Shape)
	}
	return parts, c.wholeBlocks(op, shape, shapes)
}
