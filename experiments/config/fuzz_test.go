package config

import (
	"strings"
	"testing"
)

// The parsers of what a user types or a file holds, fuzzed: none panics,
// and what each accepts is in range. `go test` runs the seeds (the cases
// the reliability audit found); `go test -fuzz FuzzParseRows` explores.

func FuzzParseRows(f *testing.F) {
	for _, s := range []string{"1e9", "1B", "2.5M", "0", "-3", "1e19", "4611686018427387904", "1.5", "010", "0x10", "1e", "", " 7 ", "NaN", "Inf", "1e-3", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseRows(s)
		if err == nil && (n < 1 || n > 1<<62) {
			t.Errorf("ParseRows(%q) = %d, accepted out of range", s, n)
		}
		if err != nil && !strings.Contains(err.Error(), "rows") {
			t.Errorf("ParseRows(%q): %v does not name rows", s, err)
		}
	})
}
