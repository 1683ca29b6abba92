package core

import (
	"fmt"
	"iter"
	"strings"
)

// Layout names a table layout; see doc.go and each layout's file for its
// memory picture, experiments/dict's table of layouts for what ClickHouse
// calls it.
type Layout string

const (
	LayoutHashed      Layout = "hashed"       // ClickHouse HASHED: HashMap with padded cells
	LayoutPacked      Layout = "packed"       // ClickHouse PackedHashMap: the same table, cells unpadded
	LayoutSparse      Layout = "sparse"       // google sparse_hash_map: 48-bucket groups with bitmaps
	LayoutHashedArray Layout = "hashed_array" // ClickHouse HASHED_ARRAY: key -> index, values in an array
	LayoutGoMap       Layout = "gomap"        // Go's builtin map[K]V (a swiss table), the everyday baseline
	LayoutCompact     Layout = "compact"      // no ClickHouse counterpart: quotiented slots of a few bytes, near the information limit
	LayoutIceberg     Layout = "iceberg"      // no ClickHouse counterpart: quotiented slots packed into cache-line buckets, a front and a back yard
)

// Layouts lists every layout, in the order the lab shows them.
func Layouts() []Layout {
	return []Layout{LayoutHashed, LayoutPacked, LayoutSparse, LayoutHashedArray, LayoutGoMap, LayoutCompact, LayoutIceberg}
}

// LayoutKey is the form a layout's name is compared in, here and by the
// lab's other layouts (ClickHouse's, the C++ maps, the rows): lower case,
// "-" read as "_", no spaces around, so "Hashed-Array" is "hashed_array".
func LayoutKey(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
}

// ParseLayout finds a layout by name (LayoutKey: case and "-" for "_" do
// not matter).
func ParseLayout(name string) (Layout, error) {
	n := LayoutKey(name)
	for _, l := range Layouts() {
		if string(l) == n {
			return l, nil
		}
	}
	names := make([]string, 0, 6)
	for _, l := range Layouts() {
		names = append(names, string(l))
	}
	return "", fmt.Errorf("unknown layout %q (allowed: %s)", name, strings.Join(names, ", "))
}

// The range ClickHouse accepts for MAX_LOAD_FACTOR, and its default.
const (
	MinMaxLoadFactor     = 0.5
	MaxMaxLoadFactor     = 0.99
	DefaultMaxLoadFactor = 0.5
)

// Options tune a table. The zero value means ClickHouse's defaults.
type Options struct {
	// MaxLoadFactor is the fill (elements / cells) above which the table
	// grows, in [0.5, 0.99]; 0 means 0.5 (compact: 0.9, see
	// DefaultCompactMaxLoadFactor). hashed_array ignores it: its key index
	// is ClickHouse's plain HashMap, which always grows at 0.5.
	MaxLoadFactor float64
	// Reserve is how many distinct keys the table is sized for when it is
	// built, as boost's reserve(n), ClickHouse's HashTable::reserve (the
	// PREALLOCATE of its dictionaries until 23.1) or Go's make(map, n): that
	// many keys go in without a growth, and the table grows past them as
	// usual. 0 starts at the smallest size. Each layout sizes itself by its
	// own rule (hashed and packed: the smallest power of two that holds
	// Reserve below the max load factor; compact: exactly Reserve / max load
	// factor home slots; see each layout). A Sharded table gives each shard
	// its share (ShardReserve). The memory is mapped at once but the
	// operating system backs a page only when it is first written, so
	// resident memory follows the keys inserted, bytes_allocated the
	// reservation.
	Reserve int64
	// ValueBytes makes packed's and compact's values rows: a cell keeps
	// only the value's low ValueBytes bytes, for a row of several
	// attributes narrower than the V that carries it (UInt16, UInt32 and
	// Float64 are 14 bytes, carried in a U128). A row's other bytes must
	// be zero. 0, or V's own size, is the whole value; other layouts take
	// only those (New refuses a row for them).
	ValueBytes int
}

// Validate reports an option outside its range, naming the option, the value
// and what is allowed.
func (o Options) Validate() error {
	if o.MaxLoadFactor != 0 && !(o.MaxLoadFactor >= MinMaxLoadFactor && o.MaxLoadFactor <= MaxMaxLoadFactor) {
		return fmt.Errorf("max_load_factor %v is out of range (allowed: %v to %v)", o.MaxLoadFactor, MinMaxLoadFactor, MaxMaxLoadFactor)
	}
	if o.ValueBytes < 0 || o.ValueBytes > 16 {
		return fmt.Errorf("value_bytes %d is out of range (allowed: 0 to 16)", o.ValueBytes)
	}
	if o.Reserve < 0 || o.Reserve > MaxReserve {
		return fmt.Errorf("reserve %d is out of range (allowed: 0 to %d)", o.Reserve, MaxReserve)
	}
	return nil
}

