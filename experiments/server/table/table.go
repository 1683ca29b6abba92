//go:build !js

package table

// Package table reads a table on a server that a dictionary would read
// (packlab plan --from): its columns' types from system.columns, and in one aggregate
// over the whole table its rows, its distinct keys, its largest key and
// each String column's mean length and NULL share, so that the plan weighs
// the dictionary the table would make, not the lab's generated rows.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/text"
)

// Allowed is what names a table (Ask.Table).
const Allowed = "DATABASE.TABLE, or TABLE in the connection's database; a name with a dot in backquotes: `my.db`.t"

// ColumnsAllowed is what Ask.Columns allows, for a face's error of the
// list it splits (config.SplitList).
const ColumnsAllowed = "the table's column names, comma-separated (default: every column but the key)"

// Ask names a table and the columns a dictionary over it would take.
type Ask struct {
	Table     string   // DB.TABLE, or TABLE in the connection's database
	KeyColumn string   // the key; "" is the table's primary key when it is one column
	Columns   []string // the attributes; nil is every other column (a face splits its list with ColumnsAllowed)
}

// Table is what a plan needs of a table a dictionary would read.
type Table struct {
	Server   string `json:"server"` // host:port
	Database string `json:"database"`
	Name     string `json:"name"`
	Rows     int64  `json:"rows"` // count()
	// DistinctKeys is uniq(key), an estimate within about 2 %: a
	// dictionary keeps one row a key, the last one it reads.
	DistinctKeys int64    `json:"distinct_keys"`
	Key          Column   `json:"key"`
	Columns      []Column `json:"columns"`
	// MinKey and MaxKey are the key's smallest and largest, as ClickHouse
	// writes them.
	MinKey string `json:"min_key"`
	MaxKey string `json:"max_key"`
	// IDs is an integer key's largest value when its keys are all from 0
	// to at most 2^62 (FLAT indexes its arrays by the key), else 0.
	IDs int64 `json:"ids,omitempty"`
	// NotWhole is how many of a Float key's rows a simple-key
	// dictionary's UInt64 would not keep as they are (fractions,
	// negatives, NaN, 2^64 and above): where it is not 0, only a
	// COMPLEX_KEY_ layout keeps the keys apart (1,000 keys from 0 in
	// thirds loaded 334 rows into a HASHED dictionary).
	NotWhole int64 `json:"not_whole,omitempty"`
}

// Column is a column as the plan takes it: its name, its type as the
// table has it and as the dictionary's attribute would (AttributeType:
// LowCardinality dropped), and what a String or Nullable column holds.
type Column struct {
	Name          string  `json:"name"`
	Type          string  `json:"type"`
	AttributeType string  `json:"attribute_type"`
	MeanLen       float64 `json:"mean_len,omitempty"`   // a String's mean length in bytes over its values
	NullShare     float64 `json:"null_share,omitempty"` // a Nullable's share of NULLs
}

// Attribute is c as the planner's attribute list says it: "name:Type".
func (c Column) Attribute() string { return c.Name + ":" + c.AttributeType }

// IsString, Nullable: c's attribute is a String (Nullable or not), a
// Nullable (of any type). Fixed: neither, a value packlab's own tables
// hold.
func (c Column) IsString() bool { return strings.Contains(c.AttributeType, "String") }
func (c Column) Nullable() bool { return strings.HasPrefix(c.AttributeType, "Nullable(") }
func (c Column) Fixed() bool    { return !c.IsString() && !c.Nullable() }

// Figures is what c holds as dict's model takes it, or nil for a Fixed
// column.
func (c Column) Figures() *dict.FileColumn {
	if c.Fixed() {
		return nil
	}
	return &dict.FileColumn{MeanLen: c.MeanLen, NullShare: c.NullShare}
}

