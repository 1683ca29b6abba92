// Package experiments turns run configurations into measured results: it
// drives core's tables, measures time and memory, runs sweeps and builds the
// charts and reports. It imports core and nothing of the faces.
package experiments
