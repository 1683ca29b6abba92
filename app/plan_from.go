//go:build !js

package app

import (
	"context"
	"strings"
	"time"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/server/table"
	"github.com/packlab/packlab/experiments/usecase"
)

// PlanFromTable answers the Plan tab's form for the dictionary over a table
// (f.From) of the server the Your ClickHouse tab names (f.Server), as
// `packlab plan --clickhouse URL --from DB.TABLE` does (usecase.PlanFrom):
// the table's rows, key and columns, each String's mean length and each
// Nullable's NULL share, read there, stand for the form's rows, key, value
// and attributes. An error names the Plan tab's field (plan_from,
// plan_key_column, plan_columns; plan_from too for the Your ClickHouse
// tab's fields: its URL, a user the server refused), or is the tab's own
// ("plan": the server's connection).
func (l *Lab) PlanFromTable(f PlanForm) (PlanView, error) {
	start := time.Now()
	if !f.from() {
		return PlanView{}, errorf("plan_from", "which table? (allowed: database.table, or table in the Your ClickHouse tab's database)")
	}
	req, err := f.parse()
	if err != nil {
		return PlanView{}, err
	}
	s, table, err := f.fromTable()
	if err != nil {
		return PlanView{}, err
	}
	return l.planView(start, func(ask usecase.PlanAsk) (usecase.PlanAnswer, error) {
		ask.Request = req
		got, err := usecase.PlanFrom(context.Background(), usecase.PlanFromAsk{Settings: s, Table: table, Plan: ask})
		return got.PlanAnswer, otherTabsField(err)
	}, f.Calibrate)
}

// otherTabsField is err, or where it is an error of a field of the Your
// ClickHouse tab's form (a user or a database the server refused), that
// error said at plan_from and naming the other tab's field: the Plan tab
// has no such control.
func otherTabsField(err error) error {
	if err == nil {
		return nil
	}
	if e := clickHouseError(err); e.Field != "clickhouse" {
		return errorf("plan_from", "the Your ClickHouse tab's %s: %s", e.Field, e.Message)
	}
	return err
}

// fromTable is the server (the Your ClickHouse tab's) and the table of a
// plan over one; an error of the server's form (its URL, a timeout) is
// plan_from's.
func (f PlanForm) fromTable() (server.Settings, table.Ask, error) {
	s, err := f.Server.settings()
	if err == nil {
		_, err = s.ParseURL()
	}
	if err != nil {
		// The server is the other tab's: its form's error, said here.
		return s, table.Ask{}, errorf("plan_from", "the Your ClickHouse tab's server: %s", clickHouseError(err).Message)
	}
	columns, err := config.SplitList("columns", strings.TrimSpace(f.Columns), "column", table.ColumnsAllowed)
	if err != nil {
		return s, table.Ask{}, planError(err) // plan_columns
	}
	return s, table.Ask{Table: strings.TrimSpace(f.From), KeyColumn: strings.TrimSpace(f.KeyColumn), Columns: columns}, nil
}
