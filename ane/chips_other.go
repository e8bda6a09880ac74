//go:build !darwin

package ane

// hostChipName is "" off macOS: no Apple chip to name.
func hostChipName() string { return "" }
