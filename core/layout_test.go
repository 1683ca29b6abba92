package core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// oracleRun inserts and looks up a random sequence in one layout and in Go's
// builtin map, and fails on the first difference.
func oracleRun[K, V Bits](t *testing.T, layout Layout, opt Options, keys []K, seed uint64) {
	t.Helper()
	m, err := New[K, V](layout, opt)
	if err != nil {
		t.Fatal(err)
	}
	oracle := map[K]V{}
	rng := rand.New(rand.NewPCG(seed, 7))
	for i, k := range keys {
		v := FromUint64[V](rng.Uint64(), rng.Uint64())
		_, had := oracle[k]
		if !had {
			oracle[k] = v
		}
		if got := m.Insert(k, v); got == had {
			t.Fatalf("%s: insert #%d of key %v returned %v, want %v (key already present: %v)", layout, i, k, got, !had, had)
		}
		// Look up a random earlier key and a probably-absent one.
		probe := keys[rng.IntN(i+1)]
		if got, ok := m.Get(probe); !ok || got != oracle[probe] {
			t.Fatalf("%s: after %d inserts Get(%v) = %v, %v; want %v, true", layout, i+1, probe, got, ok, oracle[probe])
		}
		absent := FromUint64[K](rng.Uint64(), rng.Uint64())
		if _, want := oracle[absent]; m.Has(absent) != want {
			t.Fatalf("%s: Has(%v) = %v, want %v", layout, absent, !want, want)
		}
	}
	if m.Len() != len(oracle) {
		t.Fatalf("%s: Len() = %d, want %d", layout, m.Len(), len(oracle))
	}
	seen := 0
	for k, v := range m.All() {
		if want, ok := oracle[k]; !ok || want != v {
			t.Fatalf("%s: All() yielded (%v, %v), oracle has (%v, %v)", layout, k, v, want, ok)
		}
		seen++
	}
	if seen != len(oracle) {
		t.Fatalf("%s: All() yielded %d pairs, want %d", layout, seen, len(oracle))
	}
	if err := m.CheckInvariants(); err != nil {
		t.Fatalf("%s: %v", layout, err)
	}
	st := m.Stats()
	if st.ElementCount != int64(len(oracle)) {
		t.Fatalf("%s: element_count %d, want %d", layout, st.ElementCount, len(oracle))
	}
	want := int64(len(oracle)) * int64(sizeOf[K]()+sizeOf[V]())
	if c, ok := m.(*Compact[K, V]); ok {
		// compact stores the remainder, not the key: its slots' bits,
		// plus whole pairs in its overflow table.
		slot, inSlab := c.Slot(), int64(c.size)
		want = inSlab*int64(slot.RemainderBits+slot.ValueBits)/8 + (int64(len(oracle))-inSlab)*int64(sizeOf[K]()+sizeOf[V]())
	}
	if c, ok := m.(interface{ iceberg() *Iceberg[K, V] }); ok {
		c := c.iceberg()
		// iceberg stores the remainder, not the key, in either yard (each
		// yard's remainder is its own), and whole pairs in its overflow table.
		f, b := &c.front, &c.back
		bitsHeld := int64(f.n)*int64(f.l+f.e+f.v) + int64(b.n)*int64(b.l+b.e+b.v)
		want = bitsHeld/8 + (int64(len(oracle))-int64(f.n+b.n))*int64(sizeOf[K]()+sizeOf[V]())
	}
	if st.PayloadBytes != want {
		t.Fatalf("%s: payload_bytes %d, want %d", layout, st.PayloadBytes, want)
	}
}

// testKeys mixes random keys, repeats, 0, the maximum and float specials.
func testKeys[K Bits](n int, seed uint64) []K {
	rng := rand.New(rand.NewPCG(seed, 1))
	special := []K{
		FromUint64[K](0, 0),
		FromUint64[K](math.MaxUint64, math.MaxUint64),
		FromUint64[K](math.Float64bits(math.NaN()), 0),
		FromUint64[K](math.Float64bits(math.Copysign(0, -1)), 0),
		FromUint64[K](uint64(math.Float32bits(float32(math.NaN()))), 0),
		FromUint64[K](1, 0),
		FromUint64[K](0, 1), // only the high word set (16-byte keys)
	}
	keys := make([]K, 0, n+len(special)*2)
	keys = append(keys, special...)
	for len(keys) < n {
		switch r := rng.IntN(10); {
		case r < 2 && len(keys) > 0: // a repeat
			keys = append(keys, keys[rng.IntN(len(keys))])
		case r < 4: // small keys collide on narrow types
			keys = append(keys, FromUint64[K](rng.Uint64N(1000), rng.Uint64N(3)))
		default:
			keys = append(keys, FromUint64[K](rng.Uint64(), rng.Uint64()))
		}
	}
	return append(keys, special...)
}

