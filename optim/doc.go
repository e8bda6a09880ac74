// Package optim holds the optimizers and learning-rate schedules of
// anestar (the Starlark module optim binds it). An [Optimizer] ([SGD],
// [Momentum], [AdaGrad], [RMSProp], [Adam], with AdamW as Adam with
// WeightDecay) updates one parameter tensor in place from its gradient, w
// -= lr*update, and keeps its state in exported slices plus a step count;
// [State] and SetState move that state to and from checkpoints exactly. A
// [Schedule] ([Constant], [StepDecay], [Exponential], [Cosine], [Warmup]
// wrapping any of them) gives the learning rate per step.
//
// Sign convention. This package, like package nn's gradients, uses the
// usual descent convention: the gradient is dLoss/dParameter and every
// optimizer subtracts lr*update. The reference library tensor_metal.m
// computes its output deltas as T - Y (the negative gradient of the loss)
// and therefore adds lr*update; both move the weights the same way. Its
// momentum is the exponential average v = beta*v + (1-beta)*g, which is
// [Momentum] with Dampening = Beta; its L2 decay w *= 1 - lr*lambda is
// nn.AddL2Grad followed by an SGD step.
package optim
