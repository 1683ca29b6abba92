package mix

import "testing"

// TestMixIsABijection: with odd multipliers Mix loses no value. Every
// 8- and 16-bit word maps to a different one, and its steps undone in
// reverse order give x back for 64-bit words (fmix64's constants).
func TestMixIsABijection(t *testing.T) {
	seen8 := map[uint8]bool{}
	for x := range 1 << 8 {
		seen8[Mix(uint8(x), 4, 0x6b, 3, 0xd5, 4)] = true
	}
	seen16 := map[uint16]bool{}
	for x := range 1 << 16 {
		seen16[Mix(uint16(x), 8, 0x88b5, 7, 0xdb2d, 9)] = true
	}
	if len(seen8) != 1<<8 || len(seen16) != 1<<16 {
		t.Errorf("%d of 256 bytes and %d of 65536 16-bit words reached", len(seen8), len(seen16))
	}
	const m1, m2 = 0xff51afd7ed558ccd, 0xc4ceb9fe1a85ec53
	unshift := func(y uint64, s uint) uint64 { // undoes y ^= y >> s
		x := y
		for range 64 / s {
			x = y ^ x>>s
		}
		return x
	}
	for i := range uint64(1000) {
		x := i * 0x9e3779b97f4a7c15
		y := Mix(x, 33, m1, 33, m2, 33)
		back := unshift(unshift(unshift(y, 33)*inverse(m2), 33)*inverse(m1), 33)
		if back != x {
			t.Fatalf("Mix(%#x) = %#x, undone %#x", x, y, back)
		}
	}
}

// inverse is m's inverse modulo 2^64 (m odd), by Newton's iteration.
func inverse(m uint64) uint64 {
	x := m
	for range 5 {
		x *= 2 - m*x
	}
	return x
}
