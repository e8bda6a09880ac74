// Package anetest is the conformance suite that every ane.Backend passes, in the way gonum tests every
// BLAS implementation with one shared suite.
//
// Run(t, backend) runs, as subtests:
//
//   - Ops: every op of the MIL op table (mil.Ops) on random data, compared with plain float64
//     implementations written in this package from the op definitions, at fp16 tolerance. An op of the
//     table without a case here fails the suite, so the suite grows with the table.
//   - Surfaces: every Surface method (channel reads and writes, regions, copies, raw bytes) on the
//     surfaces of a compiled kernel, with fp16 rounding and bounds checks.
//   - Failures: a surface of the wrong size, channel ranges off the end, Eval after Close, a cancelled
//     context, and a program with an unsupported op, which must fail to compile naming the op.
//   - Kernels: the six kernels of the reference training program and the dynamic-weight kernels
//     (internal/refkernels), at small sizes, against float64 formulas of RMSNorm, causal attention, the
//     SiLU-gated FFN and their backward passes.
//   - Bindings: further bindings of one kernel (Kernel.Bind) have surfaces of the kernel's types that
//     read zero, are independent (each evaluates its own inputs into its own outputs, whatever the order
//     of evals, and writing one's inputs changes no other's outputs), evaluate bit for bit like the
//     kernel's own surfaces, may be evaluated from several goroutines at once, fail with ErrClosed after
//     their own Close or the kernel's, and never move the compile count.
//
// The suite needs only the ane.Backend interface, so a backend's own test calls it unchanged:
//
//	func TestConformance(t *testing.T) { anetest.Run(t, mybackend.New(ane.Options{})) }
package anetest
