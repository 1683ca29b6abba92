package experiments

// Attributes: a dictionary's columns besides its key. ClickHouse keeps one
// hash table per attribute in HASHED and SPARSE_HASHED (each holding the key
// again; with SHARDS, one per shard and attribute), and one key-to-row index
// plus one array per attribute in HASHED_ARRAY (HashedDictionary.h,
// HashedArrayDictionary.h). A run's first attribute is the row's value, as
// --value gives it; the others are derived from the key in ClickHouse's own
// SQL as it writes the dictionary's source file, so only the first is
// checked against the rows the lab sent.

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
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
	Nullable       bool // Nullable(T): a row in nullEvery is NULL (nullRows), kept as ClickHouse keeps nulls
	// File is what a file source's column holds (clickhouse_file.go),
	// which the model takes over the generated values; nil for those.
	File *FileColumn
}

// FileColumn is an attribute's column as a source file holds it.
type FileColumn struct {
	MeanLen   float64 // a String's mean length over its values (NULLs not counted)
	NullShare float64 // a Nullable's share of NULLs (\N)
}

// nullEvery: a Nullable attribute's generated values are NULL for one row
// in this many (sipHash64(key, 2000 + i) % nullEvery = 0).
const nullEvery = 10

// nullRows is how many of n rows a Nullable attribute holds NULL in: as
// its file holds them, or as the lab generates them, one in nullEvery on
// average.
func (a Attribute) nullRows(n int64) int64 {
	switch {
	case !a.Nullable:
		return 0
	case a.File != nil:
		return int64(math.Round(a.File.NullShare * float64(n)))
	}
	return n / nullEvery
}

// nonNull is how many of n rows hold a value.
func (a Attribute) nonNull(n int64) int64 { return n - a.nullRows(n) }

// columnType is the attribute's type in a CREATE DICTIONARY.
func (a Attribute) columnType() string {
	if a.Nullable {
		return "Nullable(" + a.Name + ")"
	}
	return a.Name
}

// The String values a run generates: their lengths by default, and the
// longest a run takes.
const (
	defaultStringMin = 8
	defaultStringMax = 32
	maxStringLen     = 4096
)

// stringRef is a String attribute's cell: ClickHouse's StringRef, a
// pointer and a size, 16 bytes aligned as an 8-byte word.
var stringRef = core.Type{Name: "String", Size: 16, Align: core.MustType("UInt64").Align, Kind: core.KindUnsigned}

// isString reports whether a is a String attribute.
func (a Attribute) isString() bool { return a.Type == stringRef }

// meanLen is a String attribute's mean value length (0 for the others).
func (a Attribute) meanLen() float64 {
	if !a.isString() {
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
	case !a.isString():
		return a.Name
	case a.MinLen == defaultStringMin && a.MaxLen == defaultStringMax:
		return "String"
	case a.MinLen == a.MaxLen:
		return fmt.Sprintf("String(%d)", a.MinLen)
	}
	return fmt.Sprintf("String(%d..%d)", a.MinLen, a.MaxLen)
}

// fixed makes attributes of fixed-size types.
func fixed(ts ...core.Type) []Attribute {
	out := make([]Attribute, len(ts))
	for i, t := range ts {
		out[i] = Attribute{Type: t}
	}
	return out
}

// stringLengths matches String, String(16) and String(8..32).
var stringLengths = regexp.MustCompile(`^(?i:string)(?:\(\s*(\d+)\s*(?:\.\.\s*(\d+)\s*)?\))?$`)

