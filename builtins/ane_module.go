package builtins

import (
	"fmt"

	"github.com/anestar/anestar/ane"
	"github.com/anestar/anestar/ane/emulator"
	"go.starlark.net/starlark"
)

func (s *session) aneModule() *moduleDef {
	return &moduleDef{
		name: "ane",
		doc: "Compiles programs into kernels and moves data through their surfaces. The backend is the real " +
			"Neural Engine or the emulator (--backend); scripts see no difference but speed and ane.backend(). " +
			"Surfaces hold fp16 or fp32 tensors packed channel-first; every read and write names a channel range " +
			"(and for regions a column range along the spatial axis) and is bounds-checked.",
		vals: valueMap{"width_align": starlark.MakeInt(ane.WidthAlign)},
		fns: []fnDef{
			{sig: "width_align", doc: "The ANE's width rule: every kernel input's and output's width W (the last dim) is a multiple of this, and at least this (32)."},
			{sig: "reshape_steps(from_shape, to_shape)", doc: "The shapes a rank-4 reshape from from_shape to to_shape goes through in " +
				"reshapes a reference ran (each keeps axes 0 and 3, or 0 and 1: rule op-form), a list ending in to_shape: one " +
				"reshape when the direct one is such, else two or three.", fn: aneReshapeSteps},
			{sig: "compile(program, stream = 0)", doc: "Compiles a mil.program into a kernel. Kernels compiled on different streams " +
				"evaluate at the same time (kernel.start); on the emulator those of one stream share scratch and take turns, and each " +
				"stream holds scratch of its own (about that of its largest kernel); on the ANE the stream changes nothing. Each call counts against the " +
				"process's compile budget (about 100 on the ANE); the program cannot change afterwards. A program that " +
				"breaks a rule the ANE is known to have (see ane.eligible) is an error on every backend but the emulator " +
				"in relaxed mode. In a dry run (process.dry_run) it only checks the program, its weights and its " +
				"eligibility: the kernel's surfaces exist, its eval is an error, and nothing counts.", fn: s.aneCompile},
			{sig: "eligible(program)", doc: "What the ANE is known to do with a mil.program: a struct with support " +
				"(\"proven\", \"unknown\" or \"refused\", the worst of its findings), findings (one per input, output and op " +
				"of main, then for the whole program: each a struct of support, rule, what, reason, fix and text, the message " +
				"as `anestar check` prints it) and ops (the op kinds used). ane.compile refuses a program whose support is " +
				"\"refused\" on every backend but the emulator in relaxed mode (--relaxed); `anestar check` lists every verdict.",
				fn: s.aneEligible},
			{sig: "backend()", doc: "The backend's name: \"ane\" or \"emulator\".", fn: s.aneQuery(func(be ane.Backend) starlark.Value { return starlark.String(be.Name()) })},
			{sig: "numerics()", doc: "How kernels round: \"fp16\" as the ANE does (every op's result rounded to fp16), or \"fp32\" when the emulator runs without rounding (--fp32).", fn: s.aneQuery(func(be ane.Backend) starlark.Value { return starlark.String(backendNumerics(be)) })},
			{sig: "compiles()", doc: "The number of compiles this process has done on the backend.", fn: s.aneQuery(func(be ane.Backend) starlark.Value { return starlark.MakeInt(be.Compiles()) })},
			{sig: "peak_flops()", doc: "The backend's nominal peak in FLOP/s, for utilisation figures: on the emulator the host's " +
				"measured sgemm peak (cpu.peak_flops()), on the ANE its nominal 15.8 TFLOP/s.", fn: s.aneQuery(func(be ane.Backend) starlark.Value { return starlark.Float(be.PeakFLOPS()) })},
			{sig: "memory()", doc: "What the kernels and bindings open now hold on the host, in bytes, a struct: surfaces (every " +
				"input and output surface of theirs), scratch (for each kernel, the most bytes of its program's values alive at " +
				"once in fp32, inputs included: what the emulator plans as its working memory; it shares buffers between " +
				"kernels, so it uses less: 60-85 % of this for the language model's; the ANE's own memory is not known), consts (the " +
				"bytes of their programs' constants, weights baked in among them, in fp32, as the emulator decodes them), kernels and bindings " +
				"(how many are open, a kernel counting as its own first binding). Known in a dry run too, where the surfaces " +
				"exist and nothing is compiled: what `anestar check` estimates a run's memory from.", fn: s.aneMemory},
		},
	}
}

