package source

// Synthetic sources: rows computed from (seed, row number) alone.
//
// Every random quantity is moremur(base + i*gamma): a Weyl sequence (the
// row number times an odd constant, plus a per-purpose base derived from the
// seed) through Pelle Evensen's moremur mixer. Both steps are bijections of
// 64-bit words, so row i is computed directly (Row), the rows do not depend
// on the order they are generated in, and random UInt64 keys never repeat.
// Keys narrower than 8 bytes take the Weyl sequence's low bits (still a
// full-period sequence of that width) through a mixer of that width
// (mix8/mix16/mix32, bijections too): random UInt32 keys are distinct for
// the first 2^32 rows, not merely unlikely to collide.
//
//	purpose          base         used by
//	key, low word    keyBase      random, range (then scaled to [0, M))
//	key, high word   keyBaseHi    random 16-byte keys
//	zipf draws       zipfBase     zipf (one mixed word per row, then a
//	                              short Weyl sequence of its own per try)
//	value            valueBase    values = random (two words for 16 bytes)
//
// With values = hash, a value is valueHash(key bits): a repeated key always
// comes with the same value, so "first occurrence wins" and "last wins"
// load identical maps.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"unsafe"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/core/internal/mix"
)

// weylGamma is the odd increment of every Weyl sequence (2^64 / phi).
const weylGamma = 0x9e3779b97f4a7c15

// moremur is Pelle Evensen's 64-bit mixer: a bijection whose output passes
// PractRand when fed a Weyl sequence. Its constants are unrelated to the
// in-table hash (fmix64) and the shard hash (mix13), so generated keys do
// not line up with either.
func moremur(x uint64) uint64 { return mix.Mix(x, 27, 0x3c79ac492ba7b653, 33, 0x1c69b3f74ac4ae35, 27) }

// seedBase derives an independent stream base per purpose from the user's
// seed; seeds 0 and 1 give unrelated streams.
func seedBase(seed, purpose uint64) uint64 {
	return moremur(moremur(seed^purpose) + purpose)
}

const (
	purposeKey    = 0x6b65792d6c6f7721 // arbitrary distinct constants
	purposeKeyHi  = 0x6b65792d68696768
	purposeZipf   = 0x7a6970662d726e67
	purposeValue  = 0x76616c75652d6c6f
	valueHashSalt = 0xa0761d6478bd642f
)

// valueHash is a value made from a key's bits.
func valueHash(klo, khi uint64) uint64 {
	return moremur(klo ^ valueHashSalt ^ bits.RotateLeft64(khi*weylGamma, 31))
}

// valueBits makes a value of type V from a 64-bit draw; 16-byte values get a
// second, independent word.
func valueBits[V core.Bits](x uint64) V {
	if sizeOf[V]() == 16 {
		return core.FromUint64[V](x, moremur(x+weylGamma))
	}
	return core.FromUint64[V](x, 0)
}

// synthKind numbers the generators for the switch in Next.
type synthKind uint8

const (
	synthSequential synthKind = iota
	synthRandom
	synthRange
	synthZipf
)

// synthSource implements core.IndexedSource for the four generated kinds. It
// holds no per-row state beyond the next row number, so its memory is
// constant; Row is safe for concurrent use.
type synthSource[K, V core.Bits] struct {
	kind       synthKind
	rows       int64
	next       int64  // the row the next Next starts at
	floatKey   int    // 0: key takes the number's bits; 32 or 64: the number as Float32/Float64
	hashValues bool   // values = hash (else random)
	m          uint64 // range: M
	keyBase    uint64
	keyBaseHi  uint64
	valueBase  uint64
	zipfBase   uint64
	zipf       zipfSampler
	rowBytes   int // a row's values (core.RowType): the low rowBytes bytes of V's, else 0
	closed     bool
}

// cutRow keeps v's low n bytes (0 < n < sizeof V): a row's values are
// drawn in a V wider than the row (core.RowType), and the bytes past it
// must be zero, as the table keeps only the row's.
func cutRow[V core.Bits](v V, n int) V {
	lo, hi := core.ToUint64(v)
	if n < 8 {
		return core.FromUint64[V](lo&(1<<(8*n)-1), 0)
	}
	return core.FromUint64[V](lo, hi&(1<<(8*(n-8))-1))
}

