package core

import (
	"fmt"
	"iter"
)

// The range ClickHouse accepts for SHARDS.
const (
	MinShards = 1
	MaxShards = 128
)

// Sharded is ClickHouse's SHARDS(N): N independent tables of one layout. A
// key lives in table ShardOf(key, N) and nowhere else, so a lookup probes one
// table, and N loader workers can each own one table without locks.
//
//	key --shardHash % N--> table i --hashKey & mask--> cell
//
// The two hashes are independent (see shardHash): the keys of one shard
// still spread over all of that shard's cells.
//
// Like Map, a Sharded is not safe for concurrent writes; the loader gives
// each table one writer.
type Sharded[K, V Bits] struct {
	layout Layout
	tables []Map[K, V] // len in [MinShards, MaxShards]
	// mask is len(tables)-1 when len(tables) is a power of two, else 0;
	// shard() uses it to skip the division, giving ShardOf's answer.
	mask uint64
	// packed, hashed and compact hold the same tables as tables, as their
	// concrete types, when the layout is one of them: Get and Insert call them
	// directly rather than through the Map interface, which cost 30 % of a
	// lookup at 1e7 (packed read 5.1 against 7.5 million rows/s, anchors
	// harness, before).
	packed  []*Packed[K, V]
	hashed  []*Hashed[K, V]
	compact []*Compact[K, V]
}

// NewSharded builds shards empty tables of one layout; a reservation
// (opt.Reserve) is for all of them, and each gets its ShardReserve.
func NewSharded[K, V Bits](layout Layout, opt Options, shards int) (*Sharded[K, V], error) {
	if shards < MinShards || shards > MaxShards {
		return nil, fmt.Errorf("shards %d is out of range (allowed: %d to %d)", shards, MinShards, MaxShards)
	}
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	s := &Sharded[K, V]{layout: layout, tables: make([]Map[K, V], shards)}
	opt.Reserve = int64(min(ShardReserve(opt.Reserve, shards), uint64(MaxReserve)))
	for i := range s.tables {
		t, err := New[K, V](layout, opt)
		if err != nil {
			s.tables = s.tables[:i]
			s.Close()
			return nil, err
		}
		s.tables[i] = t
		switch t := t.(type) {
		case *Packed[K, V]:
			s.packed = append(s.packed, t)
		case *Hashed[K, V]:
			s.hashed = append(s.hashed, t)
		case *Compact[K, V]:
			s.compact = append(s.compact, t)
		}
	}
	if shards&(shards-1) == 0 {
		s.mask = uint64(shards - 1)
	}
	return s, nil
}

// shard is ShardOf(key, s.Shards()), with a mask instead of a division when
// the count is a power of two (x % 2^n == x & (2^n-1)).
func (s *Sharded[K, V]) shard(key K) int {
	if len(s.tables) == 1 {
		return 0
	}
	if s.mask != 0 {
		return int(shardHash(key) & s.mask)
	}
	return int(shardHash(key) % uint64(len(s.tables)))
}

// Layout names the layout of every shard.
func (s *Sharded[K, V]) Layout() Layout { return s.layout }

// Shards is the number of tables.
func (s *Sharded[K, V]) Shards() int { return len(s.tables) }

// Shard returns table i, 0 <= i < Shards().
func (s *Sharded[K, V]) Shard(i int) Map[K, V] { return s.tables[i] }

// Get returns the value stored for key, probing only its shard's table.
func (s *Sharded[K, V]) Get(key K) (V, bool) {
	i := 0
	if len(s.tables) > 1 {
		i = s.shard(key)
	}
	if s.packed != nil {
		return s.packed[i].Get(key)
	}
	if s.hashed != nil {
		return s.hashed[i].Get(key)
	}
	if s.compact != nil {
		return s.compact[i].Get(key)
	}
	return s.tables[i].Get(key)
}

// shardBatch is how many keys GetMany sorts by shard at a time: enough that
// each of 2..8 shards gets a batch long enough for its table's GetMany to
// overlap cache misses, and little enough to live on the stack.
const shardBatch = 1024