// parseAttributeType reads one attribute's type: a fixed-size type, or
// String with the lengths of its values.
func parseAttributeType(s, typ string) (Attribute, error) {
	const allowed = "%s, String (values of 8 to 32 bytes), String(16) or String(4..16), and Nullable(T) of any of them"
	if inner, ok := strings.CutPrefix(typ, "Nullable("); ok && strings.HasSuffix(inner, ")") {
		a, err := parseAttributeType(s, strings.TrimSpace(strings.TrimSuffix(inner, ")")))
		if err != nil || a.Nullable {
			return Attribute{}, NewFieldError("--attributes", s, "unknown type", fmt.Sprintf(allowed, strings.Join(core.TypeNames(), ", ")))
		}
		a.Nullable = true
		return a, nil
	}
	if m := stringLengths.FindStringSubmatch(typ); m != nil {
		a := Attribute{Type: stringRef, MinLen: defaultStringMin, MaxLen: defaultStringMax}
		if m[1] != "" {
			a.MinLen, _ = strconv.Atoi(m[1])
			a.MaxLen = a.MinLen
		}
		if m[2] != "" {
			a.MaxLen, _ = strconv.Atoi(m[2])
		}
		if a.MinLen > a.MaxLen || a.MaxLen > maxStringLen || a.MaxLen == 0 {
			return Attribute{}, NewFieldError("--attributes", s, "String lengths out of range",
				fmt.Sprintf("String(min..max) with 0 <= min <= max and 1 <= max <= %d, e.g. String(8..32)", maxStringLen))
		}
		return a, nil
	}
	t, err := core.ParseType(typ)
	if err != nil {
		return Attribute{}, NewFieldError("--attributes", s, "unknown type", fmt.Sprintf(allowed, strings.Join(core.TypeNames(), ", ")))
	}
	return Attribute{Type: t}, nil
}

// attributes resolves c.Attributes (after WithDefaults): at least one,
// the first the run's value type, which is a fixed-size one.
func (c Config) attributes() ([]Attribute, error) {
	list := c.Attributes
	if len(list) == 0 {
		list = []string{c.Value}
	}
	if len(list) > MaxAttributes {
		return nil, &FieldError{Flag: "--attributes", Problem: fmt.Sprintf("%d attributes", len(list)), Allowed: fmt.Sprintf("1 to %d", MaxAttributes), Switch: true}
	}
	attrs := make([]Attribute, len(list))
	for i, s := range list {
		_, typ := SplitAttribute(s)
		if typ == "" {
			return nil, NewFieldError("--attributes", strings.Join(c.Attributes, ","), "attribute "+strconv.Itoa(i+1)+" is empty", "types, comma-separated, e.g. UInt16,UInt32,Float64")
		}
		a, err := parseAttributeType(s, typ)
		if err != nil {
			return nil, err
		}
		if i == 0 && (a.isString() || a.Nullable) {
			return nil, NewFieldError("--attributes", s, "the first attribute is the value the lab sends and checks, of a fixed-size type",
				"a fixed-size type first, a String or Nullable after it, e.g. UInt16,String")
		}
		attrs[i] = a
	}
	return attrs, nil
}

// SplitAttribute is an --attributes entry's name ("" when none is given)
// and type: "country:UInt16", or "UInt16".
func SplitAttribute(s string) (name, typ string) {
	name, typ, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return "", name
	}
	return strings.TrimSpace(name), strings.TrimSpace(typ)
}

// attributeNameRule is what a name may be: a ClickHouse identifier that
// needs no quoting.
var attributeNameRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// AttributeNames is each attribute's column name: the one given
// ("country:UInt16"), else value for the first and a2, a3, ... for the
// others. A name that is not an identifier, is the key's, or is given
// twice is refused.
func AttributeNames(list []string) ([]string, error) {
	if len(list) == 0 {
		return []string{attributeName(0)}, nil
	}
	names := make([]string, len(list))
	seen := map[string]int{}
	for i, s := range list {
		name, _ := SplitAttribute(s)
		if name == "" {
			name = attributeName(i)
		} else if !attributeNameRule.MatchString(name) {
			return nil, NewFieldError("--attributes", s, "not a column name", "a letter or _ then letters, digits or _, at most 64, e.g. country:UInt16")
		}
		if strings.EqualFold(name, "key") {
			return nil, NewFieldError("--attributes", s, "key is the key's column", "another name")
		}
		if j, ok := seen[strings.ToLower(name)]; ok {
			return nil, NewFieldError("--attributes", strings.Join(list, ","), fmt.Sprintf("attributes %d and %d are both named %s", j+1, i+1, name), "each name once")
		}
		seen[strings.ToLower(name)] = i
		names[i] = name
	}
	return names, nil
}

