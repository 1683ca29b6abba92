package dict

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// ClickHouseDictionary is one of ClickHouse's dictionary layouts as the lab
// runs it.
type ClickHouseDictionary struct {
	Name       string `json:"name"`        // as Config.Layouts takes it: ch_hashed
	Layout     string `json:"layout"`      // ClickHouse's word: HASHED, COMPLEX_KEY_SPARSE_HASHED
	ComplexKey bool   `json:"complex_key"` // the key serialized in an arena, not widened to UInt64
	Doc        string `json:"doc"`         // one line: what ClickHouse builds

	Model core.Layout `json:"-"` // packlab's table of the same shape (a simple key)
}

var clickHouseDictionaries = []ClickHouseDictionary{
	{Name: "ch_hashed", Layout: "HASHED", Model: core.LayoutHashed,
		Doc: "ClickHouse's HASHED: a HashMap of padded cells, the key as UInt64"},
	{Name: "ch_sparse_hashed", Layout: "SPARSE_HASHED", Model: core.LayoutPacked,
		Doc: "ClickHouse's SPARSE_HASHED: PackedHashMap for a value of at most 8 bytes (23.5+), sparse_hash_map otherwise"},
	{Name: "ch_hashed_array", Layout: "HASHED_ARRAY", Model: core.LayoutHashedArray,
		Doc: "ClickHouse's HASHED_ARRAY: a key-to-row HashMap and an array of values"},
	{Name: "ch_flat", Layout: "FLAT",
		Doc: "ClickHouse's FLAT: an array per attribute indexed by the key (sequential or range:M keys, below MAX_ARRAY_SIZE)"},
	{Name: "ch_complex_key_hashed", Layout: "COMPLEX_KEY_HASHED", ComplexKey: true, Model: core.LayoutHashed,
		Doc: "ClickHouse's COMPLEX_KEY_HASHED: the key serialized in an arena, a reference and its hash in each cell"},
	{Name: "ch_complex_key_sparse_hashed", Layout: "COMPLEX_KEY_SPARSE_HASHED", ComplexKey: true, Model: core.LayoutSparse,
		Doc: "ClickHouse's COMPLEX_KEY_SPARSE_HASHED: sparse_hash_map of references into a key arena"},
	{Name: "ch_complex_key_hashed_array", Layout: "COMPLEX_KEY_HASHED_ARRAY", ComplexKey: true, Model: core.LayoutHashedArray,
		Doc: "ClickHouse's COMPLEX_KEY_HASHED_ARRAY: a key-to-row map over an arena of keys, and an array of values"},
}

// ClickHouseDictionaries lists ClickHouse's layouts, in the order the lab
// shows them.
func ClickHouseDictionaries() []ClickHouseDictionary {
	return append([]ClickHouseDictionary(nil), clickHouseDictionaries...)
}

// FindClickHouseDictionary finds a ClickHouse layout by its lab name (as
// ParseLayout reads names: case and '-' for '_' do not matter).
func FindClickHouseDictionary(name string) (ClickHouseDictionary, bool) {
	return findNamed(clickHouseDictionaries, name, func(d ClickHouseDictionary) string { return d.Name })
}

// findNamed is the entry of list whose nameOf is name, read as
// core.ParseLayout reads names: case and '-' for '_' do not matter.
func findNamed[T any](list []T, name string, nameOf func(T) string) (T, bool) {
	n := core.LayoutKey(name)
	for _, e := range list {
		if nameOf(e) == n {
			return e, true
		}
	}
	var none T
	return none, false
}

// IsClickHouse reports whether a result's layout name is one of
// ClickHouse's own dictionaries.
func IsClickHouse(layout string) bool {
	_, ok := FindClickHouseDictionary(layout)
	return ok
}

// TakesMaxLoadFactor: HASHED_ARRAY's key index is ClickHouse's plain
// HashMap, which has no MAX_LOAD_FACTOR.
func (d ClickHouseDictionary) TakesMaxLoadFactor() bool {
	return d.Model != core.LayoutHashedArray && !d.Flat()
}

// Clause is d's LAYOUT clause for shards and mlf, parameters written only
// where they differ from ClickHouse's defaults: LAYOUT(HASHED()),
// LAYOUT(SPARSE_HASHED(SHARDS 4 MAX_LOAD_FACTOR 0.9)).
func (d ClickHouseDictionary) Clause(shards int, mlf float64) string {
	return LayoutClause(d.Layout, shards, mlf, d.TakesMaxLoadFactor())
}