func (s *session) aneCompile(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var p *milProgram
	stream := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "program", &p, "stream?", &stream); err != nil {
		return nil, err
	}
	if stream < 0 {
		return nil, nameErrf(b.Name(), "stream %d: streams are numbered from 0", stream)
	}
	prog, w, err := p.build(b.Name())
	if err != nil {
		return nil, err
	}
	if err := s.check(b.Name()); err != nil {
		return nil, err
	}
	var k ane.Kernel
	if s.cfg.DryRun {
		k, err = s.dryCompile(thread, b.Name(), prog, w)
		if err != nil {
			return nil, err
		}
	} else {
		be, err := s.getBackend(b.Name())
		if err != nil {
			return nil, err
		}
		if st, ok := be.(ane.Streams); ok && stream > 0 {
			if be, err = st.Stream(stream); err != nil {
				return nil, nameErr(b.Name(), err)
			}
		}
		k, err = be.Compile(prog, w)
		if err != nil {
			return nil, nameErr(b.Name(), err)
		}
		s.kernels = append(s.kernels, k)
	}
	p.sealed = true
	kv := &kernel{k: k, where: p.where, scratch: liveBytes(prog.Main()), consts: constBytes(prog.Main())}
	kv.binding = binding{s: s, b: k, owner: kv, methods: kernelMethods}
	kv.wrapSurfaces()
	s.track(&kv.binding)
	return kv, nil
}

// aneQuery returns a builtin that takes no arguments and answers f of the session's backend.
func (s *session) aneQuery(f func(ane.Backend) starlark.Value) impl {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
			return nil, err
		}
		be, err := s.getBackend(b.Name())
		if err != nil {
			return nil, err
		}
		return f(be), nil
	}
}

// binding is one set of a kernel's surfaces: the kernel's own (embedded in kernel, which gets its
// Starlark methods from it) or one made by kernel.bind().
type binding struct {
	s               *session
	b               ane.Binding
	owner           *kernel    // the kernel whose program it runs
	methods         *methodSet // kernelMethods for the kernel's own, else bindingMethods
	inputs, outputs []*surface // its surfaces
	evals           int        // evals so far
	pending         chan error // the result of the eval start() began, until wait() takes it
	closed          bool       // close() was called (for the kernel's own: the kernel was closed)
}

// kernel is a compiled program; it is its own first binding.
type kernel struct {
	binding
	k       ane.Kernel
	where   map[string]string // op result name -> the script line that built it (the program's where)
	scratch int               // the most bytes of its program's values alive at once (liveBytes), for ane.memory
	consts  int               // the bytes of its program's consts in fp32 (constBytes), for ane.memory
}

// surface is one input or output buffer of a kernel or binding.
type surface struct {
	s  *ane.Surface
	bd *binding // the binding it belongs to
}

var (
	_ starlark.HasAttrs = (*kernel)(nil)
	_ starlark.HasAttrs = (*binding)(nil)
	_ starlark.HasAttrs = (*surface)(nil)
)

// wrapSurfaces makes the Starlark surfaces of bd's ane.Binding.
func (bd *binding) wrapSurfaces() {
	for _, in := range bd.b.Inputs() {
		bd.inputs = append(bd.inputs, &surface{s: in, bd: bd})
	}
	for _, out := range bd.b.Outputs() {
		bd.outputs = append(bd.outputs, &surface{s: out, bd: bd})
	}
}

