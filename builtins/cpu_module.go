package builtins

import (
	"github.com/anestar/anestar/cpu"
	"github.com/anestar/anestar/internal/par"
	"go.starlark.net/starlark"
)

func (s *session) cpuModule() *moduleDef {
	m := &moduleDef{
		name: "cpu",
		doc: "Host math on tensors, in Go and the platform's BLAS. Activations are channel-first `[C, S]` " +
			"like surfaces; softmax, cross_entropy and bias_grad work on the rows of a row-major `[rows, cols]` batch. " +
			"Losses and penalties return a float and write (or add, for l1 and l2) their gradient into a tensor " +
			"passed as grad. Results go into output tensors the script owns, so a training step allocates nothing.",
		vals: valueMap{"blas": starlark.String(cpu.BLASName()), "blas_info": starlark.String(s.blasInfo()),
			"cores": starlark.MakeInt(par.Procs())},
		fns: []fnDef{
			{sig: "blas", doc: "The name of the BLAS that sgemm uses (Accelerate, OpenBLAS or gonum)."},
			{sig: "blas_info", doc: "The BLAS that sgemm uses, for reports: its name, version and core, and how the core was " +
				"chosen, such as `openblas 0.3.21, core SkylakeX (auto by features)`; with `; fp16 products on AMX` when " +
				"the emulator's matmuls run on AMX tiles instead, or with --fp32 `; fp32 products on AMX` (ANESTAR_AMX=f16 " +
				"keeps those on the BLAS, ANESTAR_AMX=off both). sgemm itself always runs on the BLAS."},
			{sig: "cores", doc: "The cores the host's work runs on, an int: GOMAXPROCS, which the kernels' loops, the sgemm's " +
				"pieces and the queues share (process.cpu's rate of change is at most this)."},
			{sig: "peak_flops()", doc: "The host's sgemm peak in FLOP/s: the rate of a 512x512x512 sgemm with the BLAS in use, " +
				"measured once per machine, BLAS, core and thread count and cached (`anestar backends` names the file; " +
				"`anestar backends --recalibrate` measures it again); 0 when no BLAS loads. With the model's FLOPs, the base " +
				"of a step-time estimate.", fn: cpuPeakFLOPS},
			{sig: "sgemm(a, b, c, trans_a = False, trans_b = False, alpha = 1.0, beta = 0.0)",
				doc: "c = alpha * op(a) @ op(b) + beta * c, where op transposes when asked; a, b and c are 2-D " +
					"(op(a) is [M, K], op(b) [K, N], c [M, N]). beta = 1 accumulates into c.", fn: s.cpuSgemm},
		},
	}
	m.fns = append(m.fns, s.cpuMathFns()...)
	m.fns = append(m.fns, cpuLMFns()...)
	m.fns = append(m.fns, fnDef{sig: "queue()", doc: "A new serial queue of host math that runs beside the script; see the queue type.", fn: s.cpuQueue})
	return m
}

func cpuPeakFLOPS(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return starlark.Float(cpu.PeakFLOPS()), nil
}

func (s *session) cpuQueue(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackArgs(b.Name(), args, kwargs); err != nil {
		return nil, err
	}
	return s.newQueue(), nil
}

// sgemmArgs is a checked sgemm call.
type sgemmArgs struct {
	a, b, c        *Tensor
	transA, transB bool
	alpha, beta    float32
	m, n, k        int
}

func unpackSgemm(fn string, args starlark.Tuple, kwargs []starlark.Tuple) (*sgemmArgs, error) {
	g := &sgemmArgs{}
	alpha, beta := number(1), number(0)
	if err := starlark.UnpackArgs(fn, args, kwargs, "a", &g.a, "b", &g.b, "c", &g.c,
		"trans_a?", &g.transA, "trans_b?", &g.transB, "alpha?", &alpha, "beta?", &beta); err != nil {
		return nil, err
	}
	g.alpha, g.beta = float32(alpha), float32(beta)
	for _, x := range []struct {
		n string
		t *Tensor
	}{{"a", g.a}, {"b", g.b}, {"c", g.c}} {
		if len(x.t.shape) != 2 {
			return nil, nameErrf(fn, "%s is %s, want 2-D", x.n, x.t)
		}
	}
	g.m, g.k = g.a.shape[0], g.a.shape[1]
	if g.transA {
		g.m, g.k = g.k, g.m
	}
	kb, n := g.b.shape[0], g.b.shape[1]
	if g.transB {
		kb, n = n, kb
	}
	g.n = n
	if kb != g.k || g.c.shape[0] != g.m || g.c.shape[1] != g.n {
		return nil, nameErrf(fn, "shapes do not chain: op(a) is [%d, %d], op(b) is [%d, %d], c is %s", g.m, g.k, kb, n, shapeString(g.c.shape))
	}
	if g.c.st == g.a.st || g.c.st == g.b.st {
		return nil, nameErrf(fn, "c shares storage with an input")
	}
	return g, nil
}

func (g *sgemmArgs) run() error { return g.runOn(cpu.Sgemm) }

// runOn runs the call with gemm (cpu.Sgemm, or cpu.SgemmInTurn on the queue).
func (g *sgemmArgs) runOn(gemm func(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int,
	b []float32, ldb int, beta float32, c []float32, ldc int) error) error {
	return gemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, g.a.data, g.a.shape[1],
		g.b.data, g.b.shape[1], g.beta, g.c.data, g.c.shape[1])
}

func (s *session) cpuSgemm(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	g, err := unpackSgemm(b.Name(), args, kwargs)
	if err != nil {
		return nil, err
	}
	if err := readableAll(b.Name(), g.a, g.b); err != nil {
		return nil, err
	}
	if err := g.c.writable(b.Name()); err != nil {
		return nil, err
	}
	if err := g.run(); err != nil {
		return nil, nameErr(b.Name(), err)
	}
	return g.c, nil
}

// readableAll checks that no pending async work writes any of ts.
func readableAll(fn string, ts ...*Tensor) error {
	for _, t := range ts {
		if err := t.readable(fn); err != nil {
			return err
		}
	}
	return nil
}

// readWrite checks that ins may be read and outs changed.
func readWrite(fn string, ins []*Tensor, outs ...*Tensor) error {
	if err := readableAll(fn, ins...); err != nil {
		return err
	}
	return writableAll(fn, outs...)
}

// sameShapes checks that every tensor of ts has the shape of like.
func sameShapes(fn string, like *Tensor, ts ...*Tensor) error {
	for _, t := range ts {
		if err := sameShape(fn, t, like); err != nil {
			return err
		}
	}
	return nil
}

// writableAll checks that ts may be changed.
func writableAll(fn string, ts ...*Tensor) error {
	for _, t := range ts {
		if err := t.writable(fn); err != nil {
			return err
		}
	}
	return nil
}

// blasInfo is cpu.blas_info: the BLAS, and whether the emulator's products run on AMX instead: its
// fp16 ones (cpu.SgemmF16), or with fp32 numerics its float32 ones (cpu.SgemmF32).
func (s *session) blasInfo() string {
	info := cpu.CurrentBLASInfo().String()
	fp32 := s.cfg.Settings.FP32
	if s.cfg.Backend != nil {
		fp32 = backendNumerics(s.cfg.Backend) == "fp32"
	}
	switch {
	case fp32 && cpu.GemmName() == "amx":
		info += "; fp32 products on AMX"
	case !fp32 && cpu.F16GemmName() == "amx":
		info += "; fp16 products on AMX"
	}
	return info
}
