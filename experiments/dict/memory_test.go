package dict

import (
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/packlab/packlab/core"
)

// TestClickHouseReloadModel: the ClickHouse model against ClickHouse's own
// loads and reloads (clickHouseReloads: HASHED, SPARSE_HASHED and
// HASHED_ARRAY, one and four shards): steady within 5 % and the
// reload's peak within 10 % at 1e7 rows and above (the target; at
// 1e6 the worker's own allocations are a larger share and the model is
// low by up to 30 %, docs/clickhouse.md).
func TestClickHouseReloadModel(t *testing.T) {
	const mib = 1 << 20
	for _, w := range clickHouseReloads {
		m := ClickHouseTableMemory(w.Layout, core.MustType("UInt16"), w.Rows, core.Options{}, w.Shards)
		steady, first, reload := float64(m.SteadyBytes)/mib, float64(m.FirstLoadPeakBytes)/mib, float64(m.ReloadPeakBytes)/mib
		t.Logf("%s %.0e SHARDS %d: steady %.0f/%.0f MiB, first load %.0f/%.0f (%+.1f %%), reload %.0f/%.0f (%+.1f %%)", w.Layout, float64(w.Rows), w.Shards,
			steady, w.Steady, first, w.FirstLoad, 100*(first/w.FirstLoad-1), reload, w.Reload, 100*(reload/w.Reload-1))
		if r := steady / w.Steady; w.Rows >= 1e7 && (r < 0.95 || r > 1.05) {
			t.Errorf("%s %.0e SHARDS %d: steady %.0f MiB is %.3fx ClickHouse's %.0f", w.Layout, float64(w.Rows), w.Shards, steady, r, w.Steady)
		}
		if r := reload / w.Reload; w.Rows >= 1e7 && (r < 0.9 || r > 1.1) {
			t.Errorf("%s %.0e SHARDS %d: reload peak %.0f MiB is %.3fx ClickHouse's %.0f", w.Layout, float64(w.Rows), w.Shards, reload, r, w.Reload)
		}
		if !m.Measured || !strings.Contains(m.Model, "jemalloc") {
			t.Errorf("%s: measured %v, model %q", w.Layout, m.Measured, m.Model)
		}
	}
}

// TestTargetGrowthIsLinuxs: a native plan's growth is Linux's on every
// platform; on Linux that is core.Predict's own.
func TestTargetGrowthIsLinuxs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("core.Predict's growth is Linux's only on Linux")
	}
	for _, l := range core.Layouts() {
		for _, rows := range []int64{1e3, 3e5, 1e7, 1e9, 1e12} {
			for _, shards := range []int{1, 8} {
				pr, err := core.Predict(l, core.MustType("UInt64"), core.MustType("UInt16"), rows, core.Options{}, shards)
				if err != nil {
					t.Fatal(err)
				}
				if g := TargetGrowth(false, l, pr); g != pr.GrowthBytes {
					t.Errorf("%s %d rows SHARDS %d: native growth %d, core.Predict's on Linux %d", l, rows, shards, g, pr.GrowthBytes)
				}
			}
		}
	}
}

// TestClickHouseAttributesSteady: the plan's ClickHouse setups
// (ClickHouseAttributesMemory) hold a dictionary of several attributes in
// the bytes the lab's guard models it in (AttributesBytes, which
// TestClickHouseAgreesWithTheModels holds within 0.1 % of ClickHouse 26.7):
// HASHED_ARRAY keeps one key index and an array an attribute. It counted a
// byte a row too few for each attribute past the first (46,137,520 at 1e6
// rows of a UInt16, a UInt32 and a Float64, where ClickHouse's tracker
// gained 48,272,240).
func TestClickHouseAttributesSteady(t *testing.T) {
	var attrs []Attribute
	for _, s := range []string{"UInt16", "UInt32", "Float64"} {
		attrs = append(attrs, Attribute{Type: core.MustType(s)})
	}
	for _, l := range []core.Layout{core.LayoutHashed, core.LayoutPacked, core.LayoutHashedArray} { // SPARSE_HASHED builds packed tables for these values
		d, ok := ClickHouseDictionaryFor(l)
		if !ok {
			t.Fatalf("no ClickHouse dictionary builds %s", l)
		}
		for _, shards := range []int{1, 4} {
			for _, n := range []int64{100_000, 1_000_000, 10_000_000} {
				opt := core.Options{MaxLoadFactor: core.DefaultMaxLoadFactor}
				if shards == 1 {
					opt.Reserve = n // ClickHouse reserves one shard's tables (the plan's candidates)
				}
				got := ClickHouseAttributesMemory(l, attrs, n, opt, shards).SteadyBytes
				want := AttributesBytes(d, "UInt64", attrs, n, n, opt, shards)
				if off := float64(got-want) / float64(want); off < -0.002 || off > 0.002 {
					t.Errorf("%s SHARDS %d, %d rows: steady %d, the guard's model %d (%+.2f %%)", d.Name, shards, n, got, want, 100*off)
				}
			}
		}
	}
}