// Read reads ask's table: its columns, then one aggregate over every
// row of the key and the chosen String and Nullable columns (a reload of
// the dictionary reads as much; ClickHouse takes a String's lengths from
// its offsets). A table, key or column that is not there, or of a type
// the plan does not model, is a fault naming the field (from, key_column,
// columns) with what is there.
func Read(ctx context.Context, c *server.Conn, ask Ask) (*Table, error) {
	db, name, ok := dict.SplitTableName(strings.TrimSpace(ask.Table))
	if db == "" {
		db = c.Endpoint.Database
	}
	if !ok || db == "" || name == "" {
		return nil, fault.New("from", ask.Table, "not a table", Allowed)
	}
	t := &Table{Server: c.Endpoint.Host, Database: db, Name: name}
	type column struct{ name, typ string }
	var cols []column
	var pk string
	err := c.Query(ctx, "SELECT c.name, c.type, t.primary_key FROM system.columns AS c INNER JOIN system.tables AS t ON c.database = t.database AND c.table = t.name"+
		" WHERE c.database = "+dict.QuoteString(db)+" AND c.table = "+dict.QuoteString(name)+" ORDER BY c.position", func(r server.Rows) error {
		var col column
		if err := r.Scan(&col.name, &col.typ, &pk); err != nil {
			return err
		}
		cols = append(cols, col)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, fault.New("from", db+"."+name, "no such table on "+c.Endpoint.Host, tablesIn(ctx, c, db))
	}
	names := make([]string, len(cols))
	for i, col := range cols {
		names[i] = col.name
	}
	find := func(field, n string) (column, error) {
		if i := slices.Index(names, n); i >= 0 {
			return cols[i], nil
		}
		return column{}, fault.New(field, n, "not a column of "+db+"."+name, strings.Join(names, ", "))
	}
	key := strings.TrimSpace(ask.KeyColumn)
	if key == "" {
		if pk == "" || strings.Contains(pk, ",") {
			// Not given: no value to show (it said --key-column "").
			return nil, &fault.FieldError{Field: "key_column", Switch: true, Problem: "which column is the key? " + db + "." + name + "'s primary key is " + cmp.Or(pk, "none") + ", not one column", Allowed: strings.Join(names, ", ")}
		}
		key = pk
	}
	kc, err := find("key_column", key)
	if err != nil {
		return nil, err
	}
	kt, err := core.ParseType(kc.typ)
	t.Key = Column{Name: kc.name, Type: kc.typ, AttributeType: cmp.Or(kt.Name, dict.AttributeTypeOf(kc.typ))}
	if err != nil && t.Key.AttributeType != "String" { // a String: a COMPLEX_KEY_ dictionary's
		return nil, fault.New("key_column", key, "of type "+kc.typ+", not a key the plan weighs", strings.Join(core.TypeNames(), ", ")+", String")
	}
	want := ask.Columns
	if want == nil {
		for _, n := range names {
			if n != key {
				want = append(want, n)
			}
		}
	}
	if len(want) == 0 {
		return nil, fault.New("columns", "", db+"."+name+" has no column but the key", "at least one attribute column")
	}
	for _, n := range want {
		col, err := find("columns", strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		switch at := dict.AttributeTypeOf(col.typ); {
		case col.name == key:
			return nil, fault.New("columns", col.name, "the key, not an attribute", "the other columns: "+strings.Join(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s == key }), ", "))
		case at == "":
			return nil, fault.New("columns", col.name, "of type "+col.typ+", which the plan does not model",
				"columns of "+strings.Join(core.TypeNames(), ", ")+", String, or Nullable or LowCardinality of them")
		case !dict.IsAttributeName(col.name):
			return nil, fault.New("columns", col.name, "a name the plan's CREATE DICTIONARY does not quote", "a column named by letters, digits and _")
		case slices.ContainsFunc(t.Columns, func(c Column) bool { return c.Name == col.name }):
			return nil, fault.New("columns", col.name, "named twice", "each column once")
		default:
			t.Columns = append(t.Columns, Column{Name: col.name, Type: col.typ, AttributeType: at})
		}
	}
	if err := aggregate(ctx, c, t, kt); err != nil {
		return nil, err
	}
	return t, nil
}

