// Package nn holds the neural-network math that anestar's host does around
// the Neural Engine (or its emulator) and for scripts: norms, activations,
// losses, embeddings, RoPE tables, gradient clipping and regularisation,
// sampling. Tensors are flat []float32. The transformer layer's
// activations are channel-first [C, S] (element (c, s) at c*S+s) as in the
// reference trainer: [RMSNorm] and [RMSNormBackward] normalise over C for
// each of the S positions. Batches for the small dense networks are
// row-major [rows, cols]: [Softmax], the cross-entropy losses and
// [BiasGrad] work on rows. An [Activation] (sigmoid, relu, leaky_relu,
// tanh, softsign, silu, gelu, gelu_tanh) maps slices forward and back; the
// losses ([MSE], [CrossEntropyLogits], [CrossEntropyLabels],
// [CrossEntropyProbs], [BinaryCrossEntropy], [BinaryCrossEntropyLogits])
// return the loss and write its gradient; [ClipByValue],
// [ClipByGlobalNorm], [AddL1Grad] and [AddL2Grad] shape gradients. Large
// slices are split over goroutines (one per processor).
//
// RMSNorm backward. [RMSNormBackward] computes the exact gradient; the
// reference trainer's rmsnorm_bwd scales the normalisation term of dx by
// w[c] as well, which agrees only while the RMSNorm weights are all ones
// (as they are at initialisation).
package nn
