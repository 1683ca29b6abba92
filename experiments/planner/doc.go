// Package planner answers "which layout, max load factor and shard count
// for N rows in this memory?" before a row is loaded (MakePlan), writes the
// answer (WritePlan, the ClickHouse DDL of the best setup), measures the
// speeds it lacks (Calibrate) and checks its ClickHouse setup against
// ClickHouse itself (VerifyConfig). Its memory figures come from the
// engine's model (package experiments), never from a measurement.
package planner
