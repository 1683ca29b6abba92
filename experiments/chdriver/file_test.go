package chdriver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/drivertest"
	"github.com/packlab/packlab/experiments/result"
)

// writeUsers writes a dictionary source file of n rows: a distinct id,
// then price (UInt16), country (a String of 2), name (a String of 40 to
// 60 bytes, longer than the lab's generated 8 to 32, so a model that took
// the generated lengths would be far off), plan (a UInt32, NULL in one
// row in 7) and note (a String of 30 bytes, NULL in one row in 3: not the
// generated one in 10). bad, if not 0, is the line whose price does not
// parse.
func writeUsers(t *testing.T, n, bad int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("id\tprice\tcountry\tname\tplan\tnote\n")
	for i := range n {
		price := fmt.Sprint(i % 65536)
		if i+2 == bad {
			price = "cheap"
		}
		plan, note := fmt.Sprint(i), strings.Repeat("x", 30)
		if i%7 == 0 {
			plan = `\N`
		}
		if i%3 == 0 {
			note = `\N`
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t%s\t%s\n", uint64(i+1)*0x9E3779B97F4A7C15, price, []string{"FR", "DE", "US", "JP"}[i%4], strings.Repeat("n", 40+i%21), plan, note)
	}
	path := filepath.Join(t.TempDir(), "users.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var usersAttributes = []string{"price:UInt16", "country:String", "name:String"}

// TestFileAttributeColumns: a file's attributes are checked as it is read
// through before any run: a cell that does not parse names the file, line
// and column; --columns must give one column per attribute after the
// value; a Nullable attribute from a file, a stream, and --columns without
// attributes are refused by name. ClickHouse's layouts must be built (the
// config names them), not run.
func TestFileAttributeColumns(t *testing.T) {
	needClickHouse(t)
	ctx := context.Background()
	base := config.Config{Layouts: []string{"ch_hashed"}, Attributes: usersAttributes}
	bad := base
	bad.Source = writeUsers(t, 100, 7)
	if _, err := experiments.Check(ctx, bad); err == nil || !strings.Contains(err.Error(), `users.tsv:7: column 2 ("price")`) || !strings.Contains(err.Error(), "cheap") {
		t.Errorf("a bad price: %v; want the file, line 7 and column 2 named", err)
	}
	good := base
	good.Source = writeUsers(t, 100, 0)
	if mc, err := experiments.Check(ctx, good); err != nil || mc.Estimates[0].Rows != 100 {
		t.Errorf("a good file: %+v, %v", mc, err)
	}
	for _, c := range []struct {
		change func(*config.Config)
		want   string
	}{
		{func(c *config.Config) { c.Columns = []string{"3"} }, "columns 3: 1 column for 2 attributes after the value"},
		{func(c *config.Config) { c.Columns = []string{"country", "city"} }, `column "city" not found in the header`},
		{func(c *config.Config) { c.Columns = []string{"3", "9"} }, "column 9 does not exist"},
		{func(c *config.Config) { c.Attributes = []string{"price:UInt16", "country:UInt32"} }, `column 3 ("country"): "FR" is not a valid UInt32`},
		{func(c *config.Config) { c.Attributes, c.Columns = nil, []string{"3"} }, "columns 3: applies to a file's attributes after the value"},
	} {
		cfg := good
		c.change(&cfg)
		if _, err := experiments.Check(ctx, cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", cfg, err, c.want)
		}
	}
	none := good
	none.Columns = []string{"none"}
	if spec, err := none.SourceSpec(); err != nil || len(spec.Columns) > 0 {
		t.Errorf("columns none: %v, attributes from the file's columns %v; want them drawn from the key", err, spec.Columns)
	}
}

// TestClickHouseFileAttributes: ClickHouse loads a file's attributes, the
// rows the lab parsed, and packlab's model (the file's String lengths and
// NULLs) gives its bytes_allocated within 0.1 %, with Nullable attributes
// too (NULL written \N). With -short (the race stage, where the six
// runs took four times as long: 42 s) one run, HASHED's of the Strings: a
// file's attributes parsed and fed to ClickHouse's worker once.
func TestClickHouseFileAttributes(t *testing.T) {
	needClickHouse(t)
	const n = 200_000
	file := writeUsers(t, n, 0)
	cases := []struct {
		attrs   []string
		columns []string
	}{
		{usersAttributes, []string{"country", "name"}},
		{[]string{"price:UInt16", "plan:Nullable(UInt32)", "note:Nullable(String)"}, []string{"plan", "note"}},
	}
	layouts := []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}
	if testing.Short() {
		cases, layouts = cases[:1], layouts[:1]
	}
	for _, c := range cases {
		cfg := config.Config{Layouts: layouts, Source: file, Attributes: c.attrs}
		for name, r := range drivertest.RunOrFail(t, cfg) {
			checkFileRun(t, name, r, n, c.columns)
		}
	}
}

// checkFileRun holds a run of a file's attributes to ClickHouse's figures.
func checkFileRun(t *testing.T, name string, r result.Result, n int64, columns []string) {
	t.Helper()
	ch := r.ClickHouse
	t.Logf("%s %s: bytes_allocated %d, model %d (%+.3f %% of %s)", name, r.Attributes, r.BytesAllocated, ch.ModelBytes, ch.DifferencePercent, ch.ComparedWith)
	if r.ElementCount != n || r.FoundRate != 1 || !slices.Equal(r.AttributeColumns, columns) {
		t.Errorf("%s: %d rows, found %v, columns %v; want %d, 1, %v", name, r.ElementCount, r.FoundRate, r.AttributeColumns, n, columns)
	}
	tol := 0.1
	if ch.ComparedWith == "tracked_bytes" {
		tol = 1 // the tracker counts ClickHouse's own few tens of KiB too
	}
	if d := ch.DifferencePercent; d < -tol || d > tol {
		t.Errorf("%s: ClickHouse's %d bytes are %+.3f %% off packlab's %d", name, r.BytesAllocated, d, ch.ModelBytes)
	}
}
