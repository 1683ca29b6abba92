package dict

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// MaxAttributes is the most attributes a run takes.
const MaxAttributes = 64

// Attribute is one of a dictionary's columns besides its key: a
// fixed-size type, or a String, which ClickHouse keeps as a 16-byte
// reference (StringRef: pointer and size) in the table's cell or array,
// its bytes in the shard's arena (HashedDictionary.h blockToAttributes,
// copyStringInArena).
type Attribute struct {
	core.Type           // a String's is its reference's: 16 bytes, aligned as a pointer
	MinLen, MaxLen int  // a String's value lengths in bytes, uniform between them
	Nullable       bool // Nullable(T): a row in NullEvery is NULL (NullRows), kept as ClickHouse keeps nulls
	// File is what a file source's column holds (the engine reads it from the file),
	// which the model takes over the generated values; nil for those.
	File *FileColumn
}

// FileColumn is an attribute's column as a source file holds it.
type FileColumn struct {
	MeanLen   float64 `json:"mean_len"`   // a String's mean length over its values (NULLs not counted)
	NullShare float64 `json:"null_share"` // a Nullable's share of NULLs (\N)
}

// TableSource is a server's table a dictionary reads (a plan's, packlab
// plan --from): the database, table and key column its SOURCE and PRIMARY
// KEY name, and what each attribute's column holds (Figures, one per
// attribute in order, nil for a fixed-size one never NULL), as read there.
type TableSource struct {
	Database  string        `json:"database"`
	Table     string        `json:"table"`
	KeyColumn string        `json:"key_column"`
	Figures   []*FileColumn `json:"figures"`
	// KeyMeanLen is a String key's mean length in bytes.
	KeyMeanLen float64 `json:"key_mean_len,omitempty"`
}

// Hold is attrs as s's columns hold them: each attribute with a figure
// takes it (the model then counts its column's lengths and NULLs, not the
// generated ones). attrs is changed in place.
func (s *TableSource) Hold(attrs []Attribute) {
	for i, fig := range s.Figures {
		if fig != nil && i < len(attrs) {
			attrs[i].File = fig
		}
	}
}

// NullEvery: a Nullable attribute's generated values are NULL for one row
// in this many (sipHash64(key, 2000 + i) % NullEvery = 0).
const NullEvery = 10

// NullRows is how many of n rows a Nullable attribute holds NULL in: as
// its file holds them, or as the lab generates them, one in NullEvery on
// average.
func (a Attribute) NullRows(n int64) int64 {
	switch {
	case !a.Nullable:
		return 0
	case a.File != nil:
		return int64(math.Round(a.File.NullShare * float64(n)))
	}
	return n / NullEvery
}

// NonNull is how many of n rows hold a value.
func (a Attribute) NonNull(n int64) int64 { return n - a.NullRows(n) }

// ColumnType is the attribute's type in a CREATE DICTIONARY.
func (a Attribute) ColumnType() string {
	if a.Nullable {
		return "Nullable(" + a.Name + ")"
	}
	return a.Name
}

// The String values a run generates: their lengths by default, and the
// longest a run takes.
const (
	DefaultStringMin = 8
	DefaultStringMax = 32
	MaxStringLen     = 4096
)

// StringRef is a String attribute's cell: ClickHouse's StringRef, a
// pointer and a size, 16 bytes aligned as an 8-byte word.
var StringRef = core.Type{Name: "String", Size: 16, Align: core.MustType("UInt64").Align, Kind: core.KindUnsigned}

// IsString reports whether a is a String attribute.
func (a Attribute) IsString() bool { return a.Type == StringRef }

// Fixed reports whether a is of a fixed-size type and never NULL: a value
// core's plain tables hold.
func (a Attribute) Fixed() bool { return !a.IsString() && !a.Nullable }

// MeanLen is a String attribute's mean value length (0 for the others).
func (a Attribute) MeanLen() float64 {
	if !a.IsString() {
		return 0
	}
	if a.File != nil {
		return a.File.MeanLen
	}
	return float64(a.MinLen+a.MaxLen) / 2
}