func newSynthSource[K, V core.Bits](spec Spec, key core.Type) (*synthSource[K, V], error) {
	s := &synthSource[K, V]{
		rows:       spec.Rows,
		hashValues: spec.Values != ValuesRandom,
		keyBase:    seedBase(spec.Seed, purposeKey),
		keyBaseHi:  seedBase(spec.Seed, purposeKeyHi),
		valueBase:  seedBase(spec.Seed, purposeValue),
		zipfBase:   seedBase(spec.Seed, purposeZipf),
	}
	if key.Kind == core.KindFloat {
		s.floatKey = 8 * key.Size
	}
	switch spec.Kind {
	case Sequential:
		s.kind = synthSequential
	case Random:
		s.kind = synthRandom
	case Range:
		s.kind = synthRange
		s.m = uint64(spec.Param)
		if err := spec.ValidateKey(key); err != nil {
			return nil, err
		}
	case Zipf:
		s.kind = synthZipf
		s.zipf = newZipfSampler(float64(spec.Rows), spec.Param)
	default:
		return nil, spec.errorf("kind %q is not synthetic", spec.Kind)
	}
	return s, nil
}

// RangeLimit is the largest M for which every number in [0, M) is a
// distinct value of the key type.
func RangeLimit(key core.Type) uint64 {
	switch key.Kind {
	case core.KindSigned:
		if key.Size < 8 {
			return 1 << (8*key.Size - 1)
		}
	case core.KindFloat:
		if key.Size == 4 {
			return 1 << 24
		}
	default:
		if key.Size < 8 {
			return 1 << (8 * key.Size)
		}
	}
	return MaxRangeM
}

// Rows implements Source.
func (s *synthSource[K, V]) Rows() int64 { return s.rows }

// Skipped implements Source: a generator has no bad rows.
func (s *synthSource[K, V]) Skipped() int64 { return 0 }

// Close implements Source.
func (s *synthSource[K, V]) Close() error {
	s.closed = true
	return nil
}

// numKey turns a generated number into a key: the number as a float for
// float keys, its low bytes otherwise.
func numKey[K core.Bits](n uint64, floatKey int) K {
	switch floatKey {
	case 64:
		return core.FromUint64[K](math.Float64bits(float64(n)), 0)
	case 32:
		return core.FromUint64[K](uint64(math.Float32bits(float32(n))), 0)
	}
	return core.FromUint64[K](n, 0)
}

// key computes row i's key.
func (s *synthSource[K, V]) key(i uint64) K {
	switch s.kind {
	case synthSequential:
		return numKey[K](i, s.floatKey)
	case synthRandom:
		x := s.keyBase + i*weylGamma
		switch sizeOf[K]() {
		case 1:
			return core.FromUint64[K](uint64(mix8(uint8(x))), 0)
		case 2:
			return core.FromUint64[K](uint64(mix16(uint16(x))), 0)
		case 4:
			return core.FromUint64[K](uint64(mix32(uint32(x))), 0)
		case 16:
			return core.FromUint64[K](moremur(x), moremur(s.keyBaseHi+i*weylGamma))
		}
		return core.FromUint64[K](moremur(x), 0)
	case synthRange:
		n, _ := bits.Mul64(moremur(s.keyBase+i*weylGamma), s.m)
		return numKey[K](n, s.floatKey)
	default:
		return numKey[K](s.zipf.rank(moremur(s.zipfBase+i*weylGamma))-1, s.floatKey)
	}
}

// value computes row i's value, given its key.
func (s *synthSource[K, V]) value(i uint64, k K) V {
	var v V
	if s.hashValues {
		lo, hi := core.ToUint64(k)
		v = valueBits[V](valueHash(lo, hi))
	} else {
		v = valueBits[V](moremur(s.valueBase + i*weylGamma))
	}
	if s.rowBytes > 0 {
		v = cutRow(v, s.rowBytes)
	}
	return v
}

// Row implements core.IndexedSource: the i-th row, computed alone. For i
// outside [0, Rows) it returns what row i would be in a longer source.
func (s *synthSource[K, V]) Row(i int64) (K, V) {
	k := s.key(uint64(i))
	return k, s.value(uint64(i), k)
}

var errSourceClosed = errors.New("source: Next after Close")

