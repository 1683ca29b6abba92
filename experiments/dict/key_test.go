package dict

import (
	"testing"

	"github.com/packlab/packlab/core"
)

// TestParseKey: a run's keys, as the ch_ layouts take them: their names
// again, the part that carries the lab's keys, and the bytes ClickHouse's
// arena holds a row (a String's 8-byte size beside its bytes).
func TestParseKey(t *testing.T) {
	for _, c := range []struct {
		in, name string
		derived  bool
		lab      string
		lo, hi   int
	}{
		{"UInt64", "UInt64", false, "UInt64", 8, 8},
		{"UInt128", "UInt128", false, "UInt128", 16, 16},
		{"String", "String", true, "UInt64", 16, 40},
		{"string(16)", "String(16)", true, "UInt64", 24, 24},
		{"String(8..64)", "String(8..64)", true, "UInt64", 16, 72},
		{"Tuple(String, UInt64)", "Tuple(String, UInt64)", true, "UInt64", 24, 48},
		{"tuple(String(0..4),UInt32, Date)", "Tuple(String(0..4), UInt32, Date)", true, "UInt32", 14, 18},
		{"Tuple(UInt64)", "Tuple(UInt64)", true, "UInt64", 8, 8},
	} {
		k, problem, ok := ParseKey(c.in)
		if !ok || problem != "" {
			t.Errorf("ParseKey(%q): %q, %v", c.in, problem, ok)
			continue
		}
		lo, hi := k.SerializedBytes()
		if k.String() != c.name || k.Derived() != c.derived || k.LabKey().Name != c.lab || lo != c.lo || hi != c.hi {
			t.Errorf("ParseKey(%q) = %s derived %v lab %s bytes %d..%d; want %s %v %s %d..%d",
				c.in, k, k.Derived(), k.LabKey().Name, lo, hi, c.name, c.derived, c.lab, c.lo, c.hi)
		}
	}
	for _, c := range []struct {
		in      string
		problem bool // a String or tuple out of range, not an unknown type
	}{
		{"Str", false}, {"Stringy", false}, {"Tuple(", false}, {"", false},
		{"String(", true}, {"String(x)", true}, // a String whose lengths do not read: not an unknown type
		{"String(4)", true}, {"String(0..8)", true}, {"String(9000)", true}, {"String(9..8)", true},
		{"Tuple(Strin, UInt64)", true}, {"Tuple(String(4..5000), UInt64)", true},
		{"Tuple(UInt8,UInt8,UInt8,UInt8,UInt8,UInt8,UInt8,UInt8,UInt8)", true},
	} {
		k, problem, ok := ParseKey(c.in)
		if ok && problem == "" {
			t.Errorf("ParseKey(%q) = %s, want refused", c.in, k)
		} else if ok != c.problem || (problem != "") != c.problem {
			t.Errorf("ParseKey(%q): problem %q, ok %v; want a problem %v", c.in, problem, ok, c.problem)
		}
	}
}

// TestParseString: a String type's lengths, and what is wrong with them
// named (String(40..20) was an "unknown type" as an attribute and a value).
func TestParseString(t *testing.T) {
	for _, c := range []struct {
		in     string
		lo, hi int
	}{{"String", 8, 32}, {"string(16)", 16, 16}, {" String ( 0 .. 4 ) ", 0, 4}, {"String(4096)", 4096, 4096}} {
		if lo, hi, problem, ok := ParseString(c.in); !ok || problem != "" || lo != c.lo || hi != c.hi {
			t.Errorf("ParseString(%q) = %d..%d, %q, %v; want %d..%d", c.in, lo, hi, problem, ok, c.lo, c.hi)
		}
	}
	for _, c := range []struct{ in, problem string }{
		{"String(40..20)", "String's shortest length 40 is over its longest, 20"},
		{"String(0)", "String's longest length is 0 bytes"},
		{"String(5000)", "String's longest length 5000 is over 4096 bytes"},
		{"String(18446744073709551616)", "String's length 18446744073709551616 is over 4096 bytes"},
		{"String(-1)", `String's length "-1" is not a whole number of bytes`},
		{"String(1.5)", `String's length "1.5" is not a whole number of bytes`},
		{"String()", `String's length "" is not a whole number of bytes`},
		{"String(4..)", `String's length "" is not a whole number of bytes`},
		{"String(1e30)", `String's length "1e30" is not a whole number of bytes`},
		{"String(8", "String( without its closing parenthesis"},
	} {
		if _, _, problem, ok := ParseString(c.in); !ok || problem != c.problem {
			t.Errorf("ParseString(%q): %q, %v; want %q", c.in, problem, ok, c.problem)
		}
	}
	for _, s := range []string{"Stringy", "Str", "UInt16", "FixedString(8)", ""} {
		if _, _, problem, ok := ParseString(s); ok {
			t.Errorf("ParseString(%q): a String (%q), want none", s, problem)
		}
	}
}

// TestStringKeyModel: ClickHouse 26.7's COMPLEX_KEY_HASHED of 1e5
// String(16) keys and UInt16 values (measured through chDB: 12,579,048
// bytes_allocated) is 2^18 cells of 32 bytes and an arena of 4,190,208
// bytes (the chunks that hold 1e5 keys of 25 bytes), and 232 bytes of
// bookkeeping not modelled; keys of 16 bytes without their size
// would fill half that arena.
func TestStringKeyModel(t *testing.T) {
	d, _ := FindClickHouseDictionary("ch_complex_key_hashed")
	u16 := core.MustType("UInt16")
	if got, want := ModelBytes(d, "String(16)", u16, 100_000, 100_000, core.Options{}, 1), int64(1<<18*32+4_190_208); got != want {
		t.Errorf("COMPLEX_KEY_HASHED of 1e5 String(16) keys: %d, want %d", got, want)
	}
	if a, b := ModelBytes(d, "Tuple(String(16), UInt64)", u16, 100_000, 100_000, core.Options{}, 1), ModelBytes(d, "String(24)", u16, 100_000, 100_000, core.Options{}, 1); a != b {
		t.Errorf("a (String(16), UInt64) key is serialized as a String(24) is (33 bytes): %d, %d", a, b)
	}
	if got := ModelBytes(d, "Strin", u16, 100_000, 100_000, core.Options{}, 1); got != 0 {
		t.Errorf("a key that does not parse: %d, want 0", got)
	}
}