// The members kernels and bindings share.
var (
	inputsMember  = fnDef{sig: "inputs", doc: "The input surfaces, in declaration order, a list: one, the packed input, when compiling packed the program's inputs."}
	outputsMember = fnDef{sig: "outputs", doc: "The output surfaces, in return order, a list: one, the packed output, when compiling packed the program's outputs."}
	evalsMember   = fnDef{sig: "evals", doc: "The number of evals so far."}
	inputMember   = fnDef{sig: "input(name)", doc: "The surface of the declared input called name. When the program declares several inputs, " +
		"compiling packs them into one (under the strict rules; see mil.program.text) and this is a view of name's part of the packed surface: " +
		"every surface method works on it, on that part alone, with the part's [C, S] as its shape. An unknown name is an error.", fn: bindingInput}
	outputMember = fnDef{sig: "output(name)", doc: "The surface of the declared output called name: as input(name), for outputs.", fn: bindingOutput}
)

var kernelType = &typeDef{
	name: "kernel",
	doc: "A compiled program (from ane.compile) with one surface per input and per output of main. bind() " +
		"makes further sets of surfaces evaluated with the same compiled program, without compiling again.",
	members: []fnDef{
		inputsMember, outputsMember, evalsMember, inputMember, outputMember,
		{sig: "eval()", doc: "Runs the program once: reads the input surfaces, writes the output surfaces. A cancelled run stops it.", fn: bindingEval},
		startMember, waitMember,
		{sig: "bind()", doc: "A new binding: a full set of input and output surfaces of the program's types, read zero, evaluated " +
			"with this compiled program (one request each on the ANE). The layers of a model share one kernel and keep their weights " +
			"in their own binding's inputs. It does not compile: ane.compiles() does not move.", fn: kernelBind},
		{sig: "close()", doc: "Releases the kernel, its surfaces and every binding made by bind(): later evals, and reads and writes of their surfaces, are errors (on the emulator the memory goes to the next compiles). Kernels are closed when the run ends.", fn: bindingClose},
	},
}

var bindingType = &typeDef{
	name: "binding",
	doc: "A set of surfaces of a compiled kernel (from kernel.bind()), evaluated with the kernel's program. Its surfaces work " +
		"everywhere a kernel's do; writing one binding's inputs changes no other binding's outputs. Evals of a kernel and its " +
		"bindings take turns.",
	members: []fnDef{
		inputsMember, outputsMember, evalsMember, inputMember, outputMember,
		{sig: "eval()", doc: "Runs the kernel's program once on this binding: reads its input surfaces, writes its output surfaces.", fn: bindingEval},
		startMember, waitMember,
		{sig: "close()", doc: "Releases the binding and its surfaces: later evals, and reads and writes of its surfaces, are errors. The kernel and its other bindings are untouched; closing the kernel closes its bindings.", fn: bindingClose},
	},
}

