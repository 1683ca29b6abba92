package core

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestNewShardedRange(t *testing.T) {
	for _, n := range []int{0, -1, 129, 500} {
		_, err := NewSharded[uint64, uint16](LayoutPacked, Options{}, n)
		want := fmt.Sprintf("shards %d is out of range (allowed: 1 to 128)", n)
		if err == nil || err.Error() != want {
			t.Errorf("NewSharded(shards=%d) error = %v, want %q", n, err, want)
		}
	}
	for _, n := range []int{1, 3, 128} {
		s, err := NewSharded[uint64, uint16](LayoutSparse, Options{}, n)
		if err != nil || s.Shards() != n {
			t.Fatalf("NewSharded(shards=%d) = %v, %v", n, s, err)
		}
		for i := range n {
			if s.Shard(i).Layout() != LayoutSparse {
				t.Fatalf("shard %d is %s, want sparse", i, s.Shard(i).Layout())
			}
		}
	}
	if _, err := NewSharded[uint64, uint16]("dense", Options{}, 2); err == nil || !strings.Contains(err.Error(), `"dense"`) {
		t.Errorf("unknown layout: error %v, want one naming it", err)
	}
	if _, err := NewSharded[uint64, uint16](LayoutHashed, Options{MaxLoadFactor: 1.5}, 2); err == nil || !strings.Contains(err.Error(), "max_load_factor") {
		t.Errorf("bad mlf: error %v, want one naming max_load_factor", err)
	}
}

// TestShardMatchesShardOf checks that the map's own shard choice (a mask for
// power-of-two counts) is ShardOf's for every count.
func TestShardMatchesShardOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := MinShards; n <= MaxShards; n++ {
		s, err := NewSharded[U128, uint8](LayoutGoMap, Options{}, n)
		if err != nil {
			t.Fatal(err)
		}
		for range 200 {
			k := U128{rng.Uint64(), rng.Uint64() >> rng.UintN(64)}
			if got, want := s.shard(k), ShardOf(k, n); got != want {
				t.Fatalf("shards=%d key %v: shard() = %d, ShardOf = %d", n, k, got, want)
			}
		}
	}
}

// TestShardedLookupsProbeOneShard plants a key in a table that does not own
// it: the sharded map must not find it there, since it asks only the owner.
func TestShardedLookupsProbeOneShard(t *testing.T) {
	s, _ := NewSharded[uint64, uint16](LayoutHashed, Options{}, 7)
	for k := uint64(0); k < 1000; k++ {
		if !s.Insert(k, uint16(k)) {
			t.Fatalf("Insert(%d) = false on an empty map", k)
		}
		if s.Insert(k, 1) {
			t.Fatalf("second Insert(%d) = true; the first value must win", k)
		}
	}
	for k := uint64(0); k < 1000; k++ {
		owner := ShardOf(k, 7)
		for i := range 7 {
			if got := s.Shard(i).Has(k); got != (i == owner) {
				t.Fatalf("key %d: shard %d Has = %v; only shard %d should hold it", k, i, got, owner)
			}
		}
		if v, ok := s.Get(k); !ok || v != uint16(k) {
			t.Fatalf("Get(%d) = %d, %v", k, v, ok)
		}
	}
	stray := uint64(5000)
	wrong := (ShardOf(stray, 7) + 1) % 7
	s.Shard(wrong).Insert(stray, 9)
	if s.Has(stray) {
		t.Errorf("Has(%d) found a key planted in shard %d; ShardOf says shard %d, the only one a lookup may probe", stray, wrong, ShardOf(stray, 7))
	}
	if err := s.CheckInvariants(); err == nil || !strings.Contains(err.Error(), "belongs to shard") {
		t.Errorf("CheckInvariants() = %v, want the misplaced key reported", err)
	}
}