// validateAttributes checks --attributes: a list of types whose first is
// the value, and more than one only where every layout is ClickHouse's.
func (c Config) validateAttributes() error {
	if len(c.Attributes) == 0 {
		return nil // --value alone, checked as such
	}
	types, err := c.attributes()
	if err != nil {
		return err
	}
	if _, err := AttributeNames(c.Attributes); err != nil {
		return err
	}
	if v, err := core.ParseType(c.Value); err != nil || v.Name != types[0].Name {
		return NewFieldError("--value", c.Value, "the value is the first of --attributes ("+types[0].Name+")", "--attributes alone, or --value alone")
	}
	for _, name := range c.Layouts {
		if l, _ := parseLayoutChoice(name); l.row {
			if err := c.checkRow(name, types); err != nil {
				return err
			}
		}
	}
	if len(types) == 1 {
		return nil
	}
	for _, name := range c.Layouts {
		l, _ := parseLayoutChoice(name)
		if l.row {
			continue
		}
		if l.ch == nil {
			return NewFieldError("--attributes", strings.Join(c.Attributes, ","), "layout "+name+" holds one value (several attributes are ClickHouse's layouts and the row layouts)",
				"ch_ layouts or rows, e.g. --layout ch_hashed,ch_sparse_hashed,ch_hashed_array,packed_row,compact_row")
		}
	}
	return nil
}

// AttributeColumns is the attribute columns of a dictionary's structure:
// "value UInt16", then "a2 UInt32", "a3 Float64", ... or the names given.
func AttributeColumns(names []string, types []Attribute) []string {
	cols := make([]string, len(types))
	for i, t := range types {
		cols[i] = names[i] + " " + t.columnType()
	}
	return cols
}

// attributeName is the i-th attribute's column: value, a2, a3, ...
func attributeName(i int) string {
	if i == 0 {
		return "value"
	}
	return "a" + strconv.Itoa(i+1)
}

// attributesSQL is the statement that writes file, the dictionary's source
// with every attribute, from rows (the key and value the lab sent):
// attribute i > 0 is sipHash64(key, i) % 1000 in its type, a UUID the hash
// reinterpreted, a String the hash's hex digits repeated to a length drawn
// uniformly from its range by sipHash64(key, 1000 + i); a Nullable one is
// NULL where sipHash64(key, 2000 + i) % nullEvery is 0.
func attributesSQL(file, rows string, key core.Type, names []string, types []Attribute) string {
	exprs := []string{"key", "value"}
	for i, t := range types[1:] {
		h := fmt.Sprintf("sipHash64(key, %d)", i+2)
		switch {
		case t.isString():
			n := fmt.Sprintf("%d + sipHash64(key, %d) %% %d", t.MinLen, 1000+i+2, t.MaxLen-t.MinLen+1)
			exprs = append(exprs, fmt.Sprintf("substring(repeat(hex(%s), %d), 1, %s)", h, (t.MaxLen+15)/16, n))
		case t.Kind == core.KindUUID:
			exprs = append(exprs, "reinterpretAsUUID(toUInt128("+h+"))")
		default:
			exprs = append(exprs, "CAST("+h+" % 1000 AS "+t.Name+")")
		}
		if t.Nullable {
			last := len(exprs) - 1
			exprs[last] = fmt.Sprintf("if(sipHash64(key, %d) %% %d = 0, NULL, %s)", 2000+i+2, nullEvery, exprs[last])
		}
	}
	return fmt.Sprintf("INSERT INTO FUNCTION file('%s', 'RowBinary', 'key %s, %s') SELECT %s FROM file('%s', 'RowBinary', 'key %s, value %s')",
		file, key.Name, strings.Join(AttributeColumns(names, types), ", "), strings.Join(exprs, ", "), rows, key.Name, types[0].Name)
}

// attributesStructure says how ClickHouse's layout keeps several
// attributes.
func attributesStructure(layout string) string {
	if d, ok := FindClickHouseDictionary(layout); ok && d.model == core.LayoutHashedArray {
		return "one key-to-row index and an array per attribute"
	} else if ok && d.flat() {
		return "an array per attribute, indexed by the key"
	}
	return "a hash table per attribute, each holding the key again"
}

