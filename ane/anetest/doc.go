// Package anetest is the conformance suite that every ane.Backend passes, in the way gonum tests every
// BLAS implementation with one shared suite.
//
// The suite has two parts. The hardware-eligible part is every case whose program passes ane.Eligible:
// it must pass on every backend, the ANE included, and a failure there is a bug of the backend. The
// emulator-only rest (ops the ANE refuses or nobody ran on it, odd ranks and widths, several inputs,
// fp32 arithmetic) runs on a relaxed emulator; on any other backend each such program is checked to be
// refused with an *ane.IneligibleError, then the case is skipped (compileCase).
//
// Run(t, backend) runs, as subtests:
//
//   - Ops: every op of the MIL op table (mil.Ops) on random data, compared with plain float64
//     implementations written in this package from the op definitions, at fp16 tolerance. An op of the
//     table without a case here fails the suite, so the suite grows with the table. The hw_ cases are the
//     proven ops in the reference's shapes (ops_hardware.go): one fp16 input 32 or 64 wide, one output, a
//     conv anchor.
//   - Surfaces: every Surface method (channel reads and writes, regions, copies, raw bytes) on the
//     surfaces of a compiled kernel, with fp16 rounding and bounds checks.
//   - Failures: a surface of the wrong size, channel ranges off the end, Eval after Close, a cancelled
//     context, and a program with an unsupported op, which must fail to compile naming the op.
//   - Kernels: the six kernels of the reference training program and the dynamic-weight kernels
//     (internal/refkernels), at small sizes (width 32, so that the ANE takes them), against float64 formulas of RMSNorm, causal attention, the
//     SiLU-gated FFN and their backward passes.
//   - Bindings: further bindings of one kernel (Kernel.Bind) have surfaces of the kernel's types that
//     read zero, are independent (each evaluates its own inputs into its own outputs, whatever the order
//     of evals, and writing one's inputs changes no other's outputs), evaluate bit for bit like the
//     kernel's own surfaces, may be evaluated from several goroutines at once, fail with ErrClosed after
//     their own Close or the kernel's, and never move the compile count.
//   - Refusals: one program per rule of the hardware (Refusals), each refused with its rule's message by
//     every backend but a relaxed emulator.
//
// The suite needs only the ane.Backend interface, so a backend's own test calls it unchanged:
//
//	func TestConformance(t *testing.T) { anetest.Run(t, mybackend.New()) }
package anetest
