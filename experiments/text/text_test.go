package text

import (
	"strings"
	"testing"
)

func TestBytesBinary(t *testing.T) {
	for n, want := range map[int64]string{-1: "unknown", 0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 20 << 20: "20.0 MiB", 35 << 30: "35.0 GiB", 48 << 40: "48.0 TiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestShort: a long name cut with how much was left out; one whose rest
// is shorter than that note whole.
func TestShort(t *testing.T) {
	long := strings.Repeat("x", 100)
	for in, want := range map[string]string{
		"short":                   "short",
		strings.Repeat("y", 10):   strings.Repeat("y", 10),
		strings.Repeat("z", 12):   strings.Repeat("z", 12),
		long:                      strings.Repeat("x", 9) + "… (91 more characters)",
		"run ch_hashed UInt64→Ni": "run ch_hashed UInt64→Ni",
	} {
		if got := Short(in, 10); got != want {
			t.Errorf("Short(%q, 10) = %q, want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(1, "node", "nodes"), "1 node"},
		{Count(0, "dictionary", "dictionaries"), "0 dictionaries"},
		{Count(int64(12500), "bad row", "bad rows"), "12,500 bad rows"},
	} {
		if c.got != c.want {
			t.Errorf("Count: %q, want %q", c.got, c.want)
		}
	}
}

// TestSecondsDays: a plan's load time at 2^62 rows is millions of days,
// written with its thousands as every other count ("7,626,539 days").
func TestSecondsDays(t *testing.T) {
	for v, want := range map[float64]string{
		0.42: "0.42 s", 7000: "1h56m", 100 * 3600: "4 days", 658932969600: "7,626,539 days", 1e30: "1.16e+25 days",
	} {
		if got := Seconds(&v); got != want {
			t.Errorf("Seconds(%g) = %q, want %q", v, got, want)
		}
	}
}
