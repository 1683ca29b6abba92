//go:build !js

package usecase

import (
	"context"
	"fmt"
	"github.com/packlab/packlab/experiments/dict"
	"slices"
	"strings"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/planner"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/server/table"
)

// PlanFromAsk is a plan for a dictionary over a table on a user's server
// (packlab plan --from), as a face asks for it.
type PlanFromAsk struct {
	Settings server.Settings // the server; its password is used, never kept
	Table    table.Ask
	// Plan is the rest of the plan: its Request's rows, key, value,
	// attributes and largest key are the table's, and may not be given.
	Plan PlanAsk
	// Read, if set, is told of the table once it is read, before the plan
	// (and its calibration) starts.
	Read func(*table.Table)
}

// PlannedFrom is the plan, and the table it is for.
type PlannedFrom struct {
	PlanAnswer
	Table *table.Table
}

// flatSlotsARow is the sparsest keys for which the plan weighs FLAT: past
// 64 elements a row its arrays outweigh any hash table of the same
// attributes (a UInt8's element is a byte; a HASHED cell of it is 16 bytes
// at a load factor of 0.25 or more, 64 bytes a row at the most).
const flatSlotsARow = 64

// PlanFrom reads ask's table (table.Read: its columns' types,
// rows, distinct keys, key range, and each String column's mean length
// and NULL share) and plans the dictionary that would read it (Plan):
// its CREATE DICTIONARY names the table and its columns.
func PlanFrom(ctx context.Context, ask PlanFromAsk) (PlannedFrom, error) {
	r := ask.Plan.Request
	switch {
	case r.Rows != 0:
		return PlannedFrom{}, fault.New("rows", fmt.Sprint(r.Rows), "given with a table to read", "the table's rows (growth_percent plans for more)")
	case r.Key != "" || r.Value != "" || len(r.Attributes) > 0 || r.MaxKey != 0:
		return PlannedFrom{}, fault.New("from", ask.Table.Table, "given with the key, value, attributes or largest key", "the table alone: its columns say them")
	}
	if _, name, ok := dict.SplitTableName(strings.TrimSpace(ask.Table.Table)); !ok || name == "" { // before any connection
		return PlannedFrom{}, fault.New("from", ask.Table.Table, "not a table", table.Allowed)
	}
	c, err := server.Connect(ctx, ask.Settings)
	if err != nil {
		return PlannedFrom{}, err
	}
	defer c.Close()
	t, err := table.Read(ctx, c, ask.Table)
	if err != nil {
		return PlannedFrom{}, err
	}
	if ask.Plan.Request, err = requestFor(r, t); err != nil {
		return PlannedFrom{Table: t}, err
	}
	if ask.Read != nil {
		ask.Read(t)
	}
	a, err := Plan(ctx, ask.Plan)
	return PlannedFrom{PlanAnswer: a, Table: t}, err
}

// requestFor is r for a dictionary over t: its distinct keys (the rows
// where the key does not repeat: uniq is an estimate), the key's type
// (kept whole in a COMPLEX_KEY_ layout where a UInt64 would not hold it),
// the columns as attributes with their figures, a fixed-size one first
// where there is one (the plan's value, which packlab's plain tables hold;
// a table of Strings, id → name, is planned in ClickHouse's layouts and
// packlab's rows), and an integer
// key's largest value from 0, for FLAT, where its arrays would have at
// most flatSlotsARow elements a row.
func requestFor(r planner.PlanRequest, t *table.Table) (planner.PlanRequest, error) {
	from := t.Database + "." + t.Name
	if t.Rows == 0 {
		return r, fault.New("from", from, "an empty table", "a table with rows: the plan is for the dictionary it would load")
	}
	r.Rows = t.Rows
	if t.DistinctKeys < t.Rows*98/100 {
		r.Rows = t.DistinctKeys
	}
	r.Key = t.Key.AttributeType   // a String's lengths are its mean's (KeyMeanLen)
	r.ComplexKey = t.NotWhole > 0 // a UInt64 would merge them: the key kept whole
	cols := t.Columns
	if first := slices.IndexFunc(cols, table.Column.Fixed); first > 0 {
		cols = append([]table.Column{cols[first]}, append(cols[:first:first], cols[first+1:]...)...)
	}
	r.From = &dict.TableSource{Database: t.Database, Table: t.Name, KeyColumn: t.Key.Name, KeyMeanLen: t.Key.MeanLen}
	for _, c := range cols {
		r.Attributes = append(r.Attributes, c.Attribute())
		r.From.Figures = append(r.From.Figures, c.Figures())
	}
	r.Value = cols[0].AttributeType
	if t.IDs >= r.Rows-1 && t.IDs/flatSlotsARow < r.Rows {
		r.MaxKey = t.IDs
	}
	return r, nil
}