// Next implements Source. Each kind has its own loop, with no calls that
// are not inlined and no allocation once the block has capacity.
func (s *synthSource[K, V]) Next(b *core.Block[K, V], max int) error {
	if s.closed {
		b.Reset()
		return errSourceClosed
	}
	if max < 1 {
		b.Reset()
		return fmt.Errorf("source: Next(max = %d): max must be at least 1", max)
	}
	n := s.rows - s.next
	if n <= 0 {
		b.Reset()
		return io.EOF
	}
	if n > int64(max) {
		n = int64(max)
	}
	keys := resize(b.Keys, int(n))
	vals := resize(b.Values, int(n))
	start := uint64(s.next)
	switch {
	case s.kind == synthSequential && s.floatKey == 0:
		seqKeys(keys, start)
	case s.kind == synthRandom:
		randomKeys(keys, s.keyBase+start*weylGamma, s.keyBaseHi+start*weylGamma)
	case s.kind == synthRange && s.floatKey == 0:
		rangeKeys(keys, s.keyBase+start*weylGamma, s.m)
	default: // float keys and zipf: a few ns more per row
		for j := range keys {
			keys[j] = s.key(start + uint64(j))
		}
	}
	if s.hashValues {
		hashValues(keys, vals)
	} else {
		randomValues(vals, s.valueBase+start*weylGamma)
	}
	if s.rowBytes > 0 {
		for j, v := range vals {
			vals[j] = cutRow(v, s.rowBytes)
		}
	}
	b.Keys, b.Values = keys, vals
	s.next += n
	return nil
}

// The kernels below fill a block's keys or values. Each is dispatched once
// per block on the sizes of K and V to a loop over plain uint8 ... uint64 (or
// [2]uint64) slices, so the loop body is a few multiplies and a store: no
// calls, no type dictionary, no bounds checks. Each kernel writes its own
// five-way switch: Go cannot pass a generic kernel uninstantiated, so one
// shared dispatcher would take five closures at every call, as many lines
// as the switch it replaces.

// synthWord is what a kernel stores: the core.Bits types of up to 8 bytes.
type synthWord interface {
	uint8 | uint16 | uint32 | uint64
}

// sizeOf is unsafe.Sizeof for a type parameter: 1, 2, 4, 8 or 16 for the
// Bits types; the compiler folds it to a constant in every instantiation.
func sizeOf[T any]() uintptr { return unsafe.Sizeof(*new(T)) }

