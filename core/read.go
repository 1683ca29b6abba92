package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"time"
)

// The read phase: look every loaded row's key up once, in a seeded random
// order, on one goroutine, as ClickHouse's dictGet does for a column of keys.
//
// Keys are prepared in chunks of readChunk, untimed, then looked up in a
// timed loop over the chunk, so Seconds is the lookups' time alone and not
// the cost of deciding which key comes next. The chunk is looked up with
// one GetMany, as ClickHouse's dictGet looks up a column of keys: the
// lookups do not depend on each other, and the tables overlap their cache
// misses.

// readChunk is how many keys are prepared, then looked up, at a time; Read
// checks ctx once per chunk.
const readChunk = 4096

// ReadOptions configure the read phase.
type ReadOptions struct {
	// Seed fixes the order of the lookups and the absent keys.
	Seed uint64
	// MissRate in [0, 1] adds round(MissRate * rows) lookups of keys that
	// are not loaded, spread at random among the others.
	MissRate float64
}

// ReadReport is the outcome of a read phase.
type ReadReport struct {
	Lookups       int64   // rows looked up plus absent keys
	Found         int64   // lookups that found their key
	Seconds       float64 // time spent inside the lookups
	RowsPerSecond float64 // Lookups / Seconds
	FoundRate     float64 // Found / Lookups (0 with no lookups)
}

// Read looks up every loaded row's key once in a seeded random order, plus
// MissRate absent keys, and reports the lookups' speed and found rate.
//
// If src is an IndexedSource that knows its row count, Read walks a
// pseudo-random permutation of [0, Rows()) (a cycle-walking Feistel
// bijection) and computes each key with Row, so it holds no key list: the
// keys are the source's rows, duplicates included. Otherwise it collects the
// map's distinct keys from All() and shuffles them, which holds Len() *
// sizeof(K) bytes (800 MB for 10^8 UInt64 keys) for the duration of the call;
// src may then be nil. Read never calls src.Next.
//
// Absent keys are drawn at random from the key type and redrawn while the
// map has them; a key type of one or two bytes draws from the list of its
// absent values instead, and Read fails if there are none.
func Read[K, V Bits](ctx context.Context, m *Sharded[K, V], src Source[K, V], opt ReadOptions) (ReadReport, error) {
	return ReadVisit(ctx, m, src, opt, nil)
}

// ReadVisit is Read handing each batch's values and found flags to visit,
// inside the timed lookups: a caller whose values name more data (the lab's
// row layouts keep a String's bytes in an arena, the row its reference)
// reads that too, as a dictionary's read of a String does. visit may be
// nil.
func ReadVisit[K, V Bits](ctx context.Context, m *Sharded[K, V], src Source[K, V], opt ReadOptions, visit func(vals []V, found []bool)) (ReadReport, error) {
	if !(opt.MissRate >= 0 && opt.MissRate <= 1) {
		return ReadReport{}, fmt.Errorf("miss_rate %v is out of range (allowed: 0 to 1)", opt.MissRate)
	}
	if m == nil {
		return ReadReport{}, errors.New("read: no map")
	}
	rng := readRNG(opt.Seed)

	rows, hit, ok := indexedOrder(src, rng)
	if !ok {
		keys := make([]K, 0, m.Len())
		for k := range m.All() {
			keys = append(keys, k)
		}
		shuffleKeys(keys, rng)
		rows = int64(len(keys))
		hit = func(i int64) K { return keys[i] }
	}
	misses := int64(math.Round(opt.MissRate * float64(rows)))
	var miss func() (K, error)
	if misses > 0 {
		var err error
		if miss, err = absentKeys(m, rng); err != nil {
			return ReadReport{}, fmt.Errorf("read: miss_rate %v: %w", opt.MissRate, err)
		}
	}

	var r ReadReport
	var elapsed time.Duration
	buf, vals, oks := make([]K, readChunk), make([]V, readChunk), make([]bool, readChunk)
	hitsLeft, missesLeft, next := rows, misses, int64(0)
	for hitsLeft+missesLeft > 0 {
		if err := ctx.Err(); err != nil {
			return ReadReport{}, fmt.Errorf("read cancelled after %d lookups: %w", r.Lookups, err)
		}
		// Prepare a chunk: each lookup is an absent key with probability
		// missesLeft / (hitsLeft + missesLeft), which interleaves the two
		// uniformly at random and uses each exactly as often as asked.
		n := 0
		for ; n < len(buf) && hitsLeft+missesLeft > 0; n++ {
			if missesLeft > 0 && rng.Int64N(hitsLeft+missesLeft) < missesLeft {
				k, err := miss()
				if err != nil {
					return ReadReport{}, fmt.Errorf("read: miss_rate %v: %w", opt.MissRate, err)
				}
				buf[n] = k
				missesLeft--
			} else {
				buf[n] = hit(next)
				next++
				hitsLeft--
			}
		}
		t := time.Now()
		found := int64(m.GetMany(buf[:n], vals, oks))
		if visit != nil {
			visit(vals[:n], oks[:n])
		}
		elapsed += time.Since(t)
		r.Lookups += int64(n)
		r.Found += found
	}
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.RowsPerSecond = float64(r.Lookups) / r.Seconds
	}
	if r.Lookups > 0 {
		r.FoundRate = float64(r.Found) / float64(r.Lookups)
	}
	return r, nil
}