// LayoutClause writes LAYOUT(NAME(params)), SHARDS and MAX_LOAD_FACTOR only
// where they differ from ClickHouse's defaults (1, 0.5).
func LayoutClause(name string, shards int, mlf float64, takesMLF bool) string {
	var params []string
	if shards > 1 {
		params = append(params, fmt.Sprintf("SHARDS %d", shards))
	}
	if takesMLF && mlf != 0 && mlf != core.DefaultMaxLoadFactor {
		params = append(params, "MAX_LOAD_FACTOR "+strconv.FormatFloat(mlf, 'g', -1, 64))
	}
	return "LAYOUT(" + name + "(" + strings.Join(params, " ") + "))"
}

// KeyDictionaryDDL is the CREATE DICTIONARY statement of a dictionary
// named name with a key of the columns keyNames of the types keyTypes (a
// complex key's parts, or one column), attribute columns ("value UInt16",
// ...), source (a SOURCE(...) clause) and layout (a LAYOUT(...) clause):
// the plan prints it for the user, and the lab runs it in ClickHouse.
func KeyDictionaryDDL(name string, keyNames, keyTypes, columns []string, source, layout string) string {
	cols := make([]string, 0, len(keyNames)+len(columns))
	for i, n := range keyNames {
		cols = append(cols, n+" "+keyTypes[i])
	}
	cols = append(cols, columns...)
	return fmt.Sprintf("CREATE DICTIONARY %s\n(\n    %s\n)\nPRIMARY KEY %s\n%s\nLIFETIME(0)\n%s",
		name, strings.Join(cols, ",\n    "), strings.Join(keyNames, ", "), source, layout)
}

// KeyType is the key column of d's dictionary for the lab's key type:
// UInt64 for a simple key (ClickHouse keeps it so whatever the column), the
// type itself for a complex one.
func (d ClickHouseDictionary) KeyType(key core.Type) core.Type {
	if d.ComplexKey {
		return key
	}
	return core.MustType("UInt64")
}

// ClickHouseDictionaryFor is the simple-key ClickHouse dictionary that
// builds packlab's table l (SPARSE_HASHED's sparse_hash_map for sparse).
func ClickHouseDictionaryFor(l core.Layout) (ClickHouseDictionary, bool) {
	for _, d := range clickHouseDictionaries {
		if !d.ComplexKey && (d.Model == l || d.Name == "ch_sparse_hashed" && l == core.LayoutSparse) {
			return d, true
		}
	}
	return ClickHouseDictionary{}, false
}

// FLAT's array sizes: ClickHouse's defaults, and the padding a
// PaddedPODArray allocates beside its elements (pad_left 64, pad_right 63).
const (
	FlatInitialArraySize = 1024
	FlatMaxArraySize     = 500_000
	FlatArrayPadding     = 127
	FlatAttributeBytes   = 160 // sizeof(Attribute) and the array's header, measured
)

// Flat reports whether d is ClickHouse's FLAT.
func (d ClickHouseDictionary) Flat() bool { return d.Layout == "FLAT" }

// FlatClause is FLAT's LAYOUT clause for keys below span: MAX_ARRAY_SIZE
// only where the default is too small.
func FlatClause(span int64) string {
	if span > FlatMaxArraySize {
		return fmt.Sprintf("LAYOUT(FLAT(MAX_ARRAY_SIZE %d))", span)
	}
	return "LAYOUT(FLAT())"
}

// flatArrayBytes is a PaddedPODArray of n elements of size bytes: the
// elements and the padding, rounded up to a power of two.
func flatArrayBytes(n int64, size int) int64 {
	return flatArrayBytesFrom(n, size, FlatInitialArraySize)
}

// flatArrayBytesFrom is flatArrayBytes for an array first allocated for
// initial elements (FLAT's INITIAL_ARRAY_SIZE).
func flatArrayBytesFrom(n int64, size int, initial int64) int64 {
	if n <= initial {
		// Keys that all fall in the first array (range:M, M <= 1024): it
		// is never resized, and its first allocation is the elements and
		// the padding (pad_right rounded up to an element), not a power of
		// two: measured through chDB 26.7, range:1000 with UInt16 2,336
		// bytes (2,048 + 128 + 160) and UInt64 8,480, where this gave 4,256
		// and 16,544; INITIAL_ARRAY_SIZE 50000 with UInt16 and 20,000 keys
		// 100,288 on a 26.7 server (50,000 elements).
		padRight := (63 + int64(size) - 1) / int64(size) * int64(size)
		return core.SaturatingAdd(core.SaturatingMul(initial, int64(size)), 64+padRight)
	}
	need := core.SaturatingAdd(core.SaturatingMul(max(n, initial), int64(size)), FlatArrayPadding)
	if need > 1<<62 {
		return need
	}
	return int64(1) << bits.Len64(uint64(need-1))
}

