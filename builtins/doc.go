// Package builtins is the Starlark face of anestar: it runs training scripts and gives them the
// host's mechanisms as predeclared modules, while the scripts keep the policy (model sizes, kernels,
// loops, schedules, when to checkpoint and when to restart).
//
// # Running a script
//
// Run executes one script under a Config: the script, the backend its kernels run on, parameter
// overrides, where print goes, a context whose cancellation stops the script at the next builtin
// boundary, and extra predeclared names or load()able modules for programs that embed anestar.
// ScriptParams lists a script's parameters without running it; ParseSet and ParseValue turn
// command-line settings into parameter values.
//
// # Modules and types
//
// The modules (see docs/builtins.md, generated from the tables in this package by WriteReference):
//
//	mil      builds MIL programs op by op (every op of mil.Ops() is a builder method), parses MIL text
//	ane      compiles programs into kernels on the run's backend; kernel and surface I/O; ane.eligible,
//	         the verdict of the ANE's known rules on a program (ane.Eligible)
//	tensor   makes Tensors: zeros, random (seeded, resumable), from lists and .npy files
//	cpu      host math on tensors: sgemm, rmsnorm, activations, softmax, losses, clipping; async queues
//	optim    optimizers over named parameters with checkpointable state; learning-rate schedules
//	ckpt     saves and reads checkpoints (tensors and JSON metadata), atomically
//	tokenizer  llama2.c BPE vocabularies: read, train, save, encode, decode; token files into tensors
//	process  parameters, arguments, restart (exec), clocks, progress reports, a JSON-lines metrics log,
//	         and process.dry_run
//
// The values scripts hold:
//
//	mil.program, mil.var  a program under construction and its values
//	kernel, surface       a compiled program and its input and output buffers
//	binding               a further set of a kernel's buffers (kernel.bind()), run with the same compile
//	Tensor                a float32 array with a shape; views share storage
//	queue                 a serial queue of host math beside the script; holds the tensors its pending jobs use
//	optimizer, schedule   an optimizer over named tensors; a learning-rate function of the step
//	metrics               an append-only JSON-lines file
//	progress              a progress line for a loop: step/total, fields, ms/step, ETA
//	tokenizer             a BPE vocabulary (package tokenizer)
//
// # Dry runs
//
// With Config.DryRun (the command `anestar check`), process.dry_run is True and ane.compile checks each
// program and its weights but compiles nothing: the kernel it returns has real surfaces, its eval is an
// error, and Result.Checked lists the programs (CheckedProgram). Scripts build every kernel and stop
// before training, so that a size that does not fit is found in a second.
//
// # Errors
//
// A builtin's error is a BuiltinError: "name: cause", wrapping the cause, so that errors.As on the
// error Run returns finds the typed errors beneath (mil.ErrorList, *ckpt.FormatError, ane.ErrClosed)
// through the *starlark.EvalError that carries it. The script's own fail() gives one too.
//
// # Process-wide settings
//
// The package changes no process-wide setting: the command anestar sets the collector's target
// (GOGC 25, which keeps the heap of a run that recompiles kernels near its live data, and at least
// 32 MB of growth on a small heap, where a quarter would collect every few generated tokens) in its
// main; a program that embeds the host and trains may want debug.SetGCPercent(25) too.
//
// # Concurrency
//
// A script runs on one goroutine. Work queued on a queue runs on another, and the tensors it uses are
// held (see queue): the script's accesses check the holds, so a data race cannot be written.
package builtins

//go:generate go test -run TestReference -update
