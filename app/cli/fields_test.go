package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/fault"
)

// TestErrorsNameTheFlag: the engine's field errors name its fields (their
// JSON names); the command line prints each with the flag a user types.
func TestErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct {
		cfg         config.Config
		field, want string
	}{
		{config.Config{Shards: 500}, "shards", "--shards 500: out of range (allowed: 1 to 128)"},
		{config.Config{Rows: -1}, "rows", "--rows -1: out of range"},
		{config.Config{MaxLoadFactor: 0.3}, "max_load_factor", "--max-load-factor 0.3: out of range (allowed: 0.5 to 0.99)"},
		{config.Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "Foo"}}, "attributes[1]", "--attributes Foo: unknown type"},
		{config.Config{Source: sampleKeys, KeyColumn: "0"}, "key_column", "--key-column 0: not allowed (allowed: a position 1 or more, or a header name)"},
		{config.Config{Source: sampleKeys, ValueColumn: "x", Header: "no"}, "value_column", `--value-column x: a name, but header is "no"`},
		{config.Config{Source: sampleKeys, Keys: "random"}, "keys", "--keys random: cannot be combined with --source (allowed: one of --keys or --source)"},
		{config.Config{NoRead: true, MissRate: 0.5}, "miss_rate", "--miss-rate 0.5: has no effect with --no-read (allowed: 0 with --no-read)"},
	} {
		err := tc.cfg.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want a field error of %s", tc.cfg, err, tc.field)
			continue
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("the engine's error %q names a flag", err)
		}
		if got := errorText(err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: the command line says %q, want %q", tc.cfg, got, tc.want)
		}
		// As Main prints it: runContext's error, in words already, once.
		if got := oneLine(&worded{&fault.InputError{Err: err}}); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%+v: the command line prints %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
