package source

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/packlab/packlab/core"
)

// ---- Spec ----

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in     string
		kind   string
		param  float64
		path   string
		render string
	}{
		{"sequential", Sequential, 0, "", "sequential"},
		{"Random", Random, 0, "", "random"},
		{"range:1000000", Range, 1e6, "", "range:1000000"},
		{"range:1e6", Range, 1e6, "", "range:1000000"},
		{"range:1M", Range, 1e6, "", "range:1000000"},
		{"range:2.5k", Range, 2500, "", "range:2500"},
		{"range:1", Range, 1, "", "range:1"},
		{"range:9007199254740992", Range, 1 << 53, "", "range:9007199254740992"},
		{"zipf:1.1", Zipf, 1.1, "", "zipf:1.1"},
		{"zipf:1", Zipf, 1, "", "zipf:1"},
		{"zipf:10", Zipf, 10, "", "zipf:10"},
		{"data.tsv", File, 0, "data.tsv", "data.tsv"},
		{"dir/keys", File, 0, "dir/keys", "dir/keys"},
		{"keys.csv.gz", File, 0, "keys.csv.gz", "keys.csv.gz"},
		{"file:random", File, 0, "random", "file:random"},
		{"file:zipf:2", File, 0, "zipf:2", "file:zipf:2"},
	} {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got.Kind != c.kind || got.Param != c.param || got.Path != c.path {
			t.Errorf("Parse(%q) = kind %q param %v path %q; want %q %v %q", c.in, got.Kind, got.Param, got.Path, c.kind, c.param, c.path)
		}
		if got.String() != c.render {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, got.String(), c.render)
		}
		// String round-trips through Parse.
		again, err := Parse(got.String())
		if err != nil || again.Kind != got.Kind || again.Param != got.Param || again.Path != got.Path {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", got.String(), again, err, got)
		}
		if got.Values != ValuesHash {
			t.Errorf("Parse(%q).Values = %q, want the default %q", c.in, got.Values, ValuesHash)
		}
	}
	f, _ := Parse("x.tsv")
	if f.Header != "auto" || f.KeyColumn != "1" || f.ValueColumn != "2" || f.Format != "" {
		t.Errorf("file defaults = header %q key %q value %q format %q; want auto, 1, 2, empty", f.Header, f.KeyColumn, f.ValueColumn, f.Format)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"zipff:1", `source "zipff:1": unknown kind (allowed: sequential, random, range:M, zipf:S, or a file)`},
		{"zipff:1.5", `source "zipff:1.5": unknown kind (allowed: sequential, random, range:M, zipf:S, or a file)`},
		{"sequentail", `source "sequentail": unknown kind (allowed: sequential, random, range:M, zipf:S, or a file)`},
		{"", `source "": empty (allowed: sequential, random, range:M, zipf:S, or a file)`},
		{"range", `source "range": range needs M, as range:M (e.g. range:1000000, range:1e6, range:1M)`},
		{"range:0", `source "range:0": M "0" is not allowed (allowed: an integer 1 to 9007199254740992, e.g. 1000000, 1e6 or 1M)`},
		{"range:-5", `source "range:-5": M "-5" is not allowed`},
		{"range:2.5", `source "range:2.5": M "2.5" is not allowed`},
		{"range:1e300", `source "range:1e300": M "1e300" is not allowed`},
		{"range:9007199254740993", `M "9007199254740993" is not allowed`},
		{"range:abc", `M "abc" is not allowed`},
		{"range:1X", `M "1X" is not allowed`},
		{"zipf", `source "zipf": zipf needs an exponent, as zipf:S (e.g. zipf:1.1)`},
		{"zipf:0", `source "zipf:0": S 0 is out of range (allowed: 0 < S <= 10, e.g. zipf:1.1)`},
		{"zipf:-1", `S -1 is out of range`},
		{"zipf:11", `S 11 is out of range`},
		{"zipf:NaN", `S NaN is out of range`},
		{"zipf:x", `source "zipf:x": S "x" is not a number (allowed: 0 < S <= 10, e.g. zipf:1.1)`},
		{"random:5", `source "random:5": random takes no parameter`},
		{"file:", `source "file:": file: needs a path`},
	} {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestSpecValidate(t *testing.T) {
	u64, u16 := core.MustType("UInt64"), core.MustType("UInt16")
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: Random}, `source "random": rows 0 is out of range (allowed: 1 to 4611686018427387904)`},
		{Spec{Kind: Random, Rows: -1}, `rows -1 is out of range`},
		{Spec{Kind: Random, Rows: 10, Values: "hashh"}, `source "random": values "hashh" is not allowed (allowed: hash, random)`},
		{Spec{Kind: "rnd", Rows: 10}, `source kind "rnd": unknown kind (allowed: sequential, random, range, zipf, file)`},
		{Spec{Kind: Range, Rows: 10}, `source "range:0": M 0 is not allowed`},
		{Spec{Kind: Range, Param: 2.5, Rows: 10}, `M 2.5 is not allowed`},
		{Spec{Kind: Zipf, Param: 0, Rows: 10}, `source "zipf:0": S 0 is out of range`},
		{Spec{Kind: File}, `source file: no path given`},
		{Spec{Kind: File, Path: "a.tsv", Header: "maybe"}, `source "a.tsv": header "maybe" is not allowed (allowed: auto, yes, no)`},
		{Spec{Kind: File, Path: "a.tsv", Format: "json"}, `source "a.tsv": format "json" is not allowed (allowed: tsv, csv, TSVWithNames, CSVWithNames, or empty to detect)`},
		{Spec{Kind: File, Path: "a.tsv", KeyColumn: "0"}, `source "a.tsv": key column "0" is not allowed (allowed: a position 1 or more, or a header name)`},
		{Spec{Kind: File, Path: "a.tsv", ValueColumn: "-2"}, `value column "-2" is not allowed`},
		{Spec{Kind: File, Path: "a.tsv", Header: "no", KeyColumn: "id"}, `source "a.tsv": key column "id" is a name, but header is "no"`},
		{Spec{Kind: File, Path: "a.tsv", Header: "no", Format: "CSVWithNames"}, `format "CSVWithNames" has a header row but header is "no"`},
	} {
		err := c.spec.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want it to contain %q", c.spec, err, c.want)
		}
		if _, oerr := Open[uint64, uint16](c.spec, u64, u16); oerr == nil || oerr.Error() != err.Error() {
			t.Errorf("Open(%+v) = %v, want the Validate error %v", c.spec, oerr, err)
		}
	}
	ok := Spec{Kind: Zipf, Param: 0.5, Rows: 1, Values: ValuesRandom}
	if err := ok.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v, want nil", ok, err)
	}
}

