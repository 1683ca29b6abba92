package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeUsers writes a dictionary source file of n rows: a distinct id,
// then price (UInt16), country (a String of 2) and name (a String of 40
// to 60 bytes, longer than the lab's generated 8 to 32, so a model that
// took the generated lengths would be far off). bad, if not 0, is the
// line whose price does not parse.
func writeUsers(t *testing.T, n, bad int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("id\tprice\tcountry\tname\n")
	for i := range n {
		price := fmt.Sprint(i % 65536)
		if i+2 == bad {
			price = "cheap"
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\n", uint64(i+1)*0x9E3779B97F4A7C15, price, []string{"FR", "DE", "US", "JP"}[i%4], strings.Repeat("n", 40+i%21))
	}
	path := filepath.Join(t.TempDir(), "users.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var fileAttributes = []string{"price:UInt16", "country:String", "name:String"}

// TestFileAttributeColumns: a file's attributes are checked as it is read
// through before any run: a cell that does not parse names the file, line
// and column; --columns must give one column per attribute after the
// value; a Nullable attribute from a file, a stream, and --columns without
// attributes are refused by name. ClickHouse's layouts must be built (the
// config names them), not run.
func TestFileAttributeColumns(t *testing.T) {
	needClickHouse(t)
	ctx := context.Background()
	base := Config{Layouts: []string{"ch_hashed"}, Attributes: fileAttributes}
	bad := base
	bad.Source = writeUsers(t, 100, 7)
	if _, err := Check(ctx, bad); err == nil || !strings.Contains(err.Error(), `users.tsv:7: column 2 ("price")`) || !strings.Contains(err.Error(), "cheap") {
		t.Errorf("a bad price: %v; want the file, line 7 and column 2 named", err)
	}
	good := base
	good.Source = writeUsers(t, 100, 0)
	if mc, err := Check(ctx, good); err != nil || mc.Estimates[0].Rows != 100 {
		t.Errorf("a good file: %+v, %v", mc, err)
	}
	for _, c := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Columns = []string{"3"} }, "--columns 3: 1 columns for 2 attributes after the value"},
		{func(c *Config) { c.Columns = []string{"country", "city"} }, `column "city" not found in the header`},
		{func(c *Config) { c.Columns = []string{"3", "9"} }, "column 9 does not exist"},
		{func(c *Config) { c.Attributes = []string{"price:UInt16", "country:Nullable(String)"} }, "attribute 2 is Nullable: a file's NULLs are not modelled yet"},
		{func(c *Config) { c.Attributes, c.Columns = nil, []string{"3"} }, "--columns 3: applies to a file's attributes after the value"},
	} {
		cfg := good
		c.change(&cfg)
		if _, err := Check(ctx, cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want %q", cfg, err, c.want)
		}
	}
	none := good
	none.Columns = []string{"none"}
	if p, err := none.parse(); err != nil || p.fileAttributes() {
		t.Errorf("--columns none: %v, attributes from the file %v; want them drawn from the key", err, p.fileAttributes())
	}
}

// TestClickHouseFileAttributes: ClickHouse loads a file's attributes, the
// rows the lab parsed, and packlab's model (the file's String lengths)
// gives its bytes_allocated within 0.1 %.
func TestClickHouseFileAttributes(t *testing.T) {
	needClickHouse(t)
	const n = 200_000
	cfg := Config{Layouts: []string{"ch_hashed", "ch_sparse_hashed", "ch_hashed_array"}, Source: writeUsers(t, n, 0), Attributes: fileAttributes}
	for name, r := range runOrFail(t, cfg) {
		ch := r.ClickHouse
		t.Logf("%s: bytes_allocated %d, model %d (%+.3f %% of %s)", name, r.BytesAllocated, ch.ModelBytes, ch.DifferencePercent, ch.ComparedWith)
		if r.ElementCount != n || r.FoundRate != 1 || !slices.Equal(r.AttributeColumns, []string{"country", "name"}) {
			t.Errorf("%s: %d rows, found %v, columns %v; want %d, 1, [country name]", name, r.ElementCount, r.FoundRate, r.AttributeColumns, n)
		}
		tol := 0.1
		if ch.ComparedWith == "tracked_bytes" {
			tol = 1 // the tracker counts ClickHouse's own few tens of KiB too
		}
		if d := ch.DifferencePercent; d < -tol || d > tol {
			t.Errorf("%s: ClickHouse's %d bytes are %+.3f %% off packlab's %d", name, r.BytesAllocated, d, ch.ModelBytes)
		}
	}
}
