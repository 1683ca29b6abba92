package planner

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/source"
)

// What the planner's measuring benchmarks (BenchmarkReadInterleaved,
// BenchmarkLoadFactor) read from their environment, and the source both
// load their tables from.

// envLayout is the layout the variable name names, or def when it is unset.
func envLayout(b *testing.B, name string, def core.Layout) core.Layout {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	l, err := core.ParseLayout(s)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// envNumbers is the variable's comma-separated numbers ("1e7", "0.7,0.9"),
// or nil when it is unset.
func envNumbers(b *testing.B, name string) []float64 {
	s := os.Getenv(name)
	if s == "" {
		return nil
	}
	var out []float64
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			b.Fatalf("%s %q: %v", name, s, err)
		}
		out = append(out, x)
	}
	return out
}

// envNumber is the variable's one number, or def when it is unset.
func envNumber(b *testing.B, name string, def float64) float64 {
	switch n := envNumbers(b, name); len(n) {
	case 0:
		return def
	case 1:
		return n[0]
	}
	b.Fatalf("%s %q: one number, not a list", name, os.Getenv(name))
	return 0
}

// randomSource is rows random <UInt64, UInt16> pairs of seed 1, the lab's
// default source; the caller closes it.
func randomSource(b *testing.B, rows int64) core.Source[uint64, uint16] {
	spec, err := source.Parse("random")
	if err != nil {
		b.Fatal(err)
	}
	spec.Rows, spec.Seed = rows, 1
	src, err := source.Open[uint64, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
	if err != nil {
		b.Fatal(err)
	}
	return src
}