func TestOpenTypeErrors(t *testing.T) {
	spec := Spec{Kind: Random, Rows: 10}
	_, err := Open[uint32, uint16](spec, core.MustType("UInt64"), core.MustType("UInt16"))
	if want := `source "random": key type UInt64 is 8 bytes but K (uint32) holds 4`; err == nil || err.Error() != want {
		t.Errorf("K mismatch: %v, want %q", err, want)
	}
	_, err = Open[uint64, uint64](spec, core.MustType("UInt64"), core.MustType("UUID"))
	if want := `source "random": value type UUID is 16 bytes but V (uint64) holds 8`; err == nil || err.Error() != want {
		t.Errorf("V mismatch: %v, want %q", err, want)
	}
	_, err = Open[uint64, uint16](spec, core.Type{Name: "UInt65", Size: 8}, core.MustType("UInt16"))
	if err == nil || !strings.Contains(err.Error(), `unknown key type "UInt65"`) {
		t.Errorf("unknown key type: %v", err)
	}
	for _, c := range []struct {
		key  string
		m    float64
		want string
	}{
		{"UInt8", 257, `source "range:257": M 257 is too large for key type UInt8 (allowed: 1 to 256, the count of values UInt8 holds from 0 up)`},
		{"Int8", 129, `allowed: 1 to 128`},
		{"Int16", 32769, `allowed: 1 to 32768`},
		{"Date", 65537, `allowed: 1 to 65536`},
		{"Float32", 1<<24 + 1, `allowed: 1 to 16777216`},
	} {
		kt := core.MustType(c.key)
		spec := Spec{Kind: Range, Param: c.m, Rows: 10}
		// open opens spec with the key type's size of K.
		open := func() error {
			var err error
			switch kt.Size {
			case 1:
				_, err = Open[uint8, uint16](spec, kt, core.MustType("UInt16"))
			case 2:
				_, err = Open[uint16, uint16](spec, kt, core.MustType("UInt16"))
			case 4:
				_, err = Open[uint32, uint16](spec, kt, core.MustType("UInt16"))
			default:
				t.Fatalf("%s: no K of %d bytes in this test", c.key, kt.Size)
			}
			return err
		}
		if err := open(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("range:%v on %s: %v, want %q", c.m, c.key, err, c.want)
		}
		spec.Param-- // one less fits
		if err := open(); err != nil {
			t.Errorf("range:%v on %s: %v, want it to fit", spec.Param, c.key, err)
		}
	}
}

// ---- synthetic sources ----

type row[K, V core.Bits] struct {
	k K
	v V
}

