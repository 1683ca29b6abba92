//go:build !js

package app

import (
	"strings"
	"testing"
)

// TestPlanFromTableRefusals: the Plan tab's plan over a table, refused
// before any server is asked, each error on the field that caused it.
func TestPlanFromTableRefusals(t *testing.T) {
	l, _ := newLab(t)
	for _, c := range []struct {
		form         PlanForm
		field, words string
	}{
		{PlanForm{}, "plan_from", "which table?"},
		{PlanForm{From: "shop.users"}, "plan_from", "the Your ClickHouse tab's server: “”: not a URL with a host"},
		{PlanForm{From: "shop.users", Server: ClickHouseForm{URL: "localhost:9000"}}, "plan_from", "the Your ClickHouse tab's server: localhost:9000: no scheme"},
		{PlanForm{From: "shop.users", Server: ClickHouseForm{URL: "clickhouse://h", QueryTimeout: "soon"}}, "plan_from", "the Your ClickHouse tab's server: query_timeout: \"soon\": not a timeout"},
		{PlanForm{From: "shop.users", Memory: "lots", Server: ClickHouseForm{URL: "clickhouse://h"}}, "plan_memory", "lots"},
		// A name that is no table, on a server that is down: the name's error.
		{PlanForm{From: "shop.eu.users", Server: ClickHouseForm{URL: "clickhouse://127.0.0.1:1"}}, "plan_from", "shop.eu.users: not a table"},
		// An empty column of the list (a comma at the end) is refused as the
		// command line's --columns is, never looked up as a column "".
		{PlanForm{From: "shop.users", Columns: "v,", Server: ClickHouseForm{URL: "clickhouse://127.0.0.1:1"}}, "plan_columns", "v,: column 2 of 2 is empty: a comma at the end"},
	} {
		_, err := l.PlanFromTable(c.form)
		e, ok := err.(*Error)
		if !ok || e.Field != c.field || !strings.Contains(e.Message, c.words) {
			t.Errorf("%+v: %v; want an error of %s saying %q", c.form, err, c.field, c.words)
		}
	}
}
