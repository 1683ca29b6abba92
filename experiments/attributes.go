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
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/packlab/packlab/core"
)

// MaxAttributes is the most attributes a run takes.
const MaxAttributes = 64

// attributeTypes resolves c.Attributes (after WithDefaults): at least one,
// the first the run's value type.
func (c Config) attributeTypes() ([]core.Type, error) {
	list := c.Attributes
	if len(list) == 0 {
		list = []string{c.Value}
	}
	if len(list) > MaxAttributes {
		return nil, &FieldError{Flag: "--attributes", Problem: fmt.Sprintf("%d attributes", len(list)), Allowed: fmt.Sprintf("1 to %d", MaxAttributes), Switch: true}
	}
	types := make([]core.Type, len(list))
	for i, s := range list {
		_, name := splitAttribute(s)
		if name == "" {
			return nil, fieldErr("--attributes", strings.Join(c.Attributes, ","), "attribute "+strconv.Itoa(i+1)+" is empty", "types, comma-separated, e.g. UInt16,UInt32,Float64")
		}
		if strings.EqualFold(name, "String") || strings.HasPrefix(name, "Nullable(") {
			return nil, fieldErr("--attributes", s, "not modelled yet", "the fixed-size types: "+strings.Join(core.TypeNames(), ", "))
		}
		t, err := core.ParseType(name)
		if err != nil {
			return nil, fieldErr("--attributes", s, "unknown type", strings.Join(core.TypeNames(), ", "))
		}
		types[i] = t
	}
	return types, nil
}

// splitAttribute is an --attributes entry's name ("" when none is given)
// and type: "country:UInt16", or "UInt16".
func splitAttribute(s string) (name, typ string) {
	name, typ, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return "", name
	}
	return strings.TrimSpace(name), strings.TrimSpace(typ)
}

