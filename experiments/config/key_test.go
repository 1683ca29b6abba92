package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/fault"
)

// TestStringKeyRefused: a String or tuple key that does not parse, or on
// one of packlab's layouts (which key by a fixed-size type), is refused
// naming the key, the value and what is allowed. (No driver is registered
// here: chdriver's TestClickHouseStringKeys runs the ch_ layouts' cases.)
func TestStringKeyRefused(t *testing.T) {
	for _, c := range []struct{ key, want string }{
		{"String", "layout hashed cannot hold a String or tuple key"},
		{"Tuple(String, UInt64)", "only layouts ch_complex_key_hashed, ch_complex_key_sparse_hashed, ch_complex_key_hashed_array, or a fixed-size type"},
		{"String(4)", "8 bytes or longer"},
		{"Tuple(Strin, UInt64)", `part "Strin"`},
		{"Strin", "unknown type"},
	} {
		err := Config{Layouts: []string{"hashed"}, Key: c.key}.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != "key" || fe.Value != c.key || !strings.Contains(err.Error(), c.want) || !strings.Contains(fe.Allowed, "UInt64") {
			t.Errorf("key %s: %v; want a key error saying %q", c.key, err, c.want)
		}
	}
}