// ValueText is a result's value as labels show it: its attributes when it
// has several.
func ValueText(r Result) string {
	return cmp.Or(r.Attributes, r.ValueType)
}

// AttributesText is a result's attributes as the table shows them:
// "UInt16,UInt32,Float64", or "country:UInt16,plan:UInt32" when names were
// given (the type names ClickHouse's, whatever case they were given in).
func AttributesText(given []string, types []Attribute) string {
	parts := AttributesList(types)
	named := slices.ContainsFunc(given, func(s string) bool { n, _ := SplitAttribute(s); return n != "" })
	if names, err := AttributeNames(given); err == nil && named {
		for i := range parts {
			parts[i] = names[i] + ":" + parts[i]
		}
	}
	return strings.Join(parts, ",")
}

// AttributeLayout reports whether the plan weighs layout l for a
// dictionary of several attributes: the shapes ClickHouse builds, HASHED
// (hashed), SPARSE_HASHED (packed, or sparse_hash_map for an attribute
// that does not pack) and HASHED_ARRAY; packlab's own layouts hold one
// value so far.
func AttributeLayout(l core.Layout) bool {
	return l == core.LayoutHashed || l == core.LayoutPacked || l == core.LayoutHashedArray
}

// ClickHouseTable is packlab's table of the shape ClickHouse keeps a value
// (an attribute) of type t in for layout l: SPARSE_HASHED's PackedHashMap
// holds values of at most 8 bytes but UUIDs, sparse_hash_map the others
// (ClickHouse 23.5+, #49380).
func ClickHouseTable(l core.Layout, t core.Type) core.Layout {
	if l == core.LayoutPacked && !(t.Size <= 8 && t.Kind != core.KindUUID) {
		return core.LayoutSparse
	}
	return l
}

// AttributesPrediction is core's prediction for a dictionary of the
// attributes attrs in layout l as ClickHouse keeps it: HASHED and
// SPARSE_HASHED a table per attribute (and shard), each growing as one
// attribute's would, their bytes summed; HASHED_ARRAY one index and an
// array per attribute; and the String values' arenas (StringArenaBytes).
// BucketCount stays one attribute's table's, so that the load factor is a
// table's.
func AttributesPrediction(l core.Layout, key core.Type, attrs []Attribute, n int64, opt core.Options, shards int) (core.Prediction, error) {
	pr, err := core.Predict(ClickHouseTable(l, attrs[0].Type), key, attrs[0].Type, n, opt, shards)
	if err != nil {
		return pr, err
	}
	for _, t := range attrs[1:] {
		rows := t.nonNull(n) // a table holds a Nullable attribute's values, its nulls a set (nullSetBytes)
		if l == core.LayoutHashedArray {
			rows = n // an array has a slot for every row
		}
		q, err := core.Predict(ClickHouseTable(l, t.Type), key, t.Type, rows, opt, shards)
		if err != nil {
			return core.Prediction{}, err
		}
		add := q.FinalBytes
		if l == core.LayoutHashedArray {
			if t.Nullable { // is_index_null: a bit a row (ClickHouse's bytes_allocated counts a byte)
				q.ValueBytes = core.SaturatingAdd(q.ValueBytes, (n+63)/64*8)
			}
			add = q.ValueBytes
			pr.ValueBytes = core.SaturatingAdd(pr.ValueBytes, q.ValueBytes)
		}
		pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, add)
		pr.GrowthBytes = core.SaturatingAdd(pr.GrowthBytes, q.GrowthBytes) // every table grows at about the same row
		pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, core.SaturatingAdd(add, core.SaturatingMul(q.GrowthBytes, int64(shards))))
		pr.Estimated = pr.Estimated || q.Estimated
		pr.Saturated = pr.Saturated || q.Saturated
	}
	// The arenas only grow, by chunks: they are in the peak once; so,
	// nearly, do the sets of null keys, a tenth of the tables.
	extra := StringArenaBytes(attrs, n, shards)
	if l != core.LayoutHashedArray {
		extra = core.SaturatingAdd(extra, nullSetBytes(attrs, n, shards, 8))
	}
	pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, extra)
	pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, extra)
	return pr, nil
}

