// Package scripts holds anestar's training scripts and the Go tests that run them.
//
// The scripts are Starlark, run by `anestar SCRIPT.star` (see docs/builtins.md for the builtins):
//
//	train_layer.star        trains one transformer layer as the reference train_large.m does: six
//	                        kernels with baked-in weights, host-side RMSNorm backward, residuals and
//	                        loss, weight gradients by sgemm on an async queue, Adam, and a compile
//	                        budget enforced by checkpoint and restart
//	lib/model.star          the layer's sizes, weight initialisation, data, FLOP accounting,
//	                        efficiency report and checkpoint helpers, shared by the training scripts
//	lib/layer_kernels.star  the six kernel generators, built with the mil builder
//
// The package has no Go API; its tests run the scripts through builtins.Run at small sizes on the
// emulator: gradients against finite differences, the loss falling, restarts that reproduce an
// uninterrupted run bit for bit, and the kernels against the Go generators of internal/refkernels.
package scripts
