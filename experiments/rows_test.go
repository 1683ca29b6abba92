package experiments_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments"
	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/drivertest"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

// threeAttributes is the dictionary of three attributes.
var threeAttributes = []string{"UInt16", "UInt32", "Float64"}

// TestRowLayouts: packed_row and compact_row hold a dictionary of three
// attributes (UInt16, UInt32, Float64: a 14-byte row) in one table, in a
// worker and in this process alike: every row loaded and read back, the
// table exactly the bytes core predicts for a 14-byte value (packed: 8 + 14
// bytes a cell, no padding), beside packed's table of the first attribute
// alone that a SPARSE_HASHED would keep three of.
func TestRowLayouts(t *testing.T) {
	rows := rowLayoutRows()
	for _, inProcess := range []bool{false, true} {
		got := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row", "compact_row", "packed"}, Value: "UInt16", Rows: rows, Seed: 3, InProcess: inProcess})
		one := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row"}, Attributes: threeAttributes, Rows: rows, Seed: 3, MaxLoadFactor: 0.9, InProcess: inProcess})
		three := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row", "compact_row"}, Attributes: threeAttributes, Rows: rows, Seed: 3, InProcess: inProcess})
		row := core.RowType("Tuple(UInt16, UInt32, Float64)", 14)
		for name, r := range map[string]result.Result{"packed_row": three["packed_row"], "compact_row": three["compact_row"], "packed_row MLF 0.9": one["packed_row"]} {
			l := core.LayoutPacked
			if strings.HasPrefix(name, "compact") {
				l = core.LayoutCompact
			}
			pr, err := core.Predict(l, core.MustType("UInt64"), row, rows, core.Options{MaxLoadFactor: r.MaxLoadFactor, ValueBytes: 14}, 1)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s (in process %v): %d bytes (%.2f a row), load %.2f s, read %.1f M rows/s", name, inProcess, r.BytesAllocated, float64(r.BytesAllocated)/float64(rows), r.LoadSeconds, r.ReadRowsPerSecond/1e6)
			if r.ElementCount != rows || r.FoundRate != 1 || r.BytesAllocated != pr.FinalBytes || r.BucketCount != pr.BucketCount {
				t.Errorf("%s: %d rows (found %v), %d bytes in %d cells; want %d, 1, core's %d in %d", name, r.ElementCount, r.FoundRate, r.BytesAllocated, r.BucketCount, rows, pr.FinalBytes, pr.BucketCount)
			}
			if r.ValueType != row.Name || r.Attributes != "UInt16,UInt32,Float64" || r.ClickHouseLayout != "" || !strings.HasPrefix(r.Layout, strings.Fields(name)[0]) {
				t.Errorf("%s: layout %q, value %q, attributes %q, ClickHouse %q: want the row's layout, its Tuple, its attributes, no ClickHouse layout",
					name, r.Layout, r.ValueType, r.Attributes, r.ClickHouseLayout)
			}
		}
		// Fewer cells at MLF 0.9: half at 900K rows, a quarter at -short's
		// size (the grower's x4 steps below 2^20 cells).
		if pr, p := three["packed_row"], one["packed_row"]; pr.PayloadBytes != rows*22 || pr.PaddingBytes != 0 || p.BucketCount >= pr.BucketCount {
			t.Errorf("packed_row: payload %d, padding %d, %d cells (%d at MLF 0.9): want 22 bytes a row, none, fewer cells at 0.9", pr.PayloadBytes, pr.PaddingBytes, pr.BucketCount, p.BucketCount)
		}
		// A String in a row: its 8-byte reference in the cell, its bytes
		// (8 to 32, 20 on average) in the arena beside the table, every
		// one read back.
		// A row wider than a cell's value (28 and 23 bytes): in the row
		// array beside the table, its 4-byte number in the cell.
		for _, list := range [][]string{{"UInt16", "name:String", "UInt32"}, {"UInt16", "name:Nullable(String)", "Nullable(UInt32)"},
			{"UInt64", "name:String", "Float64", "UInt32"}, {"UInt16", "name:Nullable(String)", "Float64", "Nullable(UInt32)"}} {
			rowsWith(t, list, inProcess)
		}
		// One attribute in a row is that attribute's table.
		if a, b := got["packed_row"], got["packed"]; a.BytesAllocated != b.BytesAllocated || a.Checksum != b.Checksum {
			t.Errorf("packed_row of UInt16: %d bytes, checksum %s; packed %d, %s: want the same table", a.BytesAllocated, a.Checksum, b.BytesAllocated, b.Checksum)
		}
	}
}

