// Package snippet writes the code a plan's answers carry: the LAYOUT
// clause and CREATE DICTIONARY of the ClickHouse dictionary that builds a
// table, and a Go program that builds it with core's loader.
package snippet

import (
	"fmt"
	"go/format"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
	"github.com/packlab/packlab/experiments/text"
)

// ClickHouseFor is the ClickHouse dictionary that builds l's table for
// <key,value>: its LAYOUT clause, a note when ClickHouse's table differs
// from packlab's, and whether no ClickHouse dictionary builds it at all.
//
// SPARSE_HASHED builds PackedHashMap (packed) for a UInt64 key and a value
// of at most 8 bytes with a plain memory layout (not UUID), and
// sparse_hash_map (sparse) otherwise, since 23.5; before, always
// sparse_hash_map (ClickHouse PR #49380, HashedDictionary.h).
// ClickHouse's numeric dictionary key is always UInt64; a key it cannot
// widen to one (complex: a UUID, a 128-bit integer, a Float64 with
// fractions, a String), named key, is kept whole by the COMPLEX_KEY_ layouts, which serialize
// it into an arena (dict.ComplexKeyDictionaryFor). A row-valued
// dictionary's (several attributes, or a String or Nullable one)
// SPARSE_HASHED is packed's setup, each attribute's table PackedHashMap or
// sparse_hash_map as its type decides (dict.ClickHouseTable).
func ClickHouseFor(v dict.Release, l core.Layout, key string, value core.Type, shards int, mlf float64, complex, rowValued bool) (clause, note string, packlabOnly bool) {
	if complex {
		return complexKeyFor(v, l, key, value, shards, mlf, rowValued)
	}
	if dict.ClickHouseLayoutName(l) == "" {
		return "", "no ClickHouse dictionary layout builds this table", true
	}
	if ok, why := v.Builds(l, value, shards, mlf); !ok {
		return "", why, true
	}
	clause = dict.ClickHouseLayout(l, shards, mlf)
	var notes []string
	if dict.ClickHouseLayoutName(l) == "SPARSE_HASHED" {
		packs := dict.ClickHouseTable(core.LayoutPacked, value) == core.LayoutPacked
		switch {
		case l == core.LayoutPacked && rowValued:
		case l == core.LayoutPacked && !packs:
			return "", fmt.Sprintf("ClickHouse's SPARSE_HASHED keeps a %s value in sparse_hash_map, not PackedHashMap: see the sparse setups", value.Name), true
		case l == core.LayoutPacked:
			notes = append(notes, "SPARSE_HASHED builds PackedHashMap for these types since ClickHouse 23.5 (sparse_hash_map before)")
		case l == core.LayoutSparse && packs && !v.AtLeast(dict.ReleasePackedHashMap):
			notes = append(notes, "ClickHouse "+v.String()+"'s SPARSE_HASHED is this sparse_hash_map (PackedHashMap from 23.5)")
		case l == core.LayoutSparse && packs:
			notes = append(notes, "since ClickHouse 23.5 SPARSE_HASHED builds PackedHashMap (packed) for these types; sparse_hash_map is what it built before")
		}
	}
	if key != "UInt64" {
		notes = append(notes, fmt.Sprintf("ClickHouse's numeric key is UInt64: a %s key is stored in 8 bytes there, so its cells are larger than these", key))
	}
	return clause, strings.Join(notes, "; "), false
}

// complexKeyFor is ClickHouseFor for a key a simple-key dictionary cannot
// hold: the COMPLEX_KEY_ layout of l's shape, with what it keeps.
func complexKeyFor(v dict.Release, l core.Layout, key string, value core.Type, shards int, mlf float64, rowValued bool) (clause, note string, packlabOnly bool) {
	d, ok := dict.ComplexKeyDictionaryFor(l)
	switch {
	case !ok:
		return "", fmt.Sprintf("no COMPLEX_KEY_ layout builds this table, and only those keep a %s key whole", key), true
	case l == core.LayoutPacked && !rowValued: // a row-valued plan weighs no sparse setups: packed's stands for them
		return "", fmt.Sprintf("ClickHouse's PackedHashMap holds a UInt64 key only; a %s key's COMPLEX_KEY_SPARSE_HASHED is sparse_hash_map: see the sparse setups", key), true
	}
	if ok, why := v.Builds(l, value, shards, mlf); !ok {
		return "", why, true
	}
	return d.Clause(shards, mlf), fmt.Sprintf("ClickHouse's simple key is UInt64, so a %s key is kept whole only by a COMPLEX_KEY_ layout: "+
		"each row's key serialized in an arena, a 16-byte reference to it in each cell; dictGet takes the key as tuple(key)", key), false
}

