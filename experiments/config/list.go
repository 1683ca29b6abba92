package config

import (
	"fmt"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
)

// SplitList reads a comma-separated list as every face takes one (layouts,
// a file's columns, a table's columns, job and result ids): its items with
// the spaces around them trimmed, none empty. An empty item ("v,", ",v",
// "a,,b", " ") is a FieldError naming field, the list as given, which item
// ("column 2 of 2 is empty: a comma at the end") and allowed; it is never
// dropped, so a list means what it names. "" is no list at all (nil).
func SplitList(field, s, item, allowed string) ([]string, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	list := make([]string, len(parts))
	for i, p := range parts {
		list[i] = strings.TrimSpace(p)
		if list[i] != "" {
			continue
		}
		where := "nothing between two commas"
		switch {
		case len(parts) == 1:
			where = "no " + item + " given"
		case i == len(parts)-1:
			where = "a comma at the end"
		case i == 0:
			where = "a comma at the start"
		}
		return nil, fault.New(field, s, fmt.Sprintf("%s %d of %d is empty: %s", item, i+1, len(parts), where), allowed)
	}
	return list, nil
}
