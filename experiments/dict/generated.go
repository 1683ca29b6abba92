package dict

import (
	"fmt"
	"strings"
)

// GeneratedRowsSQL is the SELECT of n generated rows of a dictionary's
// source, where there is no user's table to read (a verification of a
// plan's dictionary): a random, distinct key of keyType (a UInt64's
// sipHash64 of the row number, a wider key's sipHash128), and each
// attribute's values drawn from the row number (generatedColumnSQL).
func GeneratedRowsSQL(keyType string, attrs []Attribute, n int64) string {
	exprs := []string{"sipHash64(number)"}
	if keyType != "UInt64" {
		exprs[0] = "reinterpret(sipHash128(number), " + QuoteString(keyType) + ")"
	}
	for i, a := range attrs {
		exprs = append(exprs, generatedColumnSQL(a, i))
	}
	return fmt.Sprintf("SELECT %s FROM numbers(%d)", strings.Join(exprs, ", "), n)
}

// generatedColumnSQL is attribute i's column of a generated source: a
// hash of the row number in its type, a String of its lengths (between
// MinLen and MaxLen), a Nullable's NULL one row in NullEvery.
func generatedColumnSQL(a Attribute, i int) string {
	var e string
	if a.IsString() {
		span := max(a.MaxLen-a.MinLen+1, 1)
		e = fmt.Sprintf("repeat('x', %d + sipHash64(number, %d) %% %d)", a.MinLen, 1000+i, span)
	} else {
		e = fmt.Sprintf("CAST(sipHash64(number, %d) AS %s)", 1000+i, a.Name)
	}
	if a.Nullable {
		e = fmt.Sprintf("if(sipHash64(number, %d) %% %d = 0, NULL, %s)", 2000+i, NullEvery, e)
	}
	return e
}