// MaxReserve is the largest Options.Reserve: MaxPredictRows (2^62), as many
// keys as a source can give. A reservation the machine cannot map fails as
// a *SlabError when the table is built.
const MaxReserve = MaxPredictRows

// reserve is o.Reserve as a count (Validate has refused a negative one).
func (o Options) reserve() uint64 { return uint64(max(o.Reserve, 0)) }

func (o Options) mlf() float64 {
	if o.MaxLoadFactor == 0 {
		return DefaultMaxLoadFactor
	}
	return o.MaxLoadFactor
}

// Map is what every layout offers. A Map is not safe for concurrent writes;
// concurrent reads with no writer are safe.
type Map[K, V Bits] interface {
	// Insert stores (key, value) if key is absent and reports whether it did.
	// A key already present keeps its first value, as a ClickHouse dictionary
	// does (find before insert).
	Insert(key K, value V) bool
	// Get returns the value stored for key.
	Get(key K) (V, bool)
	// GetMany looks up every key of keys, as ClickHouse's dictGet does for
	// a column: values[i], found[i] = Get(keys[i]). It returns how many were
	// found. values and found must be at least as long as keys. Layouts
	// that can overlap the cache misses of independent keys do.
	GetMany(keys []K, values []V, found []bool) int
	// Has reports whether key is present.
	Has(key K) bool
	// Len is the number of distinct keys stored.
	Len() int
	// All yields every pair once, in no particular order.
	All() iter.Seq2[K, V]
	// Stats computes the table's geometry and memory breakdown.
	Stats() Stats
	// Layout names the layout.
	Layout() Layout
	// CheckInvariants recounts occupancy, re-finds every stored key and
	// checks the geometry; it returns the first violation found.
	CheckInvariants() error
	// Close releases the table's memory at once (slab.go). A second Close
	// does nothing; any other use of a closed table panics, saying so. A
	// table dropped without Close is released by the runtime after it
	// becomes unreachable.
	Close()
}

// ManyInserter is a table that inserts a batch of pairs at once, its cache
// misses overlapped (hashed, packed, sparse, compact): inserted[i] = Insert(keys[i],
// values[i]), and the count inserted. InsertMany inserts through it where a
// table has it, and one Insert at a time elsewhere.
type ManyInserter[K, V Bits] interface {
	InsertMany(keys []K, values []V, inserted []bool) int
}

// InsertMany inserts every pair of keys and values into m, as m's own
// InsertMany where it has one: inserted[i] = m.Insert(keys[i], values[i]).
// It returns how many were inserted; values and inserted must be at least
// as long as keys.
func InsertMany[K, V Bits](m Map[K, V], keys []K, values []V, inserted []bool) int {
	if mi, ok := m.(ManyInserter[K, V]); ok {
		return mi.InsertMany(keys, values, inserted)
	}
	values, inserted = values[:len(keys)], inserted[:len(keys)]
	n := 0
	for i, k := range keys {
		inserted[i] = m.Insert(k, values[i])
		n += b2i(inserted[i])
	}
	return n
}

// New builds an empty table of the given layout, sized for opt.Reserve keys.
// A first slab that cannot be had is returned as a *SlabError.
func New[K, V Bits](layout Layout, opt Options) (m Map[K, V], err error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*SlabError)
			if !ok {
				panic(r)
			}
			m, err = nil, e
		}
	}()
	if vs := opt.ValueBytes; vs != 0 && vs != int(sizeOf[V]()) {
		if vs > int(sizeOf[V]()) {
			return nil, fmt.Errorf("value_bytes %d is wider than the value's %d bytes", vs, sizeOf[V]())
		}
		if layout != LayoutPacked && layout != LayoutCompact && layout != LayoutIceberg {
			return nil, fmt.Errorf("value_bytes %d: rows are packed's, compact's and iceberg's, not %s's", vs, layout)
		}
	}
	switch layout {
	case LayoutHashed:
		return NewHashed[K, V](opt), nil
	case LayoutPacked:
		return NewPacked[K, V](opt), nil
	case LayoutSparse:
		return NewSparse[K, V](opt), nil
	case LayoutHashedArray:
		return newHashedArray[K, V](opt.reserve()), nil
	case LayoutGoMap:
		return newGoMap[K, V](opt.reserve()), nil
	case LayoutCompact:
		return NewCompact[K, V](opt), nil
	case LayoutIceberg:
		return icebergWords(NewIceberg[K, V](opt)), nil
	}
	_, err = ParseLayout(string(layout))
	return nil, err
}