// nullSetBytes is what HASHED and SPARSE_HASHED keep of a Nullable
// attribute's null rows: a HashSet of their keys per shard
// (is_nullable_sets, HashedDictionary.h), cells of cell bytes (8 for a
// UInt64 key, 16 for a complex key's StringRef) from 256, growing
// x4 below 2^23 cells and x2 above when more than half full (ClickHouse's
// default HashTableGrower); each attribute's nullRows(n), spread over the
// shards.
func nullSetBytes(attrs []Attribute, n int64, shards int, cell int64) int64 {
	s := int64(max(shards, 1))
	var b int64
	for _, a := range attrs {
		if !a.Nullable {
			continue
		}
		per := (a.nullRows(n) + s - 1) / s
		cells := int64(256)
		for degree := 8; per > cells/2; cells = int64(1) << degree {
			if degree >= 23 {
				degree++
			} else {
				degree += 2
			}
		}
		b = core.SaturatingAdd(b, core.SaturatingMul(cells*cell, s))
	}
	return b
}

// StringArenaBytes is what ClickHouse's arenas allocate for the String
// values of n rows: one arena per shard, shared by every String attribute
// (HashedDictionary's and HashedArrayDictionary's string_arenas), each
// value copied in without a terminator (copyStringInArena), the values'
// lengths at their mean (ranges of a few dozen bytes over a million rows
// sum to within 0.1 % of it).
func StringArenaBytes(attrs []Attribute, n int64, shards int) int64 {
	var count, total float64 // the values a row holds, and their bytes
	for _, a := range attrs {
		if a.isString() {
			f := float64(a.nonNull(n)) / float64(max(n, 1)) // a NULL is not in the arena
			count += f
			total += f * a.meanLen()
		}
	}
	if count == 0 || n == 0 {
		return 0
	}
	s := int64(max(shards, 1))
	perShard := (n + s - 1) / s
	return core.SaturatingMul(arenaBytes(int64(float64(perShard)*count), total/count), s)
}

// ClickHouseAttributesMemory is clickHouseMemory for a dictionary of
// several attributes: each attribute's table's, summed (HASHED_ARRAY's
// index counted once for each: the figures err high), and the String
// values' arenas, once in a load and twice in a reload.
func ClickHouseAttributesMemory(l core.Layout, attrs []Attribute, n int64, opt core.Options, shards int) *ClickHouseMemory {
	m := clickHouseMemory(ClickHouseTable(l, attrs[0].Type), attrs[0].Type, n, opt, shards)
	for _, t := range attrs[1:] {
		q := clickHouseMemory(ClickHouseTable(l, t.Type), t.Type, n, opt, shards)
		if m == nil || q == nil {
			return nil
		}
		m.SteadyBytes = core.SaturatingAdd(m.SteadyBytes, q.SteadyBytes)
		m.FirstLoadPeakBytes = core.SaturatingAdd(m.FirstLoadPeakBytes, q.FirstLoadPeakBytes)
		m.ReloadPeakBytes = core.SaturatingAdd(m.ReloadPeakBytes, q.ReloadPeakBytes)
		m.Measured = m.Measured && q.Measured
	}
	if arena := StringArenaBytes(attrs, n, shards) + nullSetBytes(attrs, n, shards, 8); m != nil && arena > 0 {
		m.SteadyBytes = core.SaturatingAdd(m.SteadyBytes, arena)
		m.FirstLoadPeakBytes = core.SaturatingAdd(m.FirstLoadPeakBytes, arena)
		m.ReloadPeakBytes = core.SaturatingAdd(m.ReloadPeakBytes, core.SaturatingMul(arena, 2))
		m.Measured = false
	}
	return m
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

// ParseAttributes checks an --attributes list against its --value, as a
// run's config is checked, and resolves its types; an empty list is the
// value alone.
func ParseAttributes(value string, list []string) ([]Attribute, error) {
	c := Config{Value: value, Attributes: list}
	if err := c.validateAttributes(); err != nil {
		return nil, err
	}
	return c.attributes()
}
