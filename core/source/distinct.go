package source

import (
	"math"

	"github.com/packlab/packlab/core"
)

// ExpectedDistinct is how many distinct keys a source of rows rows gives, and
// whether that is only an upper bound. Random keys are distinct until the
// key type runs out of values; range:M repeats by the birthday rule: of D
// equally likely keys, rows draws hit D*(1-(1-1/D)^rows) distinct ones on
// average.
func ExpectedDistinct(spec Spec, key core.Type, rows int64) (int64, bool) {
	domain := math.Inf(1)
	if key.Size < 8 {
		domain = math.Ldexp(1, 8*key.Size)
	}
	birthday := func(d float64) int64 {
		if d >= 1e18 {
			return rows
		}
		return int64(math.Ceil(-d * math.Expm1(float64(rows)*math.Log1p(-1/d))))
	}
	switch spec.Kind {
	case Sequential:
		return int64(min(float64(rows), domain)), false
	case Random:
		// A permutation of the key's width (core's mix8..mix32, moremur):
		// no repeats before every value has come.
		return int64(min(float64(rows), domain)), false
	case Range:
		return min(birthday(min(spec.Param, domain)), rows), false
	}
	// zipf repeats its first ranks heavily, a file may repeat keys: every
	// row is taken as a distinct key, an upper bound.
	return int64(min(float64(rows), domain)), true
}