// drain reads every row with the given block size.
func drain[K, V core.Bits](t testing.TB, src core.Source[K, V], block int) []row[K, V] {
	t.Helper()
	var out []row[K, V]
	var b core.Block[K, V]
	for {
		err := src.Next(&b, block)
		if err == io.EOF {
			if b.Len() != 0 {
				t.Fatalf("Next returned io.EOF with %d rows in the block", b.Len())
			}
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() == 0 || b.Len() > block || len(b.Values) != b.Len() {
			t.Fatalf("Next filled %d keys and %d values, want 1 to %d of each", b.Len(), len(b.Values), block)
		}
		for i := range b.Keys {
			out = append(out, row[K, V]{b.Keys[i], b.Values[i]})
		}
	}
}

func openSynth[K, V core.Bits](t testing.TB, spec string, rows int64, seed uint64, values string, key, value core.Type) core.IndexedSource[K, V] {
	t.Helper()
	s, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	s.Rows, s.Seed, s.Values = rows, seed, values
	src, err := Open[K, V](s, key, value)
	if err != nil {
		t.Fatal(err)
	}
	is, ok := src.(core.IndexedSource[K, V])
	if !ok {
		t.Fatalf("%s: source %T is not an core.IndexedSource", spec, src)
	}
	if src.Rows() != rows || src.Skipped() != 0 {
		t.Fatalf("%s: Rows() = %d, Skipped() = %d; want %d, 0", spec, src.Rows(), src.Skipped(), rows)
	}
	return is
}

var synthKinds = []string{"sequential", "random", "range:100", "zipf:1.1", "zipf:0.6", "zipf:1"}

// checkRowsMatch proves Row(i) is the i-th row Next yields, for any block
// size, and in a random order of i.
func checkRowsMatch[K, V core.Bits](t *testing.T, key, value core.Type) {
	const rows = 3000
	for _, kind := range synthKinds {
		for _, values := range []string{ValuesHash, ValuesRandom} {
			src := openSynth[K, V](t, kind, rows, 42, values, key, value)
			got := drain[K, V](t, src, 777)
			if len(got) != rows {
				t.Fatalf("%s %s/%s: %d rows, want %d", kind, key, value, len(got), rows)
			}
			for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(rows) {
				k, v := src.Row(int64(i))
				if k != got[i].k || v != got[i].v {
					t.Fatalf("%s %s/%s values=%s: Row(%d) = (%v, %v), Next gave (%v, %v)", kind, key, value, values, i, k, v, got[i].k, got[i].v)
				}
			}
			// Generation is order-independent: a second source read in
			// blocks of 1 matches.
			again := drain[K, V](t, openSynth[K, V](t, kind, rows, 42, values, key, value), 1)
			for i := range got {
				if again[i] != got[i] {
					t.Fatalf("%s %s/%s: row %d differs between block sizes 777 and 1", kind, key, value, i)
				}
			}
		}
	}
}

func TestSyntheticRowMatchesNext(t *testing.T) {
	checkRowsMatch[uint64, uint16](t, core.MustType("UInt64"), core.MustType("UInt16"))
	checkRowsMatch[uint16, uint8](t, core.MustType("UInt16"), core.MustType("Int8"))
	checkRowsMatch[uint32, uint64](t, core.MustType("Float32"), core.MustType("Float64"))
	checkRowsMatch[uint64, uint32](t, core.MustType("Float64"), core.MustType("DateTime"))
	checkRowsMatch[core.U128, core.U128](t, core.MustType("UUID"), core.MustType("UInt128"))
	checkRowsMatch[uint8, core.U128](t, core.MustType("UInt8"), core.MustType("Int128"))
	checkRowsMatch[core.U128, uint16](t, core.MustType("Int128"), core.MustType("Date"))
}

func TestSyntheticDeterminism(t *testing.T) {
	u64, u16 := core.MustType("UInt64"), core.MustType("UInt16")
	for _, kind := range synthKinds {
		for _, values := range []string{ValuesHash, ValuesRandom} {
			a := drain[uint64, uint16](t, openSynth[uint64, uint16](t, kind, 2000, 7, values, u64, u16), 500)
			b := drain[uint64, uint16](t, openSynth[uint64, uint16](t, kind, 2000, 7, values, u64, u16), 300)
			c := drain[uint64, uint16](t, openSynth[uint64, uint16](t, kind, 2000, 8, values, u64, u16), 500)
			sameKeys, sameValues := 0, 0
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%s values=%s seed 7: row %d is %v in one run and %v in another", kind, values, i, a[i], b[i])
				}
				if a[i].k == c[i].k {
					sameKeys++
				}
				if a[i].v == c[i].v {
					sameValues++
				}
			}
			// Seeds 7 and 8 must differ: keys, except for sequential;
			// values when they are random (or follow different keys).
			if kind != "sequential" && sameKeys > len(a)/2 {
				t.Errorf("%s values=%s: seeds 7 and 8 agree on %d of %d keys", kind, values, sameKeys, len(a))
			}
			if (values == ValuesRandom || kind == "random") && sameValues > len(a)/20 {
				t.Errorf("%s values=%s: seeds 7 and 8 agree on %d of %d values", kind, values, sameValues, len(a))
			}
			if kind == "sequential" && values == ValuesHash && sameValues != len(a) {
				t.Errorf("sequential values=hash: seeds changed %d values; want none (the value is a function of the key)", len(a)-sameValues)
			}
		}
	}
}