var surfaceType = &typeDef{
	name: "surface",
	doc: "The buffer of one input or output of a kernel or binding, exactly the size of its tensor: C channels of S values " +
		"(for a [1, C, 1, S] tensor), fp16 or fp32. Writes convert from float32 (fp16 rounds half to even).",
	members: []fnDef{
		{sig: "name", doc: "The MIL name of the input or output."},
		{sig: "dtype", doc: "\"fp16\" or \"fp32\"."},
		{sig: "shape", doc: "The tensor's dims, a tuple."},
		{sig: "channels", doc: "C, the size of the channel axis."},
		{sig: "spatial", doc: "S, the values per channel."},
		{sig: "write(t, channel = 0)", doc: "Writes tensor t into channels [channel, channel + t.size / S): t holds whole channels, e.g. a [C', S] tensor.", fn: surfWrite},
		{sig: "read(channel = 0, count = None)", doc: "A new [count, S] tensor of channels [channel, channel + count); count defaults to the rest.", fn: surfRead},
		{sig: "read_into(t, channel = 0)", doc: "Reads channels [channel, channel + t.size / S) into t, allocating nothing.", fn: surfReadInto},
		{sig: "copy_from(src, src_channel = 0, channel = 0, count = None)", doc: "Copies count channels of surface src (same S) from src_channel into this surface at channel, converting dtypes if they differ.", fn: surfCopyFrom},
		{sig: "copy_region(src, channel, column, src_channel = 0, src_column = 0, channels = None, columns = None)", doc: "Copies the region channels [src_channel, src_channel + channels) x columns " +
			"[src_column, src_column + columns) of surface src (any shape; the counts default to the rest of src) into this surface at channel, column, converting dtypes if they differ: " +
			"one kernel's output handed to another kernel's input without a trip through a tensor.", fn: surfCopyRegion},
		{sig: "copy_reshaped(src, channel, column, rows, src_channel = 0, channels = None)", doc: "Copies channels [src_channel, src_channel + channels) of surface src " +
			"(channels defaults to the rest of src), their values in order, into rows channels from channel by as many columns from column as they fill, row after row, " +
			"converting dtypes if they differ: a block of one kernel's output handed to another kernel's input at another width, as t.reshape(rows, -1) would carry it.", fn: surfCopyReshaped},
		{sig: "write_region(t, channel, column, transposed = False)", doc: "Writes 2-D t [C', W] into channels [channel, channel + C') x columns [column, column + W) — packing a weight matrix along the spatial axis. With transposed, t is [W, C'].", fn: surfWriteRegion},
		{sig: "read_region(channel, column, channels, columns)", doc: "A new [channels, columns] tensor of that region.", fn: surfReadRegion},
		{sig: "fill(value)", doc: "Sets every element to value.", fn: surfFill},
	},
}

var (
	kernelMethods  = newMethodSet(kernelType)
	bindingMethods = newMethodSet(bindingType)
	surfaceMethods = newMethodSet(surfaceType)
)

func (bd *binding) String() string {
	return fmt.Sprintf("%s(%d inputs, %d outputs)", bd.Type(), len(bd.inputs), len(bd.outputs))
}
func (bd *binding) Type() string          { return bd.methods.def.name }
func (bd *binding) Freeze()               {}
func (bd *binding) Truth() starlark.Bool  { return true }
func (bd *binding) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: %s", bd.Type()) }
func (bd *binding) AttrNames() []string   { return bd.methods.names }
func (bd *binding) Attr(name string) (starlark.Value, error) {
	if v := bd.field(name); v != nil {
		return v, nil
	}
	return bd.methods.bind(bd, name), nil
}

// field returns the value of the fields kernels and bindings share, or nil.
func (bd *binding) field(name string) starlark.Value {
	switch name {
	case "inputs":
		return surfList(bd.inputs)
	case "outputs":
		return surfList(bd.outputs)
	case "evals":
		return starlark.MakeInt(bd.evals)
	}
	return nil
}

func surfList(ss []*surface) *starlark.List {
	l := make([]starlark.Value, len(ss))
	for i, s := range ss {
		l[i] = s
	}
	return starlark.NewList(l)
}

// recvBinding is the binding a kernel or binding method was called on (for a kernel, its own).
func recvBinding(b *starlark.Builtin) *binding { return b.Receiver().(*binding) }

// closedErr says why bd cannot be used, or is nil when it can.
func (bd *binding) closedErr(fn string) error {
	switch {
	case bd == &bd.owner.binding && bd.closed:
		return nameErrf(fn, "the %w", ane.ErrClosed)
	case bd.closed:
		return nameErrf(fn, "the binding is closed")
	case bd.owner.closed:
		return nameErrf(fn, "its %w", ane.ErrClosed)
	}
	return nil
}

