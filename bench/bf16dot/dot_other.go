//go:build !amd64 || noasm

package main

import "errors"

func measure(rounds, iters int) (result, error) {
	return result{}, errors.New("VDPBF16PS is an x86-64 instruction: build for amd64 without the noasm tag")
}
