package config

import (
	"context"
	"os"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
	"github.com/packlab/packlab/experiments/dict"
)

// Run is one layout's run of a config, resolved once (Resolve): a plain
// value that the engine measures, the guard predicts, the feed streams and
// a driver runs, with nothing left to look up.
type Run struct {
	Config Config // the job's settings, defaults in (Layouts: every layout of the config)
	Layout Layout
	Key    core.Type // the lab's keys: the key's type, or what a String or tuple key is derived from
	// DictKey is the dictionary's key: Key itself, or a String or tuple
	// key (dict.Key.Derived) for ClickHouse's COMPLEX_KEY_ layouts.
	DictKey dict.Key
	// Value is what a cell holds beside its key: the value, or a row
	// layout's row or its number (dict.RowCell).
	Value core.Type
	// Attrs are the attributes, the first the value as the config gives
	// it; with a file's String lengths and NULLs once counted (WithFile).
	// AttrNames are their columns' names.
	Attrs     []dict.Attribute
	AttrNames []string
	Source    source.Spec  // the key source as the config gives it
	Spec      source.Spec  // what this run reads: Source, or a row layout's (rows.go)
	Options   core.Options // the tables' options; a row's cells keep only its bytes
	// File is the source file, already open (a worker's, handed over by its
	// parent); nil: Open opens Spec.
	File *os.File
}

// Resolve validates c (Validate's error) and resolves it into one Run a
// layout, in the order of its Layouts.
func Resolve(c Config) ([]Run, error) {
	rc, err := c.resolve()
	if err != nil {
		return nil, err
	}
	c, key := rc.c, rc.key.LabKey()
	runs := make([]Run, 0, len(rc.layouts))
	for _, l := range rc.layouts {
		r := Run{Config: c, Layout: l, Key: key, DictKey: rc.key, Value: rc.value, Attrs: rc.attrs, AttrNames: rc.names,
			Source: rc.spec, Spec: rc.spec, Options: TableOptions(c.MaxLoadFactor, c.Preallocate, c.Rows)}
		if l.Row {
			r.Value = dict.RowCell(rc.attrs, c.Rows)
			r.Spec = rowSpec(rc.spec, rc.attrs)
			r.Options.ValueBytes = r.Value.Size
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// LoadConfig is the core.LoadConfig of the run, a layout of core's.
func (r Run) LoadConfig() core.LoadConfig {
	return core.LoadConfig{
		Layout:      r.Layout.Core,
		Options:     r.Options,
		Shards:      r.Config.Shards,
		BlockRows:   r.Config.BlockRows,
		ShardSelect: core.ShardSelect(strings.ToLower(strings.TrimSpace(r.Config.ShardSelect))),
	}
}

// Pairs is the value a run's pairs carry: a row's whole bytes when it is a
// row's run (a wide row's cell holds only its number), else the value.
func (r Run) Pairs() core.Type {
	if r.Layout.Row {
		return dict.RowType(r.Attrs)
	}
	return r.Value
}

// Open opens r's source so that ctx stops it: the file handed over by the
// parent process when there is one, else by its spec.
func Open[K, V core.Bits](ctx context.Context, r Run) (core.Source[K, V], error) {
	if r.File != nil {
		return source.FromFile[K, V](ctx, r.File, r.Spec, r.Key, r.Value)
	}
	return source.OpenContext[K, V](ctx, r.Spec, r.Key, r.Value)
}

// SizeClass is the index, 0 to 4, of the narrowest of uint8, uint16,
// uint32, uint64 and core.U128 that holds a value of t: the typed code of
// a (key, value) pair is one of 5 x 5 instantiations, since maps only see
// bits, and a row is carried in the narrowest that holds it (rows.go).
func SizeClass(t core.Type) int {
	switch {
	case t.Size <= 1:
		return 0
	case t.Size <= 2:
		return 1
	case t.Size <= 4:
		return 2
	case t.Size <= 8:
		return 3
	}
	return 4
}
