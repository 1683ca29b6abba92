package chdriver

// The SQL of a String or tuple key (dict.Key.Derived): ClickHouse derives
// it from the lab's keys as it writes the dictionary's source, and again
// for the read's keys, so the dictionary holds exactly the lab's distinct
// keys, each as a String or a tuple.

import (
	"fmt"
	"strings"

	"github.com/packlab/packlab/core"
	"github.com/packlab/packlab/experiments/dict"
)

// keySQL is how the worker gets a dictionary's key from the lab's keys
// (a column key of the lab's type).
type keySQL struct {
	names, types []string // the key's columns in the CREATE DICTIONARY and the read's table
	exprs        []string // each column from the lab's key
	check        string   // the lab's key again, from the key's columns: the count and checksum's
	args         string   // dictGet's key: tuple(key, key_2, ...)
}

// deriveKey is k's SQL over the lab's keys. The part that
// carries them (dict.Key.Carrier) is the lab's key itself, or a String
// whose first 8 bytes are the lab's UInt64 key (so two keys never share a
// String) followed by the hex digits of sipHash64(key, 3000 + i); another
// String part is those digits alone; its length is drawn uniformly from
// its range by sipHash64(key, 4000 + i); another fixed-size part is
// sipHash64(key, 3000 + i) % 1000 in its type (a UUID the hash
// reinterpreted).
func deriveKey(k dict.Key) keySQL {
	var q keySQL
	carrier := k.Carrier()
	for i, p := range k.Parts {
		name := dict.KeyColumnName(i)
		q.names = append(q.names, name)
		q.types = append(q.types, p.ColumnType())
		h := fmt.Sprintf("sipHash64(key, %d)", 3000+i)
		length := fmt.Sprint(p.MinLen)
		if p.MaxLen > p.MinLen {
			length = fmt.Sprintf("%d + sipHash64(key, %d) %% %d", p.MinLen, 4000+i, p.MaxLen-p.MinLen+1)
		}
		var e string
		switch {
		case i == carrier && !p.IsString():
			e = "key"
			q.check = name
		case i == carrier:
			e = fmt.Sprintf("substring(concat(unhex(hex(reinterpretAsFixedString(toUInt64(key)))), repeat(hex(%s), %d)), 1, %s)",
				h, (p.MaxLen+15)/16, length)
			q.check = "reinterpretAsUInt64(substring(" + name + ", 1, 8))"
		case p.IsString():
			e = fmt.Sprintf("substring(repeat(hex(%s), %d), 1, %s)", h, (p.MaxLen+15)/16, length)
		case p.Type.Kind == core.KindUUID:
			e = "reinterpretAsUUID(toUInt128(" + h + "))"
		default:
			e = "CAST(" + h + " % 1000 AS " + p.Type.Name + ")"
		}
		q.exprs = append(q.exprs, e)
	}
	q.args = "tuple(" + strings.Join(q.names, ", ") + ")"
	return q
}

// columns is the key's columns as a structure lists them: "key String,
// key_2 UInt64".
func (q keySQL) columns() string {
	cols := make([]string, len(q.names))
	for i, n := range q.names {
		cols[i] = n + " " + q.types[i]
	}
	return strings.Join(cols, ", ")
}