func forEachLayout(t *testing.T, f func(t *testing.T, l Layout, opt Options)) {
	for _, l := range Layouts() {
		for _, mlf := range []float64{0, 0.77, 0.99} {
			if mlf != 0 && (l == LayoutHashedArray || l == LayoutGoMap) {
				continue // they have no max load factor
			}
			t.Run(fmt.Sprintf("%s/mlf=%v", l, mlf), func(t *testing.T) { f(t, l, Options{MaxLoadFactor: mlf}) })
		}
	}
}

func TestLayoutsAgainstBuiltinMap(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 3000
	}
	forEachLayout(t, func(t *testing.T, l Layout, opt Options) {
		t.Run("Key=UInt64/Value=UInt16", func(t *testing.T) { oracleRun[uint64, uint16](t, l, opt, testKeys[uint64](n, 1), 1) })
		t.Run("Key=UInt8/Value=UInt8", func(t *testing.T) { oracleRun[uint8, uint8](t, l, opt, testKeys[uint8](n, 2), 2) })
		t.Run("Key=UInt16/Value=Float64", func(t *testing.T) { oracleRun[uint16, uint64](t, l, opt, testKeys[uint16](n, 3), 3) })
		t.Run("Key=Float32/Value=UInt32", func(t *testing.T) { oracleRun[uint32, uint32](t, l, opt, testKeys[uint32](n, 4), 4) })
		t.Run("Key=UUID/Value=UInt8", func(t *testing.T) { oracleRun[U128, uint8](t, l, opt, testKeys[U128](n, 5), 5) })
		t.Run("Key=Float64/Value=Int128", func(t *testing.T) { oracleRun[uint64, U128](t, l, opt, testKeys[uint64](n, 6), 6) })
	})
}

func TestFloatKeysAreBitwise(t *testing.T) {
	nan := math.Float64bits(math.NaN())
	negZero := math.Float64bits(math.Copysign(0, -1))
	for _, l := range Layouts() {
		m, _ := New[uint64, uint8](l, Options{})
		m.Insert(nan, 1)
		m.Insert(0, 2)
		m.Insert(negZero, 3)
		for k, want := range map[uint64]uint8{nan: 1, 0: 2, negZero: 3} {
			if got, ok := m.Get(k); !ok || got != want {
				t.Errorf("%s: Get(%#x) = %d, %v; want %d (NaN and -0.0 are keys of their own)", l, k, got, ok, want)
			}
		}
	}
}