// FlatBytes is FLAT's bytes_allocated for keys below span, n of them
// loaded: an array per attribute (a String's holds its 16-byte reference,
// its values in one arena), each attribute's bookkeeping, and a Nullable
// attribute's null keys in a set of their own, as HASHED keeps them
// (NullSetBytes: measured through chDB 26.7, 4e5 sequential keys with a
// tenth NULL add 2,097,152 bytes for each Nullable, whatever its type).
func FlatBytes(attrs []Attribute, span, n int64) int64 {
	return FlatBytesFrom(attrs, span, n, FlatInitialArraySize)
}

// FlatBytesFrom is FlatBytes for arrays first allocated for initial keys
// (INITIAL_ARRAY_SIZE; 1,024 by default): an array holds the larger of
// the two.
func FlatBytesFrom(attrs []Attribute, span, n, initial int64) int64 {
	initial = max(initial, 1)
	var b int64
	for _, a := range attrs {
		b = core.SaturatingAdd(b, flatArrayBytesFrom(span, a.Size, initial)+FlatAttributeBytes)
	}
	return core.SaturatingAdd(core.SaturatingAdd(b, StringArenaBytes(attrs, n, 1)), NullSetBytes(attrs, n, 1, 8))
}

// FlatMemory is FLAT's memory for the guard: its arrays grow by doubling
// (the last growth holds the old half beside the new array), and a reload
// holds the serving dictionary beside a new one at that peak; the loaded
// keys' bits (span/8 bytes) are beside them, outside bytes_allocated.
func FlatMemory(attrs []Attribute, span, n int64) *ClickHouseMemory {
	return FlatMemoryFrom(attrs, span, n, FlatInitialArraySize)
}

// FlatMemoryFrom is FlatMemory for arrays first allocated for initial keys
// (INITIAL_ARRAY_SIZE).
func FlatMemoryFrom(attrs []Attribute, span, n, initial int64) *ClickHouseMemory {
	steady := core.SaturatingAdd(FlatBytesFrom(attrs, span, n, initial), span/8)
	peak := core.SaturatingAdd(steady, steady/2)
	return &ClickHouseMemory{SteadyBytes: steady, FirstLoadPeakBytes: peak, ReloadPeakBytes: core.SaturatingAdd(steady, peak),
		Model: "FLAT: an array per attribute of the largest key's size, doubled as keys land past it"}
}

// FlatCells is how many elements of size bytes a FLAT array for keys below
// span holds: its bytes less the padding.
func FlatCells(span int64, size int) int64 {
	return (flatArrayBytes(span, size) - FlatArrayPadding) / int64(size)
}

// ClickHouseLayout is the LAYOUT clause of the ClickHouse dictionary a run
// corresponds to, or "" for gomap, compact and iceberg (ClickHouse has no
// such layout). A parameter appears only when it differs
// from ClickHouse's default (SHARDS 1, MAX_LOAD_FACTOR 0.5), as one would
// write it: LAYOUT(HASHED()), LAYOUT(SPARSE_HASHED(SHARDS 16
// MAX_LOAD_FACTOR 0.9)), LAYOUT(HASHED_ARRAY(SHARDS 4)); HASHED_ARRAY takes
// no MAX_LOAD_FACTOR.
func ClickHouseLayout(l core.Layout, shards int, mlf float64) string {
	name := ClickHouseLayoutName(l)
	if name == "" {
		return ""
	}
	return LayoutClause(name, shards, mlf, l != core.LayoutHashedArray)
}

// ResultLayoutClause is the LAYOUT clause a result of packlab's layout l
// names: only where ClickHouse builds this very table, so not for a key
// other than UInt64 (ClickHouse keeps a simple key as UInt64, so its table
// is another's: ch_hashed and the COMPLEX_KEY_ layouts measure those) and
// not packed with a value PackedHashMap does not take.
func ResultLayoutClause(l core.Layout, key, value core.Type, shards int, mlf float64) string {
	if key.Name != "UInt64" {
		return ""
	}
	if l == core.LayoutPacked && !(value.Size <= 8 && value.Kind != core.KindUUID) {
		return ""
	}
	return ClickHouseLayout(l, shards, mlf)
}

// QuoteIdent quotes a name as ClickHouse reads a backquoted identifier.
func QuoteIdent(s string) string {
	return "`" + strings.NewReplacer(`\`, `\\`, "`", "\\`").Replace(s) + "`"
}

// QuoteString quotes a value as a ClickHouse string literal.
func QuoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