func TestSequential(t *testing.T) {
	got := drain[uint64, uint16](t, openSynth[uint64, uint16](t, "sequential", 1000, 99, ValuesHash, core.MustType("UInt64"), core.MustType("UInt16")), 64)
	for i, r := range got {
		if r.k != uint64(i) {
			t.Fatalf("sequential row %d: key %d, want %d", i, r.k, i)
		}
	}
	// Truncation to UInt8, as numbers() cast to UInt8: 255 is followed by 0.
	u8 := drain[uint8, uint16](t, openSynth[uint8, uint16](t, "sequential", 600, 0, ValuesHash, core.MustType("UInt8"), core.MustType("UInt16")), 100)
	for i, r := range u8 {
		if r.k != uint8(i) {
			t.Fatalf("UInt8 sequential row %d: key %d, want %d", i, r.k, uint8(i))
		}
		if r.v != u8[i%256].v {
			t.Fatalf("UInt8 sequential row %d: key %d has value %d, but it had %d at row %d", i, r.k, r.v, u8[i%256].v, i%256)
		}
	}
	// Int8 wraps to negative numbers.
	i8 := drain[uint8, uint8](t, openSynth[uint8, uint8](t, "sequential", 200, 0, ValuesHash, core.MustType("Int8"), core.MustType("UInt8")), 50)
	if lo, _ := core.ToUint64(i8[128].k); FormatValue(core.MustType("Int8"), lo, 0) != "-128" {
		t.Errorf("Int8 sequential row 128 = %s, want -128", FormatValue(core.MustType("Int8"), lo, 0))
	}
	// Floats count in value, not in bits.
	f64 := drain[uint64, uint16](t, openSynth[uint64, uint16](t, "sequential", 10, 0, ValuesHash, core.MustType("Float64"), core.MustType("UInt16")), 3)
	for i, r := range f64 {
		if math.Float64frombits(r.k) != float64(i) {
			t.Errorf("Float64 sequential row %d = %v, want %d", i, math.Float64frombits(r.k), i)
		}
	}
	f32 := drain[uint32, uint16](t, openSynth[uint32, uint16](t, "range:100", 500, 3, ValuesHash, core.MustType("Float32"), core.MustType("UInt16")), 64)
	for i, r := range f32 {
		if f := math.Float32frombits(r.k); f != float32(int(f)) || f < 0 || f >= 100 {
			t.Fatalf("Float32 range:100 row %d = %v, want an integer in [0, 100)", i, f)
		}
	}
	// 16-byte sequential keys: the count in the low word.
	u128 := drain[core.U128, uint16](t, openSynth[core.U128, uint16](t, "sequential", 5, 0, ValuesHash, core.MustType("UInt128"), core.MustType("UInt16")), 2)
	if u128[4].k != (core.U128{4, 0}) {
		t.Errorf("UInt128 sequential row 4 = %v, want [4 0]", u128[4].k)
	}
}

func TestRangeStaysInRangeWithDuplicates(t *testing.T) {
	const m, rows = 500, 20000
	got := drain[uint64, uint16](t, openSynth[uint64, uint16](t, "range:500", rows, 5, ValuesHash, core.MustType("UInt64"), core.MustType("UInt16")), 4096)
	count := map[uint64]int{}
	valueOf := map[uint64]uint16{}
	for i, r := range got {
		if r.k >= m {
			t.Fatalf("range:500 row %d: key %d is outside [0, 500)", i, r.k)
		}
		if v, ok := valueOf[r.k]; ok && v != r.v {
			t.Fatalf("range:500 values=hash: key %d has values %d and %d", r.k, v, r.v)
		}
		valueOf[r.k] = r.v
		count[r.k]++
	}
	// 20000 draws over 500 keys: every key appears, about 40 times each.
	if len(count) != m {
		t.Errorf("range:500 over %d rows hit %d distinct keys, want all %d", rows, len(count), m)
	}
	for k, c := range count {
		if c < 10 || c > 80 {
			t.Errorf("range:500: key %d drawn %d times, expected about 40", k, c)
		}
	}
	// range:1 is all zeros.
	one := drain[uint32, uint16](t, openSynth[uint32, uint16](t, "range:1", 100, 5, ValuesHash, core.MustType("UInt32"), core.MustType("UInt16")), 30)
	for _, r := range one {
		if r.k != 0 {
			t.Fatalf("range:1 produced key %d", r.k)
		}
	}
}

func TestRandomIsUniform(t *testing.T) {
	// UInt64: a bijection of the row number, so no key repeats.
	got := drain[uint64, uint16](t, openSynth[uint64, uint16](t, "random", 100000, 11, ValuesHash, core.MustType("UInt64"), core.MustType("UInt16")), 65536)
	seen := make(map[uint64]bool, len(got))
	var ones [64]int
	for _, r := range got {
		if seen[r.k] {
			t.Fatalf("random UInt64 key %#x repeated", r.k)
		}
		seen[r.k] = true
		for b := 0; b < 64; b++ {
			ones[b] += int(r.k >> b & 1)
		}
	}
	for b, n := range ones { // 100000 fair bits: sd 158
		if n < 49000 || n > 51000 {
			t.Errorf("random UInt64: bit %d is set in %d of 100000 keys", b, n)
		}
	}
	// UInt8: 256 buckets, 51200 rows, about 200 each (sd 14).
	u8 := drain[uint8, uint8](t, openSynth[uint8, uint8](t, "random", 51200, 3, ValuesRandom, core.MustType("UInt8"), core.MustType("UInt8")), 1000)
	var hist [256]int
	for _, r := range u8 {
		hist[r.k]++
	}
	for k, n := range hist {
		if n < 130 || n > 270 {
			t.Errorf("random UInt8: key %d drawn %d times, expected about 200", k, n)
		}
	}
	// 16-byte keys: both words random.
	w := drain[core.U128, core.U128](t, openSynth[core.U128, core.U128](t, "random", 1000, 3, ValuesHash, core.MustType("UUID"), core.MustType("UUID")), 100)
	hiSet, vhiSet := 0, 0
	for _, r := range w {
		if r.k[1]>>32 != 0 {
			hiSet++
		}
		if r.v[1]>>32 != 0 {
			vhiSet++
		}
	}
	if hiSet < 990 || vhiSet < 990 {
		t.Errorf("random UUID: high words non-trivial in %d keys and %d values of 1000", hiSet, vhiSet)
	}
}

