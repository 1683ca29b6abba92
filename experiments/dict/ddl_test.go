package dict

import (
	"fmt"
	"testing"
)

// TestColumnExpressions: a column's EXPRESSION is found where it is a
// keyword, not where the word is text.
func TestColumnExpressions(t *testing.T) {
	for _, c := range []struct {
		ddl  string
		want map[string]string
	}{
		{"CREATE DICTIONARY default.dx (`id` UInt64, `s2` String EXPRESSION 'concat(s, s)') PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 't')) LIFETIME(MIN 0 MAX 0) LAYOUT(HASHED())",
			map[string]string{"s2": "concat(s, s)"}},
		{"CREATE DICTIONARY `we(ird`.`d,x` (`a,b` Nullable(String) DEFAULT 'EXPRESSION \\'no\\'' EXPRESSION 'if(x > 0, \\'y\\', NULL)', id UInt64, `n` Decimal(10, 2) EXPRESSION 'toDecimal64(p, 2)' INJECTIVE) PRIMARY KEY id SOURCE(CLICKHOUSE(QUERY 'SELECT 1 EXPRESSION \\'z\\'')) LIFETIME(0) LAYOUT(FLAT())",
			map[string]string{"a,b": "if(x > 0, 'y', NULL)", "n": "toDecimal64(p, 2)"}},
		{"CREATE DICTIONARY x.y (`id` UInt64, `v` String DEFAULT 'EXPRESSION') PRIMARY KEY id SOURCE(NULL()) LAYOUT(FLAT())", map[string]string{}},
		{"", nil},
		{"CREATE DICTIONARY x.y (`id` UInt64, `v` String EXPRESSION", map[string]string(nil)},
	} {
		got := ColumnExpressions(c.ddl)
		if len(got) != len(c.want) || fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %q, want %q", c.ddl, got, c.want)
		}
	}
}

func TestSplitTableName(t *testing.T) {
	for _, c := range []struct {
		in, db, table string
		ok            bool
	}{
		{"t", "", "t", true},
		{"db.t", "db", "t", true},
		{"`my.db`.t", "my.db", "t", true},
		{"db.`t.x`", "db", "t.x", true},
		{"`a``b`.c", "a`b", "c", true},
		{"a.b.c", "", "", false},
		{"`open", "", "", false},
		{"db.", "", "", false},
		{".t", "", "", false},
		{"", "", "", false},
		{"`a`b", "", "", false},
	} {
		db, table, ok := SplitTableName(c.in)
		if db != c.db || table != c.table || ok != c.ok {
			t.Errorf("%q: %q %q %v, want %q %q %v", c.in, db, table, ok, c.db, c.table, c.ok)
		}
	}
}

// TestClauseCall: a clause's call is read where the clause stands at the
// top level, not where its word is text; a clause without a call, or no
// clause, is false.
func TestClauseCall(t *testing.T) {
	const ddl = "CREATE DICTIONARY d (`id` UInt64, `v` String DEFAULT 'LAYOUT(FLAT())') PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src' DB 'we''ird')) LIFETIME(0) LAYOUT(hashed(SHARDS 4)) COMMENT 'LAYOUT(SPARSE_HASHED())'"
	for _, c := range []struct {
		ddl, word, clause, name, params string
		ok                              bool
	}{
		{ddl, "LAYOUT", "LAYOUT(hashed(SHARDS 4))", "HASHED", "[SHARDS 4]", true},
		{ddl, "SOURCE", "SOURCE(CLICKHOUSE(TABLE 'src' DB 'we''ird'))", "CLICKHOUSE", "[TABLE src DB we'ird]", true},
		{"CREATE DICTIONARY d (id UInt64) PRIMARY KEY id LAYOUT(HASHED)", "LAYOUT", "LAYOUT(HASHED)", "HASHED", "[]", true},
		{"CREATE DICTIONARY d (id UInt64) PRIMARY KEY id LAYOUT()", "LAYOUT", "", "", "[]", false},
		{"CREATE DICTIONARY d (id UInt64) PRIMARY KEY id LAYOUT(HASHED() x)", "LAYOUT", "", "", "[]", false},
		{ddl, "RANGE", "", "", "[]", false},
		{"", "LAYOUT", "", "", "[]", false},
	} {
		sp, name, params, ok := ClauseCall(c.ddl, c.word)
		clause := ""
		if ok {
			clause = c.ddl[sp.Start:sp.End]
		}
		if clause != c.clause || name != c.name || fmt.Sprint(params) != c.params || ok != c.ok {
			t.Errorf("%s in %s: %q %q %q %v, want %q %q %s %v", c.word, c.ddl, clause, name, params, ok, c.clause, c.name, c.params, c.ok)
		}
	}
}
