//go:build !js

package server

import (
	"context"
	"github.com/packlab/packlab/experiments/dict"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/server/servertest"
)

// targetRows is the rows of the targets' dictionaries (the issue asks for
// 1e5 to 1e6).
const targetRows = 200_000

// targetDictionaries are the targets, on one source table of
// random keys: name, DDL tail (after the name), and the model's tolerance
// against bytes_allocated (0: not compared).
var targetDictionaries = []struct {
	name, ddl string
	tol       float64
}{
	{"d_hashed", "(id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(MIN 0 MAX 3600) LAYOUT(HASHED())", 0.001},
	{"d_hashed_shards", "(id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED(SHARDS 4))", 0.001},
	{"d_sparse", "(id UInt64, v UInt16, w UInt32) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(SPARSE_HASHED())", 0.001},
	{"d_array", "(id UInt64, s String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED_ARRAY())", 0.02},
	{"d_hashed_str", "(id UInt64, v UInt16, s String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())", 0.02},
	{"d_complex", "(k String, id UInt64, v UInt16) PRIMARY KEY k, id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(COMPLEX_KEY_HASHED())", 0.02},
	{"d_complex_array", "(k String, id UInt64, v UInt16) PRIMARY KEY k, id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(COMPLEX_KEY_HASHED_ARRAY())", 0.02},
	{"d_complex_sparse", "(k String, id UInt64, v UInt16) PRIMARY KEY k, id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(COMPLEX_KEY_SPARSE_HASHED())", 0.02},
	{"d_flat", "(seq UInt64, v UInt16) PRIMARY KEY seq SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(FLAT())", 0.001},
	{"d_failed", "(id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'no_such_table')) LIFETIME(0) LAYOUT(HASHED())", 0},
	{"d_cache", "(id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(CACHE(SIZE_IN_CELLS 1000))", 0},
	// An only attribute Nullable: its NULL rows are not in its table
	// (HASHED's and SPARSE_HASHED's), its String mean over the values.
	{"d_nullable_sparse", "(id UInt64, ns Nullable(String)) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(SPARSE_HASHED())", 0.01},
	{"d_nullable_hashed", "(id UInt64, ns Nullable(String)) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())", 0.01},
	{"d_nullable_array", "(id UInt64, ns Nullable(String), v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED_ARRAY())", 0.01},
	// A Nullable fixed-size attribute: its NULL share sampled, not shared
	// with d_hashed_str's sample of the same table and Strings.
	{"d_nullable_fixed", "(id UInt64, s String, nw Nullable(UInt32)) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())", 0.01},
	// A key of 20 bytes in the arena (an 8-byte String's size and bytes, a
	// UInt32): 200,000 of them fit the chunks of 4 KiB to 2 MiB, where 21
	// bytes (a terminating zero, which 26.7 does not write) need 4 MiB more.
	{"d_complex_k8", "(k8 String, w UInt32, v UInt16) PRIMARY KEY k8, w SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(COMPLEX_KEY_HASHED())", 0.001},
	// The words of other clauses as text (a DEFAULT, a COMMENT): read as
	// clauses, the layout was FLAT and the sampled table 'old'.
	{"d_commented", "(id UInt64, v UInt16, s String DEFAULT 'SOURCE(CLICKHOUSE(TABLE \\'old\\')) LIFETIME') PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED(SHARDS 2)) COMMENT 'was LAYOUT(FLAT()) before'", 0.02},
	// A String whose length grows along the table (a source sorted by
	// what it holds): its first 100,000 rows, the sample that was read,
	// gave a mean of 9.5 where the table's is 19.5: the model 13 % under.
	{"d_growing", "(id UInt64, sg String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())", 0.01},
	// The same String under a WHERE that loads the first half of the
	// table: the lengths were read over all of it (mean 19.5 against the
	// loaded rows' 9.5), the model 14.3 % over.
	{"d_where", "(id UInt64, sg String) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src' WHERE 'seq < 100000')) LIFETIME(0) LAYOUT(HASHED())", 0.01},
	// A String the source query computes (EXPRESSION): the table has no
	// such column, and the query of its lengths was refused ("not
	// modelled").
	{"d_expr", "(id UInt64, s2 String EXPRESSION 'concat(s, \\'-\\', s)') PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())", 0.02},
	{"we`ird 'name\" x", "(id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(SPARSE_HASHED(SHARDS 2))", 0.001},
}

