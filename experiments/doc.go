// Package experiments is the lab's engine: it turns run configurations into
// measured results. It resolves a config once, a run a layout
// (experiments/config), counts a file source and asks the memory guard
// before the first run (check.go, guard.go: the model of experiments/dict),
// runs each layout in a worker process (isolation.go; a driver's worker
// program, driver.go) through the protocols of experiments/worker, and
// measures time and memory (measure.go) into experiments/result's Results.
//
// The layouts packlab runs in other programs are drivers' (Driver,
// RegisterDriver): the C++ reference maps (experiments/refdriver) and
// ClickHouse's own dictionaries (experiments/chdriver) import the engine,
// and whoever builds a lab (package app) registers them.
//
// It imports core and nothing above it: the planner (package
// experiments/planner), the sweeps (experiments/sweep) and the charts and
// reports (experiments/report) are built on it, and the faces (app/...) on
// all of them.
package experiments
