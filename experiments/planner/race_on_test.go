//go:build race

package planner

// raceEnabled: the race detector's shadow memory makes RSS figures
// meaningless, so the memory-accuracy tests skip under it.
const raceEnabled = true
