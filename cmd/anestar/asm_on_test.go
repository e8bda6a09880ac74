//go:build !noasm

package main

// asmBuild is true in a build with the assembly kernels (not -tags noasm): the one whose speeds
// anestar check's step estimate was calibrated on.
const asmBuild = true
