// Package npy reads and writes NumPy .npy files holding float32 or float16 arrays in C order.
//
// An Array is a shape, the dtype the file stores (F32 or F16) and the values as float32. Read and
// ReadFile accept format versions 1.0, 2.0 and 3.0 with little-endian '<f4' or '<f2' data (and '<f8',
// converted to float32); Write and WriteFile produce version 1.0 files (2.0 when the header needs it)
// that numpy.load reads back.
package npy
