package server

// The inspection's data: what Inspect found, as it is printed, saved in the
// history (experiments/store) and reported (experiments/report). Unlike the
// rest of the package, which speaks to a server through clickhouse-go, this
// file builds everywhere (the browser lab's history reads saved
// inspections too). Nothing here holds a password: Inspection.Server is the
// URL's scheme and host:port only (Endpoint.String).

import (
	"fmt"

	"github.com/packlab/packlab/experiments/text"
)

// Inspection is what Inspect found on a server or a cluster.
type Inspection struct {
	Server       string       `json:"server"`  // the URL, without a password
	Release      string       `json:"release"` // version() of the node connected to
	Cluster      string       `json:"cluster,omitempty"`
	Nodes        []Node       `json:"nodes"`
	Dictionaries []Dictionary `json:"dictionaries"` // one per dictionary and node
	Findings     []string     `json:"findings,omitempty"`
	Seconds      float64      `json:"seconds"` // how long the inspection took
}

// Node is one server of the inspection.
type Node struct {
	Name             string `json:"node"`               // host:native port
	MemoryLimitBytes int64  `json:"memory_limit_bytes"` // max_server_memory_usage, else the host's memory, else 0
	MemoryLimitFrom  string `json:"memory_limit_from"`  // which
	TrackedBytes     int64  `json:"tracked_bytes"`      // system.metrics MemoryTracking: what the server holds now
	// Release is the node's version(): its dictionaries are modelled, and
	// their advice written, for it ("" from an inspection saved before it
	// was read: the release of the node connected to stands for all).
	Release string `json:"release,omitempty"`
}

// Dictionary is one dictionary on one node: what ClickHouse says of it,
// packlab's model of the same structure, the findings and the advice.
type Dictionary struct {
	Node           string   `json:"node"`
	Database       string   `json:"database"`
	Name           string   `json:"name"`
	Layout         string   `json:"layout"` // the LAYOUT clause, with its parameters
	Type           string   `json:"type"`   // system.dictionaries.type: Hashed (no parameters)
	Origin         string   `json:"origin"`
	XML            bool     `json:"xml"` // defined in a configuration file: its layout's parameters are not visible to SQL
	KeyNames       []string `json:"key_names"`
	KeyTypes       []string `json:"key_types"`
	AttributeNames []string `json:"attribute_names"`
	AttributeTypes []string `json:"attribute_types"`
	Source         string   `json:"source"`
	LifetimeMin    int64    `json:"lifetime_min"`
	LifetimeMax    int64    `json:"lifetime_max"`
	Status         string   `json:"status"`
	LastException  string   `json:"last_exception,omitempty"`
	LoadingSeconds float64  `json:"loading_seconds"`
	LoadFactor     float64  `json:"load_factor"`

	ElementCount   int64 `json:"element_count"`
	BytesAllocated int64 `json:"bytes_allocated"`
	// ModelBytes is packlab's figure for what bytes_allocated counts;
	// RealBytes the memory the dictionary holds (more than bytes_allocated
	// for HASHED_ARRAY's key index, #118641, and sparse_hash_map's estimate,
	// #22867); ReloadPeakBytes a reload's peak, the serving dictionary beside
	// the new one at its first-load peak by ClickHouse's growth. 0 where not
	// modelled.
	ModelBytes             int64    `json:"model_bytes"`
	RealBytes              int64    `json:"real_bytes"`
	ReloadPeakBytes        int64    `json:"reload_peak_bytes"`
	ServerMemoryLimitBytes int64    `json:"server_memory_limit_bytes"`
	ServerTrackedBytes     int64    `json:"server_tracked_bytes"` // what the node holds now (MemoryTracking)
	Modelled               bool     `json:"modelled"`
	NotModelled            string   `json:"not_modelled,omitempty"` // why not
	Notes                  []string `json:"notes,omitempty"`        // how the figures were made
	Findings               []string `json:"findings"`
	Advice                 *Advice  `json:"advice"`
	// Verification is the advice built on the server and measured there
	// (VerifyAdvice), nil unless asked for; VerifyProblem why one asked
	// for was not made or failed (VerifyEveryAdvice: the others go on).
	Verification  *Verification `json:"verification,omitempty"`
	VerifyProblem string        `json:"verify_problem,omitempty"`

	DDL    string  `json:"-"` // CREATE DICTIONARY as the server holds it ("" for XML)
	shards int     // SHARDS
	mlf    float64 // MAX_LOAD_FACTOR
	// FLAT's INITIAL_ARRAY_SIZE and MAX_ARRAY_SIZE (0: not given)
	flatInitial, flatMax int64
	word                 string            // HASHED, COMPLEX_KEY_HASHED, ...
	exprs                map[string]string // the columns its source query computes (EXPRESSION), by name
	sample               *sample
}

