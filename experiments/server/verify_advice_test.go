//go:build !js

package server

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/server/servertest"
)

// TestVerifyAdvice builds inspections' advice on a test server, over the
// dictionaries' own source (another database than the connection's, a
// WHERE, an EXPRESSION attribute): the copy loads the dictionary's rows,
// its bytes_allocated is the advice's model (0.1 % for fixed-size
// attributes, 2 % with a String), its reload peak the model's, the
// dictionary itself is untouched and nothing of packlab's is left; and
// the refusals, before anything is made: a name that is not there or is
// in two databases, a dictionary not modelled, a source that is a query.
func TestVerifyAdvice(t *testing.T) {
	node := servertest.Start(t)
	const rows = 300_000
	node.Exec(t, "CREATE DATABASE shop", "CREATE DATABASE other",
		"CREATE TABLE shop.src (id UInt64, seq UInt64, v UInt16, s String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO shop.src SELECT sipHash64(number), number, number % 65536, repeat('x', 4 + number % 29) FROM numbers("+itoa(rows)+")",
		// HASHED under a WHERE: SPARSE_HASHED holds it in a third less. Its
		// password is [HIDDEN] in its CREATE DICTIONARY: the copy has none.
		"CREATE DICTIONARY shop.prices (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src' WHERE 'seq < 200000' USER 'default' PASSWORD '')) LIFETIME(MIN 0 MAX 3600) LAYOUT(HASHED())",
		// In another database than its source's, a String computed by the
		// source's query.
		"CREATE DICTIONARY other.names (id UInt64, s2 String EXPRESSION 'concat(s, s)') PRIMARY KEY id SOURCE(CLICKHOUSE(DB 'shop' TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())",
		"CREATE DICTIONARY shop.query (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(QUERY 'SELECT id, v FROM shop.src')) LIFETIME(0) LAYOUT(HASHED())",
		"CREATE DICTIONARY shop.twice (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())",
		"CREATE DICTIONARY other.twice (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(DB 'shop' TABLE 'src')) LIFETIME(0) LAYOUT(HASHED())",
		"CREATE DICTIONARY shop.cached (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src')) LIFETIME(0) LAYOUT(CACHE(SIZE_IN_CELLS 1000))",
		"SYSTEM RELOAD DICTIONARY shop.prices", "SYSTEM RELOAD DICTIONARY other.names", "SYSTEM RELOAD DICTIONARY shop.query",
		// Names with quotes, a backquote and spaces, in the dictionary's
		// database, its source table and its WHERE.
		"CREATE DATABASE `we'ird db`",
		"CREATE TABLE `we'ird db`.`t \"x` ENGINE = MergeTree ORDER BY tuple() AS SELECT id, v, s FROM shop.src WHERE seq < 50000",
		"CREATE DICTIONARY `we'ird db`.`d``1` (id UInt64, v UInt16) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 't \"x' WHERE 's != \\'x\\'')) LIFETIME(0) LAYOUT(HASHED())",
		"SYSTEM RELOAD DICTIONARY `we'ird db`.`d``1`")
	ctx := context.Background()
	s := Settings{URL: node.NativeURL()}
	ins, err := Inspect(ctx, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	left := func() string {
		return strings.TrimSpace(node.Exec(t, "SELECT count() FROM system.databases WHERE name LIKE 'packlab_verify_%'"))
	}
	for _, c := range []struct {
		name string
		tol  float64
	}{{"shop.prices", 0.001}, {"names", 0.02}, {"we'ird db.d`1", 0.001}} {
		if n, err := VerifyAdvice(ctx, s, ins, c.name, nil); err != nil || n != 1 {
			t.Fatalf("%s: %d built, %v", c.name, n, err)
		}
		d, _ := ins.dictionaryOn(ins.Nodes[0].Name, c.name)
		v := d.Verification
		if v == nil {
			t.Fatalf("%s: the verification is not on the inspection's dictionary", c.name)
		}
		for _, l := range v.Lines() {
			t.Log(l)
		}
		if v.ElementCount != d.ElementCount || !v.Dropped || v.Layout != d.Advice.Layout || !strings.Contains(v.DDL, v.Layout) {
			t.Errorf("%s: %d rows against the dictionary's %d, dropped %v, layout %s against the advice's %s", c.name, v.ElementCount, d.ElementCount, v.Dropped, v.Layout, d.Advice.Layout)
		}
		if diff := math.Abs(float64(v.ModelBytes-v.BytesAllocated)) / float64(v.BytesAllocated); diff > c.tol {
			t.Errorf("%s: the advice's model %d, the copy's bytes_allocated %d: %.3f %% apart (allowed %.1f %%)", c.name, v.ModelBytes, v.BytesAllocated, 100*diff, 100*c.tol)
		}
		if off := reloadPeakOff(v.ModelReloadPeakBytes, v.ReloadPeakBytes); off != "" {
			t.Errorf("%s: %s", c.name, off)
		}
		if n := left(); n != "0" {
			t.Errorf("%s: %s databases of packlab's left behind", c.name, n)
		}
	}
	if d, _ := ins.dictionaryOn(ins.Nodes[0].Name, "shop.prices"); !strings.Contains(d.Advice.Why, "how fast it loads is not modelled (HASHED loaded in ") {
		t.Errorf("shop.prices: the advice does not say that its load time is not modelled: %q", d.Advice.Why)
	}
	if d, _ := ins.dictionaryOn(ins.Nodes[0].Name, "shop.prices"); d.Advice.Layout != "LAYOUT(SPARSE_HASHED())" || d.Verification.BytesAllocated >= 3*d.BytesAllocated/4 {
		t.Errorf("shop.prices: advised %s, %d bytes_allocated against HASHED's %d: want SPARSE_HASHED in a quarter less", d.Advice.Layout, d.Verification.BytesAllocated, d.BytesAllocated)
	}
	if d, _ := ins.dictionaryOn(ins.Nodes[0].Name, "shop.prices"); len(d.Verification.Notes) != 1 || !strings.Contains(d.Verification.DDL, "WHERE 'seq < 200000'") || strings.Contains(d.Verification.DDL, "PASSWORD") {
		t.Errorf("shop.prices: its copy %s, notes %q: want its WHERE, no password, and a note saying so", d.Verification.DDL, d.Verification.Notes)
	}
	// The dictionaries themselves as they were.
	if got := strings.TrimSpace(node.Exec(t, "SELECT type, status, element_count FROM system.dictionaries WHERE database = 'shop' AND name = 'prices'")); got != "Hashed\tLOADED\t200000" {
		t.Errorf("shop.prices after its verification: %q", got)
	}

	// Every advice that changes a layout, one after another: the three
	// above again, and shop.query's refusal on it, the others going on.
	again, err := Inspect(ctx, s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	built, err := VerifyEveryAdvice(ctx, s, again, func(of, layout string, rows int64) { started = append(started, of) })
	if err != nil {
		t.Fatal(err)
	}
	var verified, refused []string
	for _, d := range again.Dictionaries {
		if d.Verification != nil {
			verified = append(verified, d.Database+"."+d.Name)
		}
		if d.VerifyProblem != "" {
			refused = append(refused, d.Database+"."+d.Name+": "+d.VerifyProblem)
		}
	}
	t.Logf("built %d: %q; not: %q", built, verified, refused)
	if built < 3 || built != len(verified) || !slices.Equal(started, verified) || !slices.Contains(verified, "shop.prices") || !slices.Contains(verified, "other.names") ||
		len(refused) == 0 || !strings.HasPrefix(refused[0], "shop.query: its source is a query, not a table") {
		t.Errorf("VerifyEveryAdvice: built %d %q, refused %q", built, verified, refused)
	}
	if n := left(); n != "0" {
		t.Errorf("VerifyEveryAdvice left %s databases", n)
	}

	for _, c := range []struct{ name, want string }{
		{"shop.nothing", "no dictionary of that name"},
		{"twice", "2 databases have a dictionary of that name"},
		{"shop.cached", "not modelled"},
		{"shop.query", "a query, not a table"},
	} {
		_, err := VerifyAdvice(ctx, s, ins, c.name, nil)
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != "verify" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal of the field verify saying %q", c.name, err, c.want)
		}
	}
	if n := left(); n != "0" {
		t.Errorf("the refusals made %s databases", n)
	}
}

// TestAdvisedCopy: the statement a verification makes, from ClickHouse's
// own CREATE DICTIONARY: the name, LAYOUT, SOURCE and LIFETIME replaced,
// the rest (a quoted name with parentheses, a COMMENT naming clauses)
// kept as it was.
func TestAdvisedCopy(t *testing.T) {
	ddl := "CREATE DICTIONARY shop.`we(ird` (`id` UInt64, `v` UInt16 DEFAULT 3) PRIMARY KEY id SOURCE(CLICKHOUSE(TABLE 'src' PASSWORD '[HIDDEN]')) LIFETIME(MIN 0 MAX 3600) LAYOUT(HASHED()) COMMENT 'LAYOUT(FLAT()) SOURCE(x)'"
	got, ok := advisedCopy(ddl, "packlab_verify_1", "LAYOUT(SPARSE_HASHED(SHARDS 2))", "SOURCE(CLICKHOUSE(DB 'shop' TABLE 'src'))")
	want := "CREATE DICTIONARY `packlab_verify_1`.dict (`id` UInt64, `v` UInt16 DEFAULT 3) PRIMARY KEY id SOURCE(CLICKHOUSE(DB 'shop' TABLE 'src')) LIFETIME(0) LAYOUT(SPARSE_HASHED(SHARDS 2)) COMMENT 'LAYOUT(FLAT()) SOURCE(x)'"
	if !ok || got != want {
		t.Errorf("advisedCopy:\n got %s\nwant %s", got, want)
	}
	if _, ok := advisedCopy("CREATE DICTIONARY d (id UInt64) PRIMARY KEY id LIFETIME(0)", "x", "LAYOUT(HASHED())", "SOURCE(NULL())"); ok {
		t.Error("a statement with no LAYOUT or SOURCE was rewritten")
	}
}

// TestLoadTimeout: a verification allows ten times the longest load of the
// inspection's dictionaries and a minute, or the query timeout if longer
// (a 5e6-row dictionary that loads in 5.6 s took 43 s to verify; under a
// 5 s query timeout it failed).
func TestLoadTimeout(t *testing.T) {
	ins := &Inspection{Dictionaries: []Dictionary{{LoadingSeconds: 5.6}, {LoadingSeconds: 0.2}}}
	for _, c := range []struct{ query, want time.Duration }{
		{0, 116 * time.Second}, {5 * time.Second, 116 * time.Second}, {2 * time.Hour, 2 * time.Hour},
	} {
		if got := loadTimeout(c.query, ins); got.Round(time.Millisecond) != c.want {
			t.Errorf("query timeout %s: %s, want %s", c.query, got, c.want)
		}
	}
	if got := loadTimeout(5*time.Second, &Inspection{}); got != time.Minute {
		t.Errorf("no dictionary: %s, want the default of a minute", got)
	}
}
