package server

import (
	"strings"
	"testing"
)

// TestDictClauses: the layout, its parameters and the source table are
// the statement's clauses, not the same words in a comment, a default or
// a source query.
func TestDictClauses(t *testing.T) {
	for _, c := range []struct {
		ddl                string
		word               string
		shards             int
		db, table, problem string
		advice             string // adviceDDL(LAYOUT(FLAT())) without its head
	}{
		{ddl: "CREATE DICTIONARY default.dc (`k` UInt64, `v` UInt16 DEFAULT 0) PRIMARY KEY k SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(MIN 0 MAX 0) LAYOUT(SPARSE_HASHED(SHARDS 4)) COMMENT 'was LAYOUT(FLAT()) before'",
			word: "SPARSE_HASHED", shards: 4, db: "default", table: "src",
			advice: "PRIMARY KEY k SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(MIN 0 MAX 0) LAYOUT(FLAT()) COMMENT 'was LAYOUT(FLAT()) before'"},
		{ddl: "CREATE DICTIONARY x.y (`id` UInt64, `s` String DEFAULT 'SOURCE(CLICKHOUSE(TABLE \\'old\\')) LIFETIME') PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'we\\'ird' DB 'other')) LIFETIME(0) LAYOUT(HASHED())",
			word: "HASHED", shards: 1, db: "other", table: "we'ird"},
		{ddl: "CREATE DICTIONARY x.LAYOUT (`id` UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(HOST 'localhost' PORT 9000 USER 'default' PASSWORD '[HIDDEN]' TABLE 'a)) LIFETIME(0' DB 'd')) LIFETIME(0) layout(hashed(shards 8 max_load_factor 0.9))",
			word: "HASHED", shards: 8, db: "d", table: "a)) LIFETIME(0"},
		{ddl: "CREATE DICTIONARY x.q (`id` UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(QUERY 'SELECT id FROM t LAYOUT(FLAT())')) LIFETIME(0) LAYOUT(HASHED_ARRAY(SHARDS 2))",
			word: "HASHED_ARRAY", shards: 2, problem: "its source is a query, not a table"},
		{ddl: "CREATE DICTIONARY x.h (`id` UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(HOST 'other.example' TABLE 't')) LIFETIME(0) LAYOUT(FLAT())",
			word: "FLAT", shards: 1, problem: "its source is another server's table"},
		{ddl: "CREATE DICTIONARY x.f (`id` UInt64) PRIMARY KEY id SOURCE(FILE(PATH '/x.tsv' FORMAT 'TabSeparated')) LIFETIME(0) LAYOUT(CACHE(SIZE_IN_CELLS 1000))",
			word: "CACHE", shards: 1, problem: "its source is not a ClickHouse table"},
	} {
		var d Dictionary
		d.readDDL(c.ddl)
		if d.word != c.word || d.shards != c.shards {
			t.Errorf("%s: layout %q SHARDS %d, want %q %d", c.ddl, d.word, d.shards, c.word, c.shards)
		}
		db, table, problem := sourceTable(c.ddl, "default")
		if db != c.db || table != c.table || problem != c.problem {
			t.Errorf("%s: source %q %q %q, want %q %q %q", c.ddl, db, table, problem, c.db, c.table, c.problem)
		}
		if c.advice != "" {
			if got := d.adviceDDL("LAYOUT(FLAT())"); !strings.HasSuffix(got, c.advice) {
				t.Errorf("adviceDDL = %s\nwant it to end %s", got, c.advice)
			}
		}
	}
}

// FuzzDictClauses: any text around the clauses, in a comment or a
// default, leaves the layout and the source table as written, and no
// statement, however broken, stops the reader.
func FuzzDictClauses(f *testing.F) {
	for _, s := range []string{"was LAYOUT(FLAT()) before", `it\'s SOURCE(CLICKHOUSE(TABLE 'x'))`, "((", "))", "`", `\`, "''", "LIFETIME"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lit := "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(text) + "'"
		ddl := "CREATE DICTIONARY db.d (`id` UInt64, `s` String DEFAULT " + lit + ") PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE " + lit + " DB 'db')) LIFETIME(0) LAYOUT(SPARSE_HASHED(SHARDS 3)) COMMENT " + lit
		var d Dictionary
		d.readDDL(ddl)
		if d.word != "SPARSE_HASHED" || d.shards != 3 || d.Layout != "LAYOUT(SPARSE_HASHED(SHARDS 3))" {
			t.Errorf("%s: layout %q (%s) SHARDS %d", ddl, d.word, d.Layout, d.shards)
		}
		if db, table, problem := sourceTable(ddl, "x"); text != "" && (db != "db" || table != text || problem != "") {
			t.Errorf("%s: source %q %q %q", ddl, db, table, problem)
		}
		// Broken statements: the reader ends, whatever it finds.
		for _, cut := range []int{len(ddl) / 3, len(ddl) / 2, len(ddl) - 2} {
			var b Dictionary
			b.readDDL(ddl[:cut] + text)
			sourceTable(text+ddl[cut:], "x")
		}
	})
}