// Advice is the layout packlab advises for a dictionary on that server's
// version, and its CREATE DICTIONARY: the user's source, lifetime and
// attributes kept.
type Advice struct {
	Layout          string `json:"layout"` // its LAYOUT clause
	DDL             string `json:"ddl"`
	ModelBytes      int64  `json:"model_bytes"` // what its bytes_allocated will say, by packlab's model
	SteadyBytes     int64  `json:"steady_bytes"`
	ReloadPeakBytes int64  `json:"reload_peak_bytes"`
	Why             string `json:"why"`
}

// sample is what one bounded query of a source says of the columns the
// model needs: each String column's mean length and NULL share, and FLAT's
// largest key.
type sample struct {
	Rows    int64
	MeanLen map[string]float64
	Nulls   map[string]float64
	MaxKey  int64
	Problem string // why there is none
	From    string // whose table, where not the dictionary's node's own
}

// JobName is the name of the history's job that keeps ins: "inspect
// clickhouse://127.0.0.1:9000 (12 dictionaries)", a cluster's "inspect
// clickhouse://ch1:9000 cluster main (2 nodes, 24 dictionaries)", with
// ", 2 advice built" where advice were built on the server. It has
// the URL's scheme and host:port only: no user, no password.
func (ins *Inspection) JobName() string {
	what := text.Count(len(ins.Dictionaries), "dictionary", "dictionaries")
	name := "inspect " + ins.Server
	if ins.Cluster != "" {
		name += " cluster " + ins.Cluster
		what = text.Count(len(ins.Nodes), "node", "nodes") + ", " + what
	}
	built := 0
	for _, d := range ins.Dictionaries {
		if d.Verification != nil {
			built++
		}
	}
	if built > 0 {
		what += ", " + text.Count(built, "advice", "advice") + " built"
	}
	return name + " (" + what + ")"
}

// Verification is what the server built and measured, beside the model.
type Verification struct {
	Server                 string  `json:"server"`
	Release                string  `json:"release"`
	Node                   string  `json:"node"`
	Database               string  `json:"database"` // made and dropped
	Layout                 string  `json:"layout"`   // the LAYOUT clause
	DDL                    string  `json:"ddl"`
	Rows                   int64   `json:"rows"`
	ElementCount           int64   `json:"element_count"`
	BytesAllocated         int64   `json:"bytes_allocated"`
	ModelBytes             int64   `json:"model_bytes"` // what bytes_allocated counts, by packlab's model
	RealBytes              int64   `json:"real_bytes"`  // the model's real memory
	TrackedGrowthBytes     int64   `json:"tracked_growth_bytes"`
	LoadSeconds            float64 `json:"load_seconds"`              // loading_duration of the first load (no samplers beside it)
	ReloadPeakBytes        int64   `json:"reload_peak_bytes"`         // MemoryTracking's peak during the reload, above the base before the first load
	ModelReloadPeakBytes   int64   `json:"model_reload_peak_bytes"`   // the model's
	ServerMemoryLimitBytes int64   `json:"server_memory_limit_bytes"` // the limit
	ServerTrackedBytes     int64   `json:"server_tracked_bytes"`      // what the server held before
	Dropped                bool    `json:"dropped"`                   // the database is gone
	Samples                int     `json:"memory_samples"`            // MemoryTracking samples during the reloads (reloaded again while they are few)
	// Of is the dictionary whose advice this builds (database.name; ""
	// for a plan's), and the figures it serves with today.
	Of               string   `json:"of,omitempty"`
	OfLayout         string   `json:"of_layout,omitempty"`
	OfElementCount   int64    `json:"of_element_count,omitempty"`
	OfBytesAllocated int64    `json:"of_bytes_allocated,omitempty"`
	OfRealBytes      int64    `json:"of_real_bytes,omitempty"` // its real memory, by the model (bytes_allocated under-reports some layouts)
	OfLoadSeconds    float64  `json:"of_load_seconds,omitempty"`
	Notes            []string `json:"notes,omitempty"` // how the copy differs from the dictionary
}

