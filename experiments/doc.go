// Package experiments is the lab's engine: it turns run configurations into
// measured results. It checks a config and asks the memory guard (Check),
// runs each layout in a worker process (packlab's tables through core, the
// C++ reference maps, ClickHouse's dictionaries through chDB), measures
// time and memory, and names jobs (job.go); the sweeps are package
// experiments/sweep, the results folder experiments/store. Its memory model (guard.go, attributes.go:
// AllocatorFactor, LoaderBytes, ReloadPeak, AttributesPrediction,
// ClickHouseMemory) is the one the planner and the charts ask.
//
// It imports core and nothing above it: the planner (package
// experiments/planner) and the charts and reports (experiments/report) are
// built on it, and the faces (app/...) on all three.
package experiments
