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
}

// NewSharded builds shards empty tables of one layout.
func NewSharded[K, V Bits](layout Layout, opt Options, shards int) (*Sharded[K, V], error) {
	if shards < MinShards || shards > MaxShards {
		return nil, fmt.Errorf("shards %d is out of range (allowed: %d to %d)", shards, MinShards, MaxShards)
	}
	s := &Sharded[K, V]{layout: layout, tables: make([]Map[K, V], shards)}
	for i := range s.tables {
		t, err := New[K, V](layout, opt)
		if err != nil {
			return nil, err
		}
		s.tables[i] = t
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
func (s *Sharded[K, V]) Get(key K) (V, bool) { return s.tables[s.shard(key)].Get(key) }

// Has reports whether key is present, probing only its shard's table.
func (s *Sharded[K, V]) Has(key K) bool { return s.tables[s.shard(key)].Has(key) }

// Insert stores (key, value) in key's shard if key is absent there, and
// reports whether it did; the first value of a key wins.
func (s *Sharded[K, V]) Insert(key K, value V) bool {
	return s.tables[s.shard(key)].Insert(key, value)
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