// rowLayoutRows is the size of TestRowLayouts' tables: 900K rows (2^21 cells
// at MLF 0.5, 2^20 at 0.9), or a sixteenth of it with -short (2^18 and
// 2^16): the race stage runs its 28 loads under the race detector, which
// took 121 of the package's 157 s at 900K.
func rowLayoutRows() int64 {
	if testing.Short() {
		return 900_000 / 16
	}
	return 900_000
}

// rowsWith checks packed_row and compact_row of attributes list (with a
// String, and Nullables): the table and the arena within a chunk of
// RowPrediction, every row read back, the parts adding up.
func rowsWith(t *testing.T, list []string, inProcess bool) {
	rows := rowLayoutRows()
	strs := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row", "compact_row"}, Attributes: list, Rows: rows, Seed: 3, InProcess: inProcess})
	attrs, err := config.ParseAttributes(list[0], list)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range dict.RowTables {
		r := strs[string(l)+dict.RowSuffix]
		pr, err := dict.RowPrediction(l, core.MustType("UInt64"), attrs, rows, core.Options{MaxLoadFactor: r.MaxLoadFactor}, 1)
		if err != nil {
			t.Fatal(err)
		}
		arena, values := dict.RowArenaBytes(attrs, rows), 20*attrs[1].NonNull(rows) // 8 to 32 bytes, none for a NULL
		t.Logf("%s of %v (in process %v): %d bytes (%.2f a row; arena %d), RSS %d, load %.2f s, read %.1f M rows/s",
			l, list, inProcess, r.BytesAllocated, float64(r.BytesAllocated)/float64(rows), arena, r.RSSBytes, r.LoadSeconds, r.ReadRowsPerSecond/1e6)
		if r.ElementCount != rows || r.FoundRate != 1 || max(r.BytesAllocated-pr.FinalBytes, pr.FinalBytes-r.BytesAllocated) > dict.RowArenaChunk ||
			arena < values || arena > values+dict.RowArenaChunk || r.ValueType != dict.RowType(attrs).Name || !strings.Contains(r.ValueType, "String") {
			t.Errorf("%s of %v: %d rows (found %v), %d bytes, value %q; want %d, 1, the prediction's %d (the arena %d for %d bytes of values) within a chunk, a Tuple with the String",
				l, list, r.ElementCount, r.FoundRate, r.BytesAllocated, r.ValueType, rows, pr.FinalBytes, arena, values)
		}
		if row := dict.RowType(attrs); row.Size > dict.MaxRowBytes {
			array := dict.RowArrayBytes(row.Size, rows)
			if cell := dict.RowCell(attrs, rows); cell.Size != 4 || r.MetadataBytes < 4*rows || r.BytesAllocated < array+arena || r.PayloadBytes < int64(row.Size)*rows {
				t.Errorf("%s of %v: a cell of %d bytes, metadata %d, %d bytes, payload %d: want a 4-byte row number (%d bytes of them), the array's %d and the arena's %d, %d bytes of rows",
					l, list, cell.Size, r.MetadataBytes, r.BytesAllocated, r.PayloadBytes, 4*rows, array, arena, int64(row.Size)*rows)
			}
		}
		if r.PayloadBytes+r.PaddingBytes+r.EmptyBytes+r.MetadataBytes != r.BytesAllocated {
			t.Errorf("%s of %v: payload %d + padding %d + empty %d + metadata %d, want bytes_allocated %d", l, list, r.PayloadBytes, r.PaddingBytes, r.EmptyBytes, r.MetadataBytes, r.BytesAllocated)
		}
	}
}