// GetMany looks up every key of keys (values[i], found[i] = Get(keys[i]))
// and returns how many were found; values and found must be at least as
// long as keys. With several shards it sorts each run of shardBatch keys by
// shard (a counting sort) and hands each shard its keys in one GetMany.
func (s *Sharded[K, V]) GetMany(keys []K, values []V, found []bool) int {
	if len(s.tables) == 1 {
		return s.tables[0].GetMany(keys, values, found)
	}
	values, found = values[:len(keys)], found[:len(keys)]
	var (
		shard  [shardBatch]uint8
		order  [shardBatch]uint16 // order[p]: the key at sorted position p
		sk     [shardBatch]K
		sv     [shardBatch]V
		sf     [shardBatch]bool
		starts [MaxShards + 1]uint16
	)
	n := 0
	for lo := 0; lo < len(keys); lo += shardBatch {
		batch := keys[lo:min(lo+shardBatch, len(keys))]
		clear(starts[:len(s.tables)+1])
		for j, k := range batch {
			sh := s.shard(k)
			shard[j] = uint8(sh)
			starts[sh+1]++
		}
		for i := 1; i <= len(s.tables); i++ {
			starts[i] += starts[i-1]
		}
		next := starts
		for j, k := range batch {
			p := next[shard[j]]
			next[shard[j]]++
			order[p], sk[p] = uint16(j), k
		}
		for i, t := range s.tables {
			if a, b := starts[i], starts[i+1]; a < b {
				n += t.GetMany(sk[a:b], sv[a:b], sf[a:b])
			}
		}
		for p := range batch {
			j := lo + int(order[p])
			values[j], found[j] = sv[p], sf[p]
		}
	}
	return n
}

// Has reports whether key is present, probing only its shard's table.
func (s *Sharded[K, V]) Has(key K) bool { return s.tables[s.shard(key)].Has(key) }

// Insert stores (key, value) in key's shard if key is absent there, and
// reports whether it did; the first value of a key wins.
func (s *Sharded[K, V]) Insert(key K, value V) bool {
	i := 0
	if len(s.tables) > 1 {
		i = s.shard(key)
	}
	if s.packed != nil {
		return s.packed[i].Insert(key, value)
	}
	if s.hashed != nil {
		return s.hashed[i].Insert(key, value)
	}
	if s.compact != nil {
		return s.compact[i].Insert(key, value)
	}
	return s.tables[i].Insert(key, value)
}

// Len is the number of distinct keys over all shards.
func (s *Sharded[K, V]) Len() int {
	n := 0
	for _, t := range s.tables {
		n += t.Len()
	}
	return n
}

// All yields every pair once: shard 0's pairs, then shard 1's, and so on.
func (s *Sharded[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for _, t := range s.tables {
			for k, v := range t.All() {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}

// Stats sums the shards' stats, as ClickHouse's system.dictionaries does:
// bucket_count is the total over shards, load_factor the overall fill.
func (s *Sharded[K, V]) Stats() Stats {
	var sum Stats
	for _, t := range s.tables {
		sum = sum.Add(t.Stats())
	}
	return sum
}

// ShardStats returns each shard's stats, so skew between shards is visible.
func (s *Sharded[K, V]) ShardStats() []Stats {
	st := make([]Stats, len(s.tables))
	for i, t := range s.tables {
		st[i] = t.Stats()
	}
	return st
}

// Checksum is the sum (mod 2^64) of PairChecksum over All(): the same for the
// same set of pairs whatever the shard count or load order.
func (s *Sharded[K, V]) Checksum() uint64 {
	var sum uint64
	for k, v := range s.All() {
		sum += PairChecksum(k, v)
	}
	return sum
}

// Close closes every shard's table, releasing their memory at once. A
// second Close does nothing; any other use afterwards panics.
func (s *Sharded[K, V]) Close() {
	for _, t := range s.tables {
		t.Close()
	}
}

// CheckInvariants checks every shard's table and that every key sits in the
// shard ShardOf assigns it; it returns the first violation found.
func (s *Sharded[K, V]) CheckInvariants() error {
	for i, t := range s.tables {
		if err := t.CheckInvariants(); err != nil {
			return fmt.Errorf("shard %d: %w", i, err)
		}
		for k := range t.All() {
			if want := ShardOf(k, len(s.tables)); want != i {
				return fmt.Errorf("shard %d holds key %v, which belongs to shard %d of %d", i, k, want, len(s.tables))
			}
		}
	}
	return nil
}
