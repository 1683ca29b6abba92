package config

import (
	"errors"
	"testing"

	"github.com/packlab/packlab/experiments/fault"
)

// TestTypeParameters: a type whose parameters are wrong (a String's
// lengths, a Nullable's) is refused naming the field, the value and what
// is wrong with them, as an attribute, the value or the key; it was an
// "unknown type" everywhere but a String attribute and key (--value
// String(40..20), --attributes UInt16,Nullable(String(40..20))).
func TestTypeParameters(t *testing.T) {
	const lengths = "String (8 to 32 bytes), String(16) or String(min..max), lengths in bytes: 0 <= min <= max, 1 <= max <= 4096"
	for _, c := range []struct {
		c    Config
		want string
	}{
		{Config{Value: "String(40..20)"}, "value String(40..20): String's shortest length 40 is over its longest, 20 (allowed: " + lengths + ")"},
		{Config{Value: "Nullable(String(5000))"}, "value Nullable(String(5000)): String's longest length 5000 is over 4096 bytes (allowed: " + lengths + ")"},
		{Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "String(40..20)"}},
			"attributes[1] String(40..20): String's shortest length 40 is over its longest, 20 (allowed: " + lengths + ")"},
		{Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "Nullable(String(40..20))"}},
			"attributes[1] Nullable(String(40..20)): String's shortest length 40 is over its longest, 20 (allowed: " + lengths + ")"},
		{Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "s:String(-1)"}},
			`attributes[1] s:String(-1): String's length "-1" is not a whole number of bytes (allowed: ` + lengths + ")"},
		{Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "String(1.5)"}},
			`attributes[1] String(1.5): String's length "1.5" is not a whole number of bytes (allowed: ` + lengths + ")"},
		{Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "Nullable(Nullable(UInt8))"}},
			"attributes[1] Nullable(Nullable(UInt8)): a Nullable in a Nullable (allowed: Nullable(T) of a type that is not Nullable, e.g. Nullable(UInt32))"},
		{Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "Nullable(UInt8"}},
			"attributes[1] Nullable(UInt8: Nullable( without its closing parenthesis (allowed: Nullable(T), e.g. Nullable(UInt32))"},
		{Config{Key: "String(40..20)"}, "key String(40..20): String's shortest length 40 is over its longest, 20 (allowed: " + keyAllowed() + ")"},
		{Config{Key: "Nullable(String(40..20))"}, "key Nullable(String(40..20)): String's shortest length 40 is over its longest, 20 (allowed: " + lengths + ")"},
		{Config{Key: "String()"}, `key String(): String's length "" is not a whole number of bytes (allowed: ` + keyAllowed() + ")"},
	} {
		err := c.c.Validate()
		var fe *fault.FieldError
		if err == nil || err.Error() != c.want || !errors.As(err, &fe) {
			t.Errorf("Validate(%+v)\n got %v\nwant %s", c.c, err, c.want)
		}
	}
}
