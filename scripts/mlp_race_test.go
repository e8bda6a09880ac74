//go:build race

package scripts

// mlpRace is true when the race detector is on: the full training run is then too slow to test.
const mlpRace = true