// trackerStep is the least memory growth MemoryTracking measures: each
// thread adds its allocations in steps of up to max_untracked_memory (4
// MiB by default), and a load runs on two or more.
const trackerStep = 8 << 20

// Lines says what the verification measured beside the model: each
// measured figure's difference from the model's, (measured - model) / model,
// as the lab's difference_percent and its reload line give it.
func (v *Verification) Lines() []string {
	pct := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return 100 * float64(a-b) / float64(b)
	}
	n := float64(max(v.ElementCount, 1))
	out := []string{
		fmt.Sprintf("verified on ClickHouse %s at %s (%s): %s at %s rows, in %s, dropped afterwards: %v",
			v.Release, v.Server, v.Node, v.Layout, text.Thousands(v.ElementCount), v.Database, v.Dropped),
		fmt.Sprintf("memory: bytes_allocated %s (%.2f bytes a row), the model %s (bytes_allocated %+.2f %% from it); the server's memory grew %s over the load, the model's real bytes %s",
			text.Thousands(v.BytesAllocated), float64(v.BytesAllocated)/n, text.Thousands(v.ModelBytes), pct(v.BytesAllocated, v.ModelBytes), text.Bytes(v.TrackedGrowthBytes), text.Bytes(v.RealBytes)),
		fmt.Sprintf("reload: MemoryTracking peaked %s above the base (%d samples), the model %s (the peak %+.1f %% from it); the load took %.2f s; the server's limit %s",
			text.Bytes(v.ReloadPeakBytes), v.Samples, text.Bytes(v.ModelReloadPeakBytes), pct(v.ReloadPeakBytes, v.ModelReloadPeakBytes), v.LoadSeconds, text.Bytes(v.ServerMemoryLimitBytes)),
	}
	if v.Of != "" {
		memory := fmt.Sprintf("memory %s (the copy's load, measured) against %s (its real bytes, modelled; %+.1f %%)",
			text.Bytes(v.TrackedGrowthBytes), text.Bytes(v.OfRealBytes), pct(v.TrackedGrowthBytes, v.OfRealBytes))
		switch {
		case v.OfRealBytes <= 0:
			// Not known: none was kept with it.
			memory = fmt.Sprintf("memory %s (the copy's load, measured)", text.Bytes(v.TrackedGrowthBytes))
		case v.TrackedGrowthBytes < trackerStep:
			// A thread adds its allocations to MemoryTracking in steps of
			// up to max_untracked_memory (4 MiB): 50,000 rows grew it by
			// 27.7 KiB where the copy holds 1.3 MiB.
			memory = "memory not measured at this size (the server's tracker counts in steps of a few MiB)"
		}
		out = append(out, fmt.Sprintf("beside %s as it serves (%s): bytes_allocated %s against its %s (%+.1f %%); %s; %s rows against %s, loaded in %.2f s against %.2f s",
			v.Of, v.OfLayout, text.Thousands(v.BytesAllocated), text.Thousands(v.OfBytesAllocated), pct(v.BytesAllocated, v.OfBytesAllocated),
			memory, text.Thousands(v.ElementCount), text.Thousands(v.OfElementCount), v.LoadSeconds, v.OfLoadSeconds))
	}
	return append(out, v.Notes...)
}
