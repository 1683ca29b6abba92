package config

import (
	"slices"
	"testing"
)

// TestParseDictionaryTypes: a plan's value and attributes resolved at
// once: a run's, or a String or Nullable first (the dictionary's one
// attribute, or the first of a list whose first type is the value); an
// error of the run's rules is the attributes' where a list is given, the
// value's where none is.
func TestParseDictionaryTypes(t *testing.T) {
	for _, c := range []struct {
		value       string
		list        []string
		wantValue   string
		wantAttrs   []string
		wantGiven   []string
		wantNames   []string
		wantProblem string
	}{
		{value: "UInt16", wantValue: "UInt16", wantAttrs: []string{"UInt16"}, wantNames: []string{"value"}},
		{value: "String", wantValue: "String", wantAttrs: []string{"String"}, wantGiven: []string{"String"}, wantNames: []string{"value"}},
		{value: "Nullable(UInt8)", wantValue: "UInt8", wantAttrs: []string{"Nullable(UInt8)"}, wantGiven: []string{"Nullable(UInt8)"}, wantNames: []string{"value"}},
		{value: "String", list: []string{"String", "UInt32"}, wantValue: "String", wantAttrs: []string{"String", "UInt32"}, wantGiven: []string{"String", "UInt32"}, wantNames: []string{"value", "a2"}},
		{value: "UInt16", list: []string{"UInt16", "n:String"}, wantValue: "UInt16", wantAttrs: []string{"UInt16", "String"}, wantGiven: []string{"UInt16", "n:String"}, wantNames: []string{"value", "n"}},
		{value: "UInt16", list: []string{"String"},
			wantProblem: "attributes[0] String: the first attribute is the value the lab sends and checks, of a fixed-size type (allowed: a fixed-size type first, a String or Nullable after it, e.g. UInt16,String)"},
		{value: "UInt32", list: []string{"UInt16"},
			wantProblem: "value UInt32: the value is the first of attributes (UInt16) (allowed: attributes alone, or value alone)"},
		{value: "Foo",
			wantProblem: "value Foo: unknown type (allowed: UInt8, UInt16, UInt32, UInt64, UInt128, Int8, Int16, Int32, Int64, Int128, Float32, Float64, UUID, Date, DateTime; or a String or Nullable(T), as the dictionary's one attribute)"},
	} {
		got, err := ParseDictionaryTypes(c.value, c.list)
		if c.wantProblem != "" {
			if err == nil || err.Error() != c.wantProblem {
				t.Errorf("%q %q: err %v, want %s", c.value, c.list, err, c.wantProblem)
			}
			continue
		}
		var attrs []string
		for _, a := range got.Attrs {
			attrs = append(attrs, a.String())
		}
		if err != nil || got.Value.Name != c.wantValue || !slices.Equal(attrs, c.wantAttrs) || !slices.Equal(got.Given, c.wantGiven) || !slices.Equal(got.Names, c.wantNames) {
			t.Errorf("%q %q: %+v (attributes %q), %v; want value %s, attributes %q, given %q, names %q",
				c.value, c.list, got, attrs, err, c.wantValue, c.wantAttrs, c.wantGiven, c.wantNames)
		}
	}
}
