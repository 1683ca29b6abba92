package config

import (
	"strings"
	"testing"
)

// TestNullWhereNotNullable: a file's \N (NULL) in an attribute that is
// not Nullable is refused in one line that says so and what is allowed, a
// String's too (it loaded as the two characters \N); a Nullable takes it.
func TestNullWhereNotNullable(t *testing.T) {
	attrs, err := ParseAttributes("UInt16", []string{"UInt16", "note:String", "n:Nullable(String)", "p:UInt32", "q:Nullable(UInt32)"})
	if err != nil {
		t.Fatal(err)
	}
	check := checkCell(attrs[1:])
	for i, want := range []string{
		`\N is NULL, and String is not Nullable (allowed: any other text, or the attribute as Nullable(String))`,
		"",
		`\N is NULL, and UInt32 is not Nullable (allowed: 0 to 4294967295)`,
		"",
	} {
		err := check(i, []byte(`\N`))
		if got := ""; err != nil {
			got = err.Error()
			if got != want || strings.Contains(got, "\n") {
				t.Errorf("attribute %d: %q, want %q", i+2, got, want)
			}
		} else if want != "" {
			t.Errorf("attribute %d: \\N taken, want %q", i+2, want)
		}
		if err := check(i, []byte("7")); err != nil {
			t.Errorf("attribute %d: 7 refused: %v", i+2, err)
		}
	}
}

// TestNullableAnyCase: Nullable is read in any case, as the types inside
// it are (nullable(uint16) was "unknown type" where uint16 was taken).
func TestNullableAnyCase(t *testing.T) {
	for _, s := range []string{"Nullable(UInt32)", "nullable(uint32)", "NULLABLE( UInt32 )", "n:nullable(String(4..8))"} {
		attrs, err := ParseAttributes("UInt16", []string{"UInt16", s})
		if err != nil || len(attrs) != 2 || !attrs[1].Nullable {
			t.Errorf("%q: %+v, %v", s, attrs, err)
		}
	}
	for _, s := range []string{"nullable(nullable(UInt32))", "nullable(", "nullable()", "nullablex(UInt32)"} {
		if _, err := ParseAttributes("UInt16", []string{"UInt16", s}); err == nil {
			t.Errorf("%q taken", s)
		}
	}
}
