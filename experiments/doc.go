// Package experiments is the lab's engine: it turns run configurations into
// measured results. It checks a config and asks the memory guard (Check),
// runs each layout in a worker process (packlab's tables through core, or a
// driver's worker program: driver.go), measures time and memory, and names
// jobs (job.go); a run's Result is package experiments/result's, the
// sweeps are package experiments/sweep, the results folder
// experiments/store. Its guard (guard.go) asks the memory model the
// planner and the charts ask, package experiments/dict's.
//
// The layouts packlab runs in other programs are drivers' (Driver,
// RegisterDriver): the C++ reference maps (experiments/refdriver) and
// ClickHouse's own dictionaries (experiments/chdriver) import the engine,
// and whoever builds a lab (package app) registers them.
//
// It imports core and nothing above it: the planner (package
// experiments/planner) and the charts and reports (experiments/report) are
// built on it, and the faces (app/...) on all three.
package experiments
