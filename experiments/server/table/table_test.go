//go:build !js

package table

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/server"
	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestReadTable: a table a dictionary would read, as the plan takes it
// from a real server: the key from its primary key, each column's type as
// an attribute (LowCardinality dropped), a String's mean length over its
// values and a Nullable's NULL share over the whole table, the distinct
// keys where the key repeats; and every refusal names its field and what is
// there.
func TestReadTable(t *testing.T) {
	node := servertest.Start(t)
	node.Exec(t, "CREATE DATABASE shop",
		"CREATE TABLE shop.users (id UInt64, country LowCardinality(String), score Nullable(Float64), age UInt8, tags Array(String), name String) ENGINE = MergeTree ORDER BY id",
		// name's lengths grow along the table: 5 .. 24, mean 14.5 over the
		// whole of it (its first rows alone would say 5).
		"INSERT INTO shop.users SELECT number, ['DE','FR','US','BR'][number % 4 + 1], if(number % 10 = 0, NULL, number / 7), number % 90, [], repeat('x', 5 + intDiv(number * 20, 100000)) FROM numbers(100000)",
		"CREATE TABLE shop.visits (user UInt32, day Date, n UInt16) ENGINE = MergeTree ORDER BY (user, day)",
		"INSERT INTO shop.visits SELECT number % 100, today() - number % 30, number FROM numbers(1000)",
		"CREATE TABLE shop.odd (id UInt64, `first name` String) ENGINE = MergeTree ORDER BY id",
		"CREATE DATABASE `shop.eu`",
		"CREATE TABLE `shop.eu`.`users.v2` (id UInt64, age UInt8) ENGINE = MergeTree ORDER BY id",
		"INSERT INTO `shop.eu`.`users.v2` SELECT number, number % 90 FROM numbers(10)")
	ctx := context.Background()
	c, err := server.Connect(context.Background(), server.Settings{URL: node.NativeURL()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	got, err := Read(ctx, c, Ask{Table: "shop.users", Columns: []string{"country", "score", "age", "name"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(got.Summary())
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if got.Rows != 100_000 || got.DistinctKeys < 98_000 || got.DistinctKeys > 102_000 || got.Key.Name != "id" || got.Key.AttributeType != "UInt64" ||
		got.MinKey != "0" || got.MaxKey != "99999" || got.IDs != 99_999 || len(got.Columns) != 4 {
		t.Fatalf("read %+v", got)
	}
	want := []Column{
		{Name: "country", Type: "LowCardinality(String)", AttributeType: "String", MeanLen: 2},
		{Name: "score", Type: "Nullable(Float64)", AttributeType: "Nullable(Float64)", NullShare: 0.1},
		{Name: "age", Type: "UInt8", AttributeType: "UInt8"},
		{Name: "name", Type: "String", AttributeType: "String", MeanLen: 14.5},
	}
	for i, w := range want {
		g := got.Columns[i]
		if g.Name != w.Name || g.Type != w.Type || g.AttributeType != w.AttributeType || !near(g.MeanLen, w.MeanLen) || !near(g.NullShare, w.NullShare) {
			t.Errorf("column %d: %+v, want %+v", i, g, w)
		}
	}
	if f := got.Columns[2].Figures(); f != nil {
		t.Errorf("age (UInt8, never NULL) has figures %+v; want none: the lab's model needs none", f)
	}

	// A key that repeats: the distinct keys, which a dictionary keeps.
	visits, err := Read(ctx, c, Ask{Table: "shop.visits", KeyColumn: "user", Columns: []string{"n"}})
	if err != nil {
		t.Fatal(err)
	}
	if visits.Rows != 1000 || visits.DistinctKeys != 100 || visits.IDs != 99 || !strings.Contains(visits.Summary(), "about 100 distinct keys") {
		t.Errorf("visits: %+v, %q", visits, visits.Summary())
	}

	// A String key (LowCardinality dropped), for a COMPLEX_KEY_ dictionary:
	// its mean length over the table, and no range of ids.
	names, err := Read(ctx, c, Ask{Table: "shop.users", KeyColumn: "name", Columns: []string{"age"}})
	if err != nil {
		t.Fatal(err)
	}
	if k := names.Key; k.AttributeType != "String" || !near(k.MeanLen, 14.5) || names.IDs != 0 || !strings.Contains(names.Summary(), "key name String (14.5 bytes)") {
		t.Errorf("keyed by name: %+v, %q", names, names.Summary())
	}
	if country, err := Read(ctx, c, Ask{Table: "shop.users", KeyColumn: "country", Columns: []string{"age"}}); err != nil || country.Key.AttributeType != "String" || !near(country.Key.MeanLen, 2) {
		t.Errorf("keyed by country: %+v, %v", country, err)
	}

	// Names with a dot, in backquotes.
	if eu, err := Read(ctx, c, Ask{Table: "`shop.eu`.`users.v2`"}); err != nil || eu.Database != "shop.eu" || eu.Name != "users.v2" || eu.Rows != 10 {
		t.Errorf("`shop.eu`.`users.v2`: %+v, %v", eu, err)
	}
	for _, r := range []struct {
		ask         Ask
		field, want string
	}{
		{Ask{Table: "`shop.eu.users"}, "from", "not a table"},
		{Ask{Table: "a.b.c"}, "from", "not a table"},
		{Ask{Table: "shop."}, "from", "not a table"},
		{Ask{Table: "shop.nope"}, "from", "no such table on " + c.Endpoint.Host},
		{Ask{Table: "shop.nope"}, "from", "a table of shop: odd, users, visits"},
		{Ask{Table: "shop.users", KeyColumn: "uid"}, "key_column", "not a column of shop.users (allowed: id, country, score, age, tags, name)"},
		{Ask{Table: "shop.users"}, "columns", "tags: of type Array(String), which the plan does not model"},
		{Ask{Table: "shop.users", Columns: []string{"id"}}, "columns", "the key, not an attribute"},
		{Ask{Table: "shop.users", Columns: []string{"age", "age"}}, "columns", "named twice"},
		{Ask{Table: "shop.users", KeyColumn: "score", Columns: []string{"age"}}, "key_column", "of type Nullable(Float64), not a key the plan weighs"},
		{Ask{Table: "shop.users", KeyColumn: "tags", Columns: []string{"age"}}, "key_column", "of type Array(String), not a key the plan weighs"},
		{Ask{Table: "shop.visits", Columns: []string{"n"}}, "key_column", "key_column: which column is the key? shop.visits's primary key is user, day, not one column (allowed: user, day, n)"},
		{Ask{Table: "users"}, "from", "no such table"}, // the connection's database is default
		{Ask{Table: "shop.odd"}, "columns", "first name: a name the plan's CREATE DICTIONARY does not quote"},
	} {
		_, err := Read(ctx, c, r.ask)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != r.field || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%+v: %v; want a %s error saying %q", r.ask, err, r.field, r.want)
		}
	}
}
