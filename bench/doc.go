// Package bench holds anestar's whole-program measurements: compare/ runs the training step side by side
// with the PyTorch peer, and compile_six.star times building and compiling the six kernels of
// scripts/train_layer.star; reliability.sh measures that nothing is lost and nothing is fatal (kills during
// saves, interrupt-then-resume, bad inputs). The package's test runs the script at a small size, so that it keeps working.
package bench