func TestShardedStatsSumShards(t *testing.T) {
	for _, l := range Layouts() {
		s, _ := NewSharded[uint64, uint16](l, Options{}, 5)
		rng := rand.New(rand.NewPCG(3, 4))
		oracle := map[uint64]uint16{}
		for range 20000 {
			k, v := rng.Uint64N(50000), uint16(rng.Uint64())
			if _, ok := oracle[k]; !ok {
				oracle[k] = v
			}
			s.Insert(k, v)
		}
		var sum Stats
		per := s.ShardStats()
		for _, st := range per {
			sum = sum.Add(st)
		}
		if got := s.Stats(); got != sum {
			t.Errorf("%s: Stats() = %+v, sum of ShardStats = %+v", l, got, sum)
		}
		if got := s.Stats().ElementCount; got != int64(len(oracle)) || s.Len() != len(oracle) {
			t.Errorf("%s: element_count %d, Len %d, want %d", l, got, s.Len(), len(oracle))
		}
		var want uint64
		for k, v := range oracle {
			want += PairChecksum(k, v)
		}
		if got := s.Checksum(); got != want {
			t.Errorf("%s: Checksum() = %#x, want %#x", l, got, want)
		}
		if err := s.CheckInvariants(); err != nil {
			t.Errorf("%s: %v", l, err)
		}
	}
}

// TestSequentialKeysBalance: sequential keys (ClickHouse's numbers) spread
// over 16 shards with no shard above 1.05x the mean.
func TestSequentialKeysBalance(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 200_000
	}
	const shards = 16
	counts := make([]int, shards)
	for k := range uint64(n) {
		counts[ShardOf(k, shards)]++
	}
	mean := float64(n) / shards
	for s, c := range counts {
		if r := float64(c) / mean; r > 1.05 {
			t.Errorf("shard %d holds %d of %d sequential keys: %.3fx the mean %.0f, want <= 1.05x", s, c, n, r, mean)
		}
	}
	// The same through the loader, which must put every key where ShardOf says.
	m, r, err := loadSeq(t, n, shards)
	if err != nil {
		t.Fatal(err)
	}
	for s, w := range r.Workers {
		if w.Rows != int64(counts[s]) || int64(m.Shard(s).Len()) != int64(counts[s]) {
			t.Errorf("shard %d: worker rows %d, table len %d; ShardOf assigns it %d keys", s, w.Rows, m.Shard(s).Len(), counts[s])
		}
	}
}

// lowBitsChiSquare is the chi-square statistic of the low 8 bits of
// hashKey(k) & mask over keys that all belong to one shard. If the shard hash
// were the in-table hash, every key of shard s would have the same low bits
// (s mod shards), and would pile into 1/shards of the table's cells.
func lowBitsChiSquare(keys []uint64, mask uint64) float64 {
	var bins [256]float64
	for _, k := range keys {
		bins[hashKey(k)&mask&255]++
	}
	want := float64(len(keys)) / 256
	chi := 0.0
	for _, b := range bins {
		chi += (b - want) * (b - want) / want
	}
	return chi
}

// TestShardOfIndependence: the keys of one shard spread evenly over that
// shard's cells. A control with a dependent shard function (the in-table
// hash mod shards) shows the statistic would catch it.
func TestShardOfIndependence(t *testing.T) {
	const shards = 16
	n := 400_000
	if testing.Short() {
		n = 160_000 // still 10,000 keys a shard, 39 a bin
	}
	m, _, err := loadSeq(t, n, shards)
	if err != nil {
		t.Fatal(err)
	}
	// 255 degrees of freedom: mean 255, sd 22.6; 400 is 6.4 sd out.
	const limit = 400.0
	for s := range shards {
		st := m.Shard(s).Stats()
		mask := uint64(st.BucketCount - 1)
		var keys []uint64
		for k := range m.Shard(s).All() {
			keys = append(keys, k)
		}
		if chi := lowBitsChiSquare(keys, mask); chi > limit {
			t.Errorf("shard %d: chi-square of its keys' cell indexes (low 8 bits) = %.0f, want < %.0f (uniform)", s, chi, limit)
		}
		if lf := st.LoadFactor; math.Abs(lf-m.Stats().LoadFactor) > 0.05 {
			t.Errorf("shard %d: load factor %.3f, the whole map's %.3f", s, lf, m.Stats().LoadFactor)
		}
	}
	// The control: shard = hashKey % shards.
	var dependent []uint64
	for k := range uint64(n) {
		if hashKey(k)%shards == 3 {
			dependent = append(dependent, k)
		}
	}
	if chi := lowBitsChiSquare(dependent, 1<<16-1); chi < limit {
		t.Errorf("control: a shard chosen by the in-table hash gives chi-square %.0f, below the limit %.0f; the test cannot tell", chi, limit)
	}
}