// attributeNameRule is what a name may be: a ClickHouse identifier that
// needs no quoting.
var attributeNameRule = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// attributeNames is each attribute's column name: the one given
// ("country:UInt16"), else value for the first and a2, a3, ... for the
// others. A name that is not an identifier, is the key's, or is given
// twice is refused.
func attributeNames(list []string) ([]string, error) {
	if len(list) == 0 {
		return []string{attributeName(0)}, nil
	}
	names := make([]string, len(list))
	seen := map[string]int{}
	for i, s := range list {
		name, _ := splitAttribute(s)
		if name == "" {
			name = attributeName(i)
		} else if !attributeNameRule.MatchString(name) {
			return nil, fieldErr("--attributes", s, "not a column name", "a letter or _ then letters, digits or _, at most 64, e.g. country:UInt16")
		}
		if strings.EqualFold(name, "key") {
			return nil, fieldErr("--attributes", s, "key is the key's column", "another name")
		}
		if j, ok := seen[strings.ToLower(name)]; ok {
			return nil, fieldErr("--attributes", strings.Join(list, ","), fmt.Sprintf("attributes %d and %d are both named %s", j+1, i+1, name), "each name once")
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
	types, err := c.attributeTypes()
	if err != nil {
		return err
	}
	if _, err := attributeNames(c.Attributes); err != nil {
		return err
	}
	if v, err := core.ParseType(c.Value); err != nil || v.Name != types[0].Name {
		return fieldErr("--value", c.Value, "the value is the first of --attributes ("+types[0].Name+")", "--attributes alone, or --value alone")
	}
	if len(types) == 1 {
		return nil
	}
	for _, name := range c.Layouts {
		l, _ := parseLayoutChoice(name)
		if l.ch == nil {
			return fieldErr("--attributes", strings.Join(c.Attributes, ","), "layout "+name+" holds one value (several attributes are ClickHouse's layouts only, so far)",
				"with ch_ layouts only, e.g. --layout ch_hashed,ch_sparse_hashed,ch_hashed_array")
		}
		if l.ch.ComplexKey {
			return fieldErr("--attributes", strings.Join(c.Attributes, ","), "several attributes with a complex key ("+name+") are not modelled yet",
				"ch_hashed, ch_sparse_hashed or ch_hashed_array")
		}
	}
	return nil
}

// attributeColumns is the attribute columns of a dictionary's structure:
// "value UInt16", then "a2 UInt32", "a3 Float64", ... or the names given.
func attributeColumns(names []string, types []core.Type) []string {
	cols := make([]string, len(types))
	for i, t := range types {
		cols[i] = names[i] + " " + t.Name
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
// reinterpreted.
func attributesSQL(file, rows string, key core.Type, names []string, types []core.Type) string {
	exprs := []string{"key", "value"}
	for i, t := range types[1:] {
		h := fmt.Sprintf("sipHash64(key, %d)", i+2)
		if t.Kind == core.KindUUID {
			exprs = append(exprs, "reinterpretAsUUID(toUInt128("+h+"))")
		} else {
			exprs = append(exprs, "CAST("+h+" % 1000 AS "+t.Name+")")
		}
	}
	return fmt.Sprintf("INSERT INTO FUNCTION file('%s', 'RowBinary', 'key %s, %s') SELECT %s FROM file('%s', 'RowBinary', 'key %s, value %s')",
		file, key.Name, strings.Join(attributeColumns(names, types), ", "), strings.Join(exprs, ", "), rows, key.Name, types[0].Name)
}

// attributesStructure says how ClickHouse's layout keeps several
// attributes.
func attributesStructure(layout string) string {
	if d, ok := FindClickHouseDictionary(layout); ok && d.model == core.LayoutHashedArray {
		return "one key-to-row index and an array per attribute"
	}
	return "a hash table per attribute, each holding the key again"
}

// valueText is a result's value as labels show it: its attributes when it
// has several.
func valueText(r Result) string {
	return cmp.Or(r.Attributes, r.ValueType)
}

// attributesText is a result's attributes as the table shows them:
// "UInt16,UInt32,Float64", or "country:UInt16,plan:UInt32" when names were
// given (the type names ClickHouse's, whatever case they were given in).
func attributesText(given []string, types []core.Type) string {
	parts := attributesList(types)
	named := slices.ContainsFunc(given, func(s string) bool { n, _ := splitAttribute(s); return n != "" })
	if names, err := attributeNames(given); err == nil && named {
		for i := range parts {
			parts[i] = names[i] + ":" + parts[i]
		}
	}
	return strings.Join(parts, ",")
}

// attributeLayout reports whether the plan weighs layout l for a
// dictionary of several attributes: the shapes ClickHouse builds, HASHED
// (hashed), SPARSE_HASHED (packed, or sparse_hash_map for an attribute
// that does not pack) and HASHED_ARRAY; packlab's own layouts hold one
// value so far.
func attributeLayout(l core.Layout) bool {
	return l == core.LayoutHashed || l == core.LayoutPacked || l == core.LayoutHashedArray
}

// clickHouseTable is packlab's table of the shape ClickHouse keeps a value
// (an attribute) of type t in for layout l: SPARSE_HASHED's PackedHashMap
// holds values of at most 8 bytes but UUIDs, sparse_hash_map the others
// (ClickHouse 23.5+, #49380).
func clickHouseTable(l core.Layout, t core.Type) core.Layout {
	if l == core.LayoutPacked && !(t.Size <= 8 && t.Kind != core.KindUUID) {
		return core.LayoutSparse
	}
	return l
}

// attributesPrediction is core's prediction for a dictionary of the
// attributes attrs in layout l as ClickHouse keeps it: HASHED and
// SPARSE_HASHED a table per attribute (and shard), each growing as one
// attribute's would, their bytes summed; HASHED_ARRAY one index and an
// array per attribute. BucketCount stays one attribute's table's, so that
// the load factor is a table's.
func attributesPrediction(l core.Layout, key core.Type, attrs []core.Type, n int64, opt core.Options, shards int) (core.Prediction, error) {
	pr, err := core.Predict(clickHouseTable(l, attrs[0]), key, attrs[0], n, opt, shards)
	if err != nil || len(attrs) == 1 {
		return pr, err
	}
	for _, t := range attrs[1:] {
		q, err := core.Predict(clickHouseTable(l, t), key, t, n, opt, shards)
		if err != nil {
			return core.Prediction{}, err
		}
		add := q.FinalBytes
		if l == core.LayoutHashedArray {
			add = q.ValueBytes
			pr.ValueBytes = core.SaturatingAdd(pr.ValueBytes, q.ValueBytes)
		}
		pr.FinalBytes = core.SaturatingAdd(pr.FinalBytes, add)
		pr.GrowthBytes = core.SaturatingAdd(pr.GrowthBytes, q.GrowthBytes) // every table grows at about the same row
		pr.PeakBytes = core.SaturatingAdd(pr.PeakBytes, core.SaturatingAdd(add, core.SaturatingMul(q.GrowthBytes, int64(shards))))
		pr.Estimated = pr.Estimated || q.Estimated
		pr.Saturated = pr.Saturated || q.Saturated
	}
	return pr, nil
}

// clickHouseAttributesMemory is clickHouseMemory for a dictionary of
// several attributes: each attribute's table's, summed (HASHED_ARRAY's
// index counted once for each: the figures err high).
func clickHouseAttributesMemory(l core.Layout, attrs []core.Type, n int64, opt core.Options, shards int) *ClickHouseMemory {
	m := clickHouseMemory(clickHouseTable(l, attrs[0]), attrs[0], n, opt, shards)
	for _, t := range attrs[1:] {
		q := clickHouseMemory(clickHouseTable(l, t), t, n, opt, shards)
		if m == nil || q == nil {
			return nil
		}
		m.SteadyBytes = core.SaturatingAdd(m.SteadyBytes, q.SteadyBytes)
		m.FirstLoadPeakBytes = core.SaturatingAdd(m.FirstLoadPeakBytes, q.FirstLoadPeakBytes)
		m.ReloadPeakBytes = core.SaturatingAdd(m.ReloadPeakBytes, q.ReloadPeakBytes)
		m.Measured = m.Measured && q.Measured
	}
	return m
}

// attributesList is a plan's attribute types when it has several, else nil.
func attributesList(attrs []core.Type) []string {
	if len(attrs) < 2 {
		return nil
	}
	names := make([]string, len(attrs))
	for i, t := range attrs {
		names[i] = t.Name
	}
	return names
}
