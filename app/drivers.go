package app

import (
	"github.com/packlab/packlab/experiments/chdriver"
	"github.com/packlab/packlab/experiments/refdriver"
)

// The drivers of the layouts packlab runs in programs of their own: the C++
// reference maps, then ClickHouse's own dictionaries (in this order in
// --layout's list of names). Every face builds on this package, so each
// finds them registered with the engine.
func init() {
	refdriver.Register()
	chdriver.Register()
}