// sparseHashMapLoads are loads of sparse_hash_map dictionaries on a
// ClickHouse 26.7 server (packlab-chserver, 7 Dec 2026): what each grew
// MemoryTracking by, after SYSTEM JEMALLOC PURGE before and after.
var sparseHashMapLoads = []struct {
	what   string
	key    string // "UUID": COMPLEX_KEY_SPARSE_HASHED; "": SPARSE_HASHED of a UInt64
	attr   Attribute
	rows   int64
	shards int
	mlf    float64
	grew   int64
}{
	{"COMPLEX_KEY_SPARSE_HASHED()", "UUID", Attribute{Type: core.MustType("UInt16")}, 1_000_000, 1, 0.5, 43_857_024},
	{"COMPLEX_KEY_SPARSE_HASHED(MAX_LOAD_FACTOR 0.96)", "UUID", Attribute{Type: core.MustType("UInt16")}, 1_000_000, 1, 0.96, 44_532_064},
	{"COMPLEX_KEY_SPARSE_HASHED()", "UUID", Attribute{Type: core.MustType("UInt16")}, 100_000, 1, 0.5, 4_828_864},
	{"COMPLEX_KEY_SPARSE_HASHED()", "UUID", Attribute{Type: core.MustType("UInt16")}, 4_000_000, 1, 0.5, 175_342_560},
	{"COMPLEX_KEY_SPARSE_HASHED(SHARDS 4)", "UUID", Attribute{Type: core.MustType("UInt16")}, 4_000_000, 4, 0.5, 175_445_760},
	{"SPARSE_HASHED() of a String(0..19)", "", Attribute{Type: StringRef, MinLen: 0, MaxLen: 19}, 1_000_000, 1, 0.5, 43_854_080},
	{"SPARSE_HASHED(MAX_LOAD_FACTOR 0.96) of a String(0..19)", "", Attribute{Type: StringRef, MinLen: 0, MaxLen: 19}, 1_000_000, 1, 0.96, 44_515_792},
}

// TestSparseHashMapMemory: the plan's ClickHouse setups of sparse_hash_map
// hold what ClickHouse 26.7 grew by (sparseHashMapLoads) within 1.5 %,
// MAX_LOAD_FACTOR 0.96 above 0.5 as there; packlab's own sparse table,
// which they were counted as before, was 2.8-6.4 % under.
func TestSparseHashMapMemory(t *testing.T) {
	for _, w := range sparseHashMapLoads {
		opt := core.Options{MaxLoadFactor: w.mlf}
		if w.shards == 1 {
			opt.Reserve = w.rows
		}
		var m *ClickHouseMemory
		if w.key != "" {
			m = ClickHouseComplexKeyMemory(core.LayoutSparse, PlanKey{Type: w.key}, []Attribute{w.attr}, w.rows, opt, w.shards)
		} else {
			m = ClickHouseAttributesMemory(core.LayoutSparse, []Attribute{w.attr}, w.rows, opt, w.shards)
		}
		if m == nil {
			t.Fatalf("%s: no model", w.what)
		}
		if off := float64(m.SteadyBytes-w.grew) / float64(w.grew); math.Abs(off) > 0.015 {
			t.Errorf("%s, %d rows: steady %d, ClickHouse grew %d (%+.2f %%)", w.what, w.rows, m.SteadyBytes, w.grew, 100*off)
		}
	}
}

// TestShardsDealtByHash: ClickHouse deals a sharded dictionary's keys out
// by hash, and where the mean shard lies near a growth point some shards
// grow: bytes_allocated of SPARSE_HASHED(SHARDS 64) over 200,000 rows on a
// 26.7 server (7 Dec 2026), which 64 even shards put 17-48 % under.
func TestShardsDealtByHash(t *testing.T) {
	d, _ := FindClickHouseDictionary("ch_sparse_hashed")
	age := Attribute{Type: core.MustType("UInt16")}
	country := Attribute{Type: StringRef, MinLen: 2, MaxLen: 2}
	score := Attribute{Type: core.MustType("Float64"), Nullable: true}
	name := Attribute{Type: StringRef, MinLen: 3, MaxLen: 32}
	for _, w := range []struct {
		what  string
		attrs []Attribute
		mlf   float64
		held  int64
		tol   float64
	}{
		// 3,125 keys a shard where 2^12 cells hold 3,154: about a third of
		// the shards grow to 2^14 (64 even shards: 2,629,632).
		{"age UInt16, MLF 0.77", []Attribute{age}, 0.77, 5_087_336, 0.10},
		// Each shard's arena holds 61 KB of two Strings against 60 KB of
		// chunks: about half take a 64 KB chunk more (even: 13.5 MB).
		{"country, name String, MLF 0.82", []Attribute{country, name}, 0.82, 15_444_176, 0.03},
		{"age, country, score, name, MLF 0.82", []Attribute{age, country, score, name}, 0.82, 22_800_800, 0.03},
	} {
		opt := core.Options{MaxLoadFactor: w.mlf}
		pr, err := Predict(d, w.attrs, 200_000, 0, opt, 64)
		if err != nil {
			t.Fatal(err)
		}
		model := pr.FinalBytes - SparseUncounted(d, w.attrs, 200_000, opt, 64)
		if off := float64(model-w.held) / float64(w.held); math.Abs(off) > w.tol {
			t.Errorf("%s: the model %d, ClickHouse's bytes_allocated %d (%+.1f %%, allowed %.0f %%)", w.what, model, w.held, 100*off, 100*w.tol)
		}
	}
}
