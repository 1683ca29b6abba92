package core

import "math/bits"

// grower is ClickHouse's HashTableGrowerWithPrecalculationAndMaxLoadFactor:
// it decides how many cells a hashed or packed table has and when it grows.
//
//   - cells = 2^degree, from 2^8 = 256;
//   - the table grows when elements > maxFill = floor(cells * mlf);
//   - it grows x4 while degree < fastDegree, then x2. Dictionaries use
//     fastDegree 19 ("to decrease memory usage at least slightly"); the plain
//     HashMap grower that HASHED_ARRAY's key index uses has 23 and mlf 0.5.
type grower struct {
	degree     uint8   // cells = 1 << degree
	fastDegree uint8   // below it the table grows x4
	mlf        float64 // max load factor, in [0.5, 0.99]
	mask       uint64  // cells - 1, always 2^degree - 1
	maxFill    uint64  // uint64(cells * mlf), the largest element count that fits
}

const (
	initialDegree        = 8  // 256 cells
	dictionaryFastDegree = 19 // HashTableGrowerWithPrecalculationAndMaxLoadFactor
	hashMapFastDegree    = 23 // HashTableGrowerWithPrecalculation
)

func newGrower(mlf float64, fastDegree uint8) grower {
	g := grower{fastDegree: fastDegree, mlf: mlf}
	g.setDegree(initialDegree)
	return g
}

func (g *grower) setDegree(d uint8) {
	g.degree = d
	g.mask = 1<<d - 1
	g.maxFill = uint64(float64(uint64(1)<<d) * g.mlf)
}

// reserve sizes g for n elements as ClickHouse's set(n) does
// (HashTableGrowerWithPrecalculationAndMaxLoadFactor, which HashTable's
// reserve calls): degree = ceil(log2 n), one more when 2^degree * mlf < n,
// never smaller than g already is. At mlf 0.5 it is HashMap's own rule
// (HashTableGrowerWithPrecalculation: floor(log2(n-1)) + 2), so
// hashed_array's key index takes the same function.
func (g *grower) reserve(n uint64) {
	if n <= 1 {
		return
	}
	d := uint8(bits.Len64(n - 1)) // ceil(log2 n)
	if float64(uint64(1)<<d)*g.mlf < float64(n) {
		d++
	}
	if d > g.degree {
		g.setDegree(d)
	}
}

func (g *grower) cells() uint64 { return 1 << g.degree }

// overflow reports whether a table holding n elements must grow.
func (g *grower) overflow(n uint64) bool { return n > g.maxFill }

// increase moves to the next size.
func (g *grower) increase() {
	if g.degree < g.fastDegree {
		g.setDegree(g.degree + 2)
	} else {
		g.setDegree(g.degree + 1)
	}
}

// cellsFor replays the growth rule: the cells a table has after n distinct
// inserts, and the cells it had just before its last growth (0 if it never
// grew) — the two slabs that are alive together at the load's peak.
func (g grower) cellsFor(n uint64) (final, previous uint64) {
	for g.overflow(n) {
		previous = g.cells()
		g.increase()
	}
	return g.cells(), previous
}
