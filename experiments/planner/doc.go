// Package planner answers "which layout, max load factor and shard count
// for N rows in this memory?" before a row is loaded (MakePlan), writes the
// answer (WritePlan, the ClickHouse DDL of the best setup) and measures the
// speeds it lacks (Calibrate); experiments/usecase's VerifyPlan checks its
// ClickHouse setup against ClickHouse itself. Its memory figures come from the
// engine's model (package experiments), never from a measurement.
package planner
