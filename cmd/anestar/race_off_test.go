//go:build !race

package main

// raceEnabled: the race detector multiplies a run's memory and time, so estimates of them mean nothing.
const raceEnabled = false