// TestRandomNarrowKeysAreDistinct: "random (distinct)" holds for every key
// width: UInt32 keys at 2e5 rows are 2e5 distinct keys (they were 199,989
// when the low bits of a 64-bit mix were taken), and UInt16 and UInt8 keys
// use every value once before any repeats.
func TestRandomNarrowKeysAreDistinct(t *testing.T) {
	distinct := func(keys []uint64) int {
		seen := make(map[uint64]bool, len(keys))
		for _, k := range keys {
			seen[k] = true
		}
		return len(seen)
	}
	for _, seed := range []uint64{0, 1, 42} {
		var u32, u16, u8, f32 []uint64
		for _, r := range drain[uint32, uint16](t, openSynth[uint32, uint16](t, "random", 200_000, seed, ValuesHash, core.MustType("UInt32"), core.MustType("UInt16")), 4096) {
			u32 = append(u32, uint64(r.k))
		}
		for _, r := range drain[uint32, uint16](t, openSynth[uint32, uint16](t, "random", 200_000, seed, ValuesHash, core.MustType("Float32"), core.MustType("UInt16")), 4096) {
			f32 = append(f32, uint64(r.k))
		}
		for _, r := range drain[uint16, uint8](t, openSynth[uint16, uint8](t, "random", 1<<16, seed, ValuesHash, core.MustType("Date"), core.MustType("UInt8")), 1000) {
			u16 = append(u16, uint64(r.k))
		}
		for _, r := range drain[uint8, uint8](t, openSynth[uint8, uint8](t, "random", 256, seed, ValuesHash, core.MustType("Int8"), core.MustType("UInt8")), 100) {
			u8 = append(u8, uint64(r.k))
		}
		for _, c := range []struct {
			name string
			keys []uint64
		}{{"UInt32", u32}, {"Float32", f32}, {"Date", u16}, {"Int8", u8}} {
			if n := distinct(c.keys); n != len(c.keys) {
				t.Errorf("random %s keys, seed %d: %d distinct in %d rows, want all distinct", c.name, seed, n, len(c.keys))
			}
		}
	}
}

// zipfHarmonic is H(n, s) = sum of k^-s for k = 1..n: rank r has
// probability r^-s / H(n, s).
func zipfHarmonic(n int, s float64) float64 {
	h := 0.0
	for k := n; k >= 1; k-- {
		h += math.Pow(float64(k), -s)
	}
	return h
}

func TestZipfIsSkewed(t *testing.T) {
	rows := 200000
	if testing.Short() {
		rows = 50000
	}
	for _, s := range []float64{0.6, 1, 1.1, 2} {
		spec := fmt.Sprintf("zipf:%g", s)
		got := drain[uint64, uint16](t, openSynth[uint64, uint16](t, spec, int64(rows), 21, ValuesHash, core.MustType("UInt64"), core.MustType("UInt16")), 65536)
		count := map[uint64]int{}
		for i, r := range got {
			if r.k >= uint64(rows) {
				t.Fatalf("%s row %d: key %d is outside [0, %d)", spec, i, r.k, rows)
			}
			count[r.k]++
		}
		// The shares of single top ranks and of bands of ranks (across the
		// sampler's switch from its table to rejection inversion at rank
		// 1024) match the Zipf law within 5 standard deviations of a
		// binomial count.
		h := zipfHarmonic(rows, s)
		for _, band := range [][2]int{{1, 1}, {2, 2}, {3, 3}, {4, 10}, {11, 1000}, {1001, 1024}, {1025, 1100}, {1101, 5000}, {5001, rows}} {
			mass, drawn := 0.0, 0
			for r := band[0]; r <= band[1]; r++ {
				mass += math.Pow(float64(r), -s)
				drawn += count[uint64(r-1)]
			}
			p := mass / h
			want := p * float64(rows)
			sd := math.Sqrt(float64(rows) * p * (1 - p))
			if math.Abs(float64(drawn)-want) > 5*sd+1 {
				t.Errorf("%s: ranks %d to %d drawn %d times, want %.0f +- %.0f", spec, band[0], band[1], drawn, want, 5*sd)
			}
		}
		if s >= 1 && count[0] < count[1] {
			t.Errorf("%s: key 0 drawn %d times, less than key 1 (%d)", spec, count[0], count[1])
		}
	}
	// zipf:1.1 over 1e5 rows: the top key alone takes about 13 %.
	if p := 1 / zipfHarmonic(100000, 1.1); p < 0.12 || p > 0.15 {
		t.Errorf("zipf:1.1 top share %v, want about 0.13", p)
	}
}

