//go:build !amd64 || noasm

package vec

// There is no vector code on this architecture: callers' scalar loops do all of it.

// Has reports whether the vector code runs here: never.
func Has() bool { return false }

// HasRound reports whether its rounding ops run here: never.
func HasRound() bool { return false }

// HasRowsF16 reports whether RowsAxpyF16 runs here: never.
func HasRowsF16() bool { return false }

func vv(op Op, dst, a, b *float32, n int) {}

func vs(op Op, dst, a *float32, s float32, n int) {}

func rowsAxpy(dst, x, b *float32, k, ldb, n int) {}

func rowsAxpyF16(dst, x *float32, b *uint16, k, ldb, n int) {}

func maxOf(a *float32, n int, m float32) float32 { return m }

// use512 is never set here: there is no AVX-512 code.
var use512 = false
