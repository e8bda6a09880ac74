// Package optim holds anestar's optimizers and learning-rate schedules, the Go side of the Starlark
// module optim (builtins/optim.go converts its values).
//
// An [Optimizer] ([SGD], [Momentum], [AdaGrad], [RMSProp], [Adam], with AdamW as Adam with
// WeightDecay) updates one parameter tensor in place from its gradient, w -= lr*update, and keeps its
// state in exported slices plus a step count; [Optimizer.State] and SetState move that state to and
// from checkpoints exactly. Updates of large tensors are split over the cores (internal/par); Adam's
// runs eight parameters at a time on amd64 with AVX2 (adam_amd64.s), with the scalar code's
// operations in its order, so the bits are the same either way. A [Schedule] ([Constant],
// [StepDecay], [Exponential], [Cosine], [Warmup] wrapping any of them) gives the learning rate per
// step.
//
// Sign convention: the usual descent convention. The gradient is dLoss/dParameter and every
// optimizer subtracts lr*update. The reference library tensor_metal.m computes its output deltas as
// T - Y (the negative gradient of the loss) and therefore adds lr*update; both move the weights the
// same way. Its momentum is the exponential average v = beta*v + (1-beta)*g, which is [Momentum]
// with Dampening = Beta; its L2 decay w *= 1 - lr*lambda is cpu.AddL2Grad followed by an SGD step.
package optim