func TestSyntheticNextContract(t *testing.T) {
	src := openSynth[uint64, uint16](t, "random", 10, 1, ValuesHash, core.MustType("UInt64"), core.MustType("UInt16"))
	var b core.Block[uint64, uint16]
	if err := src.Next(&b, 0); err == nil || !strings.Contains(err.Error(), "max must be at least 1") {
		t.Errorf("Next(max = 0) = %v, want an error", err)
	}
	if err := src.Next(&b, 100); err != nil || b.Len() != 10 {
		t.Fatalf("Next = %v with %d rows, want 10", err, b.Len())
	}
	for range 2 {
		if err := src.Next(&b, 100); err != io.EOF || b.Len() != 0 {
			t.Fatalf("Next at the end = %v with %d rows, want io.EOF and none", err, b.Len())
		}
	}
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := src.Next(&b, 100); !errors.Is(err, errSourceClosed) {
		t.Errorf("Next after Close = %v, want %v", err, errSourceClosed)
	}
}

func TestSyntheticNextDoesNotAllocate(t *testing.T) {
	for _, kind := range []string{"sequential", "random", "range:1000", "zipf:1.1"} {
		src := openSynth[uint64, uint16](t, kind, 1<<40, 1, ValuesHash, core.MustType("UInt64"), core.MustType("UInt16"))
		b := core.Block[uint64, uint16]{Keys: make([]uint64, 0, 1024), Values: make([]uint16, 0, 1024)}
		if n := testing.AllocsPerRun(20, func() { src.Next(&b, 1024) }); n != 0 {
			t.Errorf("%s: Next allocates %v times per block, want 0", kind, n)
		}
	}
}

// ---- ParseValue and FormatValue ----

func TestParseValue(t *testing.T) {
	for _, c := range []struct {
		typ, in string
		lo, hi  uint64
		out     string // FormatValue of the result; "" = same as in
	}{
		{"UInt8", "0", 0, 0, ""},
		{"UInt8", "255", 255, 0, ""},
		{"UInt8", "+7", 7, 0, "7"},
		{"UInt8", "007", 7, 0, "7"},
		{"UInt8", "-0", 0, 0, "0"},
		{"UInt16", "65535", 65535, 0, ""},
		{"UInt32", "4294967295", math.MaxUint32, 0, ""},
		{"UInt64", "18446744073709551615", math.MaxUint64, 0, ""},
		{"UInt128", "340282366920938463463374607431768211455", math.MaxUint64, math.MaxUint64, ""},
		{"UInt128", "18446744073709551616", 0, 1, ""},
		{"UInt128", "10000000000000000000000000000000000000", 0x00f436a000000000, 0x0785ee10d5da46d9, ""},
		{"Int8", "-128", 0x80, 0, ""},
		{"Int8", "127", 127, 0, ""},
		{"Int8", "-1", 0xff, 0, ""},
		{"Int16", "-32768", 0x8000, 0, ""},
		{"Int32", "-2147483648", 0x80000000, 0, ""},
		{"Int64", "-9223372036854775808", 1 << 63, 0, ""},
		{"Int64", "9223372036854775807", math.MaxInt64, 0, ""},
		{"Int128", "-170141183460469231731687303715884105728", 0, 1 << 63, ""},
		{"Int128", "170141183460469231731687303715884105727", math.MaxUint64, math.MaxInt64, ""},
		{"Int128", "-1", math.MaxUint64, math.MaxUint64, ""},
		{"Float64", "1.5", math.Float64bits(1.5), 0, ""},
		{"Float64", "-0", 1 << 63, 0, ""},
		{"Float64", "nan", float64QuietNaN, 0, ""},
		{"Float64", "-nan", float64QuietNaN | 1<<63, 0, ""},
		{"Float64", "NaN", float64QuietNaN, 0, "nan"},
		{"Float64", "inf", math.Float64bits(math.Inf(1)), 0, ""},
		{"Float64", "-inf", math.Float64bits(math.Inf(-1)), 0, ""},
		{"Float64", "1e308", math.Float64bits(1e308), 0, ""},
		{"Float64", "1e+308", math.Float64bits(1e308), 0, "1e308"},
		{"Float64", "1.5e-7", math.Float64bits(1.5e-7), 0, "1.5e-7"},
		{"Float64", "0.00001", math.Float64bits(1e-5), 0, ""},
		{"Float64", "1000000", math.Float64bits(1e6), 0, ""},
		{"Float64", "1e-400", 0, 0, "0"},
		{"Float64", "0.1", math.Float64bits(0.1), 0, ""},
		{"Float32", "0.1", uint64(math.Float32bits(0.1)), 0, ""},
		{"Float32", "-0", 1 << 31, 0, ""},
		{"Float32", "nan", float32QuietNaN, 0, ""},
		{"Float32", "3.4028235e38", uint64(math.Float32bits(math.MaxFloat32)), 0, "3.4028235e38"},
		{"UUID", "61f0c404-5cb3-11e7-907b-a6006ad3dba0", 0x61f0c4045cb311e7, 0x907ba6006ad3dba0, ""},
		{"UUID", "61F0C404-5CB3-11E7-907B-A6006AD3DBA0", 0x61f0c4045cb311e7, 0x907ba6006ad3dba0, "61f0c404-5cb3-11e7-907b-a6006ad3dba0"},
		{"UUID", "61f0c4045cb311e7907ba6006ad3dba0", 0x61f0c4045cb311e7, 0x907ba6006ad3dba0, "61f0c404-5cb3-11e7-907b-a6006ad3dba0"},
		{"UUID", "00000000-0000-0000-0000-000000000000", 0, 0, ""},
		{"Date", "1970-01-01", 0, 0, ""},
		{"Date", "2024-01-31", 19753, 0, ""},
		{"Date", "2024-02-29", 19782, 0, ""},
		{"Date", "2000-02-29", 11016, 0, ""},
		{"Date", "2149-06-06", 65535, 0, ""},
		{"Date", "19753", 19753, 0, "2024-01-31"},
		{"DateTime", "1970-01-01 00:00:00", 0, 0, ""},
		{"DateTime", "2024-01-31 12:34:56", 1706704496, 0, ""},
		{"DateTime", "2024-01-31T12:34:56", 1706704496, 0, "2024-01-31 12:34:56"},
		{"DateTime", "2106-02-07 06:28:15", math.MaxUint32, 0, ""},
		{"DateTime", "1706704496", 1706704496, 0, "2024-01-31 12:34:56"},
	} {
		typ := core.MustType(c.typ)
		lo, hi, err := ParseValue(typ, c.in)
		if err != nil || lo != c.lo || hi != c.hi {
			t.Errorf("ParseValue(%s, %q) = %#x, %#x, %v; want %#x, %#x", c.typ, c.in, lo, hi, err, c.lo, c.hi)
			continue
		}
		want := c.out
		if want == "" {
			want = c.in
		}
		if got := FormatValue(typ, lo, hi); got != want {
			t.Errorf("FormatValue(%s, %#x, %#x) = %q, want %q", c.typ, lo, hi, got, want)
		}
	}
}

