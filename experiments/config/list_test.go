package config

import (
	"errors"
	"slices"
	"testing"

	"github.com/packlab/packlab/experiments/fault"
)

// TestSplitList: a list's items trimmed, as before; an empty item refused
// by its place, never dropped ("hashed," was hashed alone).
func TestSplitList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", nil, ""},
		{"hashed", []string{"hashed"}, ""},
		{" hashed , packed ", []string{"hashed", "packed"}, ""},
		{"hashed,", nil, "layouts hashed,: layout 2 of 2 is empty: a comma at the end (allowed: L)"},
		{",hashed", nil, "layouts ,hashed: layout 1 of 2 is empty: a comma at the start (allowed: L)"},
		{"a,,b", nil, "layouts a,,b: layout 2 of 3 is empty: nothing between two commas (allowed: L)"},
		{",", nil, "layouts ,: layout 1 of 2 is empty: a comma at the start (allowed: L)"},
		{" ", nil, `layouts " ": layout 1 of 1 is empty: no layout given (allowed: L)`},
	} {
		got, err := SplitList("layouts", c.in, "layout", "L")
		var fe *fault.FieldError
		switch {
		case c.err == "" && (err != nil || !slices.Equal(got, c.want)):
			t.Errorf("SplitList(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.err != "" && (err == nil || err.Error() != c.err || !errors.As(err, &fe) || fe.Field != "layouts"):
			t.Errorf("SplitList(%q) = %q, %v; want the FieldError %q", c.in, got, err, c.err)
		}
	}
}
