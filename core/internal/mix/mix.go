// Package mix is the one shape of packlab's integer mixers: xor-shift,
// multiply, xor-shift, multiply, xor-shift. With odd multipliers each step
// is invertible modulo 2^width, so a mixer is a bijection of its word; the
// shifts and multipliers are what make it fmix64, mix13, moremur or
// lowbias32.
package mix

// Word is an unsigned word a mixer works on.
type Word interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Mix is x ^= x>>a; x *= m1; x ^= x>>b; x *= m2; x ^= x>>c. It inlines
// (cost 23 of the inliner's 80), and called with constants it compiles to
// the steps written out, give or take a register move. core's in-table hash
// keeps its own copy: its comment says why.
func Mix[T Word](x T, a uint, m1 T, b uint, m2 T, c uint) T {
	x ^= x >> a
	x *= m1
	x ^= x >> b
	x *= m2
	x ^= x >> c
	return x
}
