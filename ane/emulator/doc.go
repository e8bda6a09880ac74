// Package emulator runs MIL programs on the CPU with the Apple Neural Engine's fp16 numerics, so that
// everything anestar does works, and can be tested, where no ANE exists. It registers itself with the
// ane registry as "emulator", below the real ANE, so that "auto" prefers the hardware. An op the emulator
// has no implementation of fails to compile with an error wrapping ane.ErrUnsupportedOp.
//
// Options (options.go) are the emulator's own: its Numerics, CheckNumerics and Relaxed; OptionsFrom maps
// a command line's ane.Settings onto them. Backend.Compile type-checks a program (mil.Check) and, unless
// the backend is relaxed, refuses it as the ANE backend does when it breaks a rule the hardware is known
// to have (ane.Eligible), with the same message: what runs here runs on the ANE. Relaxed mode lets such
// programs through (fp32 arithmetic, the ops the ANE refuses, I/O of any rank and width) for experiments
// and the conformance suite's emulator-only part. Compile then resolves every shape, decodes the const weights
// once (fp16 consts become float32 holding fp16 values), orders the ops and preallocates every
// intermediate buffer. The resulting Kernel holds a list of steps, one per op, each a closure over its
// buffers; Eval copies the input surfaces into their buffers (in FP32 numerics an fp32 input is read
// where it lies, alias.go), runs the steps, and copies the results to the output surfaces, allocating
// nothing. Kernel.Bind makes further Bindings: surfaces of their own and the transfers between them and
// the same plan, or, where the plan reads its inputs in place, a plan of their own over the shared
// constants and scratch (binding.go), so a binding costs its surface memory (and its steps) only and
// its Eval allocates nothing either; all of them take turns, as they share the scratch. Reshape, expand_dims, squeeze and slices or splits that are
// contiguous share their input's buffer instead of copying.
//
// Passes (compiler.passes in passes.go runs them in order, each with what it needs and makes): canonical
// rewrites data movement into the forms the later passes know (canon.go); inputs makes the input
// surfaces; then three rewrite passes, which compile nothing but decide what the plan does at each op
// and record it in the op's node (nodes.go): fuseChains makes fused nodes of op chains that run as one
// step (their other ops inner nodes), foldTransposes makes folded nodes of transposes that products
// read through (and fused nodes of products a transpose alone reads), findViews marks the nodes whose
// result every reader can read in place (inplace.go). Liveness then computes, once, from the nodes, the
// last use of every value; build compiles each node into its step over buffers planned by those last
// uses; outputs makes the output surfaces and transfers; chainSteps joins runs of elementwise steps.
// The compiler's state is split by the pass that owns it (compile.go): the source every pass reads,
// the rewriter's nodes, the build pass's values and steps, the memory and the ports.
//
// Memory (plan.go): op results take their buffers from a free list at compile time, and a buffer whose
// values have all been read goes back to it, so a kernel holds only what is live at once. Apart from
// weights and constants everything an Eval computes lives only during that Eval, so the kernels of one
// backend share those buffers (scratch.go): their Evals, compiles and Closes take turns under the
// backend's lock, and a later kernel carves its buffers out of the shared ones before it allocates, so
// that a set of kernels needs about the scratch of the largest. A value that only a channel concat
// reads is computed straight into its window of the concat's buffer (concat_target.go), so the concat
// copies nothing for it. Close releases the kernel's surfaces
// (later accesses fail with ErrClosed) and shelves its weight buffers and surface memory for the
// next compiles (recycle.go): a script that recompiles after each weight update reuses the same
// memory instead of allocating, zeroing and paging it in again. Buffers are handed out uncleared
// (every op writes all of its result), surface memory cleared. Surface transfers (io.go) convert fp16
// bytes directly with the vectorised conversions of package half; an output that is a concat of whole
// channel blocks is written from its parts (output_concat.go): the concat never runs and has no buffer;
// an input read by slices alone (a packed input) is decoded window by window, the windows its gathering
// slices take straight into their buffers (input_views.go): those gathers never run.
//
// Fusion (fuse.go): before compiling, the fusion pass finds op chains that it runs as one step, computing
// exactly what the separate ops compute (the same operations on the same values in the same order, so
// the same bits wherever each product's sums are formed in one fixed order, as by cpu's reference gemm,
// on which the tests prove it): causal attention scores, matmul → mul(scale) → add(mask) → softmax,
// computed per head, by blocks of rows up to the block's longest unmasked prefix, with the softmax over
// each row's unmasked prefix only (fuse_attention.go, which
// proves per row, by a Cauchy–Schwarz bound, that the masked entries come out exactly 0, and otherwise
// finishes the row in full), and the softmax gradient p*(g - rowsum(p*g))*scale in one pass per row
// (fuse_softmax_grad.go). Transposes of the last two dims fold into products (fuse_transpose.go): one
// read only by matmuls becomes a flipped transpose flag, one of a matmul's result a product with its
// operands swapped. Intermediate values of a chain are never stored. After compiling, runs of
// elementwise steps (and concats) whose work cuts into the same units, elements or rows, run as one
// step, piece by piece, each piece through every op while it is in cache (chain.go: the same ops on
// each element in the same order). With
// CheckNumerics nothing is fused or chained, so that the first non-finite result is named exactly.
//
// Determinism: with one binary, one machine and one BLAS, the same program and inputs give the same
// bits on every Eval and in every process (resume after a restart is exact). Across machines and BLASes
// results agree within fp16 rounding, not bit for bit: a BLAS may sum a product computed by row blocks,
// or with its operands transposed, in another order than the whole product (OpenBLAS's kernels differ by
// CPU model; gonum blocks by shape), so a fused chain and the separate ops can differ in the last bit.
//
// Numerics (Options.Numerics):
//
//   - FP16 (the default) follows the ANE: every op's result is rounded to fp16, round half to even,
//     unless the program declares it fp32; conv, matmul and linear multiply fp16 values, accumulate in
//     float32 and round once; overflow gives ±inf, never saturation; cast to fp16 rounds exactly.
//   - FP32 rounds nothing (values are float32 throughout), for gradient checks and speed comparisons.
//
// With Options.CheckNumerics, Eval stops at the first op whose result holds inf or NaN and reports
// its result name, op kind, MIL line and the eval count — the diagnosis the real ANE never gives.
//
// Speed: 1x1 convs, linear and single matmuls go through cpu.SgemmF32, on AMX tiles or whatever BLAS
// the cpu package chose (which splits large products over goroutines itself when the library is
// single-threaded); batched matmuls (one product per head) run their batches in parallel, one
// cpu.SgemmF32Serial each;
// in FP16 mode products of two fp16 operands go through cpu.SgemmF16 and cpu.SgemmF16Serial instead,
// which run them on AMX tiles where the CPU has them (an exact bf16 split of each fp16 value, fp32
// sums: the same arithmetic in another order of sums, 1.6-2.3x the rate of OpenBLAS's sgemm at the
// language model's shapes; never on the reference gemm; ANESTAR_AMX=off keeps them on the BLAS); the
// AMX path of cpu.SgemmF32 splits each float32 in three (cpu.GemmF32, fp32-class error;
// ANESTAR_AMX=f16 leaves it to the BLAS);
// general convs gather patches (im2col) first. exp, sigmoid, silu and softmax run exp32's operations
// inline over whole slices (expShifted), bit for bit; on amd64 with AVX2 eight at a time in assembly
// (internal/fastexp/exp_amd64.s), with the same operations in the same order, so the bits do not change (the
// noasm build tag leaves the assembly out). A softmax row skips the exponentials of entries more than
// 104 below its maximum, which are exactly 0 (a mask given as an input, such as a decoder's over its
// cache): the same bits. Elementwise ops, reductions, softmax, transposes and
// surface transfers are split over a fixed pool of GOMAXPROCS worker goroutines (pool.go, started once,
// so that Eval starts none). In FP16 mode elementwise ops
// and batched matmuls round each piece of their result as they finish it (vectorised, half.RoundF16To);
// other ops get a separate parallel rounding pass. Eval checks its context between ops. PeakFLOPS is
// the rate of a 512x512x512 sgemm, measured once per machine, BLAS and core and cached (cpu.PeakFLOPS).
// With Options.OpTimes (Backend.ClockOps; `anestar run --op-profile`) each Eval clocks its steps and
// transfers into rows per kernel and step (optimes.go).
package emulator
