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
		name := strings.TrimSpace(s)
		if strings.Contains(name, ":") {
			return nil, fieldErr("--attributes", s, "attribute names are not taken yet", "types only, e.g. UInt16,UInt32,Float64")
		}
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
// "value UInt16", then "a2 UInt32", "a3 Float64", ...
func attributeColumns(types []core.Type) []string {
	cols := make([]string, len(types))
	for i, t := range types {
		cols[i] = attributeName(i) + " " + t.Name
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
func attributesSQL(file, rows string, key core.Type, types []core.Type) string {
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
		file, key.Name, strings.Join(attributeColumns(types), ", "), strings.Join(exprs, ", "), rows, key.Name, types[0].Name)
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
// "UInt16,UInt32,Float64".
func attributesText(types []core.Type) string {
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = t.Name
	}
	return strings.Join(names, ",")
}
