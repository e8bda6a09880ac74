// Package ane is the device layer of anestar: it compiles MIL programs into kernels and moves tensors
// in and out of them through surfaces.
//
// The types fit together as follows:
//
//   - A Backend compiles a *mil.Program (with its weight blob files, mil.Weights) into a Kernel and counts
//     its compiles. Backends register themselves from init with Register; Open picks one by name, or the
//     most preferred available one for "auto" (the environment variable ANESTAR_BACKEND overrides "auto"),
//     with Settings from a command line, which each backend maps onto its own options or refuses with a
//     message. List reports every registered backend and, for those that cannot run here, why not.
//   - Eligible applies the hardware's known rules (Rules, HardwareOps; rules.go cites the public,
//     hardware-tested source of each) to a program: a Verdict with a Finding for every input, output and op,
//     Proven, Unknown (a warning) or Refused, each with its reason and fix. Every backend runs it before it
//     compiles and refuses a program with a refused part (an *IneligibleError) — the emulator unless it runs
//     in relaxed mode — so that what runs on the emulator runs on the ANE. ErrUnsupportedOp is wrapped by the
//     errors of an op a backend cannot run.
//   - A Kernel owns one Surface per input of the program's main function and one per output. Eval reads
//     the input surfaces and writes the output surfaces; Close releases the kernel.
//   - The hardware takes one input and one output per program: Pack lays a program's several inputs
//     out as windows of one input (side by side, stacked, or flattened into rows) and its outputs as
//     windows of one output, with the slices, casts and concats inside the program; CompilePacked is
//     how both backends compile (the emulator unless relaxed). Binding.Input and Output give each
//     declared part by name: a view of the packed surface (NewView, NewFlatView) that every Surface
//     method reads and writes alone.
//   - A Binding is a further full set of a kernel's surfaces (Kernel.Bind), evaluated with the same
//     compiled program: N layers of a model share one compile and keep their weights in their own
//     binding. A Kernel is its own first binding; closing it closes every binding it made.
//   - A Surface is an exact-size buffer holding one [1,C,1,S] tensor (or any tensor, split into channels
//     along its first non-unit-batch axis) in fp16 or fp32, packed channel-first. Its methods read and
//     write channel ranges as float32 (WriteChannels, ReadChannels), copy channel ranges between surfaces
//     without a trip through float32 (CopyChannels), write 2-D regions of channels x spatial columns
//     (WriteRegion, for weights packed along the spatial axis), and give raw byte access (ReadBytes,
//     WriteBytes, Access). Every access is bounds-checked and bracketed by Lock/Unlock of the surface's
//     Memory.
//   - A Memory is the storage behind a surface: HeapMemory, a plain allocation, on the emulator; an
//     IOSurface on the ANE.
//
// The emulator backend lives in ane/emulator, the Apple Neural Engine backend in ane/private; importing
// ane/backends registers both, and package builtins imports it, so a program that embeds the Starlark host
// has both without an import of its own. ane/anetest is the conformance suite that every backend passes.
package ane
