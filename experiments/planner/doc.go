// Package planner answers "which layout, max load factor and shard count
// for N rows in this memory?" before a row is loaded (MakePlan), writes the
// answer (Plan.Details, the ClickHouse DDL of the best setup; the write
// package in the command line's formats) and says the
// runs that measure the speeds it lacks (CalibrationConfigs);
// experiments/usecase runs them (Plan) and checks its ClickHouse setup
// against ClickHouse itself (VerifyPlan). Its memory figures come from the
// engine's model, never from a measurement.
package planner
