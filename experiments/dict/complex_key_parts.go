package dict

import (
	"math"

	"github.com/packlab/packlab/core"
)

// ComplexKeyPartsBytes is AttributesBytes for a COMPLEX_KEY_ dictionary
// whose key is serialized into keyBytes bytes a row (its mean): ClickHouse
// serializes each key part into the arena as IColumn::serializeValueIntoArena
// does, a fixed-size part as its bytes and a String part as its 8-byte
// length and its bytes (ColumnString; StringKeyOverhead). packlab inspect
// models a user's (String, UInt64) key so, from the key's mean length on
// their server; the mean is not rounded, since the arena's chunks double
// and a byte a key can take one more (1e5 keys of 20.9 bytes fill 2 MiB of
// chunks, of 21 bytes 4 MiB).
func ComplexKeyPartsBytes(d ClickHouseDictionary, keyBytes float64, attrs []Attribute, distinct, rows int64, opt core.Options, shards int) int64 {
	if !d.ComplexKey || keyBytes < 1 || len(attrs) == 0 {
		return 0
	}
	if !d.TakesMaxLoadFactor() {
		opt.MaxLoadFactor = 0
	}
	if shards <= 1 && rows > 0 {
		opt.Reserve = FileReserve(d, distinct, rows) // see clickHouseReserves
	}
	n := int(math.Ceil(keyBytes))
	key := Attribute{Type: StringRef, MinLen: n, MaxLen: n, File: &FileColumn{MeanLen: keyBytes}} // a piece of the arena, as a String is
	return complexKeyAttributesBytes(d, key, attrs, distinct, opt, shards)
}

// ComplexKeyIndexCellBytes is a COMPLEX_KEY_HASHED_ARRAY index cell: the
// key's StringRef, the row and the saved hash.
const ComplexKeyIndexCellBytes = 32