func TestParseValueErrors(t *testing.T) {
	for _, c := range []struct{ typ, in, want string }{
		{"UInt16", "70000", `"70000" is out of range for UInt16 (0 to 65535)`},
		{"UInt8", "256", `"256" is out of range for UInt8 (0 to 255)`},
		{"UInt8", "-1", `"-1" is out of range for UInt8 (0 to 255)`},
		{"UInt64", "18446744073709551616", `"18446744073709551616" is out of range for UInt64 (0 to 18446744073709551615)`},
		{"UInt128", "340282366920938463463374607431768211456", `is out of range for UInt128 (0 to 340282366920938463463374607431768211455)`},
		{"Int8", "-129", `"-129" is out of range for Int8 (-128 to 127)`},
		{"Int8", "128", `"128" is out of range for Int8 (-128 to 127)`},
		{"Int32", "2147483648", `(-2147483648 to 2147483647)`},
		{"Int64", "-9223372036854775809", `(-9223372036854775808 to 9223372036854775807)`},
		{"Int128", "170141183460469231731687303715884105728", `"170141183460469231731687303715884105728" is out of range for Int128`},
		{"Int128", "-170141183460469231731687303715884105729", `is out of range for Int128`},
		{"UInt32", "", `"" is not a valid UInt32 (allowed: 0 to 4294967295)`},
		{"UInt32", "12a", `"12a" is not a valid UInt32`},
		{"UInt32", " 12", `" 12" is not a valid UInt32`},
		{"UInt32", "1.0", `"1.0" is not a valid UInt32`},
		{"Int16", "--1", `"--1" is not a valid Int16`},
		{"Int16", "+", `"+" is not a valid Int16`},
		{"UInt64", `\N`, `\N is NULL, and UInt64 is not Nullable`},
		{"Float32", "1e39", `"1e39" is out of range for Float32`},
		{"Float64", "1e309", `"1e309" is out of range for Float64`},
		{"Float64", "abc", `"abc" is not a valid Float64 (allowed: a decimal number`},
		{"Float64", "1_000", `"1_000" is not a valid Float64`},
		{"Float64", "", `"" is not a valid Float64`},
		{"UUID", "61f0c404-5cb3-11e7-907b-a6006ad3dba", `"61f0c404-5cb3-11e7-907b-a6006ad3dba" is not a valid UUID (allowed: 8-4-4-4-12 hex digits`},
		{"UUID", "61f0c404x5cb3-11e7-907b-a6006ad3dba0", `is not a valid UUID`},
		{"UUID", "g1f0c404-5cb3-11e7-907b-a6006ad3dba0", `is not a valid UUID`},
		{"Date", "1969-12-31", `"1969-12-31" is out of range for Date (YYYY-MM-DD from 1970-01-01 to 2149-06-06, or a day number 0 to 65535)`},
		{"Date", "2149-06-07", `"2149-06-07" is out of range for Date`},
		{"Date", "2023-02-29", `"2023-02-29" is not a valid Date`},
		{"Date", "2024-13-01", `"2024-13-01" is not a valid Date`},
		{"Date", "2024-1-31", `"2024-1-31" is not a valid Date`},
		{"Date", "65536", `"65536" is out of range for Date`},
		{"DateTime", "2106-02-07 06:28:16", `"2106-02-07 06:28:16" is out of range for DateTime (YYYY-MM-DD hh:mm:ss (UTC) from 1970-01-01 00:00:00 to 2106-02-07 06:28:15, or seconds 0 to 4294967295)`},
		{"DateTime", "2024-01-31 24:00:00", `is not a valid DateTime`},
		{"DateTime", "2024-01-31 12:60:00", `is not a valid DateTime`},
		{"DateTime", "2024-01-31_12:00:00", `is not a valid DateTime`},
		{"DateTime", "4294967296", `"4294967296" is out of range for DateTime`},
		{"DateTime", "-1", `"-1" is out of range for DateTime`},
	} {
		_, _, err := ParseValue(core.MustType(c.typ), c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseValue(%s, %q) error = %v, want it to contain %q", c.typ, c.in, err, c.want)
		}
	}
	if _, _, err := ParseValue(core.Type{Name: "UInt24", Size: 3}, "1"); err == nil {
		t.Error("ParseValue with a hand-made Type of the wrong size succeeded")
	}
	long := strings.Repeat("9", 1000)
	if _, _, err := ParseValue(core.MustType("UInt8"), long); err == nil || len(err.Error()) > 200 {
		t.Errorf("ParseValue of 1000 digits: error %q should be short", err)
	}
}

