// Package cpu holds the BLAS of anestar: the matrix products the CPU does
// around the Neural Engine (or its emulator) and for scripts, the library
// behind them chosen and checked at run time, and their peak rate.
//
// Half precision is package half's: the fp16 and bf16 conversions live
// there, in a leaf that the file-format packages share without linking the
// BLAS loaders; the CPU feature detection is internal/cpuid's.
//
// Matrix products. [Sgemm] computes C = alpha*op(A)*op(B) + beta*C on
// row-major float32 matrices with a [BLAS] implementation chosen at run
// time: Apple's Accelerate on darwin, else OpenBLAS (libopenblas.so.0 or
// libopenblas.so, opened with purego, no cgo) when it loads, else gonum's
// pure-Go BLAS. The environment variable ANESTAR_BLAS ([BLASEnv]) forces
// one; [SetBLAS] switches at run time, [BLASName] reports the one in use,
// [LoadBLAS] opens a particular one and [SetBLASThreads] sets OpenBLAS's
// thread count. OpenBLAS is called through its Fortran sgemm_ with
// purego.SyscallN (no allocation per call) and runs single-threaded unless
// OPENBLAS_NUM_THREADS or OMP_NUM_THREADS is set: Sgemm then splits large
// products over GOMAXPROCS goroutines itself, so that the Go scheduler, not
// spinning BLAS threads, shares the cores; [SgemmSerial] never splits.
// OpenBLAS is configured by its own environment variables, which it reads
// once, when it loads: so the loader sets them just before the dlopen (never
// overriding what the user set), and removes them afterwards so that child
// processes choose afresh; programs that embed this package get the same
// configuration without a call of their own. It sets
// OPENBLAS_NUM_THREADS=1 (unless the user set it or OMP_NUM_THREADS), so that
// it starts no idle worker thread, and OPENBLAS_CORETYPE, unless the user set
// it (their setting always wins): SkylakeX when the CPU has AVX-512 and the
// OS saves its state (XCR0), Haswell for AVX2 with FMA, else OpenBLAS's own
// choice (blas_core.go; OpenBLAS 0.3.21 picks its slowest kernels on CPUs
// newer than itself). [CurrentBLASInfo] reports the library's version, core
// and how the core was chosen. Every library but gonum is verified when it
// loads: loading and a few exact products must finish within a time limit
// (blas_selftest.go); otherwise "auto" falls back to the next implementation
// with a one-line message on stderr, and a forced one fails to load.
// Products of fp16 values held in float32 (the emulator's fp16 numerics) have
// their own entry points, [SgemmF16] and [SgemmF16Serial]: on CPUs with Intel
// AMX they run on tiles through [GemmF16] (gemm_f16.go: an exact split of each
// fp16 value into two bf16 values, fp32 sums; amx_amd64.s emits the AMX
// instructions' encodings, which Go's assembler lacks), else, with [AMXEnv]
// "off", or on the reference gemm, on the current BLAS; [F16GemmName] says which.
// The emulator's float32 products have theirs too, [SgemmF32] and
// [SgemmF32Serial]: products with alpha 1 and beta 0 or 1 run on AMX tiles
// through [GemmF32] (gemm_f32.go: each float32 splits exactly into three bf16
// values and six of the nine partial products are summed in fp32, an error of
// an fp32 sgemm's kind), other products and operands outside its contract on
// the BLAS; [AMXEnv] "f16" keeps them on the BLAS, [GemmName] says which.
// [PeakFLOPS], the denominator of utilisation figures, is the rate of a large
// Sgemm, measured once per machine, BLAS and core and cached in the user's
// cache directory ([CacheDirEnv] overrides it; [PeakFLOPSFile] names the file).
// Every call into a
// single-threaded library holds one of GOMAXPROCS process-wide core slots
// (blas_cores.go), and a large product's pieces run only on slots free when
// it starts: the evaluator's products and an async queue's never run more
// sgemms at once than there are cores.
//
// Determinism. Same seed, binary, machine, BLAS and core, and GOMAXPROCS
// give the same bits under any load. The rule that makes it so: how any
// work is split — a product's blocks (splitPieces), a loop's pieces, a
// reduction's partial sums and the order they are combined in — is a
// function of the shapes and the configured thread count (GOMAXPROCS, a
// library's own thread setting) alone, never of how many cores happen to be
// free; who runs a piece, and when, may vary. SgemmInTurn computes the same
// blocks as Sgemm, in turn, so a caller may choose between them by timing;
// SgemmSerial makes one call, and is chosen by shapes alone. Products of
// at most tinyMACs multiply-adds skip the library for the fixed-order loop
// (blas.go): a call costs more than they do. This
// matters because BLAS kernels need not give the same bits for every block
// of a product (OpenBLAS's Haswell edge kernels sum in another order than
// its full-width ones). Accelerate, multi-threaded by its own fixed rule,
// follows by the same construction; that is not tested here (no Mac).
// Every implementation validates the same way: bad dimensions or short
// slices are errors, never crashes.
//
// The NN math around the products (norms, activations, losses) is package
// nn's; optimizers and schedules are package optim's.
package cpu
