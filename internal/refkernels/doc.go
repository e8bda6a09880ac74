// Package refkernels generates, with the mil Builder, the MIL kernels of the reference sources: the six
// kernels of train_large.m (weights baked in as BLOBFILE consts) and the "dynamic weights" kernels of
// mil_dynamic.h (weights packed into the input surface along the spatial axis). Each generator emits the
// same ops, with the same shapes, names and order, as its reference generator, for any Config.
//
// A generator returns a Kernel: the Program, its weight files, and the Layouts of its input and output
// surfaces, which say where each tensor lives. Every surface is a [1, C, 1, S] tensor, channel-first:
// element (c, s) is at index c*S + s. A Layout's Segments are channel ranges (Axis 1; each spans all S) or
// spatial ranges (Axis 3; each spans all C).
//
// Weight matrices are float32, row-major. For the static kernels they are [out, in], the reference's
// convention (W1 is [Hidden, Dim]); the generators transpose them where a kernel needs W^T. The dynamic
// kernels take their weights in the input surface, packed [in, out] (channel = input feature).
package refkernels