// fill makes the source table and the targets' dictionaries on a node,
// and loads them.
func fill(t *testing.T, n *servertest.Node, rows int) {
	t.Helper()
	n.Exec(t, "CREATE TABLE src (id UInt64, seq UInt64, v UInt16, w UInt32, s String, k String, ns Nullable(String), k8 String, nw Nullable(UInt32), sg String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO src SELECT sipHash64(number), number, number % 65536, number, repeat('x', 4 + number % 29), concat('user-', toString(number)), if(number % 3 = 0, NULL, repeat('y', number % 20)), leftPad(toString(number), 8, '0'), if(number % 10 = 0, NULL, toUInt32(number)), repeat('z', intDiv(number * 40, "+itoa(rows)+")) FROM numbers("+itoa(rows)+")")
	for _, d := range targetDictionaries {
		n.Exec(t, "CREATE DICTIONARY "+dict.QuoteIdent(d.name)+" "+d.ddl)
		if d.name != "d_cache" {
			n.Query("SYSTEM RELOAD DICTIONARY " + dict.QuoteIdent(d.name)) // d_failed fails: it is meant to
		}
	}
}

// bigTable makes the table big of rows rows (a UInt16 and a String of 4
// to 32 bytes) and reads it once, so that the caches its first read fills
// are in the base of a reload's measured memory.
func bigTable(t *testing.T, n *servertest.Node, rows string) {
	t.Helper()
	n.Exec(t, "CREATE TABLE big (id UInt64, v UInt16, s String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO big SELECT sipHash64(number), number, repeat('y', 4 + number % 29) FROM numbers("+rows+")",
		"SELECT count() FROM big WHERE NOT ignore(id, v, s)")
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestInspectTargets(t *testing.T) {
	node := servertest.Start(t)
	fill(t, node, targetRows)
	ctx := context.Background()
	defer func() { // 200 dictionaries more: one inspection under 5 s
		var ddl []string
		for i := range 200 {
			ddl = append(ddl, "CREATE DICTIONARY many.d"+itoa(i)+" (id UInt64, v UInt16, s String) PRIMARY KEY id SOURCE(CLICKHOUSE(DB 'many' TABLE 'src"+itoa(i%50)+"')) LIFETIME(0) LAYOUT(HASHED())")
		}
		setup := []string{"CREATE DATABASE many"}
		for i := range 50 { // 50 source tables, 4 dictionaries over each
			setup = append(setup, "CREATE TABLE many.src"+itoa(i)+" (id UInt64, v UInt16, s String) ENGINE = MergeTree ORDER BY id",
				"INSERT INTO many.src"+itoa(i)+" SELECT number, number, toString(number) FROM numbers(1000)")
		}
		node.Exec(t, append(setup, ddl...)...)
		for i := range 200 { // loaded, each asks for its Strings' lengths
			if i%2 == 0 {
				node.Exec(t, "SYSTEM RELOAD DICTIONARY many.d"+itoa(i))
			}
		}
		for _, url := range []string{node.NativeURL(), node.HTTPURL()} {
			start := time.Now()
			ins, err := Inspect(ctx, Settings{URL: url}, Options{})
			took := time.Since(start)
			if err != nil || len(ins.Dictionaries) != 200+len(targetDictionaries) {
				t.Fatalf("%s: %v", url, err)
			}
			t.Logf("%s: %d dictionaries in %s", url, len(ins.Dictionaries), took)
			if took > 5*time.Second {
				t.Errorf("%s: %d dictionaries took %s (allowed: 5 s)", url, len(ins.Dictionaries), took)
			}
		}
	}()
	for _, url := range []string{node.NativeURL(), node.HTTPURL()} {
		start := time.Now()
		ins, err := Inspect(ctx, Settings{URL: url}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		t.Logf("%s: %d dictionaries in %s", url, len(ins.Dictionaries), time.Since(start))
		byName := map[string]Dictionary{}
		for _, d := range ins.Dictionaries {
			byName[d.Name] = d
			t.Logf("%-18s %-34s %-10s n=%d ba=%d model=%d real=%d reload=%d %q %q %v", d.Name, d.Layout, d.Status, d.ElementCount, d.BytesAllocated, d.ModelBytes, d.RealBytes, d.ReloadPeakBytes, d.NotModelled, d.Findings, d.Notes)
		}
		for _, target := range targetDictionaries {
			d, ok := byName[target.name]
			if !ok {
				t.Errorf("%s: %q not inspected", url, target.name)
				continue
			}
			if target.tol == 0 {
				continue
			}
			rows := int64(targetRows)
			if strings.Contains(target.ddl, "WHERE") {
				rows = targetRows / 2 // d_where's half
			}
			if !d.Modelled || d.ElementCount != rows {
				t.Errorf("%s: %s: modelled %v (%s), %d rows", url, d.Name, d.Modelled, d.NotModelled, d.ElementCount)
				continue
			}
			if diff := math.Abs(float64(d.ModelBytes-d.BytesAllocated)) / float64(d.BytesAllocated); diff > target.tol {
				t.Errorf("%s: %s: model_bytes %d, bytes_allocated %d: %.3f %% apart (allowed %.1f %%)", url, d.Name, d.ModelBytes, d.BytesAllocated, 100*diff, 100*target.tol)
			}
		}
	}
}

// memoryTracking is the node's MemoryTracking now.
func memoryTracking(t *testing.T, n *servertest.Node) int64 {
	t.Helper()
	v, err := strconv.ParseInt(strings.TrimSpace(n.Exec(t, "SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestInspectMemory: real_bytes against the server's own
// memory growth when it loads (within 5 %), and reload_peak_bytes against
// MemoryTracking's peak during SYSTEM RELOAD DICTIONARY at 1e6 rows, within
// the 10 %: the highest of three reloads, each sampled by three
// connections at once (a growth's old buffer is in the tracker for the
// moment of a realloc, which one sampler misses now and then: HASHED with
// a UInt16 peaked 77.2 MB above the base when none caught it, 87.4 when
// one did; experiments/dict/reload). The source table is read once first, so that the
// caches its first read fills (6.8 MB) are in the base.
func TestInspectMemory(t *testing.T) {
	node := servertest.Start(t)
	bigTable(t, node, "1000000")
	s := newSamplers(t, node, 3)
	for _, tc := range []struct{ name, cols, layout string }{
		{"d_hashed", "v UInt16", "HASHED()"},
		{"d_array", "s String", "HASHED_ARRAY()"},
		{"d_shards", "s String", "HASHED(SHARDS 4)"},
		// sparse_hash_map, its groups' vectors in jemalloc's size classes
		// (real_bytes was packlab's sparse table, 2.8 % under, or
		// bytes_allocated's estimate of the pairs, 7.4 % under).
		{"d_sparse", "s String", "SPARSE_HASHED()"},
		{"d_complex_sparse", "v UInt16", "COMPLEX_KEY_SPARSE_HASHED()"},
	} {
		node.Exec(t, "CREATE DICTIONARY "+tc.name+" (id UInt64, "+tc.cols+") PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'big')) LIFETIME(0) LAYOUT("+tc.layout+")",
			"SYSTEM JEMALLOC PURGE")
		time.Sleep(300 * time.Millisecond)
		before := s.tracked()
		node.Exec(t, "SYSTEM RELOAD DICTIONARY "+tc.name)
		time.Sleep(300 * time.Millisecond)
		growth := s.tracked() - before
		var peak int64
		var peaks []string
		for range 3 {
			p := s.during(func() { node.Exec(t, "SYSTEM RELOAD DICTIONARY "+tc.name) }) - before
			peak = max(peak, p)
			peaks = append(peaks, strconv.FormatFloat(mb(p), 'f', 1, 64))
		}
		d := inspected(t, node, tc.name)
		t.Logf("%s at 1e6 rows: bytes_allocated %d, model %d, real %d, MemoryTracking grew %d on the load; reload peak: model %.1f MB, MemoryTracking's %s MB",
			tc.layout, d.BytesAllocated, d.ModelBytes, d.RealBytes, growth, mb(d.ReloadPeakBytes), strings.Join(peaks, ", "))
		if diff := math.Abs(float64(d.RealBytes-growth)) / float64(growth); diff > 0.05 {
			t.Errorf("%s: real_bytes %d, the server's memory grew %d: %.1f %% apart (allowed 5 %%)", tc.layout, d.RealBytes, growth, 100*diff)
		}
		if off := reloadPeakOff(d.ReloadPeakBytes, peak); off != "" {
			t.Errorf("%s: %s", tc.layout, off)
		}
		node.Exec(t, "DROP DICTIONARY "+tc.name)
	}
}

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
		// A named collection: it read as "a query", and with a TABLE
		// beside NAME the local table of that name, though the
		// collection's host may be another server.
		{ddl: "CREATE DICTIONARY default.dn (`id` UInt64, `s` String) PRIMARY KEY id SOURCE(CLICKHOUSE(NAME nc)) LIFETIME(MIN 0 MAX 0) LAYOUT(HASHED())",
			word: "HASHED", shards: 1, problem: "its source is the named collection nc, whose host and table the server does not show"},
		{ddl: "CREATE DICTIONARY default.dn (`id` UInt64, `s` String) PRIMARY KEY id SOURCE(CLICKHOUSE(NAME nc TABLE 'src')) LIFETIME(MIN 0 MAX 0) LAYOUT(HASHED())",
			word: "HASHED", shards: 1, problem: "its source is the named collection nc, whose host and table the server does not show"},
		// Another server on the same host (its table of that name is not
		// this one's), and this host named as itself (ch1:9000, the node).
		{ddl: "CREATE DICTIONARY x.p (`id` UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(HOST 'localhost' PORT 9001 TABLE 't')) LIFETIME(0) LAYOUT(HASHED())",
			word: "HASHED", shards: 1, problem: "its source is the server at port 9001 of its host, not this one (native port 9000)"},
		{ddl: "CREATE DICTIONARY x.p (`id` UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(HOST 'CH1' PORT 9000 TABLE 't' DB 'd')) LIFETIME(0) LAYOUT(HASHED())",
			word: "HASHED", shards: 1, db: "d", table: "t"},
		// A layout written with no parentheses, as ClickHouse takes and
		// keeps it: it was "no LAYOUT clause could be read".
		{ddl: "CREATE DICTIONARY x.b (`id` UInt64) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 't')) LIFETIME(MIN 0 MAX 0) LAYOUT(SPARSE_HASHED)",
			word: "SPARSE_HASHED", shards: 1, db: "default", table: "t",
			advice: "LIFETIME(MIN 0 MAX 0) LAYOUT(FLAT())"},
		{ddl: "CREATE DICTIONARY x.f (`id` UInt64) PRIMARY KEY id SOURCE(FILE(PATH '/x.tsv' FORMAT 'TabSeparated')) LIFETIME(0) LAYOUT(CACHE(SIZE_IN_CELLS 1000))",
			word: "CACHE", shards: 1, problem: "its source is not a ClickHouse table"},
	} {
		var d Dictionary
		d.readDDL(c.ddl)
		if d.word != c.word || d.shards != c.shards {
			t.Errorf("%s: layout %q SHARDS %d, want %q %d", c.ddl, d.word, d.shards, c.word, c.shards)
		}
		src, problem := sourceTable(c.ddl, "default", "ch1:9000")
		if src.db != c.db || src.table != c.table || problem != c.problem {
			t.Errorf("%s: source %q %q %q, want %q %q %q", c.ddl, src.db, src.table, problem, c.db, c.table, c.problem)
		}
		if c.advice != "" {
			if got := d.adviceDDL("LAYOUT(FLAT())"); !strings.HasSuffix(got, c.advice) {
				t.Errorf("adviceDDL = %s\nwant it to end %s", got, c.advice)
			}
		}
	}
}

// TestLayoutFromType: with no readable LAYOUT clause the layout is
// system.dictionaries.type's, and the note says why: a file's dictionary,
// a statement the user cannot read, or one whose clause did not parse.
func TestLayoutFromType(t *testing.T) {
	for _, c := range []struct{ ddl, origin, note string }{
		{"", "/etc/clickhouse-server/dicts/sales_dictionary.xml", "defined in /etc/clickhouse-server/dicts/sales_dictionary.xml (not DDL)"},
		{"", "7b0c6b1e-7a4e-4a6e-9a3e-1f2d3c4b5a69", "its CREATE DICTIONARY is not readable here"},
		{"CREATE DICTIONARY x.y (`id` UInt64) PRIMARY KEY id LIFETIME(0) LAYOUT(SPARSE_HASHED", "x.y", "no LAYOUT clause could be read"},
	} {
		d := Dictionary{Type: "SparseHashed", Origin: c.origin}
		d.readDDL(c.ddl)
		if d.word != "SPARSE_HASHED" || d.shards != 1 || len(d.Notes) != 1 || !strings.HasPrefix(d.Notes[0], c.note) || d.XML != strings.HasSuffix(c.origin, ".xml") {
			t.Errorf("%q from %s: layout %q SHARDS %d XML %v, notes %q", c.ddl, c.origin, d.word, d.shards, d.XML, d.Notes)
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
		if src, problem := sourceTable(ddl, "x", ""); text != "" && (src.db != "db" || src.table != text || problem != "") {
			t.Errorf("%s: source %+v %q", ddl, src, problem)
		}
		// A verification's copy: the three clauses replaced, the text
		// kept where it stood (the column's DEFAULT, the COMMENT).
		want := "CREATE DICTIONARY `v`.dict (`id` UInt64, `s` String DEFAULT " + lit + ") PRIMARY KEY id SOURCE(NULL()) LIFETIME(0) LAYOUT(HASHED()) COMMENT " + lit
		if got, ok := advisedCopy(ddl, "v", "LAYOUT(HASHED())", "SOURCE(NULL())"); !ok || got != want {
			t.Errorf("advisedCopy:\n got %s\nwant %s", got, want)
		}
		// Broken statements: the reader ends, whatever it finds.
		for _, cut := range []int{len(ddl) / 3, len(ddl) / 2, len(ddl) - 2} {
			var b Dictionary
			b.readDDL(ddl[:cut] + text)
			sourceTable(text+ddl[cut:], "x", "h:9000")
			advisedCopy(ddl[:cut]+text, "v", "LAYOUT(HASHED())", "SOURCE(NULL())")
		}
	})
}
