package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
	"github.com/packlab/packlab/experiments/text"
)

func TestParseRows(t *testing.T) {
	good := map[string]int64{
		"1000000": 1_000_000, "1e6": 1_000_000, "1M": 1_000_000, "10M": 10_000_000, "1B": 1_000_000_000,
		"2.5M": 2_500_000, "1_000_000": 1_000_000, " 7 ": 7, "1k": 1000, "1G": 1e9, "1e+3": 1000, "3T": 3e12,
		"4611686018427387904": 1 << 62, "4.35M": 4_350_000, "1.1M": 1_100_000,
		// A power, as the allowed range writes its end and text.Rows a
		// power of two.
		"2^62": 1 << 62, "2^32": 1 << 32, "10^9": 1e9, "1^100": 1, "2^0": 1, "4.4e18": 4_400_000_000_000_000_000,
	}
	for in, want := range good {
		got, err := config.ParseRows(in)
		if err != nil || got != want {
			t.Errorf("ParseRows(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		"0":          "rows 0: not positive (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"-5":         "rows -5: not positive (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"abc":        "rows abc: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"1.5":        "rows 1.5: not a whole number of rows (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"1.0000005M": "rows 1.0000005M: not a whole number of rows (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"":           `rows "": empty (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)`,
		"M":          "rows M: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"1e30":       "rows 1e30: too many (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"NaN":        "rows NaN: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"Inf":        "rows Inf: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"10/2":       "rows 10/2: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"0x10":       "rows 0x10: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"1e-3":       "rows 1e-3: not a whole number of rows (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"0.0000001M": "rows 0.0000001M: not a whole number of rows (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"2^63":       "rows 2^63: too many (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"3^40":       "rows 3^40: too many (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"2^-1":       "rows 2^-1: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"2^":         "rows 2^: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"2^1.5":      "rows 2^1.5: not a number (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
		"0^3":        "rows 0^3: not positive (allowed: a whole number of rows from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)",
	}
	for in, want := range bad {
		got, err := config.ParseRows(in)
		if err == nil {
			t.Errorf("ParseRows(%q) = %d, want error %q", in, got, want)
			continue
		}
		if err.Error() != want {
			t.Errorf("ParseRows(%q) error\n got %q\nwant %q", in, err, want)
		}
	}
}

// TestParseCountOfKeys: the largest key (max_key) is a number, not rows:
// its refusals said "not a whole number of rows" and "too many".
func TestParseCountOfKeys(t *testing.T) {
	const allowed = " (allowed: a whole number from 1 to 2^62, e.g. 1000000, 1e6, 1M, 2.5M, 1B)"
	for in, want := range map[string]string{
		"1.5":  "max_key 1.5: not a whole number",
		"1e30": "max_key 1e30: too large",
		"0":    "max_key 0: not positive",
	} {
		if n, err := config.ParseCount("max_key", in); err == nil || err.Error() != want+allowed {
			t.Errorf("ParseCount(max_key, %q) = %d, %v; want %s", in, n, err, want+allowed)
		}
	}
}

// TestFormatRowsRoundTrip: every row count a label, a table or a message
// shows reads back as --rows takes it: the short way where it is exact.
func TestFormatRowsRoundTrip(t *testing.T) {
	for n, want := range map[int64]string{1: "1", 999: "999", 1000: "1K", 1500: "1.5K", 1_000_000: "1M", 1_250_000: "1.25M", 2_500_000: "2.5M", 1e9: "1B",
		2_500_000_000: "2.5B", 1e12: "1T", 1234: "1234", 12_345_678: "12345678", 123_456_789: "123456789", 1e7: "10M",
		// The plan's largest counts: never a run of 19 digits.
		1 << 62: "2^62", 1 << 32: "2^32", 1e15: "1e15", 1e18: "1e18", 4_400_000_000_000_000_000: "4.4e18", 4_610_000_000_000_000_000: "4.61e18",
		1<<62 - 1: "4611686018427387903", 1 << 20: "1048576", 999e12: "999T"} {
		if got := text.Rows(n); got != want {
			t.Errorf("text.Rows(%d) = %q, want %q", n, got, want)
		}
		if back, err := config.ParseRows(text.Rows(n)); err != nil || back != n {
			t.Errorf("ParseRows(text.Rows(%d)) = %d, %v", n, back, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "keys.tsv")
	if err := os.WriteFile(file, []byte("1\t2\n3\t4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := []config.Config{
		{},
		{Layouts: []string{"hashed", "PACKED", "hashed-array"}, Key: "uint32", Value: "Float64", Rows: 5, Shards: 128, MaxLoadFactor: 0.99},
		{Keys: "range:1M", Rows: 10}, {Keys: "zipf:1.1"}, {Keys: "sequential", MissRate: 1}, {Preallocate: true},
		{Source: file}, {Source: file, KeyColumn: "2", ValueColumn: "none", Header: "no", SkipBadRows: true},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v, want nil", c, err)
		}
	}
	bad := []struct {
		c    config.Config
		want string
	}{
		// No driver is registered in this test: app's TestDriversRegistered
		// has the drivers' names.
		{config.Config{Layouts: []string{"hashed", "bogus"}}, `layouts bogus: unknown layout (allowed: hashed, packed, sparse, hashed_array, gomap, compact, iceberg; rows of every attribute: packed_row, compact_row)`},
		{config.Config{Layouts: []string{"hashed", "Hashed"}}, `layouts Hashed: given twice (allowed: each layout once)`},
		{config.Config{Key: "UInt7"}, `key UInt7: unknown type (allowed: UInt8, UInt16, UInt32, UInt64, UInt128, Int8, Int16, Int32, Int64, Int128, Float32, Float64, UUID, Date, DateTime; in the ch_complex_key_ layouts also String (8 to 32 bytes), String(16) or String(8..32) (8 or more bytes when no fixed-size part carries the keys), or a Tuple of up to 8 of them, e.g. Tuple(String, UInt64))`},
		{config.Config{Value: "String"}, `value String: a String or Nullable value is an attribute after a fixed-size first one, e.g. attributes UInt16,String (allowed: UInt8, UInt16, UInt32, UInt64, UInt128, Int8, Int16, Int32, Int64, Int128, Float32, Float64, UUID, Date, DateTime)`},
		{config.Config{Key: "Nullable(UInt64)"}, `key Nullable(UInt64): a key cannot be Nullable (Nullable(T) is for attributes, e.g. attributes UInt16,Nullable(UInt32)) (allowed: UInt8, UInt16, UInt32, UInt64, UInt128, Int8, Int16, Int32, Int64, Int128, Float32, Float64, UUID, Date, DateTime; in the ch_complex_key_ layouts also String (8 to 32 bytes), String(16) or String(8..32) (8 or more bytes when no fixed-size part carries the keys), or a Tuple of up to 8 of them, e.g. Tuple(String, UInt64))`},
		{config.Config{Rows: -1}, `rows -1: out of range (allowed: 1 to 4611686018427387904)`},
		// A range wider than the key type: refused before any run (it failed in the worker, exit 1).
		{config.Config{Key: "UInt8", Keys: "range:300"}, `keys range:300: M 300 is too large for key type UInt8 (allowed: 1 to 256, the count of values UInt8 holds from 0 up)`},
		{config.Config{Key: "Date", Keys: "range:1e5"}, `keys range:1e5: M 100000 is too large for key type Date (allowed: 1 to 65536, the count of values Date holds from 0 up)`},
		{config.Config{Key: "Int8", Keys: "range:129"}, `keys range:129: M 129 is too large for key type Int8 (allowed: 1 to 128, the count of values Int8 holds from 0 up)`},
		{config.Config{Shards: 500}, `shards 500: out of range (allowed: 1 to 128)`},
		{config.Config{Shards: -1}, `shards -1: out of range (allowed: 1 to 128)`},
		{config.Config{MaxLoadFactor: 0.3}, `max_load_factor 0.3: out of range (allowed: 0.5 to 0.99)`},
		{config.Config{MaxLoadFactor: 1}, `max_load_factor 1: out of range (allowed: 0.5 to 0.99)`},
		{config.Config{Repeats: 1000}, `repeats 1000: out of range (allowed: 1 to 100)`},
		{config.Config{MissRate: 1.5}, `miss_rate 1.5: out of range (allowed: 0 to 1)`},
		{config.Config{MissRate: 0.5, NoRead: true}, `miss_rate 0.5: has no effect with no_read (allowed: 0 with no_read)`},
		{config.Config{Keys: "zipff"}, `keys zipff: unknown kind (allowed: sequential, random, range:M, zipf:S; use source for a file)`},
		// What keys allows is no file: that is source.
		{config.Config{Keys: "random:5"}, `keys random:5: random takes no parameter (allowed: sequential, random, range:M, zipf:S; use source for a file)`},
		{config.Config{Keys: "zipf:0"}, `keys zipf:0: S 0 is out of range (allowed: 0 < S <= 10, e.g. zipf:1.1)`},
		{config.Config{Keys: file}, `keys ` + file + `: is not a key generator (allowed: sequential, random, range:M, zipf:S; use source for a file)`},
		{config.Config{Source: filepath.Join(dir, "missing.tsv")}, `source ` + filepath.Join(dir, "missing.tsv") + `: no such file (allowed: an existing TSV or CSV file, optionally .gz)`},
		{config.Config{Source: dir}, `source ` + dir + `: is a directory (allowed: a TSV or CSV file, optionally .gz)`},
		{config.Config{Source: file, Keys: "random"}, `keys random: cannot be combined with source (allowed: one of keys or source)`},
		// Issue 14: the user's own value, exactly, not "" or a default.
		{config.Config{Source: file, Header: "maybe"}, `header maybe: not allowed (allowed: auto, yes, no)`},
		{config.Config{Source: file, KeyColumn: "0"}, `key_column 0: not allowed (allowed: a position 1 or more, or a header name)`},
		{config.Config{Source: file, KeyColumn: " id", Header: "no"}, `key_column " id": a name, but header is "no" (allowed: a position 1 or more, or header auto/yes)`},
		{config.Config{KeyColumn: "2"}, `key_column 2: applies only to a file (allowed: with source FILE)`},
		{config.Config{SkipBadRows: true}, `skip_bad_rows: applies only to a file (allowed: with source FILE)`},
		{config.Config{Source: file, Preallocate: true}, `preallocate: needs the row count before the load, and a file's is known only once it is read (allowed: with synthetic keys (keys))`},
	}
	for _, b := range bad {
		err := b.c.Validate()
		if err == nil {
			t.Errorf("Validate(%+v) = nil, want %q", b.c, b.want)
			continue
		}
		if err.Error() != b.want {
			t.Errorf("Validate(%+v)\n got %q\nwant %q", b.c, err, b.want)
		}
		if _, ok := err.(*fault.FieldError); !ok {
			t.Errorf("Validate(%+v) returned %T, want *FieldError", b.c, err)
		}
	}
}

func TestClickHouseLayout(t *testing.T) {
	for _, c := range []struct {
		l      core.Layout
		shards int
		mlf    float64
		want   string
	}{
		{core.LayoutHashed, 1, 0, "LAYOUT(HASHED())"},
		{core.LayoutHashed, 1, 0.5, "LAYOUT(HASHED())"},
		{core.LayoutSparse, 16, 0.9, "LAYOUT(SPARSE_HASHED(SHARDS 16 MAX_LOAD_FACTOR 0.9))"},
		{core.LayoutPacked, 4, 0, "LAYOUT(SPARSE_HASHED(SHARDS 4))"},
		{core.LayoutPacked, 1, 0.99, "LAYOUT(SPARSE_HASHED(MAX_LOAD_FACTOR 0.99))"},
		{core.LayoutHashedArray, 4, 0.9, "LAYOUT(HASHED_ARRAY(SHARDS 4))"},
		{core.LayoutHashedArray, 1, 0, "LAYOUT(HASHED_ARRAY())"},
		{core.LayoutGoMap, 8, 0.7, ""},
		{core.LayoutCompact, 4, 0.9, ""}, // ClickHouse has no such layout
	} {
		if got := dict.ClickHouseLayout(c.l, c.shards, c.mlf); got != c.want {
			t.Errorf("ClickHouseLayout(%s, %d, %v) = %q, want %q", c.l, c.shards, c.mlf, got, c.want)
		}
	}
}

// TestKernelNotes: a line for each result whose load spent a fifth or more
// of its time (and 50 ms) in the kernel, the huge-pages hint where they were
// on; ResultNotes puts the limit's lines first.
func TestKernelNotes(t *testing.T) {
	rs := []result.Result{
		{Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Shards: 1, MaxLoadFactor: 0.5, LoadSeconds: 2.81, LoadKernelSeconds: 1.46, HugePages: "on"},
		{Layout: "hashed", KeyType: "UInt64", ValueType: "UInt16", Shards: 1, MaxLoadFactor: 0.5, LoadSeconds: 3, LoadKernelSeconds: 0.1, HugePages: "on"},
		{Layout: "sparse", KeyType: "UInt64", ValueType: "UInt16", Shards: 1, MaxLoadFactor: 0.5, LoadSeconds: 0.1, LoadKernelSeconds: 0.04},
		{Layout: "compact", KeyType: "UInt64", ValueType: "UInt16", Shards: 1, MaxLoadFactor: 0.9, LoadSeconds: 2, LoadKernelSeconds: 1, HugePages: "off", ElementCount: 1e6, BytesAllocated: 10e6},
	}
	notes := result.KernelNotes(rs)
	if len(notes) != 4 || !strings.HasPrefix(notes[3], "loads that ran back to back") || !strings.Contains(notes[3], "({settle_seconds} 8)") ||
		notes[0] != "packed SHARDS 1 MLF 0.5 hugepages on: the kernel spent 1.46 s of CPU time in its 2.81 s load" ||
		notes[1] != "compact SHARDS 1 MLF 0.9 hugepages off: the kernel spent 1.00 s of CPU time in its 2.00 s load" ||
		!strings.HasPrefix(notes[2], "the kernel's time in a load is page faults") ||
		!strings.Contains(notes[2], "huge pages were on for some of those loads") {
		t.Errorf("kernel notes %q", notes)
	}
	all := ResultNotes(rs)
	if len(all) != 5 || !strings.Contains(all[0], "information limit") || all[1] != notes[0] {
		t.Errorf("ResultNotes %q: want the limit's line, then the kernel's", all)
	}
	// Loads that idled first, or one load alone: no line about their order.
	for i := range rs {
		rs[i].SettleSeconds = 8
	}
	if n := result.KernelNotes(rs); len(n) != 3 {
		t.Errorf("settled loads: kernel notes %q, want the two runs' lines and what their time is", n)
	}
	rs[0].SettleSeconds = 0
	if n := result.KernelNotes(rs[:1]); len(n) != 2 || !strings.Contains(n[1], "huge pages were on for those loads") {
		t.Errorf("one load: kernel notes %q, want its line and what its time is", n)
	}
	// The explanation is said once however many loads it explains.
	many := append(append([]result.Result(nil), rs...), rs...)
	if n := result.KernelNotes(many); strings.Count(strings.Join(n, "\n"), "page faults") != 1 {
		t.Errorf("kernel notes for %d results say what the time is more than once: %q", len(many), n)
	}
}

// TestLimitNotes: a line for each compact result, none for the others, from
// the recorded limit or, for a result saved before it was recorded, from
// the types; and compact's own default max load factor.
func TestLimitNotes(t *testing.T) {
	rs := []result.Result{
		{Layout: "compact", KeyType: "UInt64", ValueType: "UInt16", Rows: 1e8, ElementCount: 1e8, Shards: 1, MaxLoadFactor: 0.9, BytesAllocated: 1_073_741_824},
		{Layout: "packed", KeyType: "UInt64", ValueType: "UInt16", Rows: 1e8, ElementCount: 1e8, Shards: 1, MaxLoadFactor: 0.5, BytesAllocated: 2_684_354_560},
	}
	if got := result.InformationLimitOf(rs[0]); got < 685_000_000 || got > 687_000_000 {
		t.Errorf("limit of 1e8 <UInt64,UInt16> pairs %d bytes, want 6.86 a pair", got)
	}
	notes := result.LimitNotes(rs)
	want := "compact SHARDS 1 MLF 0.9: 10.74 bytes a pair for 100,000,000 pairs, 1.57x the information limit of 6.86 (no ClickHouse layout is like it)"
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want [%q]", notes, want)
	}
	rs[0].InformationLimit = 700_000_000 // as recorded
	if got := result.InformationLimitOf(rs[0]); got != 700_000_000 {
		t.Errorf("recorded limit %d, want 700000000", got)
	}
	if got := result.InformationLimitOf(result.Result{KeyType: "UInt65", ElementCount: 5}); got != 0 {
		t.Errorf("unknown type: limit %d, want 0", got)
	}
	if m := dict.EffectiveMLF(core.LayoutCompact, 0); m != core.DefaultCompactMaxLoadFactor {
		t.Errorf("compact's mlf by default %v, want %v", m, core.DefaultCompactMaxLoadFactor)
	}
	if m := dict.EffectiveMLF(core.LayoutCompact, 0.7); m != 0.7 {
		t.Errorf("compact's mlf when given 0.7: %v", m)
	}
}
