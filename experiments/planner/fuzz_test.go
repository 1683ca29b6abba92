package planner

import "testing"

// The plan's parsers of what a user types, fuzzed as the engine's are
// (experiments/fuzz_test.go): none panics, and what each accepts is in range.

func FuzzParseMemory(f *testing.F) {
	for _, s := range []string{"24GiB", "512MiB", "1.5TiB", "32GB", "0", "-1GiB", "1e30GiB", "9EiB", "GiB", "", "1 GiB", "NaN GiB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseMemory(s)
		if err == nil && n <= 0 {
			t.Errorf("ParseMemory(%q) = %d, accepted", s, n)
		}
	})
}

func FuzzClickHouseVersion(f *testing.F) {
	for _, s := range []string{"26.7", "23.5.3.24", "v23.3-lts", "22.8", "x", "23", "23.13", "99.12", "100.1", "23.5.x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseClickHouseVersion(s)
		if err == nil && (v.Major < 21 || v.Major > 99 || v.Minor < 1 || v.Minor > 12) {
			t.Errorf("parseClickHouseVersion(%q) = %v, accepted", s, v)
		}
	})
}
