// Package chdriver is ClickHouse's driver: ClickHouse's own dictionaries
// (the ch_ layouts), run by ClickHouse itself in a worker program of their
// own, packlab-ch, beside packlab's layouts. It registers with the engine
// (Register) and runs through the engine's driver seam
// (experiments.Driver): the engine parses the config and streams the rows;
// this package finds and asks the worker, checks a run's settings, models
// its memory for the guard, writes the DDL and the job, and reads what
// ClickHouse says into the result.
package chdriver

import (
	"time"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/internal/program"
	"github.com/packlab/packlab/experiments/text"
)

// ClickHouse's own dictionaries in the lab: not packlab's models of them
// but ClickHouse itself, embedded as a library (chDB's libchdb.so, which
// `make chdb` fetches), in a C++ worker of its own, packlab-ch (its source
// is reference/chdb/ at the repository's top). The lab streams it the rows
// of the run's own key source and the read phase's keys in the lab's order,
// as it does a C++ reference map (experiments.DriverRun.Feed); the worker writes them
// as the dictionary's FILE source, creates the dictionary with the DDL the
// lab wrote (DictionaryDDL, the code that prints the plan's), loads it with
// SYSTEM RELOAD DICTIONARY and reads it with dictGet over a column of the
// keys. What ClickHouse's system.dictionaries says fills the fields every
// result has (bytes_allocated, element_count, load_factor); packlab's
// computed bytes for the same dictionary sit beside it (ClickHouseRun).
//
// Where the worker is, and how to get it.
const (
	// BuildCommand is the one command that fetches ClickHouse (chDB's
	// libchdb.so) and builds the worker that runs it.
	BuildCommand = "make chdb"
	// WorkerEnv, when set, is the path of the worker to use.
	WorkerEnv = "PACKLAB_CH_WORKER"
	// WorkerName is the worker's file name: bin/packlab-ch beside
	// bin/packlab, or on PATH.
	WorkerName = "packlab-ch"
	// chProtocol is reference/chdb/worker.cpp's kProtocol.
	chProtocol = 5
	// The names the worker gives the dictionary and its source file.
	chDictName   = "packlab_dict"
	chSourceFile = "rows.bin"
	// chAttributesFile is the source of a dictionary of several attributes,
	// which ClickHouse writes from chSourceFile (attributesSQL).
	chAttributesFile = "attributes.bin"
)

// State says whether ClickHouse's dictionaries can run here.
type State struct {
	Available bool   `json:"available"`
	Path      string `json:"path,omitempty"`    // the worker
	Version   string `json:"version,omitempty"` // SELECT version(): 26.7.2.1
	Problem   string `json:"problem,omitempty"` // why not, ending with how to get it
}

var chCache program.Cache[State]

// Status finds the worker ($PACKLAB_CH_WORKER, else
// packlab-ch beside this program, else on PATH) and asks it which
// ClickHouse it holds (packlab-ch --describe starts ClickHouse: about a
// second); the answer is kept while the file does not change. In the
// browser ClickHouse never runs.
func Status() State {
	return chCache.Status(WorkerEnv, WorkerName, "ClickHouse's own dictionaries", BuildCommand, describeClickHouse,
		func(path, problem string) State { return State{Path: path, Problem: problem} })
}

func describeClickHouse(path string) State {
	var d struct {
		ClickHouse string `json:"clickhouse"`
	}
	st := State{Path: path}
	if st.Problem = program.Describe(path, 60*time.Second, chProtocol, BuildCommand, &d); st.Problem == "" {
		st.Version, st.Available = d.ClickHouse, true
	}
	return st
}

// Driver runs ClickHouse's own dictionaries: the engine's
// experiments.Driver.
type Driver struct{}

// Register registers ClickHouse's driver with the engine.
func Register() { experiments.RegisterDriver(Driver{}) }

// Layout resolves a --layout name to one of ClickHouse's dictionaries.
func (Driver) Layout(name string) (string, bool) {
	d, ok := dict.FindClickHouseDictionary(name)
	return d.Name, ok
}

// LayoutNames lists ClickHouse's dictionaries for --layout's list of names.
func (Driver) LayoutNames() string {
	return "ClickHouse's own: " + dict.Names(dict.LayoutsOf(dict.FamilyClickHouse))
}

// Validate checks c for one of ClickHouse's dictionaries (name as given):
// read with loaded keys only, FLAT's keys, and the worker here.
func (Driver) Validate(c config.Config, name string) error {
	d, _ := dict.FindClickHouseDictionary(name)
	if c.MissRate != 0 {
		return fault.New("miss_rate", text.Float(c.MissRate), "ClickHouse's dictionaries ("+d.Name+") are read with loaded keys only", "0 with a ClickHouse layout")
	}
	if d.Flat() {
		if err := checkFlat(c, name); err != nil {
			return err
		}
	}
	if st := Status(); !st.Available {
		return fault.New("layouts", name, "unavailable: "+st.Problem, "")
	}
	return nil
}