// String is the attribute as --attributes takes it: UInt16, String, or
// String(4..16) when its lengths are not the default ones.
func (a Attribute) String() string {
	if a.Nullable {
		b := a
		b.Nullable = false
		return "Nullable(" + b.String() + ")"
	}
	switch {
	case !a.IsString():
		return a.Name
	case a.MinLen == DefaultStringMin && a.MaxLen == DefaultStringMax:
		return "String"
	case a.MinLen == a.MaxLen:
		return fmt.Sprintf("String(%d)", a.MinLen)
	}
	return fmt.Sprintf("String(%d..%d)", a.MinLen, a.MaxLen)
}

// Fixed makes attributes of fixed-size types.
func Fixed(ts ...core.Type) []Attribute {
	out := make([]Attribute, len(ts))
	for i, t := range ts {
		out[i] = Attribute{Type: t}
	}
	return out
}

// AttributeColumns is the attribute columns of a dictionary's structure:
// "value UInt16", then "a2 UInt32", "a3 Float64", ... or the names given.
func AttributeColumns(names []string, types []Attribute) []string {
	cols := make([]string, len(types))
	for i, t := range types {
		cols[i] = names[i] + " " + t.ColumnType()
	}
	return cols
}

// IsAttributeName reports whether s is a name an attribute may have: a
// ClickHouse identifier that needs no quoting in a CREATE DICTIONARY the
// lab writes, at most 64 characters.
func IsAttributeName(s string) bool { return attributeName.MatchString(s) }

var attributeName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// AttributeName is the i-th attribute's column: value, a2, a3, ...
func AttributeName(i int) string {
	if i == 0 {
		return "value"
	}
	return "a" + strconv.Itoa(i+1)
}

// AttributeLayout reports whether the plan weighs layout l for a
// dictionary of several attributes: the shapes ClickHouse builds, HASHED
// (hashed), SPARSE_HASHED (packed, or sparse_hash_map for an attribute
// that does not pack) and HASHED_ARRAY; packlab's own layouts hold one
// value so far.
func AttributeLayout(l core.Layout) bool {
	return l == core.LayoutHashed || l == core.LayoutPacked || l == core.LayoutHashedArray
}

// AttributesList is a plan's attributes as --attributes takes them when it
// has several, else nil.
func AttributesList(attrs []Attribute) []string {
	if len(attrs) < 2 {
		return nil
	}
	names := make([]string, len(attrs))
	for i, t := range attrs {
		names[i] = t.String()
	}
	return names
}

// FixedType is a fixed-size ClickHouse type as the model takes it: one of
// core's, or one stored as one of core's of its size (a DateTime('UTC') as
// a DateTime, a DateTime64 or a Decimal(18, 4) as an Int64, an IPv4 as a
// UInt32, an IPv6 as a UInt128: they were "not modelled"; to the byte
// of bytes_allocated in HASHED and HASHED_ARRAY on a 26.7 server). A
// Decimal of more than 38 digits, an Int256, is 32 bytes: not modelled.
func FixedType(t string) (core.Type, error) {
	ct, err := core.ParseType(t)
	if err == nil {
		return ct, nil
	}
	base, args, _ := strings.Cut(strings.TrimSpace(t), "(")
	as := map[string]string{"DateTime": "DateTime", "DateTime64": "Int64", "Date32": "Int32", "IPv4": "UInt32", "IPv6": "UInt128",
		"Bool": "UInt8", "Decimal32": "Int32", "Decimal64": "Int64", "Decimal128": "Int128"}[base]
	if base == "Decimal" {
		p, _, _ := strings.Cut(args, ",")
		digits, perr := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(p, ")")))
		switch {
		case perr != nil || digits < 1:
		case digits <= 9:
			as = "Int32"
		case digits <= 18:
			as = "Int64"
		case digits <= 38:
			as = "Int128"
		}
	}
	if as == "" {
		return core.Type{}, err
	}
	return core.ParseType(as)
}

// AttributeTypeOf is a table column's type as a dictionary attribute the
// plan models, or "" when it is not one: core's types, String, and
// Nullable of either; LowCardinality is the table's storage, not the
// dictionary's.
func AttributeTypeOf(t string) string {
	inner := t
	if s, ok := strings.CutPrefix(inner, "LowCardinality("); ok {
		inner = strings.TrimSuffix(s, ")")
	}
	nullable := false
	if s, ok := strings.CutPrefix(inner, "Nullable("); ok {
		inner, nullable = strings.TrimSuffix(s, ")"), true
	}
	if _, err := core.ParseType(inner); err != nil && inner != "String" {
		return ""
	}
	if nullable {
		return "Nullable(" + inner + ")"
	}
	return inner
}
