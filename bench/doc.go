// Package bench holds anestar's whole-program measurements: compare/ runs the training step side by side
// with the PyTorch peer, and compile_six.star times building and compiling the six kernels of
// scripts/train_layer.star. The package's test runs the script at a small size, so that it keeps working.
package bench