// wordsOf views a slice of core.Bits as the plain type of the same size.
func wordsOf[T, S any](s []S) []T {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

func seqKeys[K core.Bits](keys []K, start uint64) {
	switch sizeOf[K]() {
	case 1:
		seqKernel(wordsOf[uint8](keys), start)
	case 2:
		seqKernel(wordsOf[uint16](keys), start)
	case 4:
		seqKernel(wordsOf[uint32](keys), start)
	case 8:
		seqKernel(wordsOf[uint64](keys), start)
	default:
		k := wordsOf[core.U128](keys)
		for j := range k {
			k[j] = core.U128{start + uint64(j), 0}
		}
	}
}

func seqKernel[T synthWord](dst []T, start uint64) {
	for j := range dst {
		dst[j] = T(start + uint64(j))
	}
}

func randomKeys[K core.Bits](keys []K, x, y uint64) {
	switch sizeOf[K]() {
	case 1:
		k := wordsOf[uint8](keys)
		for j := range k {
			k[j] = mix8(uint8(x))
			x += weylGamma
		}
	case 2:
		k := wordsOf[uint16](keys)
		for j := range k {
			k[j] = mix16(uint16(x))
			x += weylGamma
		}
	case 4:
		k := wordsOf[uint32](keys)
		for j := range k {
			k[j] = mix32(uint32(x))
			x += weylGamma
		}
	case 8:
		randomKernel(wordsOf[uint64](keys), x)
	default:
		k := wordsOf[core.U128](keys)
		for j := range k {
			k[j] = core.U128{moremur(x), moremur(y)}
			x += weylGamma
			y += weylGamma
		}
	}
}

func randomKernel[T synthWord](dst []T, x uint64) {
	for j := range dst {
		dst[j] = T(moremur(x))
		x += weylGamma
	}
}

// mix32, mix16 and mix8 are bijections of 32-, 16- and 8-bit words
// (xor-shifts and odd multipliers, each invertible modulo 2^width; mix32 is
// Chris Wellons' lowbias32, mix16 his 16-bit hash). Fed the low bits of a
// Weyl sequence, which run through every value of that width before
// repeating, they give narrow random keys that are distinct until the key
// type runs out of values.
func mix32(x uint32) uint32 { return mix.Mix(x, 16, 0x7feb352d, 15, 0x846ca68b, 16) }
func mix16(x uint16) uint16 { return mix.Mix(x, 8, 0x88b5, 7, 0xdb2d, 9) }
func mix8(x uint8) uint8    { return mix.Mix(x, 4, 0x6b, 3, 0xd5, 4) }

func rangeKeys[K core.Bits](keys []K, x, m uint64) {
	switch sizeOf[K]() {
	case 1:
		rangeKernel(wordsOf[uint8](keys), x, m)
	case 2:
		rangeKernel(wordsOf[uint16](keys), x, m)
	case 4:
		rangeKernel(wordsOf[uint32](keys), x, m)
	case 8:
		rangeKernel(wordsOf[uint64](keys), x, m)
	default:
		k := wordsOf[core.U128](keys)
		for j := range k {
			r, _ := bits.Mul64(moremur(x), m)
			k[j] = core.U128{r, 0}
			x += weylGamma
		}
	}
}

// rangeKernel scales a uniform word into [0, m) by the high half of a
// 64x64-bit product (Lemire's method without the rejection step: the bias is
// below m/2^64, under 5e-4 % for any m <= 2^53).
func rangeKernel[T synthWord](dst []T, x, m uint64) {
	for j := range dst {
		r, _ := bits.Mul64(moremur(x), m)
		dst[j] = T(r)
		x += weylGamma
	}
}

func hashValues[K, V core.Bits](keys []K, vals []V) {
	switch sizeOf[K]() {
	case 1:
		hashValuesFrom(wordsOf[uint8](keys), vals)
	case 2:
		hashValuesFrom(wordsOf[uint16](keys), vals)
	case 4:
		hashValuesFrom(wordsOf[uint32](keys), vals)
	case 8:
		hashValuesFrom(wordsOf[uint64](keys), vals)
	default:
		k := wordsOf[core.U128](keys)
		for j := range k {
			vals[j] = valueBits[V](valueHash(k[j][0], k[j][1]))
		}
	}
}

func hashValuesFrom[KT synthWord, V core.Bits](keys []KT, vals []V) {
	switch sizeOf[V]() {
	case 1:
		hashKernel(keys, wordsOf[uint8](vals))
	case 2:
		hashKernel(keys, wordsOf[uint16](vals))
	case 4:
		hashKernel(keys, wordsOf[uint32](vals))
	case 8:
		hashKernel(keys, wordsOf[uint64](vals))
	default:
		v := wordsOf[core.U128](vals)
		for j := range v {
			x := valueHash(uint64(keys[j]), 0)
			v[j] = core.U128{x, moremur(x + weylGamma)}
		}
	}
}

func hashKernel[KT, VT synthWord](keys []KT, vals []VT) {
	vals = vals[:len(keys)]
	for j, k := range keys {
		vals[j] = VT(valueHash(uint64(k), 0))
	}
}

func randomValues[V core.Bits](vals []V, x uint64) {
	switch sizeOf[V]() {
	case 1:
		randomKernel(wordsOf[uint8](vals), x)
	case 2:
		randomKernel(wordsOf[uint16](vals), x)
	case 4:
		randomKernel(wordsOf[uint32](vals), x)
	case 8:
		randomKernel(wordsOf[uint64](vals), x)
	default:
		v := wordsOf[core.U128](vals)
		for j := range v {
			r := moremur(x)
			v[j] = core.U128{r, moremur(r + weylGamma)}
			x += weylGamma
		}
	}
}

// resize returns s with length n, reusing its array when it is big enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// zipfSampler draws ranks 1..n with P(r) = r^-s / H(n, s).
//
// The first zipfHeadRanks ranks, where most of the mass is for s near 1 or
// above, come from a table: their cumulative probabilities (8 KiB) and a
// guide table that jumps to the right entry, so a draw costs one lookup and
// a short scan. The ranks beyond go to rejection inversion (W. Hörmann, G.
// Derflinger: "Rejection-inversion to generate variates from monotone
// discrete distributions", ACM TOMACS 6(3), 1996) in the form Apache Commons
// RNG uses for any s > 0, with the hat integral H(x) = (x^(1-s) - 1)/(1-s),
// which has a limit at s = 1. A tail try is accepted with probability close
// to 1 and costs a few log/exp calls.
//
// The head's share is exact (summed); the tail's is the Euler-Maclaurin sum
// to the third derivative, whose relative error is below 1e-12 when it
// starts past rank 1024. Memory is the fixed-size table, whatever n is.
type zipfSampler struct {
	n, s      float64
	head      int       // ranks 1..head come from the table
	headShare float64   // P(rank <= head)
	cdf       []float64 // cdf[i] = P(rank <= i+1 | rank <= head); cdf[head-1] = 1
	guide     []uint16  // guide[g] = the first i with cdf[i] > g/len(guide)

	// Rejection inversion over ranks head+1 .. n.
	hIntegralLo float64 // H(head + 0.5)
	hIntegralN  float64 // H(n + 0.5)
	squeeze     float64 // accept at once when k - x <= squeeze
}

const zipfHeadRanks = 1024

func newZipfSampler(n, s float64) zipfSampler {
	z := zipfSampler{n: n, s: s}
	z.head = int(min(n, zipfHeadRanks))
	z.cdf = make([]float64, z.head)
	headMass := 0.0
	for i := range z.cdf {
		headMass += z.h(float64(i + 1))
		z.cdf[i] = headMass
	}
	for i := range z.cdf {
		z.cdf[i] /= headMass
	}
	z.cdf[z.head-1] = 1
	z.guide = make([]uint16, z.head)
	i := 0
	for g := range z.guide {
		for z.cdf[i] <= float64(g)/float64(len(z.guide)) {
			i++
		}
		z.guide[g] = uint16(i)
	}
	z.headShare = 1
	if float64(z.head) < n {
		a, b := float64(z.head+1), n
		d1 := func(x float64) float64 { return -s * math.Pow(x, -s-1) }
		d3 := func(x float64) float64 { return -s * (s + 1) * (s + 2) * math.Pow(x, -s-3) }
		tailMass := z.hIntegral(b) - z.hIntegral(a) + (z.h(a)+z.h(b))/2 +
			(d1(b)-d1(a))/12 - (d3(b)-d3(a))/720
		z.headShare = headMass / (headMass + tailMass)
		z.hIntegralLo = z.hIntegral(float64(z.head) + 0.5)
		z.hIntegralN = z.hIntegral(n + 0.5)
		z.squeeze = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	}
	return z
}

// rank draws one rank in [1, n] from the random word w; a tail draw takes
// its uniforms from a Weyl sequence seeded by w, so the rank is a pure
// function of w.
func (z *zipfSampler) rank(w uint64) uint64 {
	uni := float64(w>>11) * (1.0 / (1 << 53)) // [0, 1)
	if uni < z.headShare {
		u := uni / z.headShare
		i := int(z.guide[int(u*float64(len(z.guide)))])
		for z.cdf[i] <= u && i < len(z.cdf)-1 {
			i++
		}
		return uint64(i + 1)
	}
	for try := uint64(1); ; try++ {
		uni := float64(moremur(w+try*weylGamma)>>11) * (1.0 / (1 << 53))
		u := z.hIntegralN + uni*(z.hIntegralLo-z.hIntegralN) // (H(head+0.5), H(n+0.5)]
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k <= float64(z.head) {
			k = float64(z.head + 1)
		} else if k > z.n {
			k = z.n
		}
		// For k >= 2 the hat over [k-0.5, k+0.5] has area H(k+0.5) -
		// H(k-0.5) >= h(k); accepting u >= H(k+0.5) - h(k) keeps exactly
		// h(k) of it. The squeeze is Theorem 2 of the paper.
		if k-x <= z.squeeze || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k)
		}
	}
}

// hIntegral is H(x) = (x^(1-s) - 1)/(1-s), written to stay exact near s = 1.
func (z *zipfSampler) hIntegral(x float64) float64 {
	logX := math.Log(x)
	return zipfHelper2((1-z.s)*logX) * logX
}

// h is the hat function x^-s.
func (z *zipfSampler) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegralInverse is the inverse of hIntegral.
func (z *zipfSampler) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding can push t just below -1
	}
	return math.Exp(zipfHelper1(t) * x)
}

// zipfHelper1 is log1p(x)/x, with its Taylor series near 0.
func zipfHelper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// zipfHelper2 is expm1(x)/x, with its Taylor series near 0.
func zipfHelper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}
