package ane

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/anestar/anestar/mil"
)

// Packing. The ANE takes one input and one output per program (RuleSingleIO), so a program that
// declares several is compiled packed: its inputs become windows of one input and its outputs windows
// of one output, with the slices, casts and concats inside the program. The layout is computed here,
// from the declarations alone, under the I/O rules (rank 4, fp16 or fp32, widths a multiple of
// WidthAlign); scripts and Go callers reach the parts by name (Binding.Input, Binding.Output).
//
// Inputs go side by side along the spatial axis in blocks of one width each, a part with fewer
// channels than the widest stacked under others of its width where there is room (two [kv, N] parts
// of a [dim, N] program share one block when 2 kv <= dim). Outputs go in bands of one channel count
// each, side by side within a band where they fit the packed width, the bands concatenated on channels;
// a band not filled is padded with zeros.

// Part is where one declared input or output lives in its packed surface: the window of channels
// [Channel, Channel + C) and columns [Column, Column + H*W) of a [1, C, H, W] part.
type Part struct {
	Name    string   // the declared input or output
	Type    mil.Type // its declared type
	Channel int      // first channel of its window
	Column  int      // first column of its window
	Flat    int      // for a part with more channels than the packed surface: the width of the block of all
	// its rows that its values fill in row-major order (NewFlatView); 0 for a window
}

// Port is one packed input or output and the parts it holds.
type Port struct {
	Name  string   // the MIL name of the packed input or output
	Type  mil.Type // its type, [1, C, 1, W]
	Parts []Part   // in declaration (inputs) or return (outputs) order
}

// Layout is how a program's inputs and outputs were packed. A side with one port keeps it as declared:
// its Port is that input or output, with one Part of the whole.
type Layout struct {
	In, Out Port
}

// PartFor returns the part called name of port p.
func (p Port) PartFor(name string) (Part, bool) {
	for _, pt := range p.Parts {
		if pt.Name == name {
			return pt, true
		}
	}
	return Part{}, false
}

// NeedsPacking reports whether p's main declares more than one input or output.
func NeedsPacking(p *mil.Program) bool {
	m := p.Main()
	return m != nil && (len(m.Inputs) > 1 || len(m.Outputs) > 1)
}

// packedZeros is the weight file of the zeros that pad an output band.
const packedZeros = "@model_path/weights/packed_zeros.bin"

// Pack returns p with its inputs packed into one input and its outputs into one output, the weight
// files that program needs (w, and the zeros that pad outputs) and the layout. A program with one
// input and one output is returned as it is, with a nil layout. Errors name the part and the rule.
//
// The packed program computes in fp16 as the ANE needs: an fp32 packed input is cast to fp16 at once
// and sliced in fp16, a part's own cast to fp16 is folded into its slice, and fp32 outputs made by a
// cast are concatenated before the cast, which then runs once on the packed output.
func Pack(p *mil.Program, w mil.Weights) (*mil.Program, mil.Weights, *Layout, error) {
	return PackOn(p, w, DefaultChip())
}