func bindingEval(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	bd, err := evalReady(b, args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := bd.b.Eval(bd.s.ctx); err != nil {
		return nil, bd.evalErr(b.Name(), err)
	}
	bd.evals++
	return starlark.None, nil
}

func bindingInput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return bindingPart(b, args, kwargs, ane.Binding.Input)
}

func bindingOutput(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return bindingPart(b, args, kwargs, ane.Binding.Output)
}

func bindingPart(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, get func(ane.Binding, string) (*ane.Surface, error)) (starlark.Value, error) {
	bd := recvBinding(b)
	var name string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "name", &name); err != nil {
		return nil, err
	}
	sf, err := get(bd.b, name)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return &surface{s: sf, bd: bd}, nil
}

func bindingClose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	bd := recvBinding(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if !bd.closed {
		bd.settle()
		if bd == &bd.owner.binding { // the kernel's close closes its bindings
			for _, o := range bd.s.bindings {
				if o.owner == bd.owner {
					o.settle()
				}
			}
		}
		bd.closed = true
		if err := bd.b.Close(); err != nil {
			return nil, nameErr(b.Name(), err)
		}
	}
	return starlark.None, nil
}

func kernelBind(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	k := recvBinding(b).owner
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	if err := k.closedErr(b.Name()); err != nil {
		return nil, err
	}
	nb, err := k.k.Bind()
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	bd := &binding{s: k.s, b: nb, owner: k, methods: bindingMethods}
	bd.wrapSurfaces()
	k.s.track(bd)
	return bd, nil
}

func (s *surface) String() string {
	return fmt.Sprintf("surface(%s %s)", s.s.Name(), s.s.Type())
}
func (s *surface) Type() string          { return "surface" }
func (s *surface) Freeze()               {}
func (s *surface) Truth() starlark.Bool  { return true }
func (s *surface) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: surface") }
func (s *surface) AttrNames() []string   { return surfaceMethods.names }
func (s *surface) Attr(name string) (starlark.Value, error) {
	switch name {
	case "name":
		return starlark.String(s.s.Name()), nil
	case "dtype":
		return starlark.String(s.s.Type().DType.String()), nil
	case "shape":
		sh := s.s.Type().Shape
		t := make(starlark.Tuple, len(sh))
		for i, d := range sh {
			t[i] = starlark.MakeInt(d)
		}
		return t, nil
	case "channels":
		return starlark.MakeInt(s.s.Channels()), nil
	case "spatial":
		return starlark.MakeInt(s.s.Spatial()), nil
	}
	if err := s.bd.busyErr("surface." + name); err != nil {
		return nil, err
	}
	return surfaceMethods.bind(s, name), nil
}

func recvSurface(b *starlark.Builtin) *ane.Surface { return b.Receiver().(*surface).s }

// surfTensorArgs unpacks the (t, channel = 0) arguments of write and read_into, checks that t
// holds whole channels of the surface and is usable (readable for a write, writable for a
// read), and returns the surface, t, the first channel and the number of channels t fills.
func surfTensorArgs(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, write bool) (s *ane.Surface, t *Tensor, ch, n int, err error) {
	s = recvSurface(b)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "t", &t, "channel?", &ch); err != nil {
		return nil, nil, 0, 0, err
	}
	if t.Size()%s.Spatial() != 0 {
		return nil, nil, 0, 0, nameErrf(b.Name(), "%s has %d elements, not a whole number of channels of %d", t, t.Size(), s.Spatial())
	}
	if write {
		err = t.readable(b.Name())
	} else {
		err = t.writable(b.Name())
	}
	if err != nil {
		return nil, nil, 0, 0, err
	}
	return s, t, ch, t.Size() / s.Spatial(), nil
}