// TestGeometry pins rows -> bucket_count -> bytes for each layout, from the
// growth rules in the design (ClickHouse's growers, sparsehash's min_buckets).
// The pins at 1e6 rows are not -short's (the race stage: 15 s of
// single-threaded inserts there); the unit stage runs them.
func TestGeometry(t *testing.T) {
	need64BitCells(t)
	cases := []struct {
		layout  Layout
		mlf     float64
		rows    int
		buckets int64
		bytes   int64 // slab bytes, without the header
	}{
		{LayoutHashed, 0.5, 1, 256, 256 * 16},
		{LayoutHashed, 0.5, 128, 256, 256 * 16},
		{LayoutHashed, 0.5, 129, 1024, 1024 * 16},
		{LayoutHashed, 0.5, 1_000_000, 1 << 21, 33_554_432},
		{LayoutHashed, 0.99, 1_000_000, 1 << 20, 1 << 24},
		{LayoutHashed, 0.5, 262_145, 1 << 20, 1 << 24}, // x4 from 2^18 to 2^20
		{LayoutHashed, 0.5, 524_289, 1 << 21, 1 << 25}, // x2 from 2^20
		{LayoutPacked, 0.5, 1_000_000, 1 << 21, 20_971_520},
		{LayoutPacked, 0.99, 1_000_000, 1 << 20, 10_485_760},
		{LayoutSparse, 0.5, 16, 32, -1},
		{LayoutSparse, 0.5, 17, 64, -1},
		{LayoutSparse, 0.5, 1_000_000, 1 << 21, -1},
		{LayoutSparse, 0.8, 1_000_000, 1 << 21, -1},
		{LayoutHashedArray, 0, 1_000_000, 1 << 21, -1}, // doubles, as ClickHouse reserves for the rows read (x4 would give 2^22)
		{LayoutHashedArray, 0, 100_000, 1 << 18, -1},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/mlf=%v/rows=%d", c.layout, c.mlf, c.rows)
		t.Run(name, func(t *testing.T) {
			if testing.Short() && c.rows >= 1_000_000 {
				t.Skip("a pin at 1e6 rows: not under -short")
			}
			m, err := New[uint64, uint16](c.layout, Options{MaxLoadFactor: c.mlf})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(9, 9))
			for m.Len() < c.rows {
				if k := rng.Uint64(); k != 0 {
					m.Insert(k, uint16(k))
				}
			}
			st := m.Stats()
			if st.BucketCount != c.buckets {
				t.Errorf("bucket_count %d, want %d", st.BucketCount, c.buckets)
			}
			if c.bytes >= 0 {
				header := st.BytesAllocated - c.bytes
				if header < 0 || header > 256 {
					t.Errorf("bytes_allocated %d, want %d plus a header of at most 256 bytes", st.BytesAllocated, c.bytes)
				}
			}
			if err := st.check(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSeedExample is the example the core issue gives, to the byte.
func TestSeedExample(t *testing.T) {
	need64BitCells(t)
	for _, c := range []struct {
		layout  Layout
		slab    int64
		padding int64
	}{{LayoutHashed, 33_554_432, 6_000_000}, {LayoutPacked, 20_971_520, 0}} {
		m, _ := New[uint64, uint16](c.layout, Options{})
		for i := uint64(1); i <= 1_000_000; i++ {
			m.Insert(i*0x9e3779b97f4a7c15, uint16(i))
		}
		st := m.Stats()
		if st.BucketCount != 2_097_152 || st.PayloadBytes != 10_000_000 || st.PaddingBytes != c.padding ||
			st.BytesAllocated < c.slab || st.BytesAllocated > c.slab+256 {
			t.Errorf("%s: got %+v; want bucket_count 2097152, payload 10000000, padding %d, bytes_allocated %d + header", c.layout, st, c.padding, c.slab)
		}
		if l := st.LoadFactor; math.Abs(l-1e6/2097152.0) > 1e-12 {
			t.Errorf("%s: load_factor %v", c.layout, l)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for _, mlf := range []float64{0.49, 1, -1, math.NaN(), 0.995} {
		_, err := New[uint64, uint16](LayoutHashed, Options{MaxLoadFactor: mlf})
		if err == nil {
			t.Errorf("mlf %v accepted", mlf)
			continue
		}
		if want := "max_load_factor"; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "0.5 to 0.99") {
			t.Errorf("mlf %v: error %q does not name the option and the range", mlf, err)
		}
	}
	if _, err := ParseLayout("dense"); err == nil || !strings.Contains(err.Error(), `"dense"`) || !strings.Contains(err.Error(), "hashed_array") {
		t.Errorf("ParseLayout(dense) = %v, want an error naming the value and the allowed layouts", err)
	}
	if _, err := New[uint64, uint16]("dense", Options{}); err == nil {
		t.Error("New accepted an unknown layout")
	}
}

// need64BitCells skips a test of the figures ClickHouse's examples give on
// x86-64 (a padded <UInt64,UInt16> cell is 16 bytes) where an 8-byte
// integer is 4-aligned in a struct and the cell is 12 (386, arm): the
// tables and Predict follow the platform (TestPredictMatchesTables).
func need64BitCells(t *testing.T) {
	t.Helper()
	if wordAlign != 8 {
		t.Skipf("8-byte integers are %d-aligned here: the x86-64 figures do not apply", wordAlign)
	}
}

// TestStatsStringAndPayload: fmt.Println(m.Stats()) names every figure,
// and payload_bytes is what Stats documents: element_count * (sizeof K +
// sizeof V), compact's the bits its slots keep, never more than that.
func TestStatsStringAndPayload(t *testing.T) {
	for _, l := range Layouts() {
		m, err := New[uint64, uint16](l, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for k := range uint64(1000) {
			m.Insert(k*0x9E3779B97F4A7C15+1, uint16(k))
		}
		st := m.Stats()
		s := fmt.Sprint(st)
		for _, name := range []string{"element_count 1000,", "bucket_count ", "load_factor ", "bytes_allocated ", "payload ", "padding ", "empty ", "metadata "} {
			if !strings.Contains(s, name) {
				t.Errorf("%s: Stats prints %q, without %q", l, s, name)
			}
		}
		quotiented := l == LayoutCompact || l == LayoutIceberg // a slot keeps what its place does not say
		switch full := st.ElementCount * 10; {
		case quotiented && (st.PayloadBytes <= 0 || st.PayloadBytes > full):
			t.Errorf("%s: payload %d, want the slots' kept bits, at most %d", l, st.PayloadBytes, full)
		case !quotiented && st.PayloadBytes != full:
			t.Errorf("%s: payload %d, want element_count * 10 = %d", l, st.PayloadBytes, full)
		}
		m.Close()
	}
}
