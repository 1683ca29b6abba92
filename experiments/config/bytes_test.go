package config

import "testing"

// TestParseBytes: a memory size as users write it, and a refusal naming
// what is wrong: 1e9 is bytes, as --rows 1e9 is rows (it was an "unknown
// unit e9"), -1 is negative (it was "not a number").
func TestParseBytes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
	}{
		{"24GiB", 24 << 30}, {"24g", 24 << 30}, {"32GB", 32e9}, {"1.5TiB", 3 << 39}, {"1073741824", 1 << 30},
		{"1e9", 1e9}, {"2.5e9", 25e8}, {"+1GiB", 1 << 30}, {"1E", 1 << 60}, {" 512 MiB ", 512 << 20},
	} {
		if got, err := ParseBytes("memory_bytes", c.in); err != nil || got != c.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"", `memory_bytes "": empty`},
		{"-1", "memory_bytes -1: negative"},
		{"-5GiB", "memory_bytes -5GiB: negative"},
		{"1e30", "memory_bytes 1e30: too large"},
		{"1e30GiB", `memory_bytes 1e30GiB: unknown unit "e30GiB"`},
		{"18446744073709551616", "memory_bytes 18446744073709551616: too large"},
		{"NaN", "memory_bytes NaN: not a number"},
		{"Inf", "memory_bytes Inf: not a number"},
		{"GiB", "memory_bytes GiB: not a number"},
		{"1.2.3", "memory_bytes 1.2.3: not a number"},
		{"0", "memory_bytes 0: not positive"},
		{"12QB", `memory_bytes 12QB: unknown unit "QB"`},
	} {
		const allowed = " (allowed: a size such as 24GiB, 512MiB, 1.5TiB, 32GB or 1073741824 (bytes))"
		if n, err := ParseBytes("memory_bytes", c.in); err == nil || err.Error() != c.want+allowed {
			t.Errorf("ParseBytes(%q) = %d, %v; want %s", c.in, n, err, c.want+allowed)
		}
	}
}
