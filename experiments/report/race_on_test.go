//go:build race

package report

// raceEnabled: the race detector's shadow memory makes RSS figures
// meaningless, so the memory-accuracy tests skip under it.
const raceEnabled = true