// aggregate fills t's rows, distinct keys, key range and column figures
// in one query.
func aggregate(ctx context.Context, c *server.Conn, t *Table, key core.Type) error {
	k := dict.QuoteIdent(t.Key.Name)
	exprs := []string{"count()", "uniq(" + k + ")", "toString(min(" + k + "))", "toString(max(" + k + "))", "toInt64(0)", "toUInt64(0)", "toFloat64(0)"}
	if t.Key.IsString() {
		exprs[6] = dict.MeanLengthSQL(k)
	} else if key.Kind != core.KindFloat && key.Kind != core.KindUUID && key.Size <= 8 {
		exprs[4] = "toInt64(if(min(" + k + ") >= 0 AND max(" + k + ") <= 4611686018427387904, max(" + k + "), 0))"
	}
	if key.Kind == core.KindFloat {
		exprs[5] = "countIf(NOT (" + k + " = floor(" + k + ") AND " + k + " >= 0 AND " + k + " < 18446744073709551616))"
	}
	for _, col := range t.Columns {
		q := dict.QuoteIdent(col.Name)
		mean := "toFloat64(0)"
		if col.IsString() {
			mean = dict.MeanLengthSQL(q)
		}
		exprs = append(exprs, mean, dict.NullsSQL(q))
	}
	q := "SELECT " + strings.Join(exprs, ", ") + " FROM " + dict.QuoteIdent(t.Database) + "." + dict.QuoteIdent(t.Name)
	return c.Query(ctx, q, func(r server.Rows) error {
		var rows, distinct, notWhole uint64
		dest := []any{&rows, &distinct, &t.MinKey, &t.MaxKey, &t.IDs, &notWhole, &t.Key.MeanLen}
		means := make([]float64, len(t.Columns))
		nulls := make([]uint64, len(t.Columns))
		for i := range t.Columns {
			dest = append(dest, &means[i], &nulls[i])
		}
		if err := r.Scan(dest...); err != nil {
			return err
		}
		t.Rows, t.DistinctKeys, t.NotWhole = int64(rows), int64(distinct), int64(notWhole)
		for i := range t.Columns {
			t.Columns[i].MeanLen = means[i]
			if rows > 0 {
				t.Columns[i].NullShare = float64(nulls[i]) / float64(rows)
			}
		}
		return nil
	})
}

// tablesIn is what a refusal lists of db's tables: their names, or why
// there are none.
func tablesIn(ctx context.Context, c *server.Conn, db string) string {
	var names []string
	err := c.Query(ctx, "SELECT name FROM system.tables WHERE database = "+dict.QuoteString(db)+" AND NOT is_temporary AND engine NOT IN ('Dictionary', 'View') ORDER BY name LIMIT 21", func(r server.Rows) error {
		var n string
		if err := r.Scan(&n); err != nil {
			return err
		}
		names = append(names, n)
		return nil
	})
	switch {
	case err != nil:
		return "a table of " + db
	case len(names) == 0:
		return "a table of another database: " + db + " has none"
	case len(names) > 20:
		return fmt.Sprintf("a table of %s: %s, ...", db, strings.Join(names[:20], ", "))
	}
	return "a table of " + db + ": " + strings.Join(names, ", ")
}

// keyThousands is a key as ClickHouse writes it, with separators where it
// is an integer of int64.
func keyThousands(s string) string {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return text.Thousands(n)
	}
	return s
}

// Summary is t in a line: "db.t on host: 1,000,000 rows; key id UInt64
// (0 to 999,999); attributes country String (7.2 bytes), score
// Nullable(Float64) (10.0 % NULL)".
func (t *Table) Summary() string {
	describe := func(c Column, more ...string) string {
		if c.IsString() {
			more = append(more, fmt.Sprintf("%.1f bytes", c.MeanLen))
		}
		if c.Nullable() {
			more = append(more, fmt.Sprintf("%.1f %% NULL", c.NullShare*100))
		}
		if len(more) == 0 {
			return c.Name + " " + c.Type
		}
		return c.Name + " " + c.Type + " (" + strings.Join(more, ", ") + ")"
	}
	key := describe(t.Key)
	if !t.Key.IsString() {
		key = describe(t.Key, keyThousands(t.MinKey)+" to "+keyThousands(t.MaxKey))
	}
	var parts []string
	for _, c := range t.Columns {
		parts = append(parts, describe(c))
	}
	rows := text.Count(t.Rows, "row", "rows")
	if t.DistinctKeys < t.Rows*98/100 {
		rows += fmt.Sprintf(", about %s distinct keys", text.Thousands(t.DistinctKeys))
	}
	if t.NotWhole > 0 {
		key += fmt.Sprintf(", %s of its rows not whole numbers from 0", text.Thousands(t.NotWhole))
	}
	word := "attributes"
	if len(parts) == 1 {
		word = "attribute"
	}
	return fmt.Sprintf("%s.%s on %s: %s; key %s; %s %s", t.Database, t.Name, t.Server, rows, key, word, strings.Join(parts, ", "))
}