func surfWrite(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, t, ch, n, err := surfTensorArgs(b, args, kwargs, true)
	if err != nil {
		return nil, err
	}
	if err := s.WriteChannels(ch, n, t.data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func surfRead(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	ch := 0
	count := -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "channel?", &ch, "count??", &count); err != nil {
		return nil, err
	}
	if count < 0 {
		count = s.Channels() - ch
	}
	if count <= 0 || ch < 0 {
		return nil, nameErrf(b.Name(), "channels [%d, %d) are not a non-empty range of %s's %d", ch, ch+count, s.Name(), s.Channels())
	}
	t, err := NewTensor(count, s.Spatial())
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := s.ReadChannels(ch, count, t.data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return t, nil
}

func surfReadInto(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s, t, ch, n, err := surfTensorArgs(b, args, kwargs, false)
	if err != nil {
		return nil, err
	}
	if err := s.ReadChannels(ch, n, t.data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return t, nil
}

func surfCopyFrom(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	var src *surface
	from, to, count := 0, 0, -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "src", &src, "src_channel?", &from, "channel?", &to, "count??", &count); err != nil {
		return nil, err
	}
	if err := src.bd.busyErr(b.Name()); err != nil {
		return nil, err
	}
	if count < 0 {
		count = src.s.Channels() - from
	}
	if err := s.CopyChannels(to, src.s, from, count); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func surfCopyRegion(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	var src *surface
	var ch, col, srcCh, srcCol int
	nch, ncol := -1, -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "src", &src, "channel", &ch, "column", &col,
		"src_channel?", &srcCh, "src_column?", &srcCol, "channels??", &nch, "columns??", &ncol); err != nil {
		return nil, err
	}
	if err := src.bd.busyErr(b.Name()); err != nil {
		return nil, err
	}
	if nch < 0 {
		nch = src.s.Channels() - srcCh
	}
	if ncol < 0 {
		ncol = src.s.Spatial() - srcCol
	}
	if err := s.CopyRegion(ch, col, src.s, srcCh, srcCol, nch, ncol); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func surfCopyReshaped(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	var src *surface
	var ch, col, rows, srcCh int
	nch := -1
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "src", &src, "channel", &ch, "column", &col, "rows", &rows,
		"src_channel?", &srcCh, "channels??", &nch); err != nil {
		return nil, err
	}
	if err := src.bd.busyErr(b.Name()); err != nil {
		return nil, err
	}
	if nch < 0 {
		nch = src.s.Channels() - srcCh
	}
	if err := s.CopyReshaped(ch, col, rows, src.s, srcCh, nch); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func surfWriteRegion(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	var t *Tensor
	var ch, col int
	transposed := false
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "t", &t, "channel", &ch, "column", &col, "transposed?", &transposed); err != nil {
		return nil, err
	}
	if len(t.shape) != 2 {
		return nil, nameErrf(b.Name(), "%s is not 2-D", t)
	}
	nch, ncol := t.shape[0], t.shape[1]
	if transposed {
		nch, ncol = ncol, nch
	}
	if err := t.readable(b.Name()); err != nil {
		return nil, err
	}
	if err := s.WriteRegion(ch, nch, col, ncol, t.data, transposed); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

func surfReadRegion(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	var ch, col, nch, ncol int
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "channel", &ch, "column", &col, "channels", &nch, "columns", &ncol); err != nil {
		return nil, err
	}
	t, err := NewTensor(nch, ncol)
	if err != nil {
		return nil, nameErr(b.Name(), err)
	}
	if err := s.ReadRegion(ch, nch, col, ncol, t.data); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return t, nil
}

func surfFill(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	s := recvSurface(b)
	var v number
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "value", &v); err != nil {
		return nil, err
	}
	if err := s.Fill(float32(v)); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return starlark.None, nil
}

// backendNumerics names how be's kernels round: "fp32" for an emulator without fp16 rounding, else "fp16".
func backendNumerics(be ane.Backend) string {
	if e, ok := be.(*emulator.Backend); ok && e.Options().Numerics == emulator.FP32 {
		return "fp32"
	}
	return "fp16"
}
