package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/planner"
)

// TestErrorsNameTheControl: the engine's field errors name its fields;
// the window puts each beside its form control, in the form's words (no
// flag, no field's JSON name in braces).
func TestErrorsNameTheControl(t *testing.T) {
	file := filepath.Join(t.TempDir(), "keys.tsv")
	if err := os.WriteFile(file, []byte("id\tprice\n1\t2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		err           error
		control, want string
	}{
		{config.Config{Shards: 500}.Validate(), "shards", "500: out of range (allowed: 1 to 128)"},
		{config.Config{Rows: -1}.Validate(), "rows", "-1: out of range"},
		{config.Config{MaxLoadFactor: 0.3}.Validate(), "max_load_factor", "0.3: out of range (allowed: 0.5 to 0.99)"},
		{config.Config{Layouts: []string{"packed_row"}, Attributes: []string{"UInt16", "Foo"}}.Validate(), "attributes", "Foo: unknown type"},
		{config.Config{Source: file, KeyColumn: "0"}.Validate(), "key_column", "0: not allowed (allowed: a position 1 or more, or a header name)"},
		{config.Config{Source: file, Keys: "random"}.Validate(), "keys", "random: cannot be combined with a file source (allowed: one of synthetic keys or a file source)"},
		{config.Config{NoRead: true, MissRate: 0.5}.Validate(), "miss_rate", "0.5: has no effect with “skip lookups” (allowed: 0 with “skip lookups”)"},
		{config.Config{SettleSeconds: 1000}.Validate(), "settle", "1000s: out of range"},
		{config.Config{Preallocate: true, Source: file}.Validate(), "preallocate", "needs the row count before the load"},
		{func() error { _, err := planner.ParseMaxKey("x"); return err }(), "plan_max_key", "x: not a number"},
		{config.Config{Layouts: []string{"hashed"}, Attributes: []string{"UInt16", "UInt32"}}.Validate(), "attributes",
			"UInt16,UInt32: layout hashed holds one value (several attributes are ClickHouse's layouts and the row layouts) (allowed: ch_ layouts or rows, e.g. ticking ch_hashed,"},
	} {
		var e *Error
		if strings.HasPrefix(tc.control, "plan_") {
			e = planError(tc.err).(*Error)
		} else {
			e = ErrorOf(tc.err, "run")
		}
		if e.Field != tc.control || !strings.HasPrefix(e.Message, tc.want) || strings.Contains(e.Message, "--") || strings.Contains(e.Message, "{") {
			t.Errorf("%v: the window shows %+v, want %q beside %s", tc.err, *e, tc.want, tc.control)
		}
	}
}
