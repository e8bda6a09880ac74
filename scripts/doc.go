// Package scripts holds anestar's training scripts and the Go tests that run them.
//
// The scripts are Starlark, run by `anestar SCRIPT.star` (see docs/builtins.md for the builtins):
//
//	train_layer.star          trains one transformer layer as the reference train_large.m does: the
//	                          language model's four kernels (nn.star, mil.grad) with the weights baked
//	                          in, compiled again after each update; host-side RMSNorm, residuals and
//	                          loss, weight gradients by sgemm on an async queue, Adam, and a compile
//	                          budget enforced by checkpoint and restart
//	dynamic.star              the same model and training with the weights as kernel inputs, on the
//	                          language model's four kernels (no RoPE): every kernel compiles once
//	mlp.star                  a multilayer perceptron classifier on the handwritten-digits data, its dense
//	                          layers' forward and backward passes as kernels, loss and optimizer on the host
//	lib/model.star            the layer's sizes, weight initialisation, data, FLOP accounting,
//	                          efficiency report and checkpoint helpers, shared by the training scripts
//	lib/layer_estimate.star   a layer run's memory at peak and a step's time, estimated before it
//	                          starts (by `anestar check`), part by part
//	lib/train.star            what the two layer scripts share: their parameters and checks, the run's
//	                          state (fresh or resumed), the four kernels' programs (weights baked in
//	                          or as inputs) and their compiled parts, the training step itself, the
//	                          end of a step, the phase times
//	lib/nn.star               the layer's forward pieces, written once: projections, RoPE, causal
//	                          attention with grouped kv heads, SwiGLU, QK-norm
//	lib/lm_kernels.star       the language model's kernels: nn.star's pieces between named inputs and
//	                          outputs, their backward derived by mil.grad (also dynamic.star's)
//	lib/dense.star            dense-layer kernels (forward and backward, any activation) for mlp.star
//	train_lm.star             a llama2.c-architecture language model trained on text or token files: the
//	                          language model's kernels, a vocabulary trained or read, validation, samples,
//	                          checkpoints and the best one, budget, accum, export to llama2.c files
//	lib/lm.star               the language model: sizes and their checks, weights, the forward and
//	                          backward passes over the kernels, FLOP accounting, the validation loss
//	lib/lm_train.star         one optimizer step of it (loss scaling, clipping, accumulation)
//	lib/lm_data.star          its tokens: the corpus, the tokenizer, the split, batches, bits per byte
//	lib/lm_llama2.star        llama2.c model files in and out: names, the header's sizes, export
//	lib/lm_sample.star        generation from it: greedy, temperature, top-p
//	lib/lm_estimate.star      a run's memory at peak and a step's time, estimated before it starts (by
//	                          `anestar check`), part by part
//	lib/width.star            the ANE's width rule for size checks (WIDTH_ALIGN, ane.width_align)
//	grad.star                 a forward program and its backward derived by mil.grad, fed and read by name
//	sample.star               text from a llama2.c model file or a train_lm.star checkpoint, as run.c
//	                          samples it, on the forward kernels; the text alone on standard output
//	lib/lm_decode.star        generation with a key/value cache: 32-column step kernels from nn.star's
//	                          pieces, the cache in each layer's binding, at the narrowest of a few
//	                          cache widths that holds the position
//	lib/lm_read.star          a llama2.c file or checkpoint read for the forward kernels
//
// The package has no Go API; its tests run every script through builtins.Run at small sizes on the
// emulator: gradients against finite differences, the loss falling, restarts and resumes that reproduce an
// uninterrupted run bit for bit, the layer against the reference's kernels (internal/refkernels), the two
// layer scripts against each other, the MLP's accuracy, the language model and its variants against
// PyTorch; sample.star's logits and greedy ids against the PyTorch generator of ckpt/testdata/llama2 and
// run.c's output.
package scripts
