// Package dict is what the lab knows of a dictionary before it runs one:
// the table of layouts (layouts.go: every layout's name, whose it is, what
// ClickHouse calls it in which release, a line on it), its attributes,
// ClickHouse's dictionary layouts (their LAYOUT clauses and CREATE
// DICTIONARY), packlab's row layouts, and the one
// memory model that the guard, the planner and the charts all ask: what
// each of them holds, in bytes, for a number of keys, attributes and
// shards, at its first load's peak and at a reload's.
//
// Attributes: a dictionary's columns besides its key. ClickHouse keeps one
// hash table per attribute in HASHED and SPARSE_HASHED (each holding the
// key again; with SHARDS, one per shard and attribute), and one key-to-row
// index plus one array per attribute in HASHED_ARRAY (HashedDictionary.h,
// HashedArrayDictionary.h); FLAT an array per attribute, indexed by the
// key. A String is a 16-byte reference in the cell, its bytes in the
// shard's arena.
//
// Keys as ClickHouse keeps them: a simple-key dictionary keeps every key
// as UInt64, whatever the key column's type (a narrower key is widened, a
// UInt128 key cut to its low 64 bits); the COMPLEX_KEY_ layouts keep the
// key serialized in an arena, a reference to it and its hash in each cell.
//
// The model is core.Predict's for the tables of the same shape, summed as
// ClickHouse builds them, checked against ClickHouse 26.7 itself by the
// engine's tests (TestClickHouseAgreesWithTheModels).
package dict