// TestFormatRoundTrip formats random bits of every type and parses them
// back: the same bits, except that NaN payloads become the canonical NaN.
func TestFormatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, typ := range core.Types() {
		n := 3000
		if testing.Short() {
			n = 500
		}
		for i := 0; i < n; i++ {
			lo, hi := rng.Uint64(), rng.Uint64()
			switch i % 4 { // small numbers and edges as well as random bits
			case 1:
				lo, hi = lo%1000, 0
			case 2:
				lo, hi = -lo%1000, math.MaxUint64
			}
			if typ.Size < 16 {
				hi = 0
				lo &= sizeMask(typ.Size)
			}
			text := FormatValue(typ, lo, hi)
			glo, ghi, err := ParseValue(typ, text)
			if err != nil {
				t.Fatalf("%s: FormatValue(%#x, %#x) = %q does not parse: %v", typ.Name, lo, hi, text, err)
			}
			wlo, whi := lo, hi
			if typ.Kind == core.KindFloat {
				if typ.Size == 8 && math.IsNaN(math.Float64frombits(lo)) {
					wlo = float64QuietNaN | lo&(1<<63)
				}
				if typ.Size == 4 && math.IsNaN(float64(math.Float32frombits(uint32(lo)))) {
					wlo = float32QuietNaN | lo&(1<<31)
				}
			}
			if glo != wlo || ghi != whi {
				t.Fatalf("%s: %#x, %#x -> %q -> %#x, %#x", typ.Name, lo, hi, text, glo, ghi)
			}
		}
	}
}

// ---- benchmarks ----

// BenchmarkSource measures generation alone: b.N rows through Next in
// blocks of 65,536, reported as rows/s. The target for random UInt64 keys
// with hash values is >= 1e8 rows/s on one core.
func BenchmarkSource(b *testing.B) {
	u64, u16 := core.MustType("UInt64"), core.MustType("UInt16")
	for _, kind := range []string{"sequential", "random", "range:1000000", "zipf:1.1"} {
		name, _, _ := strings.Cut(kind, ":")
		b.Run("Kind="+name+"/Key=UInt64/Value=UInt16", func(b *testing.B) {
			benchSource[uint64, uint16](b, kind, u64, u16)
		})
	}
	b.Run("Kind=random/Key=UUID/Value=UInt64", func(b *testing.B) {
		benchSource[core.U128, uint64](b, "random", core.MustType("UUID"), core.MustType("UInt64"))
	})
}

func benchSource[K, V core.Bits](b *testing.B, kind string, key, value core.Type) {
	spec, err := Parse(kind)
	if err != nil {
		b.Fatal(err)
	}
	spec.Rows = int64(b.N)
	src, err := Open[K, V](spec, key, value)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	var blk core.Block[K, V]
	var sink K
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for {
		err := src.Next(&blk, 65536)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		sink = blk.Keys[blk.Len()-1]
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "rows/s")
	_ = sink
}