// CreateDictionary is the CREATE DICTIONARY statement of a dictionary
// named dict over from's table and key column (nil: a table named
// source_table, the key named key) with keyType keys (stored as UInt64,
// ClickHouse's numeric key, with a comment saying so, unless complex: a
// COMPLEX_KEY_ layout keeps the column's own type), columns ("value
// UInt16", ...) and the LAYOUT clause.
func CreateDictionary(from *dict.TableSource, keyType string, complex bool, columns []string, clause string) string {
	keyName, source := "key", "SOURCE(CLICKHOUSE(TABLE 'source_table'))"
	if from != nil {
		keyName, source = from.KeyColumn, fmt.Sprintf("SOURCE(CLICKHOUSE(DB %s TABLE %s))", dict.QuoteString(from.Database), dict.QuoteString(from.Table))
	}
	var b strings.Builder
	stored := keyType
	if !complex {
		stored = "UInt64"
		if keyType != "UInt64" {
			fmt.Fprintf(&b, "-- ClickHouse's numeric key is UInt64: the %s keys are stored as UInt64\n", keyType)
		}
	}
	b.WriteString(dict.KeyDictionaryDDL("dict", []string{keyName}, []string{stored}, columns, source, clause))
	return b.String()
}

// goTypeOf is the Go type core stores a ClickHouse type's bits in.
func goTypeOf(t core.Type) string {
	switch t.Size {
	case 1:
		return "uint8"
	case 2:
		return "uint16"
	case 4:
		return "uint32"
	case 8:
		return "uint64"
	}
	return "core.U128"
}

// GoSetup is the table a Go program builds: its setup's name (a comment),
// the ClickHouse types of its key and value, core's layout, and the
// options that differ from the defaults (0: the default).
type GoSetup struct {
	Name, KeyType, ValueType, Layout string
	MaxLoadFactor                    float64
	Reserve                          int64
	Shards                           int
}

// GoProgram is a Go program that builds c's map with core's loader from a
// TSV file of key, value rows and looks a key up: it compiles as it is
// (the planner's TestPlanGoCodeCompiles builds every layout's).
func GoProgram(c GoSetup) string {
	k, _ := core.ParseType(c.KeyType)
	v, _ := core.ParseType(c.ValueType)
	var b strings.Builder
	fmt.Fprintf(&b, "// %s: <%s,%s>, stored by their bits as <%s,%s>\n", c.Name, c.KeyType, c.ValueType, goTypeOf(k), goTypeOf(v))
	b.WriteString("package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"log\"\n\n\t\"github.com/packlab/packlab/core\"\n\t\"github.com/packlab/packlab/core/source\"\n)\n\n")
	b.WriteString("func main() {\n\tctx := context.Background()\n")
	b.WriteString("\tspec, err := source.Parse(\"dict.tsv\") // a TSV or CSV file: key, value\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n")
	fmt.Fprintf(&b, "\tsrc, err := source.Open[%s, %s](spec, core.MustType(%q), core.MustType(%q))\n", goTypeOf(k), goTypeOf(v), c.KeyType, c.ValueType)
	b.WriteString("\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tdefer src.Close()\n")
	b.WriteString("\tm, report, err := core.Load(ctx, src, core.LoadConfig{\n")
	fmt.Fprintf(&b, "\t\tLayout: %q,\n", c.Layout)
	var opts []string
	if c.MaxLoadFactor != 0 {
		opts = append(opts, "MaxLoadFactor: "+text.Float(c.MaxLoadFactor))
	}
	if c.Reserve > 0 {
		opts = append(opts, fmt.Sprintf("Reserve: %d", c.Reserve))
	}
	if len(opts) > 0 {
		fmt.Fprintf(&b, "\t\tOptions: core.Options{%s},\n", strings.Join(opts, ", "))
	}
	if c.Shards > 1 {
		fmt.Fprintf(&b, "\t\tShards: %d,\n", c.Shards)
	}
	b.WriteString("\t})\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\tdefer m.Close() // the tables' memory is returned at once\n")
	b.WriteString("\tfmt.Printf(\"loaded %d keys in %.1f s\\n\", report.Elements, report.Seconds)\n")
	key := "42"
	if k.Size > 8 {
		key = "core.FromUint64[core.U128](42, 0)"
	}
	fmt.Fprintf(&b, "\tv, ok := m.Get(%s) // key 42's value\n\tfmt.Println(v, ok)\n\tfmt.Println(m.Stats())\n}\n", key)
	if src, err := format.Source([]byte(b.String())); err == nil {
		return strings.TrimSuffix(string(src), "\n")
	}
	return b.String()
}