// ReadOrder is the order of Read's hits, for a caller that looks the keys up
// in a map core did not build (the lab's C++ reference maps): with the same
// seed, Read(ctx, m, src, ReadOptions{Seed: seed}) looks up at(0), at(1),
// ... at(rows-1), with its absent keys (if any) among them. ok is false when
// src is not an IndexedSource that knows its row count (a file): Read then
// shuffles the map's keys, as ShuffleKeys does.
func ReadOrder[K, V Bits](src Source[K, V], seed uint64) (rows int64, at func(i int64) K, ok bool) {
	return indexedOrder(src, readRNG(seed))
}

// ShuffleKeys puts keys in the order Read looks up a map's keys when its
// source is not indexed: a seeded shuffle of the list it starts from.
func ShuffleKeys[K Bits](keys []K, seed uint64) { shuffleKeys(keys, readRNG(seed)) }

// readRNG is the read phase's generator: the order, then the absent keys.
func readRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed0f4ead)) }

// indexedOrder walks a pseudo-random permutation of an indexed source's rows
// (its first draw from rng seeds the permutation).
func indexedOrder[K, V Bits](src Source[K, V], rng *rand.Rand) (int64, func(i int64) K, bool) {
	is, ok := src.(IndexedSource[K, V])
	if !ok || is.Rows() < 0 {
		return 0, nil, false
	}
	perm := newFeistel(uint64(is.Rows()), rng.Uint64())
	return is.Rows(), func(i int64) K {
		k, _ := is.Row(int64(perm.at(uint64(i))))
		return k
	}, true
}

func shuffleKeys[K Bits](keys []K, rng *rand.Rand) {
	rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
}

// absentKeys returns a generator of keys the map does not hold.
func absentKeys[K, V Bits](m *Sharded[K, V], rng *rand.Rand) (func() (K, error), error) {
	if size := sizeOf[K](); size <= 2 {
		// A narrow type can be loaded in full: list its absent values.
		domain := uint64(1) << (8 * size)
		var absent []K
		for x := range domain {
			if k := FromUint64[K](x, 0); !m.Has(k) {
				absent = append(absent, k)
			}
		}
		if len(absent) == 0 {
			return nil, fmt.Errorf("every one of the %d values of a %d-byte key is loaded, so no key is absent", domain, size)
		}
		return func() (K, error) { return absent[rng.IntN(len(absent))], nil }, nil
	}
	const maxTries = 10_000
	return func() (K, error) {
		for range maxTries {
			if k := FromUint64[K](rng.Uint64(), rng.Uint64()); !m.Has(k) {
				return k, nil
			}
		}
		return *new(K), fmt.Errorf("%d random keys in a row were all loaded; the key type is too full to draw absent keys", maxTries)
	}, nil
}

// feistel is a seeded pseudo-random bijection of [0, n): a balanced
// 4-round Feistel network over the smallest even number of bits covering n,
// with cycle walking (re-encrypt until the result is below n; the domain is
// less than 4n, so fewer than 4 rounds of walking on average).
type feistel struct {
	n    uint64
	half uint   // bits per half
	mask uint64 // 1<<half - 1
	keys [4]uint64
}

func newFeistel(n, seed uint64) feistel {
	b := 2
	if n > 1 {
		b = max(bits.Len64(n-1), 2)
	}
	b += b & 1
	f := feistel{n: n, half: uint(b / 2)}
	f.mask = 1<<f.half - 1
	for i := range f.keys {
		seed = intHash64(seed + 0x9e3779b97f4a7c15)
		f.keys[i] = seed
	}
	return f
}

func (f *feistel) encrypt(x uint64) uint64 {
	l, r := x>>f.half, x&f.mask
	for _, k := range f.keys {
		l, r = r, l^(intHash64(r^k)&f.mask)
	}
	return l<<f.half | r
}

// at is the image of i, 0 <= i < n.
func (f *feistel) at(i uint64) uint64 {
	x := f.encrypt(i)
	for x >= f.n {
		x = f.encrypt(x)
	}
	return x
}