// TestRowsFromFile: with --source, a row layout builds each row from the
// file's own columns (the value's, then --columns or the header's names):
// every key loaded and read back, the Strings' arena exactly the file's
// String bytes (NULLs taking none), the table the prediction's with the
// file's own String lengths within a chunk; --columns none draws the
// attributes after the value from the key; a bad cell is an error that
// names its column and line.
func TestRowsFromFile(t *testing.T) {
	const rows = 50_000
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id\tprice\tcountry\tname\tscore\n")
	var strBytes int64
	for i := range rows {
		country, name := [...]string{"BR", "FR", "DE", "JP"}[i%4], strings.Repeat("x", 1+i%40)
		strBytes += int64(len(country))
		if i%7 == 0 {
			name = `\N`
		} else {
			strBytes += int64(len(name))
		}
		fmt.Fprintf(&b, "%d\t%d\t%s\t%s\t%d.5\n", uint64(i)*0x9E3779B97F4A7C15, i%65536, country, name, i)
	}
	path := filepath.Join(dir, "users.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	list := []string{"price:UInt16", "country:String", "name:Nullable(String)", "score:Float64"} // a row of 2 + 8 + 8 + 8 + 1: in the row array
	got := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row", "compact_row"}, Attributes: list, Source: path, KeyColumn: "id", InProcess: true})
	for _, l := range dict.RowTables {
		r := got[string(l)+dict.RowSuffix]
		t.Logf("%s from a file: %d bytes, payload %d, %d rows found %v", l, r.BytesAllocated, r.PayloadBytes, r.ElementCount, r.FoundRate)
		if r.ElementCount != rows || r.FoundRate != 1 {
			t.Errorf("%s: %d rows, found %v; want %d, all", l, r.ElementCount, r.FoundRate, rows)
		}
	}
	// packed's payload is every pair's key and cell; the row number moves
	// to metadata, the rows (27 bytes) and the Strings are payload.
	if r := got["packed_row"]; r.PayloadBytes != rows*(8+27)+strBytes {
		t.Errorf("packed_row: payload %d, want %d: the keys, the rows and the file's %d String bytes", r.PayloadBytes, rows*(8+27)+strBytes, strBytes)
	}
	if r := got["packed_row"]; strings.Join(r.AttributeColumns, ",") != "country,name,score" {
		t.Errorf("packed_row: attribute columns %v, want the file's country, name and score", r.AttributeColumns)
	}
	// No value column: the first attribute drawn from the key, the others
	// still the file's (the same String bytes).
	noValue := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row"}, Attributes: list, Source: path, KeyColumn: "id", ValueColumn: "none", InProcess: true})
	if r := noValue["packed_row"]; r.ElementCount != rows || r.PayloadBytes != rows*(8+27)+strBytes || strings.Join(r.AttributeColumns, ",") != "country,name,score" {
		t.Errorf("value_column none: %d rows, payload %d, columns %v: want %d, %d (the file's Strings), country,name,score", r.ElementCount, r.PayloadBytes, r.AttributeColumns, rows, rows*(8+27)+strBytes)
	}
	drawn := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row"}, Attributes: list, Source: path, KeyColumn: "id", Columns: []string{"none"}, InProcess: true})
	if r := drawn["packed_row"]; r.ElementCount != rows || r.PayloadBytes == got["packed_row"].PayloadBytes {
		t.Errorf("columns none: %d rows, payload %d: want %d rows, Strings drawn from the key (not the file's %d bytes)", r.ElementCount, r.PayloadBytes, rows, strBytes)
	}
	bad := strings.Replace(b.String(), "\t7\tJP", "\tseven\tJP", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := experiments.Run(context.Background(), config.Config{Layouts: []string{"compact_row"}, Attributes: list, Source: path, KeyColumn: "id", InProcess: true}, experiments.RunOptions{})
	if err == nil || !strings.Contains(err.Error(), "seven") || !strings.Contains(err.Error(), "price") {
		t.Errorf("a bad price: %v, want an error naming the column and the value", err)
	}
}

// TestRowsFromFileRepeatedKeys loads a row that fits in the cell (UInt16,
// String: 10 bytes) from a file that holds every key twice: the table keeps
// each key's first row, and the Strings the second rows left in the arena
// are empty bytes, not payload. Then with no value column (the UInt16
// drawn from the key, cut to the row's bytes: once it leaked into the
// cell's other bits and failed the load's checksum).
func TestRowsFromFileRepeatedKeys(t *testing.T) {
	const keys = 20_000
	var b strings.Builder
	b.WriteString("id\tplan\tname\n")
	var kept int64
	for round := range 2 {
		for i := range keys {
			name := strings.Repeat("ab", 1+(i+round)%12)
			if round == 0 {
				kept += int64(len(name))
			}
			fmt.Fprintf(&b, "%d\t%d\t%s\n", uint64(i)*0x9E3779B97F4A7C15, i%1000, name)
		}
	}
	path := filepath.Join(t.TempDir(), "plans.tsv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	list := []string{"plan:UInt16", "name:String"}
	for _, valueColumn := range []string{"", "none"} {
		got := drivertest.RunOrFail(t, config.Config{Layouts: []string{"packed_row", "compact_row"}, Attributes: list, Source: path, KeyColumn: "id", ValueColumn: valueColumn, InProcess: true})
		for _, l := range dict.RowTables {
			r := got[string(l)+dict.RowSuffix]
			if r.ElementCount != keys || r.Duplicates != keys || r.FoundRate != 1 {
				t.Errorf("value column %q, %s: %d rows, %d repeated, found %v; want %d, %d, all", valueColumn, l, r.ElementCount, r.Duplicates, r.FoundRate, keys, keys)
			}
		}
		if r := got["packed_row"]; r.PayloadBytes != keys*(8+10)+kept {
			t.Errorf("value column %q, packed_row: payload %d, want %d: the keys, the 10-byte rows and the first rows' %d String bytes", valueColumn, r.PayloadBytes, keys*(8+10)+kept, kept)
		}
	}
}

// TestColumnsByName: with a header line, a named attribute loads from the
// column its name heads, the value's too (a header "id qty price" and
// price:UInt16,qty:UInt16 loaded price from qty's column, issue 48); a
// column given for it that the header names otherwise is refused naming
// both; names are case-sensitive as ClickHouse's; without a header the
// positions hold.
func TestColumnsByName(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var rows strings.Builder
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&rows, "%d\t%d\t%d\n", i, i%97, 1000+i)
	}
	header := write("header.tsv", "id\tqty\tprice\n"+rows.String())
	cases := write("cases.tsv", "id\ta\tA\n"+rows.String())
	bare := write("bare.tsv", rows.String())
	checksum := func(cfg config.Config) string {
		t.Helper()
		cfg.InProcess, cfg.Rows = true, 0
		got := drivertest.RunOrFail(t, cfg)
		return got[cfg.Layouts[0]].Checksum
	}
	for _, layout := range []string{"packed_row", "compact_row"} {
		row := func(src, value string, columns []string, attrs ...string) string {
			return checksum(config.Config{Layouts: []string{layout}, Source: src, Attributes: attrs, ValueColumn: value, Columns: columns})
		}
		byPosition := row(header, "3", []string{"2"}, "UInt16", "UInt16")
		if row(header, "", nil, "UInt16", "UInt16") == byPosition {
			t.Fatalf("%s: columns 2, 3 and 3, 2 load the same rows: the test cannot tell them apart", layout)
		}
		if got := row(header, "", nil, "price:UInt16", "qty:UInt16"); got != byPosition {
			t.Errorf("%s: price:UInt16,qty:UInt16 over a header id qty price: checksum %s, want price's column then qty's (%s)", layout, got, byPosition)
		}
		if got := row(cases, "", nil, "A:UInt16", "a:UInt16"); got != byPosition {
			t.Errorf("%s: A:UInt16,a:UInt16 over a header id a A: checksum %s, want column A then a (%s)", layout, got, byPosition)
		}
		if got, want := row(bare, "", nil, "price:UInt16", "qty:UInt16"), row(bare, "", nil, "UInt16", "UInt16"); got != want {
			t.Errorf("%s: named attributes over a file without a header: checksum %s, want the positions' %s", layout, got, want)
		}
	}
	single := checksum(config.Config{Layouts: []string{"packed"}, Source: header, Attributes: []string{"price:UInt16"}})
	if want := checksum(config.Config{Layouts: []string{"packed"}, Source: header, ValueColumn: "price"}); single != want {
		t.Errorf("packed, price:UInt16 alone: checksum %s, want price's column (%s)", single, want)
	}
	for _, c := range []struct {
		cfg  config.Config
		want []string
	}{
		{config.Config{Attributes: []string{"price:UInt16", "qty:UInt16"}, ValueColumn: "2"}, []string{`"price"`, `"qty"`, "column, 2"}},
		{config.Config{Attributes: []string{"price:UInt16", "qty:UInt16"}, Columns: []string{"3"}}, []string{`"qty"`, `"price"`, "column, 3"}},
		{config.Config{Attributes: []string{"price:UInt16", "count:UInt16"}}, []string{`"count"`, `"id", "qty", "price"`}},
	} {
		c.cfg.Layouts, c.cfg.Source, c.cfg.InProcess = []string{"packed_row"}, header, true
		_, err := experiments.Run(context.Background(), c.cfg, experiments.RunOptions{})
		var ie *fault.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%+v: %v; want it refused as bad input", c.cfg, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v; want it to say %s", c.cfg, err, w)
			}
		}
	}
	if _, err := config.AttributeNames([]string{"a:UInt16", "A:UInt16"}); err != nil {
		t.Errorf("a:UInt16,A:UInt16: %v; ClickHouse's names are case-sensitive", err)
	}
}