// Stats is a table's geometry and where its bytes go, in the words of
// ClickHouse's system.dictionaries. For every layout but gomap the figures are
// exact: computed from every slab the structure holds, capacity slack
// included. The operating system's rounding of a slab up to whole pages is
// not the structure's and shows up as measured overhead instead (less than
// a page per slab).
//
//	BytesAllocated == PayloadBytes + PaddingBytes + EmptyBytes + MetadataBytes
type Stats struct {
	ElementCount   int64   `json:"element_count"`   // distinct keys stored
	BucketCount    int64   `json:"bucket_count"`    // cells (slots, buckets) the table has room for
	LoadFactor     float64 `json:"load_factor"`     // element_count / bucket_count
	BytesAllocated int64   `json:"bytes_allocated"` // every byte the structure holds
	PayloadBytes   int64   `json:"payload_bytes"`   // the stored pairs' own bytes: element_count * (sizeof K + sizeof V); compact's and iceberg's, the bits of each pair its slot keeps (what the position does not say of the key, and the value), element_count * those bits / 8
	PaddingBytes   int64   `json:"padding_bytes"`   // alignment bytes inside occupied cells
	EmptyBytes     int64   `json:"empty_bytes"`     // cells (or capacity) allocated but unoccupied
	MetadataBytes  int64   `json:"metadata_bytes"`  // headers, control bytes, bitmaps, indexes, pointers
	Estimated      bool    `json:"estimated"`       // true when read from another's structure (gomap), not computed by packlab's own
}

// String writes the stats with their names, as ClickHouse's
// system.dictionaries does: "element_count 1000000, bucket_count 2097152,
// load_factor 0.477, bytes_allocated 20971520 (payload 10000000, padding 0,
// empty 10971520, metadata 0)", and "estimated" when they are.
func (s Stats) String() string {
	est := ""
	if s.Estimated {
		est = ", estimated"
	}
	return fmt.Sprintf("element_count %d, bucket_count %d, load_factor %.3f, bytes_allocated %d (payload %d, padding %d, empty %d, metadata %d)%s",
		s.ElementCount, s.BucketCount, s.LoadFactor, s.BytesAllocated, s.PayloadBytes, s.PaddingBytes, s.EmptyBytes, s.MetadataBytes, est)
}

// Add sums two tables' stats, as a sharded map does over its shards.
func (s Stats) Add(o Stats) Stats {
	r := Stats{
		ElementCount:   s.ElementCount + o.ElementCount,
		BucketCount:    s.BucketCount + o.BucketCount,
		BytesAllocated: s.BytesAllocated + o.BytesAllocated,
		PayloadBytes:   s.PayloadBytes + o.PayloadBytes,
		PaddingBytes:   s.PaddingBytes + o.PaddingBytes,
		EmptyBytes:     s.EmptyBytes + o.EmptyBytes,
		MetadataBytes:  s.MetadataBytes + o.MetadataBytes,
		Estimated:      s.Estimated || o.Estimated,
	}
	r.LoadFactor = loadFactor(r.ElementCount, r.BucketCount)
	return r
}

// BytesPerEntry is bytes_allocated / element_count (0 for an empty table).
func (s Stats) BytesPerEntry() float64 {
	if s.ElementCount == 0 {
		return 0
	}
	return float64(s.BytesAllocated) / float64(s.ElementCount)
}

// check verifies that the breakdown sums to the total.
func (s Stats) check() error {
	if sum := s.PayloadBytes + s.PaddingBytes + s.EmptyBytes + s.MetadataBytes; sum != s.BytesAllocated {
		return fmt.Errorf("payload %d + padding %d + empty %d + metadata %d = %d, want bytes_allocated %d",
			s.PayloadBytes, s.PaddingBytes, s.EmptyBytes, s.MetadataBytes, sum, s.BytesAllocated)
	}
	return nil
}

func loadFactor(elements, buckets int64) float64 {
	if buckets == 0 {
		return 0
	}
	return float64(elements) / float64(buckets)
}
