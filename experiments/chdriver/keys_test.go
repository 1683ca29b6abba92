package chdriver

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/packlab/packlab/experiments/config"
	"github.com/packlab/packlab/experiments/drivertest"
	"github.com/packlab/packlab/experiments/fault"
	"github.com/packlab/packlab/experiments/result"
)

// ClickHouse's own dictionaries under keys as real ones have them: Strings
// and tuples, and small keys that repeat; packlab's model of each against
// ClickHouse's bytes_allocated.

// withClickHouse is layout name's result in got, false when it has no
// ClickHouse figures (an error naming name and what, the case).
func withClickHouse(t *testing.T, got map[string]result.Result, name, what string) (result.Result, bool) {
	t.Helper()
	r, ok := got[name]
	if !ok || r.ClickHouse == nil {
		t.Errorf("%s %s: no result with ClickHouse's figures", name, what)
		return r, false
	}
	return r, true
}

// TestClickHouseStringKeys is the target for keys as real
// dictionaries have them: ClickHouse itself loads 1e5 rows under a String
// key, or a (String, UInt64) tuple, generated from the lab's keys, in each
// COMPLEX_KEY_ layout, with SHARDS and with String attributes (five runs,
// about 4 s each, most of it ClickHouse starting; -short runs one), and
// packlab's model (the key serialized in the shard's arena, a String as
// its 8-byte size and its bytes; a reference and the saved hash
// in each cell) is within 0.5 % of bytes_allocated (the issue asks 2 %),
// of the memory tracker's gain for HASHED_ARRAY. At these sizes the arena
// is a few power-of-two chunks, so a key's bytes counted wrong by a third
// (String(16) without its size) misses by an arena's half. Each
// run proves its rows: ClickHouse holds every key the lab sent once (the
// count and the checksum of the pairs, the lab's key read back from the
// String's first 8 bytes or the tuple's UInt64), and dictGet finds each.
func TestClickHouseStringKeys(t *testing.T) {
	needClickHouse(t)
	cases := []struct {
		layouts  []string
		key      string
		shards   int
		attrs    []string
		keyTypes string // system.dictionaries.key.types
		primary  string // the DDL's PRIMARY KEY
	}{
		{[]string{"ch_complex_key_hashed", "ch_complex_key_sparse_hashed", "ch_complex_key_hashed_array"}, "String(16)", 1, nil, "String", "PRIMARY KEY key\n"},
		{[]string{"ch_complex_key_hashed"}, "Tuple(String, UInt64)", 2, nil, "String,UInt64", "PRIMARY KEY key, key_2\n"},
		{[]string{"ch_complex_key_sparse_hashed"}, "Tuple(String(4..12), UInt32)", 1, []string{"id:UInt16", "name:String"}, "String,UInt32", "PRIMARY KEY key, key_2\n"},
	}
	if testing.Short() {
		cases = cases[1:2]
	}
	const rows = 100_000
	for _, c := range cases {
		value := "UInt16"
		if c.attrs != nil {
			value = ""
		}
		got := drivertest.RunOrFail(t, config.Config{Layouts: c.layouts, Key: c.key, Value: value, Attributes: c.attrs, Rows: rows, Shards: c.shards, Seed: 1})
		for _, name := range c.layouts {
			r, ok := withClickHouse(t, got, name, c.key)
			if !ok {
				continue
			}
			ch := r.ClickHouse
			measured := r.BytesAllocated
			if ch.ComparedWith == "tracked_bytes" {
				measured = ch.TrackedBytes
			}
			t.Logf("%s %s SHARDS %d: %s %d, packlab computes %d (%+.2f %%)", name, c.key, c.shards, ch.ComparedWith, measured, ch.ModelBytes, ch.DifferencePercent)
			if r.ElementCount != rows || r.FoundRate != 1 || r.KeyType != c.key {
				t.Errorf("%s %s: element_count %d, found rate %v, key %q; want %d, 1, %s", name, c.key, r.ElementCount, r.FoundRate, r.KeyType, rows, c.key)
			}
			if ch.KeyTypes != c.keyTypes || !strings.Contains(ch.DDL, c.primary) {
				t.Errorf("%s %s: ClickHouse's key %q, DDL %q; want %s, %q", name, c.key, ch.KeyTypes, ch.DDL, c.keyTypes, c.primary)
			}
			if !within(measured, ch.ModelBytes, 0.005) {
				t.Errorf("%s %s SHARDS %d: ClickHouse's %s %d, packlab computes %d (%+.2f %%), want within 0.5 %%",
					name, c.key, c.shards, ch.ComparedWith, measured, ch.ModelBytes, ch.DifferencePercent)
			}
		}
	}
}