// PackOn is Pack with the packed surfaces within chip's caps (an input too wide for one layout takes
// more channels, its parts flattened into them).
func PackOn(p *mil.Program, w mil.Weights, chip Chip) (*mil.Program, mil.Weights, *Layout, error) {
	if chip.Name == "" {
		chip = DefaultChip()
	}
	if !NeedsPacking(p) {
		return p, w, nil, nil
	}
	main := p.Main()
	n := len(main.Inputs) + len(main.Ops) // about the names the maps hold: sized once, not grown
	pk := &packer{chip: chip, names: make(map[string]bool, n), outputs: map[string]bool{}, w: w, def: make(map[string]*mil.Op, n),
		uses: make(map[string][]*mil.Op, n), drop: map[*mil.Op]bool{}, rename: map[string]string{}, consts: main.Consts()}
	types := make(map[string]mil.Type, n)
	for _, in := range main.Inputs {
		pk.names[in.Name], types[in.Name] = true, in.Type
	}
	for _, op := range main.Ops {
		for _, r := range op.Results {
			pk.names[r.Name], types[r.Name] = true, r.Type
			pk.def[r.Name] = op
		}
		for _, a := range op.Args {
			for _, o := range a.Operands {
				if o.Ref != nil {
					pk.uses[o.Ref.Name] = append(pk.uses[o.Ref.Name], op)
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, o := range main.Outputs {
		if seen[o.Name] {
			return nil, nil, nil, fmt.Errorf("pack: output %s is returned twice: two parts with one name; return it once", o.Name)
		}
		seen[o.Name] = true
		pk.outputs[o.Name] = true
	}
	fn := *main
	fn.Ops = nil
	l := &Layout{}
	var err error
	if l.In, err = pk.packInputs(&fn, main.Inputs); err != nil {
		return nil, nil, nil, err
	}
	var outs []*mil.Var
	for _, o := range main.Outputs {
		outs = append(outs, &mil.Var{Name: o.Name, Type: types[o.Name]})
	}
	var tail []*mil.Op
	if l.Out, tail, err = pk.packOutputs(outs); err != nil {
		return nil, nil, nil, err
	}
	for _, op := range main.Ops {
		if !pk.drop[op] {
			fn.Ops = append(fn.Ops, pk.renamed(op))
		}
	}
	fn.Ops = append(fn.Ops, tail...)
	fn.Outputs = []mil.Ref{{Name: l.Out.Name}}
	q := *p
	q.Funcs = slices.Clone(p.Funcs)
	for i, f := range q.Funcs {
		if f == main {
			q.Funcs[i] = &fn
		}
	}
	if err := mil.Check(&q); err != nil {
		return nil, nil, nil, fmt.Errorf("pack: the packed program does not check: %w", err)
	}
	return &q, pk.w, l, nil
}

// packer adds the ops of packing to a function, under names the program does not use.
type packer struct {
	names   map[string]bool      // every name in use
	w       mil.Weights          // weight files of the packed program
	zeros   *mil.BlobWriter      // the padding zeros' file, once needed
	def     map[string]*mil.Op   // var -> its op
	uses    map[string][]*mil.Op // var -> the ops that take it
	outputs map[string]bool      // main's outputs
	drop    map[*mil.Op]bool     // ops of the program that packing folds away
	rename  map[string]string    // uses of a dropped cast's result -> the var that replaces it
	consts  mil.Consts
	chip    Chip // whose caps the packed surfaces keep within
}

// renamed returns op with its operands renamed as rename says (a copy when any is).
func (pk *packer) renamed(op *mil.Op) *mil.Op {
	var c *mil.Op
	for ai, a := range op.Args {
		for oi, o := range a.Operands {
			if o.Ref == nil || pk.rename[o.Ref.Name] == "" {
				continue
			}
			if c == nil {
				cp := *op
				cp.Args = make([]*mil.Arg, len(op.Args))
				for i, a := range op.Args {
					ac := *a
					ac.Operands = slices.Clone(a.Operands)
					cp.Args[i] = &ac
				}
				c = &cp
			}
			c.Args[ai].Operands[oi] = mil.Operand{Ref: &mil.Ref{Name: pk.rename[o.Ref.Name]}}
		}
	}
	if c == nil {
		return op
	}
	return c
}

// castTo reports whether op is a cast to dtype dt.
func (pk *packer) castTo(op *mil.Op, dt mil.DType) bool {
	if op == nil || op.Kind != "cast" {
		return false
	}
	v := pk.consts.ArgValue(op, "dtype")
	if v == nil {
		return false
	}
	s, err := v.Str()
	return err == nil && s == dt.String()
}

func (pk *packer) fresh(base string) string {
	n := base
	for i := 1; pk.names[n]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	pk.names[n] = true
	return n
}

// checkPart reports an error unless v can be a part: rank 4 [1, C, H, W], fp16 or fp32. A part with H > 1
// travels as [1, C, 1, H*W], as its surface holds it, reshaped inside the program.
func checkPart(kind string, v *mil.Var) error {
	t := v.Type
	if t.Kind != mil.TensorKind || len(t.Shape) != 4 || t.Shape[0] != 1 {
		return fmt.Errorf("pack: %s %s is %s: a packed part must be [1, C, H, W] (rule %s); reshape it", kind, v.Name, t, RuleIORank)
	}
	if t.DType != mil.FP16 && t.DType != mil.FP32 {
		return fmt.Errorf("pack: %s %s is %s: a packed part must be fp16 or fp32 (rule %s)", kind, v.Name, t, RuleIODType)
	}
	return nil
}

// partCS is a part's channels and columns in its packed surface: C and H*W of [1, C, H, W].
func partCS(t mil.Type) (c, s int) { return t.Shape[1], t.Shape[2] * t.Shape[3] }

// packedDType is fp32 when any part is, else fp16: fp16 values travel exactly in fp32.
func packedDType(vs []*mil.Var) mil.DType {
	for _, v := range vs {
		if v.Type.DType == mil.FP32 {
			return mil.FP32
		}
	}
	return mil.FP16
}

func alignWidth(n int) int { return max(WidthAlign, (n+WidthAlign-1)/WidthAlign*WidthAlign) }

func ref(name string) []mil.Operand { return []mil.Operand{{Ref: &mil.Ref{Name: name}}} }

// constant adds a const op holding v.
func (pk *packer) constant(fn *mil.Func, base string, v *mil.Value) string {
	n := pk.fresh(base)
	fn.Ops = append(fn.Ops, &mil.Op{Kind: "const",
		Attrs:   []*mil.Attr{{Name: "name", Value: mil.StringValue(n)}, {Name: "val", Value: v}},
		Results: []*mil.Var{{Name: n, Type: v.Type}}})
	return n
}

// op adds an op of kind named name with the given arguments (each a var name, or a tuple of them).
func (pk *packer) op(fn *mil.Func, kind, name string, t mil.Type, args ...any) {
	op := &mil.Op{Kind: kind, Attrs: []*mil.Attr{{Name: "name", Value: mil.StringValue(name)}}, Results: []*mil.Var{{Name: name, Type: t}}}
	for i := 0; i < len(args); i += 2 {
		a := &mil.Arg{Name: args[i].(string)}
		switch v := args[i+1].(type) {
		case string:
			a.Operands = ref(v)
		case []string:
			a.Tuple = true
			for _, n := range v {
				a.Operands = append(a.Operands, ref(n)...)
			}
		}
		op.Args = append(op.Args, a)
	}
	fn.Ops = append(fn.Ops, op)
}

// cast adds a cast of var from (of type t) to dtype dt named name.
func (pk *packer) cast(fn *mil.Func, name, from string, t mil.Type, dt mil.DType) {
	d := pk.constant(fn, name+"_dtype", mil.StringValue(dt.String()))
	pk.op(fn, "cast", name, mil.Tensor(dt, t.Shape...), "x", from, "dtype", d)
}

// inputLayout places the input parts: it tries each part's channel count as the packed one, stacking
// the parts with fewer channels in blocks of one width and flattening those with more (when their
// values fill whole rows), and keeps the smallest packed surface (on a tie, the most channels: the
// fewest parts flattened) whose width is at most maxW and channels at most maxC; where none is, it tries
// multiples of the channel counts too (more rows, fewer columns). It returns the channels, the parts
// and the columns used; no parts when nothing fits.
func inputLayout(ins []*mil.Var, maxW, maxC int) (int, []Part, int) {
	var cands []int
	for _, v := range ins {
		cands = append(cands, v.Type.Shape[1])
	}
	c, parts, cols := layoutAmong(ins, cands, maxW, maxC)
	if parts != nil {
		return c, parts, cols
	}
	var more []int
	for _, b := range cands {
		for k := 2; k <= 64 && b*k <= maxC; k *= 2 {
			more = append(more, b*k)
		}
	}
	return layoutAmong(ins, more, maxW, maxC)
}

// layoutAmong is inputLayout over the candidate channel counts cands.
func layoutAmong(ins []*mil.Var, cands []int, maxW, maxC int) (int, []Part, int) {
	best, bestParts, bestCols := 0, []Part(nil), 0
	for _, c := range cands {
		if c > maxC {
			continue
		}
		var keys, sizes, flat []int
		ok := true
		for _, v := range ins {
			ci, si := partCS(v.Type)
			switch {
			case ci <= c:
				keys, sizes, flat = append(keys, si), append(sizes, ci), append(flat, 0)
			case ci*si%c == 0: // flattened: a block of its own, all c rows
				keys, sizes, flat = append(keys, ci*si/c), append(sizes, c), append(flat, ci*si/c)
			default:
				ok = false
			}
		}
		if !ok {
			continue
		}
		// Flattened parts need blocks of their own: give them keys no window shares.
		sh := shelveApart(keys, sizes, flat, c)
		if alignWidth(sh.total) > maxW {
			continue
		}
		area, bestArea := c*alignWidth(sh.total), best*alignWidth(bestCols)
		if bestParts != nil && (area > bestArea || area == bestArea && c <= best) {
			continue
		}
		best, bestCols, bestParts = c, sh.total, nil
		for i, v := range ins {
			bestParts = append(bestParts, Part{Name: v.Name, Type: v.Type, Channel: sh.at[i], Column: sh.start[sh.shelf[i]], Flat: flat[i]})
		}
	}
	return best, bestParts, bestCols
}

// shelveApart is shelve with the items whose apart entry is non-zero each on a shelf of its own.
func shelveApart(keys, sizes, apart []int, room int) shelving {
	var sh shelving
	for i, k := range keys {
		s := -1
		for j := range sh.key {
			if apart[i] == 0 && !sh.alone[j] && sh.key[j] == k && sh.used[j]+sizes[i] <= room {
				s = j
				break
			}
		}
		if s < 0 {
			s = len(sh.key)
			sh.key, sh.used, sh.start = append(sh.key, k), append(sh.used, 0), append(sh.start, sh.total)
			sh.alone = append(sh.alone, apart[i] != 0)
			sh.total += k
		}
		sh.shelf, sh.at = append(sh.shelf, s), append(sh.at, sh.used[s])
		sh.used[s] += sizes[i]
	}
	return sh
}

// packInputs packs ins into one input of fn and adds the ops that take each part out of it, under the
// part's own name.
func (pk *packer) packInputs(fn *mil.Func, ins []*mil.Var) (Port, error) {
	if len(ins) == 1 {
		fn.Inputs = ins
		return Port{Name: ins[0].Name, Type: ins[0].Type, Parts: []Part{{Name: ins[0].Name, Type: ins[0].Type}}}, nil
	}
	for _, v := range ins {
		if err := checkPart("input", v); err != nil {
			return Port{}, err
		}
	}
	c, parts, cols := inputLayout(ins, pk.chip.SpatialCap, pk.chip.ChannelCap)
	if parts == nil {
		return Port{}, fmt.Errorf("pack: the inputs %s fit no packed surface within chip %s's caps (%d columns, %d channels; rule %s): make the parts smaller, or check for a chip that takes more (--chip)",
			varNames(ins), pk.chip.Name, pk.chip.SpatialCap, pk.chip.ChannelCap, RuleAxisCap)
	}
	dt := packedDType(ins)
	port := Port{Name: pk.fresh("packed_input"), Type: mil.Tensor(dt, 1, c, 1, alignWidth(cols)), Parts: parts}
	fn.Inputs = []*mil.Var{{Name: port.Name, Type: port.Type}}
	src := port.Name
	if dt != mil.FP16 { // the ANE slices in fp16: cast the packed input once
		src = pk.fresh(port.Name + "_fp16")
		pk.cast(fn, src, port.Name, port.Type, mil.FP16)
	}
	for _, pt := range parts {
		if len(pk.uses[pt.Name]) == 0 && !pk.outputs[pt.Name] {
			continue // its columns are there; nothing reads them (a slice of them would be dead code)
		}
		name := pt.Name
		if pt.Type.DType != mil.FP16 {
			// An fp32 part whose every use is a cast to fp16 is that fp16 slice: the casts fold away.
			casts := pk.uses[pt.Name]
			fold := len(casts) > 0 && !pk.outputs[pt.Name]
			for _, op := range casts {
				fold = fold && pk.castTo(op, mil.FP16) && !pk.outputs[op.Results[0].Name]
			}
			if fold {
				name = casts[0].Results[0].Name
				for _, op := range casts {
					pk.drop[op] = true
					if r := op.Results[0].Name; r != name {
						pk.rename[r] = name
					}
				}
			} else {
				name = pk.fresh(pt.Name + "_packed")
			}
		}
		begin := pk.constant(fn, name+"_begin", mil.IntsValue(0, pt.Channel, 0, pt.Column))
		ci, si := partCS(pt.Type)
		flat := []int{1, ci, 1, si}
		if pt.Flat > 0 {
			flat = []int{1, c, 1, pt.Flat}
		}
		sliced := name
		if !slices.Equal(flat, pt.Type.Shape) {
			sliced = pk.fresh(name + "_flat")
		}
		size := pk.constant(fn, sliced+"_size", mil.IntsValue(flat...))
		pk.op(fn, "slice_by_size", sliced, mil.Tensor(mil.FP16, flat...), "x", src, "begin", begin, "size", size)
		if sliced != name {
			pk.reshape(fn, name, sliced, flat, pt.Type.Shape)
		}
		if pt.Type.DType != mil.FP16 && name != pt.Name && pk.rename[name] == "" && !pk.dropped(name) {
			pk.cast(fn, pt.Name, name, pt.Type, pt.Type.DType)
		}
	}
	return port, nil
}

// reshape adds the reshape of from (of shape fromShape) to name (of shape to) in the forms the
// references ran (rule op-form): through the shapes ReshapeSteps gives.
func (pk *packer) reshape(fn *mil.Func, name, from string, fromShape, to []int) {
	steps := ReshapeSteps(fromShape, to)
	for i, shape := range steps {
		out := name
		if i < len(steps)-1 {
			out = pk.fresh(fmt.Sprintf("%s_step%d", name, i+1))
		}
		c := pk.constant(fn, out+"_shape", mil.IntsValue(shape...))
		pk.op(fn, "reshape", out, mil.Tensor(mil.FP16, shape...), "x", from, "shape", c)
		from = out
	}
}

// dropped reports whether name is the result of a cast packing folded away (so its slice stands in).
func (pk *packer) dropped(name string) bool {
	op := pk.def[name]
	return op != nil && pk.drop[op]
}

// packOutputs packs outs into one output, in bands concatenated on channels, and returns the ops that
// do it, to follow the program's.
func (pk *packer) packOutputs(outs []*mil.Var) (Port, []*mil.Op, error) {
	if len(outs) == 1 {
		return Port{Name: outs[0].Name, Type: outs[0].Type, Parts: []Part{{Name: outs[0].Name, Type: outs[0].Type}}}, nil, nil
	}
	for _, v := range outs {
		if err := checkPart("output", v); err != nil {
			return Port{}, nil, err
		}
	}
	width := 0
	for _, v := range outs {
		_, si := partCS(v.Type)
		width = max(width, si)
	}
	width = alignWidth(width)
	dt := packedDType(outs)
	// Each part's value in the concat: fp16 where it can be (an fp32 output made by a cast from fp16,
	// used nowhere else, goes in before its cast), else fp32 and the concat with it.
	values := make([]string, len(outs))
	cat := mil.FP16
	for i, v := range outs {
		values[i] = v.Name
		if v.Type.DType == mil.FP16 {
			continue
		}
		op := pk.def[v.Name]
		if pk.castTo(op, mil.FP32) && len(pk.uses[v.Name]) == 0 {
			if x := argRef(op, "x"); x != "" && pk.typeOf(x).DType == mil.FP16 {
				values[i] = x
				pk.drop[op] = true
				continue
			}
		}
		cat = mil.FP32
	}
	tail := &mil.Func{}
	for i, v := range outs {
		if cat == mil.FP32 && v.Type.DType == mil.FP16 {
			values[i] = pk.fresh(v.Name + "_packed")
			pk.cast(tail, values[i], v.Name, v.Type, mil.FP32)
		}
		if c, s := partCS(v.Type); v.Type.Shape[2] != 1 {
			flat := pk.fresh(v.Name + "_flat")
			shape := pk.constant(tail, flat+"_shape", mil.IntsValue(1, c, 1, s))
			pk.op(tail, "reshape", flat, mil.Tensor(cat, 1, c, 1, s), "x", values[i], "shape", shape)
			values[i] = flat
		}
	}
	chans, widths := make([]int, len(outs)), make([]int, len(outs))
	for i, v := range outs {
		chans[i], widths[i] = partCS(v.Type)
	}
	sh := shelve(chans, widths, width)
	bands := make([][]string, len(sh.start))
	var parts []Part
	for i, v := range outs {
		parts = append(parts, Part{Name: v.Name, Type: v.Type, Channel: sh.start[sh.shelf[i]], Column: sh.at[i]})
		bands[sh.shelf[i]] = append(bands[sh.shelf[i]], values[i])
	}
	rows := sh.total
	port := Port{Name: pk.fresh("packed_output"), Type: mil.Tensor(dt, 1, rows, 1, width), Parts: parts}
	joined := port.Name
	if cat != dt {
		joined = pk.fresh(port.Name + "_fp16")
	}
	var bandVars []string
	for i, vals := range bands {
		if used := sh.used[i]; used < width {
			z, err := pk.zerosConst(tail, cat, []int{1, sh.key[i], 1, width - used})
			if err != nil {
				return Port{}, nil, err
			}
			vals = append(vals, z)
		}
		if len(vals) == 1 {
			bandVars = append(bandVars, vals[0])
			continue
		}
		name := joined
		if len(bands) > 1 {
			name = pk.fresh(port.Name + "_band" + strconv.Itoa(i))
		}
		pk.concat(tail, name, vals, 3, mil.Tensor(cat, 1, sh.key[i], 1, width))
		bandVars = append(bandVars, name)
	}
	if len(bandVars) > 1 {
		pk.concat(tail, joined, bandVars, 1, mil.Tensor(cat, 1, rows, 1, width))
	} else if bandVars[0] != joined { // one band of one part filling the width: a copy under the port's name
		shape := pk.constant(tail, joined+"_shape", mil.IntsValue(1, rows, 1, width))
		pk.op(tail, "reshape", joined, mil.Tensor(cat, 1, rows, 1, width), "x", bandVars[0], "shape", shape)
	}
	if joined != port.Name {
		pk.cast(tail, port.Name, joined, mil.Tensor(cat, 1, rows, 1, width), dt)
	}
	return port, tail.Ops, nil
}

// typeOf is the type of var name of the program (as its op declares it); inputs are not asked.
func (pk *packer) typeOf(name string) mil.Type {
	if op := pk.def[name]; op != nil {
		for _, r := range op.Results {
			if r.Name == name {
				return r.Type
			}
		}
	}
	return mil.Type{}
}

// argRef is the name op's argument refers to, or "".
func argRef(op *mil.Op, name string) string {
	a := op.Arg(name)
	if a == nil || len(a.Operands) != 1 || a.Operands[0].Ref == nil {
		return ""
	}
	return a.Operands[0].Ref.Name
}

// shelving is a first-fit placement of items on shelves: each item has a key (the shelf's extent
// along one axis, e.g. an input block's width) and a size along the other, and goes on the first shelf
// of its key with room left, else on a new one.
type shelving struct {
	shelf, at []int  // per item: its shelf and its offset on the shelf
	key, used []int  // per shelf: its key and the room its items take
	start     []int  // per shelf: its offset, the keys of the shelves before it added up
	alone     []bool // per shelf: it holds one item that shares with none (shelveApart)
	total     int    // all shelves' keys added up
}

// shelve places items of keys and sizes on shelves of room each.
func shelve(keys, sizes []int, room int) shelving {
	return shelveApart(keys, sizes, make([]int, len(keys)), room)
}

func (pk *packer) concat(fn *mil.Func, name string, values []string, axis int, t mil.Type) {
	ax := pk.constant(fn, name+"_axis", mil.ScalarValue(mil.Int32, float64(axis)))
	il := pk.constant(fn, name+"_interleave", mil.BoolValue(false))
	pk.op(fn, "concat", name, t, "values", values, "axis", ax, "interleave", il)
}

// zerosConst adds a const of zeros of dtype dt and the given shape, its data in the packing's weight file.
func (pk *packer) zerosConst(fn *mil.Func, dt mil.DType, shape []int) (string, error) {
	if pk.zeros == nil {
		if _, taken := pk.w[packedZeros]; taken {
			return "", fmt.Errorf("pack: the program has a weight file %s, which packing needs: rename it", packedZeros)
		}
		pk.zeros = mil.NewBlobWriter()
		w := mil.Weights{}
		for k, v := range pk.w {
			w[k] = v
		}
		pk.w = w
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	off, err := pk.zeros.AddZeros(dt, n)
	if err != nil {
		return "", fmt.Errorf("pack: %w", err)
	}
	pk.w[packedZeros] = pk.zeros.Bytes()
	return pk.constant(fn, "packed_zeros", &mil.Value{Type: mil.Tensor(dt, shape...), Blob: &mil.BlobRef{Path: packedZeros, Offset: off}}), nil
}

// partNames lists the parts of a port, for messages.
func varNames(vs []*mil.Var) string {
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return strings.Join(names, ", ")
}

func partNames(p Port) string {
	var s []string
	for _, pt := range p.Parts {
		s = append(s, pt.Name)
	}
	return strings.Join(s, ", ")
}
