package chdriver

// The SQL of a dictionary of several attributes: the statement that writes
// its source from the lab's rows, and the words for how a layout keeps them.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
)

// attributesSQL is the statement that writes file, the dictionary's source
// with every attribute, from rows (the key and value the lab sent):
// attribute i > 0 is sipHash64(key, i) % 1000 in its type, a UUID the hash
// reinterpreted, a String the hash's hex digits repeated to a length drawn
// uniformly from its range by sipHash64(key, 1000 + i); a Nullable one is
// NULL where sipHash64(key, 2000 + i) % dict.NullEvery is 0.
//
// A String or tuple key (dict.Key.Derived) is derived from the lab's key
// here too (deriveKey); keyCols is then its columns, else "key T".
func attributesSQL(file, rows string, key core.Type, derived *keySQL, names []string, types []dict.Attribute) string {
	keyCols, exprs := "key "+key.Name, []string{"key"}
	if derived != nil {
		keyCols, exprs = derived.columns(), slices.Clone(derived.exprs)
	}
	exprs = append(exprs, "value")
	for i, t := range types[1:] {
		h := fmt.Sprintf("sipHash64(key, %d)", i+2)
		switch {
		case t.IsString():
			n := fmt.Sprintf("%d + sipHash64(key, %d) %% %d", t.MinLen, 1000+i+2, t.MaxLen-t.MinLen+1)
			exprs = append(exprs, fmt.Sprintf("substring(repeat(hex(%s), %d), 1, %s)", h, (t.MaxLen+15)/16, n))
		case t.Kind == core.KindUUID:
			exprs = append(exprs, "reinterpretAsUUID(toUInt128("+h+"))")
		default:
			exprs = append(exprs, "CAST("+h+" % 1000 AS "+t.Name+")")
		}
		if t.Nullable {
			last := len(exprs) - 1
			exprs[last] = fmt.Sprintf("if(sipHash64(key, %d) %% %d = 0, NULL, %s)", 2000+i+2, dict.NullEvery, exprs[last])
		}
	}
	return fmt.Sprintf("INSERT INTO FUNCTION file('%s', 'RowBinary', '%s, %s') SELECT %s FROM file('%s', 'RowBinary', 'key %s, value %s')",
		file, keyCols, strings.Join(dict.AttributeColumns(names, types), ", "), strings.Join(exprs, ", "), rows, key.Name, types[0].Name)
}

// attributesStructure says how ClickHouse's layout keeps several
// attributes.
func attributesStructure(layout string) string {
	if d, ok := dict.FindClickHouseDictionary(layout); ok && d.Model == core.LayoutHashedArray {
		return "one key-to-row index and an array per attribute"
	} else if ok && d.Flat() {
		return "an array per attribute, indexed by the key"
	}
	return "a hash table per attribute, each holding the key again"
}
