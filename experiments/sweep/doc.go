// Package sweep is the lab's scenarios: families of runs that vary one
// setting (shards, types, growth, load factor), the seed's table and the
// seed's claims, each a list of the engine's configs (config.Config)
// that the engine's guard checks whole before the first is measured, run
// one after the other as one job (Run).
package sweep
