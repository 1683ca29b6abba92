package config

import (
	"slices"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
)

// Layout is one name of Config.Layouts, resolved: one of core's layouts,
// a row layout (rows.go), or a driver's, which core cannot build.
type Layout struct {
	Core   core.Layout // "" for a driver's
	Row    bool        // packed or compact holding a row of every attribute (rows.go)
	Driver Driver      // the driver of a layout run in another program
	Name   string      // the driver's name of it
}

// String is the layout's name as results hold it: "hashed", "packed_row",
// "boost_flat".
func (l Layout) String() string {
	if l.Driver != nil {
		return l.Name
	}
	if l.Row {
		return string(l.Core) + dict.RowSuffix
	}
	return string(l.Core)
}

// ParseLayout resolves a name of Config.Layouts, or reports false.
func ParseLayout(name string) (Layout, bool) {
	if l, err := core.ParseLayout(name); err == nil {
		return Layout{Core: l}, true
	}
	if l, ok := dict.ParseRowLayout(name); ok {
		return Layout{Core: l, Row: true}, true
	}
	if d, n, ok := findDriver(name); ok {
		return Layout{Driver: d, Name: n}, true
	}
	return Layout{}, false
}

// Driver is what a configuration asks of a driver: the names of its
// layouts and its checks of a config. The engine's Driver (package
// experiments) is this and what runs one; the engine registers each here
// (RegisterDriver) as it registers it.
type Driver interface {
	// Layout resolves a layout's name to one of the driver's layouts: its
	// name as results hold it, or false.
	Layout(name string) (string, bool)
	// LayoutNames is the driver's part of LayoutNames' list:
	// "C++ reference maps: boost_flat, ...".
	LayoutNames() string
	// Validate checks c (defaults in) for a run of layout, here (the worker
	// found and working): nil, or a *fault.FieldError naming the field.
	Validate(c Config, layout string) error
}

var drivers []Driver

// RegisterDriver adds d to the drivers a config's layouts are looked up
// in, after packlab's own and those registered before; d again does
// nothing (a Driver is comparable).
func RegisterDriver(d Driver) {
	if !slices.Contains(drivers, d) {
		drivers = append(drivers, d)
	}
}

// findDriver finds the driver of a layout's name and the layout's name.
func findDriver(name string) (Driver, string, bool) {
	for _, d := range drivers {
		if n, ok := d.Layout(name); ok {
			return d, n, true
		}
	}
	return nil, "", false
}
