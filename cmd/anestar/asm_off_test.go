//go:build noasm

package main

// asmBuild is false under -tags noasm: the pure-Go fallbacks run at speeds the step estimate does not
// model.
const asmBuild = false