// TestStringKeyBadInput: a String or tuple key where it cannot be is one
// line naming the key (or the attribute), the value and what is allowed,
// before anything runs.
func TestStringKeyBadInput(t *testing.T) {
	needClickHouse(t)
	for _, c := range []struct {
		c           config.Config
		field, want string
	}{
		{config.Config{Layouts: []string{"ch_complex_key_hashed", "ch_hashed"}, Key: "String(16)"}, "key", "layout ch_hashed cannot hold a String or tuple key"},
		{config.Config{Layouts: []string{"ch_complex_key_hashed", "packed"}, Key: "String(16)"}, "key", "layout packed cannot hold"},
		{config.Config{Layouts: []string{"ch_complex_key_hashed"}, Key: "String", Source: "keys.tsv"}, "key", "a file's keys"},
		{config.Config{Layouts: []string{"ch_complex_key_hashed"}, Key: "Tuple(String, UInt64)", Attributes: []string{"UInt16", "key_2:UInt8"}}, "attributes[1]", "a column of the key"},
	} {
		err := c.c.Validate()
		var fe *fault.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !strings.Contains(err.Error(), c.want) || fe.Allowed == "" {
			t.Errorf("%v %s: %v; want a %s error saying %q, and what is allowed", c.c.Layouts, c.c.Key, err, c.field, c.want)
		}
	}
}

// TestClickHouseSmallKeysModel is issue 48's target for keys that repeat:
// 256 Int8 or UInt8 keys, or range keys, in more rows than that, where
// ClickHouse reserves its table block by block (dict.FileReserve: a FILE
// source's 8,192-row blocks beside the keys held) and packlab's model,
// which counted the rows, said -49.97 % (Int8, 1e4 rows) and -98 %
// (range:1000, 1e6 rows). Within 0.1 % of bytes_allocated now. With
// -short (the race stage: ten worker starts, 14 s) the first case alone;
// the unit stage runs every one.
func TestClickHouseSmallKeysModel(t *testing.T) {
	needClickHouse(t)
	cases := []struct {
		key, keys string
		rows      int64
	}{
		{"UInt8", "random", 1_000},   // one block: reserved for the rows
		{"Int8", "random", 10_000},   // 2^14 cells: set(8,192)
		{"UInt8", "random", 100_000}, // 2^15 cells: set(8,192 + 256)
		{"UInt64", "range:1000", 100_000},
		{"UInt64", "range:100000", 200_000}, // 86,381 keys: the last block beside the keys held
	}
	layouts := []string{"ch_hashed", "ch_sparse_hashed"}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		got := drivertest.RunOrFail(t, config.Config{Layouts: layouts, Key: c.key, Keys: c.keys, Rows: c.rows, Seed: 1, NoRead: true})
		for _, name := range layouts {
			r, ok := withClickHouse(t, got, name, c.key+" "+c.keys)
			if !ok {
				continue
			}
			off := float64(r.ClickHouse.ModelBytes-r.BytesAllocated) / float64(r.BytesAllocated)
			t.Logf("%s %s %s %d rows: %d keys in %d cells, bytes_allocated %d, model %d (%+.3f %%)", name, c.key, c.keys, c.rows, r.ElementCount, r.BucketCount, r.BytesAllocated, r.ClickHouse.ModelBytes, 100*off)
			if math.Abs(off) > 0.001 {
				t.Errorf("%s %s keys %s, %d rows: the model's %d bytes are %+.2f %% off ClickHouse's bytes_allocated %d; want within 0.1 %%", name, c.key, c.keys, c.rows, r.ClickHouse.ModelBytes, 100*off, r.BytesAllocated)
			}
		}
	}
}
